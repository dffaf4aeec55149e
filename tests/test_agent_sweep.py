"""The offline policy's sweep, driven on the CPU through the scripted_sweep and scripted_measure
test seams (tests/fixtures/agent/scripted.py; nothing there is measured, and the runs say so):
one sweep per lineage, finalists proposed in rank order and fully judged, the run ending after
them; the sweep's record survives a crash and `--resume`; a sweep that cannot measure falls back
to the coordinate search; the settings are in `kernforge run --show-config`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fixtures.agent.scripted import always_gain, ranked_by_block, scripted_measure
from typer.testing import CliRunner

from agents import api
from agents.core.seams import Seams
from benchmarks import Sweep

# no gain gate here (agent.sweep_min_gain): these tests follow the finalists in rank order;
# test_the_gain_gate_keeps_finalists_the_re_measure_could_not_accept has the default
FAST = {"kb": "off", "judge.trials": 1, "agent.sweep_min_gain": 0.0}


def events(run_dir: Path, kind: str) -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in (run_dir / "events.jsonl").read_text().splitlines()]
    return [r for r in rows if r["event"] == kind]


def attempt_json(run_dir: Path, i: int) -> dict[str, Any]:
    return json.loads((run_dir / "attempts" / str(i) / "attempt.json").read_text())


class Counted:
    """A seam that counts its calls (the sweep must run once per lineage, resumes included)."""

    def __init__(self, seam: Any) -> None:
        self.seam, self.calls = seam, 0

    def __call__(self, *args: Any) -> Any:
        self.calls += 1
        return self.seam(*args)


def recorded_plans(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """The sources of every sweep planned from now on (told ahead or timed), in order, with
    `can_prepare` forced on so the speculation runs on the CPU too."""
    import agents.offline.sweep as sweep_module

    plans: list[list[str]] = []
    real = sweep_module.planned

    def recorded(*args: Any) -> Any:
        found, sources, timed = real(*args)
        plans.append(sources)
        return found, sources, timed

    monkeypatch.setattr(sweep_module, "planned", recorded)
    monkeypatch.setattr(sweep_module, "can_prepare", lambda ctx: True)
    return plans


def offline_run(tmp_path: Path, run_id: str, seams: Seams, **settings: Any) -> Any:
    return api.run(
        "softmax_fp32",
        llm="offline",
        method="offline",
        device="cpu",
        runs_dir=tmp_path,
        budget="iterations=8",
        settings={**FAST, **settings},
        run_id=run_id,
        quiet=True,
        seams=seams,
    )


def test_an_offline_run_sweeps_once_judges_the_finalists_in_rank_order_and_stops(
    tmp_path: Path,
) -> None:
    sweep = Counted(ranked_by_block)
    result = offline_run(
        tmp_path, "sweep", Seams(scripted_measure=scripted_measure, scripted_sweep=sweep)
    )
    run = result.run_dir
    assert sweep.calls == 1
    (swept,) = events(run, "sweep")
    assert swept["measured"] and swept["scripted"] and swept["incumbent"] == 1
    # softmax's space is 4 x 3 = 12: the whole product, the incumbent's own first
    assert (swept["configs"], swept["failed"], swept["pruned"], swept["product"]) == (12, 0, 0, 12)
    assert swept["how"] == "the full product" and swept["incumbent_us"] == pytest.approx(11.5)
    # the rate over the sweep's whole wall time (compile stage included), not the timing job's
    assert swept["seconds"] == pytest.approx(0.5) and swept["wall_seconds"] >= 0
    assert swept["configs_per_minute"] > 12 / 0.5 * 60  # the seam returns at once
    assert [t["config"] for t in swept["top"][:3]] == [
        {"BLOCK_N": 2048, "num_warps": 4},
        {"BLOCK_N": 2048, "num_warps": 8},
        {"BLOCK_N": 4096, "num_warps": 4},  # ties keep the sweep's order
    ]
    # the three finalists, in rank order, each judged and re-measured like any candidate
    assert [attempt_json(run, i)["tunables"] for i in (2, 3, 4)] == [
        t["config"] for t in swept["top"][:3]
    ]
    a2 = attempt_json(run, 2)
    assert a2["accepted"] and a2["measurement"]["scripted"]
    assert a2["predicted_gain"] == pytest.approx(11.5 / 10.0 - 1)  # the sweep's own ranking
    assert [e["accepted"] for e in events(run, "prediction_outcome")] == [True, False, False]
    assert result.reason.startswith("sweep: the best 3 of 12 configurations were judged")
    assert result.best_attempt == 2 and not (run / "attempts" / "5").exists()
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["config"]["scripted_sweep"] is True
    assert manifest["config"]["scripted_measure"] is True  # the rows' label: scripted
    assert events(run, "start")[0]["scripted_sweep"] is True


def test_the_sweep_survives_a_crash_and_resume_goes_on_with_the_next_finalist(
    tmp_path: Path,
) -> None:
    class Crash(BaseException):
        """Stands for the process dying while the first finalist is re-measured."""

    def crash(task: object, incumbent: str, candidate: str) -> Any:
        raise Crash("killed while re-measuring")

    sweep = Counted(ranked_by_block)
    with pytest.raises(Crash):
        offline_run(tmp_path, "resumed", Seams(scripted_measure=crash, scripted_sweep=sweep))
    run = tmp_path / "resumed"
    assert sweep.calls == 1 and (run / "attempts" / "2" / "verdict.json").is_file()
    result = api.resume(
        "resumed",
        runs_dir=tmp_path,
        quiet=True,
        seams=Seams(scripted_measure=always_gain, scripted_sweep=sweep),
    )
    assert sweep.calls == 1  # the checkpoint kept the ranking: no second sweep
    assert len(events(run, "sweep")) == 1
    assert [attempt_json(run, i)["tunables"] for i in (2, 3, 4)] == [
        {"BLOCK_N": 2048, "num_warps": 4},
        {"BLOCK_N": 2048, "num_warps": 8},
        {"BLOCK_N": 4096, "num_warps": 4},
    ]
    assert result.reason.startswith("sweep: the best 3 of 12 configurations were judged")


def unmeasured(task: object, sources: list[str], configs: list[dict]) -> Sweep:
    return Sweep(measured=False, reason="sweep failed: the GPU worker died", scripted=True)


def test_a_sweep_that_cannot_measure_falls_back_to_the_coordinate_search(tmp_path: Path) -> None:
    sweep = Counted(unmeasured)
    result = api.run(
        "softmax_fp32",
        llm="offline",
        method="offline",
        device="cpu",
        runs_dir=tmp_path,
        budget="iterations=3",
        settings=FAST,
        run_id="fallback",
        quiet=True,
        seams=Seams(scripted_measure=always_gain, scripted_sweep=sweep),
    )
    run = result.run_dir
    (swept,) = events(run, "sweep")
    assert not swept["measured"] and swept["reason"] == "sweep failed: the GPU worker died"
    assert sweep.calls == 1  # tried once per lineage, not every round
    assert attempt_json(run, 2)["change"] == "BLOCK_N: 4096 -> 2048"  # nearest neighbour first
    assert attempt_json(run, 3)["change"] == "BLOCK_N: 2048 -> 1024"
    assert result.reason == "iteration budget spent (3 of 3 rounds)"


def test_without_the_sweep_setting_or_anything_to_rank_with_there_is_no_sweep(
    tmp_path: Path,
) -> None:
    sweep = Counted(ranked_by_block)
    off = offline_run(
        tmp_path,
        "off",
        Seams(scripted_measure=always_gain, scripted_sweep=sweep),
        **{"agent.sweep": False, "budget.iterations": 2},
    )
    assert sweep.calls == 0 and not events(off.run_dir, "sweep")
    assert attempt_json(off.run_dir, 2)["change"] == "BLOCK_N: 4096 -> 2048"
    # on the CPU with only the re-measurement scripted, a sweep has nothing to time with
    plain = offline_run(
        tmp_path, "plain", Seams(scripted_measure=always_gain), **{"budget.iterations": 2}
    )
    assert not events(plain.run_dir, "sweep")


def test_the_sweep_settings_are_in_show_config(tmp_path: Path, monkeypatch) -> None:
    from agents.cli.main import app

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    monkeypatch.setenv("KERNFORGE_AGENT_SWEEP_FINALISTS", "5")
    result = CliRunner().invoke(
        app,
        ["run", "--show-config", "--set", "agent.sweep_max_configs=64"],
        env={"COLUMNS": "250"},
    )
    assert result.exit_code == 0, result.output
    rows = {
        line.split("│")[1].strip(): [c.strip() for c in line.split("│")[2:4]]
        for line in result.output.splitlines()
        if line.count("│") >= 3
    }
    assert rows["agent.sweep"] == ["true", "default"]
    assert rows["agent.sweep_max_configs"] == ["64", "flag --agent.sweep_max_configs"]
    assert rows["agent.sweep_finalists"] == ["5", "environment KERNFORGE_AGENT_SWEEP_FINALISTS"]


def test_the_gain_gate_keeps_finalists_the_re_measure_could_not_accept(tmp_path: Path) -> None:
    # the default gate (5 %): of the scripted ranking (incumbent 11.5 us; 10.0, 10.5, 11.0 next)
    # only the two at least 5 % faster are judged; 11.0 (4.3 % faster) is not
    result = offline_run(
        tmp_path,
        "gated",
        Seams(scripted_measure=scripted_measure, scripted_sweep=ranked_by_block),
        **{"agent.sweep_min_gain": 0.05},
    )
    run = result.run_dir
    (swept,) = events(run, "sweep")
    # the incumbent was timed twice (first and last); the scripted timings agree: no noise
    assert swept["noise"] == 0.0 and swept["gate"] == pytest.approx(0.05)
    assert [attempt_json(run, i)["tunables"] for i in (2, 3)] == [
        t["config"] for t in swept["top"][:2]
    ]
    assert not (run / "attempts" / "4").exists()
    assert "faster than the incumbent's own by more than 5% in the sweep" in result.reason


def test_the_sweep_told_of_ahead_is_the_sweep_the_run_then_times(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """While the first candidate is judged (no incumbent yet) the policy tells the executor of
    the sweep it will run if that candidate passes (Policy.ahead), so its configurations compile
    beside the judge; told is only worth anything when it is the very sweep timed afterwards:
    the same sources in the same order. Here on the CPU through the seams, the executor told
    nothing (`can_prepare` forced on, so the speculation itself runs)."""
    plans = recorded_plans(monkeypatch)
    offline_run(
        tmp_path, "ahead", Seams(scripted_measure=scripted_measure, scripted_sweep=ranked_by_block)
    )
    told, timed = plans  # told once, while attempt 1 was judged; then the sweep itself
    assert len(told) == 13 and told == timed  # 12 configurations, the incumbent's timed again


def test_the_model_policy_tells_ahead_the_sweep_it_then_times(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The model-driven policy's Policy.ahead: while the model's first kernel is judged, the
    sweep told to the executor is the very sweep `optimize` times once that kernel is the
    incumbent (same sources, same order). A replayed model writes a kernel that declares
    tunables (the knowledge base's softmax, KB_META and keyword defaults)."""
    plans = recorded_plans(monkeypatch)
    code = (Path(__file__).resolve().parents[1] / "knowledge_base/kernels/softmax.py").read_text()
    text = f"One program per row.\n\n```python\n{code}\n```\n"
    replies = [{"node": node, "text": text} for node in ("generator", "generator", "optimizer")]
    script = tmp_path / "replies.jsonl"
    script.write_text("".join(json.dumps(r) + "\n" for r in replies))
    api.run(
        "softmax_fp32",
        llm=f"replay:{script}",
        device="cpu",
        runs_dir=tmp_path,
        budget="iterations=2",
        settings=FAST,
        run_id="model_ahead",
        quiet=True,
        seams=Seams(scripted_measure=scripted_measure, scripted_sweep=ranked_by_block),
    )
    assert len(plans) == 2, plans  # told once, while the first kernel was judged; then timed
    told, timed = plans
    assert len(told) > 1 and told == timed
