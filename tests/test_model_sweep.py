"""The model-driven methods use the kernel families and the batched search too.

- A model's kernel that declares tunables (`KB_META["tunables"]` and the entry point's keyword
  defaults, as the prompts ask) is swept like a reference kernel (agents/offline/sweep.py, the
  scripted_sweep seam standing for the GPU worker): one `sweep` event, its gated finalists
  judged in rank order, then the model is asked, its prompt showing the sweep's ranking.
- A kernel that declares nothing, or a run that cannot sweep, goes straight to the model; a
  sweep that cannot measure is shown to the model as such.
- A design is a kernel with its configuration set aside: a finalist keeps it, a rewrite does not.

tests/test_model_templates.py has the templates in the generator prompt.

CPU, replayed model (`--llm replay:FILE`), scripted sweep and re-measurement: every number here
is scripted and the runs label it so.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fixtures.agent.scripted import ranked_by_block, scripted_measure

from agents import api
from agents.core.seams import Seams
from agents.offline.tunables import declared_space, design_key, set_tunables
from benchmarks import Sweep

ROOT = Path(__file__).resolve().parents[1]
FIXED = (ROOT / "tests" / "fixtures" / "agent" / "kernels" / "softmax_fixed.py").read_text()
SPACE = {"BLOCK_N": [1024, 2048, 4096, 8192], "num_warps": [4, 8, 16]}
# the model's kernel with its tunables declared (defaults BLOCK_N 4096, num_warps 8)
DECLARED = FIXED.replace(
    "\n\n@triton.jit", f"\n\nKB_META = {{'tunables': {SPACE!r}}}\n\n\n@triton.jit", 1
)
# one candidate, no dropout or gain gate: the finalists follow the ranking (test_agent_sweep.py
# pins the gate)
SETTINGS = {
    "kb": "off",
    "judge.trials": 1,
    "agent.candidates": 1,
    "dropout.enabled": False,
    "agent.sweep_min_gain": 0.0,
}
SWEEP_SECTION = "## The configuration sweep of the incumbent's design"


def events(run_dir: Path, kind: str) -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in (run_dir / "events.jsonl").read_text().splitlines()]
    return [r for r in rows if r["event"] == kind]


def attempt_json(run_dir: Path, i: int) -> dict[str, Any]:
    return json.loads((run_dir / "attempts" / str(i) / "attempt.json").read_text())


def prompt(run_dir: Path, i: int) -> str:
    return (run_dir / "attempts" / str(i) / "prompt.md").read_text()


def block(code: str) -> str:
    return f"```python\n{code.rstrip()}\n```\n"


def script(tmp_path: Path, kernel: str, optimizer: dict[str, str]) -> str:
    """A replay script: the generator's kernel, then one optimizer reply."""
    path = tmp_path / "script.jsonl"
    rows = [
        {"node": "generator", "text": "One program per row, online softmax.\n\n" + block(kernel)},
        {"node": "optimizer", **optimizer},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return f"replay:{path}"


# the model's later change: a new design (another kernel), predicted honestly
REWRITE = {
    "text": "CHANGE: one pass over the row when it fits a block (a test's reply)\n"
    "PREDICTED_GAIN: 5%\n\n" + block(DECLARED.replace('"""Softmax,', '"""Softmax (one pass),', 1)),
}


class Counted:
    """A sweep seam that counts its calls."""

    def __init__(self, seam: Any) -> None:
        self.seam, self.calls = seam, 0

    def __call__(self, *args: Any) -> Any:
        self.calls += 1
        return self.seam(*args)


def model_run(tmp_path: Path, run_id: str, llm: str, seams: Seams, rounds: int) -> Any:
    return api.run(
        "softmax_fp32",
        llm=llm,
        device="cpu",
        runs_dir=tmp_path,
        budget=f"iterations={rounds}",
        settings=SETTINGS,
        run_id=run_id,
        quiet=True,
        seams=seams,
    )


def test_a_model_kernel_declaring_tunables_is_swept_its_finalists_judged_then_the_model_asked(
    tmp_path: Path,
) -> None:
    sweep = Counted(ranked_by_block)
    llm = script(tmp_path, DECLARED, {**REWRITE, "match": SWEEP_SECTION})
    result = model_run(
        tmp_path, "swept", llm, Seams(scripted_measure=scripted_measure, scripted_sweep=sweep), 5
    )
    run = result.run_dir
    assert result.reason == "iteration budget spent (5 of 5 rounds)"
    # the generator prompt says how to declare tunables
    assert "## Declaring tunables" in prompt(run, 1) and "KB_META = {" in prompt(run, 1)

    # one sweep, of the model's kernel (attempt 1), over the 4 x 3 space it declared
    assert sweep.calls == 1
    (swept,) = events(run, "sweep")
    assert swept["incumbent"] == 1 and swept["measured"] and swept["scripted"]
    assert (swept["configs"], swept["product"]) == (12, 12)
    assert swept["incumbent_us"] == pytest.approx(11.5)
    top = [t["config"] for t in swept["top"]]
    assert top[:3] == [
        {"BLOCK_N": 2048, "num_warps": 4},
        {"BLOCK_N": 2048, "num_warps": 8},
        {"BLOCK_N": 4096, "num_warps": 4},
    ]

    # rounds 2-4: the finalists in rank order, judged and re-measured, none asked of the model
    finalists = [attempt_json(run, i) for i in (2, 3, 4)]
    assert [a["tunables"] for a in finalists] == top[:3]
    assert all(a["node"] == "optimizer" and a["verdict"]["passed"] for a in finalists)
    assert [a["accepted"] for a in finalists] == [True, False, False]
    assert {a["provenance"]["name"] for a in finalists} == {"the configuration sweep"}
    assert finalists[0]["provenance"]["base"]["kind"] == "model"
    assert prompt(run, 2).startswith("# model policy: sweep finalist")
    assert finalists[0]["predicted_gain"] == pytest.approx(11.5 / 10.0 - 1)

    # round 5: the finalists spent, the model is asked, once, with the sweep's ranking shown
    calls = [e["node"] for e in events(run, "llm_call")]
    assert calls == ["generator", "optimizer"]
    asked = attempt_json(run, 5)
    assert asked["change"].startswith("one pass over the row") and asked["predicted_gain"] == 0.05
    assert asked["provenance"]["name"].startswith("the model replay")
    shown = prompt(run, 5)
    assert SWEEP_SECTION in shown
    assert "Attempt 1's own configuration {'BLOCK_N': 4096, 'num_warps': 8} took 11.50 us" in shown
    assert "| 1 | {'BLOCK_N': 2048, 'num_warps': 4} | 10.00 us | +15.0% |" in shown
    assert "| 2 | {'BLOCK_N': 2048, 'num_warps': 8} | 10.50 us | +9.5% |" in shown
    assert "- {'BLOCK_N': 2048, 'num_warps': 4}: attempt 2: accepted" in shown
    assert "- {'BLOCK_N': 4096, 'num_warps': 4}: attempt 4: correct, not accepted" in shown
    # the model's incumbent was the accepted finalist
    assert "## The incumbent (attempt 2)" in shown and "BLOCK_N: int = 2048" in shown


def unmeasured(task: object, sources: list[str], configs: list[dict]) -> Sweep:
    return Sweep(measured=False, reason="sweep failed: the GPU worker died", scripted=True)


@pytest.mark.parametrize(
    ("kernel", "seams"),
    [
        # nothing declared: nothing to sweep, though a sweep could rank
        (FIXED, Seams(scripted_measure=scripted_measure, scripted_sweep=ranked_by_block)),
        # declared, but nothing here can rank configurations (no GPU, no scripted sweep)
        (DECLARED, Seams(scripted_measure=scripted_measure)),
    ],
    ids=["no-tunables", "cannot-sweep"],
)
def test_without_a_space_or_a_sweep_the_optimizer_asks_the_model_at_once(
    tmp_path: Path, kernel: str, seams: Seams
) -> None:
    result = model_run(tmp_path, "plain", script(tmp_path, kernel, REWRITE), seams, 2)
    run = result.run_dir
    assert not events(run, "sweep")
    assert [e["node"] for e in events(run, "llm_call")] == ["generator", "optimizer"]
    assert attempt_json(run, 2)["change"].startswith("one pass over the row")
    assert SWEEP_SECTION not in prompt(run, 2)


def test_a_sweep_that_cannot_measure_is_shown_to_the_model_asked_in_the_same_round(
    tmp_path: Path,
) -> None:
    sweep = Counted(unmeasured)
    llm = script(tmp_path, DECLARED, REWRITE)
    seams = Seams(scripted_measure=scripted_measure, scripted_sweep=sweep)
    result = model_run(tmp_path, "unmeasured", llm, seams, 2)
    run = result.run_dir
    (swept,) = events(run, "sweep")
    assert not swept["measured"] and sweep.calls == 1
    assert attempt_json(run, 2)["change"].startswith("one pass over the row")
    assert "could not rank them: sweep failed: the GPU worker died" in prompt(run, 2)


def test_a_design_is_the_kernel_with_its_configuration_set_aside() -> None:
    # only names both listed in KB_META and exposed by the entry point can be swept
    assert declared_space(DECLARED, "softmax") == SPACE
    assert declared_space(FIXED, "softmax") == {}  # keyword defaults, but nothing listed
    listed_only = DECLARED.replace(", num_warps: int = 8)", ")").replace(
        "num_warps=num_warps", "num_warps=8"
    )
    assert declared_space(listed_only, "softmax") == {"BLOCK_N": SPACE["BLOCK_N"]}
    # a finalist (another configuration) keeps the design; any other change makes a new one
    design = design_key(DECLARED, "softmax", SPACE)
    finalist = set_tunables(DECLARED, "softmax", {"BLOCK_N": 2048, "num_warps": 4})
    assert design_key(finalist, "softmax", SPACE) == design
    rewrite = DECLARED.replace("row_max = tl.max(m, axis=0)", "row_max = tl.max(m, 0)")
    assert rewrite != DECLARED and design_key(rewrite, "softmax", SPACE) != design
