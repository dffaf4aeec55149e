"""profile: what the optimizer is told about the incumbent's speed.

Always: the judge's roofline numbers per shape (time, roofline time, attainment, launch floor).
On a GPU with `ncu` (and `profile.ncu` on), when the run's policy reads counters
(`Policy.uses_counters`; where the policy reads none, as the search without a model, ncu is
skipped, saying why in profile.json and the event): an Nsight Compute summary of the incumbent on its most important shape (SpeedOfLight, memory workload, occupancy, registers/spills, stall
reasons) condensed by `profiling.ncu.diagnose` into memory-, compute-, latency/occupancy- or
launch-bound. Where ncu is absent or fails the profile says so and the feedback is timing only;
without a GPU it says "not measured". Written to attempts/<incumbent>/profile.json.

ncu runs the incumbent, code a model may have written, so it runs in the judge's sandbox for
untrusted code (`run_ncu_on`); `ncu_isolation` in profile.json says which ("bwrap", "none", or
"refused": no isolation here and the code is not the project's own, so ncu was skipped). The
candidate shares ncu's output, so the profile is advice for the next prompt, never a verdict.
"""

from __future__ import annotations

import ast
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from agents.core.context import RunContext
from agents.core.state import AgentState, Attempt, incumbent
from benchmarks import parse_python

NCU_UNREAD = (
    "this run's policy reads no hardware counters (its search ranks configurations by time)"
)


def roofline_rows(verdict: dict[str, Any]) -> list[dict[str, Any]]:
    keys = (
        "shape",
        "phase",
        "weight",
        "candidate_us",
        "eager_us",
        "compile_us",
        "speedup_eager",
        "roofline_us",
        "attainment",
        "iou",
        "mfu",
        "launch_bound",
    )
    return [{k: s.get(k) for k in keys} for s in verdict.get("shapes", [])]


def timing_text(rows: list[dict[str, Any]], perf_status: str) -> str:
    timed = [r for r in rows if r.get("candidate_us") is not None]
    if not timed:
        return f"timing: {perf_status}"
    lines = []
    for r in timed:
        line = f"- {r['shape']} ({r['phase']}, weight {r['weight']}): {r['candidate_us']:.2f} us"
        if r.get("eager_us"):
            line += f", eager {r['eager_us']:.2f} us"
        if r.get("roofline_us"):
            line += f", roofline {r['roofline_us']:.2f} us, attainment {r['attainment']:.2f}"
        if r.get("launch_bound"):
            line += " (at the launch floor)"
        lines.append(line)
    return "\n".join(lines)


def timing_diagnosis(rows: list[dict[str, Any]]) -> str:
    """A diagnosis from timings alone (no counters)."""
    timed = [r for r in rows if r.get("candidate_us") is not None]
    if not timed:
        return "not measured"
    if all(r.get("launch_bound") for r in timed):
        return (
            "launch-bound (timing only): every shape is within 2x of the empty-kernel launch floor"
        )
    att = [r["attainment"] for r in timed if r.get("attainment") is not None]
    if att:
        worst = min(timed, key=lambda r: r.get("attainment") or 1.0)
        return f"timing only: attainment {min(att):.2f}-{max(att):.2f} of the roofline; furthest from it: {worst['shape']}"
    return "timing only: no roofline available"


def kernel_regex(code: str) -> str:
    names = []
    for node in ast.walk(parse_python(code)):
        if isinstance(node, ast.FunctionDef) and any(
            "jit" in ast.unparse(d) for d in node.decorator_list
        ):
            names.append(node.name)
    return "|".join(names) or ".*"


class NcuRefused(RuntimeError):
    """The incumbent may not run under ncu here: no OS isolation exists and the project did not
    write it (`benchmarks.isolation_refusal`); the message says why and how to opt in."""


def run_ncu_on(ctx: RunContext, attempt: Attempt) -> dict[str, Any]:
    """Nsight Compute summary + diagnosis of `attempt` on the heaviest GPU shape.

    The driver imports the incumbent, code a model may have written, so the whole
    `ncu ... python ncu_driver.py` command runs in the judge's sandbox for untrusted code
    (`benchmarks.candidate_launch`: no network, its own pid namespace, a read-only filesystem but
    a private scratch folder, an allow-listed environment with no API keys, rlimits). ncu runs
    inside it too: the candidate is its child. The candidate and task files are staged where the
    sandbox can read them (the run folder may sit in a hidden /tmp or home). The record says
    which isolation it ran under. Raises NcuRefused where no isolation exists and the policy's
    code is not the project's own (KERNFORGE_UNSAFE_NO_ISOLATION=1 opts in); RuntimeError,
    OSError or NcuTimeout where ncu fails.
    """
    from benchmarks import candidate_launch, isolation_refusal, sandbox_visible, stage_file
    from profiling import build_ncu_command, diagnose, ncu_path, run_ncu_command, summarize

    # an agent run has no unsafe setting of its own: the environment variable is the opt-in
    refused = isolation_refusal(trusted=ctx.policy.trusted_code, allow_unisolated=False)
    if refused:
        raise NcuRefused(refused)
    ncu = ncu_path()
    if ncu is None:
        raise RuntimeError("ncu (Nsight Compute) is not installed here; set KERNFORGE_NCU or PATH")
    shape = max(ctx.task.shapes, key=lambda s: s.weight)
    regex = kernel_regex(ctx.run.read_code(attempt))
    driver = Path(__file__).resolve().parents[1] / "ncu_driver.py"  # in the repository: visible
    started = time.monotonic()
    try:
        with tempfile.TemporaryDirectory(prefix="kf-ncu-") as tmp:
            folder = Path(tmp)
            program = [
                sys.executable,
                str(driver),
                "--task-file",
                str(stage_file(Path(ctx.task.path), folder)),
                "--dtype",
                ctx.task.dtype,
                "--candidate",
                str(stage_file(ctx.run.path / attempt.code_path, folder)),
                "--shape",
                shape.name,
                "--seed",
                str(ctx.config.seed),
            ]
            launch = candidate_launch(folder, "cuda", build_ncu_command(program, regex, ncu=ncu))
            if launch.isolation == "bwrap" and not sandbox_visible(Path(ncu), folder):
                raise RuntimeError(
                    f"ncu at {ncu} lies in a folder the sandbox hides (home folders, /tmp): "
                    "install Nsight Compute elsewhere (e.g. /usr/local/cuda or /opt) and point "
                    "KERNFORGE_NCU at it"
                )
            kernels = run_ncu_command(
                launch.argv,
                regex,
                timeout_s=ctx.config.ncu_timeout_s,
                env=launch.env,
                preexec_fn=launch.preexec_fn,
                cwd=folder,
            )
    finally:
        ctx.tracker.add_gpu_s(time.monotonic() - started)
    summary = summarize(kernels[0])
    return {
        "shape": shape.name,
        "summary": summary.to_dict(),
        "diagnosis": diagnose(summary),
        "isolation": launch.isolation,
    }


def ncu_text(ncu: dict[str, Any]) -> str:
    s = ncu["summary"]
    parts = [f"on {ncu['shape']}"]
    for key, label in (
        ("duration_us", "duration {:.2f} us"),
        ("sm_throughput_pct", "SM {:.0f}%"),
        ("dram_throughput_pct", "DRAM {:.0f}%"),
        ("achieved_occupancy_pct", "occupancy {:.0f}%"),
        ("registers_per_thread", "{:.0f} registers/thread"),
    ):
        if s.get(key) is not None:
            parts.append(label.format(s[key]))
    if s.get("spills"):
        parts.append("register spills")
    if s.get("top_stalls"):
        parts.append("top stalls " + ", ".join(f"{n} {v:.1f}" for n, v in s["top_stalls"]))
    return "; ".join(parts)


def profile(state: AgentState, ctx: RunContext) -> dict[str, Any]:
    best = incumbent(state)
    if best is None:
        return {}
    current = state.get("profile")
    if current and current.get("attempt_id") == best.id:
        return {}  # this incumbent is profiled already
    verdict = ctx.run.read_verdict(best.id)
    rows = roofline_rows(verdict)
    result: dict[str, Any] = {
        "attempt_id": best.id,
        "device": ctx.device,
        "roofline": rows,
        "timing": timing_text(rows, best.verdict.perf_status),
        "ncu": None,
    }
    if ctx.device != "cuda":
        result["feedback"] = "not measured"
        result["diagnosis"] = "not measured (no GPU): the CPU interpreter checks correctness only"
    elif not ctx.config.ncu:
        result["feedback"] = "timing only"
        result["diagnosis"] = f"{timing_diagnosis(rows)} (Nsight Compute off: profile.ncu = false)"
    elif not ctx.policy.uses_counters:
        # ncu costs seconds of GPU per incumbent; spent only where a decision reads it
        result["feedback"] = "timing only"
        result["ncu_skipped"] = NCU_UNREAD
        result["diagnosis"] = f"{timing_diagnosis(rows)} (Nsight Compute skipped: {NCU_UNREAD})"
    else:
        from profiling import ncu_available

        if not ncu_available():
            result["feedback"] = "timing only"
            result["diagnosis"] = (
                f"{timing_diagnosis(rows)} (ncu is not installed here: timing-only feedback)"
            )
        else:
            try:
                ncu = run_ncu_on(ctx, best)
            except NcuRefused as exc:
                result["feedback"] = "timing only"
                result["ncu_isolation"] = "refused"
                result["ncu_skipped"] = str(exc)
                result["diagnosis"] = (
                    f"{timing_diagnosis(rows)} (Nsight Compute skipped: {str(exc)[:200]})"
                )
            except (
                RuntimeError,
                OSError,
                ValueError,
                IndexError,
                subprocess.SubprocessError,
            ) as exc:
                from benchmarks import isolation_level
                from profiling import NcuTimeout

                if isinstance(exc, NcuTimeout):
                    count = ctx.tracker.count_fault("ncu_timeout")
                    ctx.event("service_stalled", service="ncu", error=str(exc), count=count)
                    ctx.progress.note(f"profile: {exc}; timing-only feedback", style="yellow")
                result["feedback"] = "timing only"
                result["ncu_isolation"] = isolation_level()
                result["ncu_error"] = str(exc)[-1500:]
                result["diagnosis"] = (
                    f"{timing_diagnosis(rows)} (ncu failed: {str(exc).splitlines()[0][:200]}; timing-only feedback)"
                )
            else:
                result["feedback"] = "ncu"
                result["ncu_isolation"] = ncu["isolation"]
                result["ncu_raw"] = ncu
                result["ncu"] = ncu_text(ncu)
                result["diagnosis"] = ncu["diagnosis"]
    path = ctx.run.write_profile(best.id, result)
    updated = best.model_copy(update={"profile_path": path})
    ctx.run.update_attempt_record(updated)
    ctx.event(
        "profile",
        attempt=best.id,
        feedback=result["feedback"],
        diagnosis=result["diagnosis"],
        ncu=result["ncu"],
        **{k: result[k] for k in ("ncu_skipped", "ncu_isolation") if k in result},
    )
    ctx.progress.note(f"profile of attempt {best.id}: {result['diagnosis']}")
    return {
        "profile": {k: v for k, v in result.items() if k not in ("roofline", "ncu_raw")},
        "attempts": [updated],
    }
