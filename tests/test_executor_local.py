"""The executors on the CPU (Triton interpreter): the local executor's lanes give the verdicts a
direct `evaluate` gives, a lane killed mid-candidate is replaced and the candidate judged again,
requests carry their task to a machine without it, and the agent's evaluator hands a round to
its executor in slot order, never more than the executor's slots ahead."""

from __future__ import annotations

import json
import os
import signal
import time
from concurrent.futures import Future
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import torch

from agents.core.nodes import evaluator as evaluator_node
from benchmarks import EvalRequest, ExecutorError, ExecutorSpec, JudgeConfig, make_executor
from benchmarks.executor.precompile import precompile
from benchmarks.executor.request import load_request_task
from benchmarks.harness.judge import evaluate
from benchmarks.loading import get_task
from knowledge_base import solution_path

GOOD = solution_path("silu").read_text()
WRONG = GOOD.replace("y = x / (1.0 + tl.exp(-x))", "y = x / (1.0 + tl.exp(x))")
NO_KERNEL = "import torch\n\n\ndef silu(x):\n    return x * 2\n"
# spins for a second or more while it is imported: time to kill the lane judging it
SLOW = "_SPIN = sum(range(40_000_000))\n" + GOOD
# fixed shape and input seeds: the lanes and the direct call must judge the same inputs
CONFIG = JudgeConfig(device="cpu", trials=1, trusted=True, shape_seed=7, seed=7, timeout_s=120)


def comparable(verdict: Any) -> dict[str, Any]:
    """A verdict without its wall times (the only part a second judging may change)."""
    data = verdict.model_dump(mode="json")
    data.pop("stage_seconds")
    return data


@pytest.fixture(scope="module")
def task():
    return get_task("silu_fp32")


@pytest.fixture(scope="module")
def local(task):
    executor = make_executor(ExecutorSpec("local", device="cpu", lanes=2, compile_workers=1))
    yield executor
    executor.close()


def test_local_lanes_give_the_verdicts_a_direct_call_gives(task, local):
    sources = {"good": GOOD, "wrong": WRONG, "no_kernel": NO_KERNEL}
    requests = [
        EvalRequest.for_task(task, src, CONFIG, candidate=f"{name}.py", label=name)
        for name, src in sources.items()
    ]
    through_lanes = local.map(requests)
    direct = [
        evaluate(task, f"{name}.py", CONFIG, source=src, label=name)
        for name, src in sources.items()
    ]
    assert [v.candidate for v in through_lanes] == list(sources)  # in the batch's order
    assert [v.passed for v in through_lanes] == [True, False, False]
    assert [v.error_class.value for v in through_lanes] == [
        "none",
        "numerical_mismatch",
        "no_triton_kernel",
    ]
    for lane_verdict, own in zip(through_lanes, direct, strict=True):
        assert comparable(lane_verdict) == comparable(own)
        # what the executor spent before the judge: its CPU stage, within the wait for a lane
        stages = lane_verdict.stage_seconds
        assert 0 < stages["executor_cpu_stage"] <= stages["executor_queue"], stages
        assert "executor_queue" not in own.stage_seconds
    assert len(set(local.lane_pids())) == 2 and os.getpid() not in local.lane_pids()


def test_a_lane_killed_mid_candidate_is_replaced_and_the_candidate_judged_again(task, local):
    future = local.submit(EvalRequest.for_task(task, SLOW, CONFIG, label="slow"))
    deadline = time.monotonic() + 120
    while not local.busy() and time.monotonic() < deadline:
        time.sleep(0.02)
    busy = local.busy()
    assert busy, "no lane took the request"
    ((pid, label),) = busy.items()
    assert label == "slow"
    os.kill(pid, signal.SIGKILL)
    verdict = future.result(timeout=300)
    assert verdict.passed, verdict.message
    assert pid not in local.lane_pids() and len(local.lane_pids()) == 2
    assert any("lost while judging slow" in n and "replaced" in n for n in local.notes)


def test_a_remeasurement_goes_to_a_lane_and_comes_back_as_its_record(task, local):
    from benchmarks import RemeasureRequest
    from benchmarks.harness.remeasure import Remeasure

    request = RemeasureRequest(EvalRequest.for_task(task, GOOD, CONFIG), GOOD, rounds=1)
    got = local.submit(request).result(timeout=300)
    assert isinstance(got, Remeasure) and not got.measured
    assert got.reason.startswith("not measured (no GPU)")  # the lane's interleaved() said so


def test_the_cpu_stage_runs_the_static_check_without_running_the_candidate(task):
    bad = precompile(EvalRequest.for_task(task, NO_KERNEL, CONFIG).portable())
    assert not bad.static_ok and "triton" in bad.message.lower()
    hostile = "import os\nos.system('touch /tmp/kf-never')\n" + GOOD
    refused = precompile(EvalRequest.for_task(task, hostile, CONFIG).portable())
    assert not refused.static_ok and "os" in refused.message
    assert precompile(EvalRequest.for_task(task, GOOD, CONFIG).portable()).static_ok


def test_a_request_carries_its_task_to_a_machine_without_the_file(task, tmp_path):
    shipped = EvalRequest.for_task(task, GOOD, CONFIG, ship_task=True).portable()
    elsewhere = shipped.__class__(**{**shipped.__dict__, "task_path": str(tmp_path / "silu.py")})
    loaded = load_request_task(elsewhere)
    assert loaded.id == task.id and loaded.path != task.path
    assert loaded.path.read_text() == task.path.read_text()
    bare = elsewhere.__class__(**{**elsewhere.__dict__, "task_files": {}})
    with pytest.raises(ExecutorError, match="missing on this machine"):
        load_request_task(bare)


def test_an_unknown_executor_or_a_closed_one_says_so():
    with pytest.raises(ExecutorError, match="expected auto or one of"):
        make_executor(ExecutorSpec("threads", device="cpu"))
    executor = make_executor(ExecutorSpec("local", device="cpu", lanes=1, compile_workers=0))
    executor.close()
    with pytest.raises(ExecutorError, match="closed"):
        executor.submit(EvalRequest.for_task(get_task("silu_fp32"), GOOD, CONFIG))


class _Recording:
    """An executor that answers nothing until asked, and records what it was handed."""

    kind = "recording"

    def __init__(self, slots: int) -> None:
        self.slots = slots
        self.submitted: list[str] = []
        self.futures: list[Future] = []

    def submit(self, request: Any) -> Future:
        self.submitted.append(request)
        future: Future = Future()
        self.futures.append(future)
        return future


def _round(slots: int, n: int, monkeypatch) -> tuple[Any, _Recording, list[Any]]:
    executor = _Recording(slots)
    ctx = SimpleNamespace(
        run=SimpleNamespace(find_attempt=lambda key: None),
        judge_executor=lambda: executor,
        device="cpu",
        progress=SimpleNamespace(step=lambda text: None),
    )
    monkeypatch.setattr(evaluator_node, "judge_request", lambda ctx, cand, aid: f"attempt {aid}")
    pending = [
        SimpleNamespace(key=f"k{i}", slot=i, node="generator", mode="fresh") for i in range(n)
    ]
    return evaluator_node._Submissions(ctx, pending, 5), executor, pending


def test_the_evaluator_keeps_at_most_the_executors_slots_unread(monkeypatch):
    queue, executor, _ = _round(slots=3, n=5, monkeypatch=monkeypatch)
    executor_answers = iter(range(100))

    def answer_all() -> None:
        for f in executor.futures:
            if not f.done():
                f.set_result(SimpleNamespace(n=next(executor_answers)))

    queue._top_up(0)
    assert executor.submitted == ["attempt 5", "attempt 6", "attempt 7"]
    answer_all()
    assert queue.verdict(0)[0] == 5
    assert queue.verdict(1)[0] == 6  # reading one makes room for one more
    assert executor.submitted == ["attempt 5", "attempt 6", "attempt 7", "attempt 8"]
    answer_all()
    assert queue.verdict(2)[0] == 7
    assert len(executor.submitted) == 5
    answer_all()
    assert [queue.verdict(i)[0] for i in (3, 4)] == [8, 9]


def test_one_slot_hands_each_candidate_over_only_when_it_is_read(monkeypatch):
    queue, executor, _ = _round(slots=1, n=3, monkeypatch=monkeypatch)
    queue._top_up(0)
    assert executor.submitted == ["attempt 5"]
    executor.futures[0].set_result(SimpleNamespace())
    queue.verdict(0)
    assert executor.submitted == ["attempt 5"]  # the next one waits until it is read


def test_first_success_cancels_what_has_not_started(monkeypatch):
    queue, executor, _ = _round(slots=3, n=3, monkeypatch=monkeypatch)
    queue._top_up(0)
    executor.futures[0].set_result(SimpleNamespace())
    executor.futures[1].set_running_or_notify_cancel()  # being judged
    executor.futures[1].set_result(SimpleNamespace(stage_seconds={"total": 1.0}))
    queue.verdict(0)
    unused = queue.drop_rest(0)
    assert unused == [1]  # judged but not recorded
    assert executor.futures[2].cancelled()


def test_an_agent_run_on_the_local_executor_judges_as_the_inline_one(tmp_path: Path):
    from agents import api

    results = {}
    for kind in ("inline", "local"):
        results[kind] = api.run(
            "silu_fp32",
            llm="offline",
            method="offline",
            device="cpu",
            runs_dir=tmp_path / kind,
            budget="iterations=2",
            settings={
                "kb": "off",
                "judge.trials": 1,
                "judge.executor": kind,
                "judge.lanes": 2,
                "judge.compile_workers": 1,
            },
            run_id="r",
            quiet=True,
        )
    views = {}
    for kind, result in results.items():
        attempts = sorted((result.run_dir / "attempts").iterdir(), key=lambda p: int(p.name))
        views[kind] = [
            (
                p.name,
                (p / "code.py").read_text(),
                {
                    k: v
                    for k, v in json.loads((p / "verdict.json").read_text()).items()
                    if k in ("passed", "stage_reached", "error_class", "candidate")
                },
            )
            for p in attempts
        ]
    assert views["local"] == views["inline"] and views["inline"]
    events = (results["local"].run_dir / "events.jsonl").read_text()
    assert '"executor"' in events and "local: 2 CPU lane(s)" in events


def test_the_cpu_stage_compiles_a_candidates_kernels_for_the_gpu_without_one():
    """On a GPU machine the CPU stage compiles ahead, in a CPU sandbox with no GPU visible;
    Triton cross-compiles, so this runs here too, for a Hopper target (compute capability 9.0)."""
    task = get_task("silu_fp16")
    request = EvalRequest.for_task(task, GOOD, JudgeConfig(device="cuda", trusted=True))
    staged = precompile(request.portable(), (9, 0))
    assert staged.static_ok and staged.compile_note.startswith("compiled ahead"), (
        staged.compile_note
    )
    names = list(staged.triton_files)
    assert any(n.endswith("_silu_kernel.cubin") for n in names), names
    assert "compiled (shape-only inputs)" in staged.compile_note  # no random data was made
    assert not precompile(request.portable()).triton_files  # no target: nothing compiled


def test_a_spare_compile_process_serves_one_job_and_the_next_job_gets_a_new_one():
    """A compile worker on a GPU machine keeps one compile process set up ahead (imports done,
    Triton's compiler warmed on a kernel of its own); a job uses it once, the worker starts
    another; the warm-up kernel never reaches a candidate's cache; a spare that died before its
    job is replaced by a process started then; dropping the spare leaves no process or folder."""
    from benchmarks.executor import precompile as pc

    task = get_task("silu_fp16")
    request = EvalRequest.for_task(task, GOOD, JudgeConfig(device="cuda", trusted=True))
    fresh = set(precompile(request.portable(), (9, 0)).triton_files)
    try:
        pc.enable_spares((9, 0))
        first = pc._SPARES["spare"]
        assert first is not None and first.proc.poll() is None
        staged = precompile(request.portable(), (9, 0))
        assert "set up ahead in" in staged.compile_note, staged.compile_note
        assert "warmed up in" in staged.compile_note, staged.compile_note
        names = set(staged.triton_files)
        assert any(n.endswith("_silu_kernel.cubin") for n in names), names
        assert names == fresh  # the warm-up's kernels stayed in the sandbox's scratch
        assert first.proc.poll() is not None and not first.folder.exists()  # used once, gone
        second = pc._SPARES["spare"]
        assert second is not None and second is not first and second.proc.poll() is None
        os.killpg(second.proc.pid, signal.SIGKILL)  # a spare that dies before its job
        second.proc.wait()
        staged = precompile(request.portable(), (9, 0))
        assert "set up in" in staged.compile_note, staged.compile_note  # started for the job
        assert any(n.endswith("_silu_kernel.cubin") for n in staged.triton_files)
    finally:
        last = pc._SPARES["spare"]
        pc.drop_spare()
    assert pc._SPARES["spare"] is None and last is not None
    assert last.proc.poll() is not None and not last.folder.exists()
    assert pc._SPARES["target"] is None  # nothing starts another


def test_a_candidate_that_reads_its_data_is_compiled_ahead_on_cpu_inputs():
    """Shape-only (meta) inputs hold no values: a candidate that reads one before launching
    fails on them, and the CPU stage calls it again on inputs made on the CPU."""
    task = get_task("silu_fp16")
    reads = GOOD.replace(
        "    x = x.contiguous()\n",
        "    x = x.contiguous()\n    assert x.view(-1)[0].item() == x.view(-1)[0].item()\n",
        1,
    )
    assert reads != GOOD
    request = EvalRequest.for_task(task, reads, JudgeConfig(device="cuda", trusted=True))
    staged = precompile(request.portable(), (9, 0))
    assert "compiled (CPU inputs)" in staged.compile_note, staged.compile_note
    assert any(n.endswith("_silu_kernel.cubin") for n in staged.triton_files)


def test_shape_only_inputs_have_the_shapes_and_dtypes_of_real_ones():
    from benchmarks.executor.warm_compile import ShapeOnlyInputs

    task = get_task("linear_bf16")
    dims = task.shapes[0].dims
    with ShapeOnlyInputs():
        meta = task.make_inputs(dims, "standard", torch.Generator().manual_seed(0))
    tensors = [t for t in meta if isinstance(t, torch.Tensor)]
    assert tensors and all(t.device.type == "meta" for t in tensors)
    small = {k: min(v, 64) for k, v in dims.items()}  # the same inputs, made small and real
    real = task.make_inputs(small, "standard", torch.Generator().manual_seed(0))
    assert [t.dtype for t in tensors] == [t.dtype for t in real if isinstance(t, torch.Tensor)]
    assert torch.empty(1).device.type == "cpu"  # the mode ends with the block


def test_the_judge_copies_a_seeded_cache_into_the_candidates_own_worker(task, tmp_path):
    from benchmarks.executor.precompile import Precompiled, seed_folder

    staged = Precompiled(
        True,
        triton_files={"KEY/_silu_kernel.json": b"{}", "../../outside.txt": b"not the cache's"},
    )
    seed = seed_folder(staged, tmp_path)
    assert (seed / "KEY" / "_silu_kernel.json").is_file()
    assert not (tmp_path.parent / "outside.txt").exists()  # a path out of the folder is dropped
    work = tmp_path / "work"
    config = JudgeConfig(
        device="cpu",
        trials=1,
        trusted=True,
        work_root=work,
        keep_dir=True,
        prewarm=False,
        triton_cache_seed=str(seed),
    )
    assert evaluate(task, "good.py", config, source=GOOD).passed
    (folder,) = work.glob("kf-judge-*")
    assert (folder / ".triton" / "cache" / "KEY" / "_silu_kernel.json").read_bytes() == b"{}"


CTRL_C_SCRIPT = r"""
import signal
import time

# as in a terminal: a suite started in the background by a non-interactive shell (`make test &`)
# hands its processes SIGINT ignored, and Python then installs no handler of its own
signal.signal(signal.SIGINT, signal.default_int_handler)
from benchmarks.executor.local import LocalExecutor

from benchmarks import BaselineRequest, EvalRequest, JudgeConfig
from benchmarks.loading import get_task

ex = LocalExecutor("cpu", lanes=1, compile_workers=2)
for f in [ex._pool.submit(time.sleep, 0.1) for _ in range(2)]:  # both workers started
    f.result()
# and the lane: a request it answers (on the CPU, "not measured") proves its process is up
ask = EvalRequest.for_task(get_task("silu_fp16"), "", JudgeConfig(device="cpu"))
ex.submit(BaselineRequest(ask)).result(timeout=120)
print("ready", flush=True)
try:
    time.sleep(60)
except KeyboardInterrupt:
    ex.close()
    print("closed", flush=True)
"""


def test_ctrl_c_closes_the_executor_without_a_traceback_from_its_compile_workers() -> None:
    import subprocess
    import sys

    repo = Path(__file__).resolve().parents[1]
    proc = subprocess.Popen(
        [sys.executable, "-c", CTRL_C_SCRIPT],
        cwd=repo,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group, as a terminal's foreground job
        env={**os.environ, "PYTHONPATH": str(repo)},
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    time.sleep(0.5)
    os.killpg(proc.pid, signal.SIGINT)  # what Ctrl-C does: the whole group gets SIGINT
    out, err = proc.communicate(timeout=120)
    assert "closed" in out, err[-2000:]
    assert "Traceback" not in err, err[-2000:]


def test_a_baseline_request_measures_what_the_judge_will_look_up(task, monkeypatch):
    """`BaselineRequest` (sent by an agent run as it starts on a GPU) measures the baselines of
    exactly the shapes the judge's perf stage times, on the baseline seed, into the judge's
    cache; on the CPU it measures nothing and says so, through every executor kind."""
    from benchmarks import BaselineRequest
    from benchmarks.executor import request as request_module
    from benchmarks.harness import baselines, perf
    from benchmarks.harness import shapes as shape_plan

    seen = {}

    def fake_run_baseline(task, shapes, seed, *, work_root=None, cache=""):
        seen.update(task=task.id, shapes=[s.name for s in shapes], seed=seed, cache=cache)
        return {"status": "ok", "shapes": {}}

    monkeypatch.setattr(perf, "run_baseline", fake_run_baseline)
    gpu = JudgeConfig(device="cuda", baseline_cache="/tmp/kf-test-baselines")
    done = request_module.baselines_request(BaselineRequest(EvalRequest.for_task(task, "", gpu)))
    timed = shape_plan.scored(shape_plan.plan_shapes(task, "cuda", None, None).shapes)
    assert done.status == "ok" and done.shapes == [s.name for s in timed]
    assert seen == {
        "task": task.id,
        "shapes": [s.name for s in timed],
        "seed": baselines.BASELINE_SEED,
        "cache": "/tmp/kf-test-baselines",
    }
    cpu = BaselineRequest(EvalRequest.for_task(task, "", JudgeConfig(device="cpu")))
    for kind in ("inline", "local"):
        with make_executor(ExecutorSpec(kind, device="cpu", lanes=1, compile_workers=0)) as ex:
            answer = ex.submit(cpu).result(timeout=120)
        assert answer.status == "not measured" and "no GPU" in answer.message, (kind, answer)


def test_an_agent_run_on_a_gpu_asks_for_its_baselines_when_it_starts():
    """The first time a run asks for its executor on a GPU it sends the task's baselines ahead
    (the lane measures them while the first candidate compiles); on the CPU it sends none."""
    from agents.core.judging import baselines_ahead, judge_config
    from benchmarks import BaselineRequest

    class Recorder:
        kind = "local"

        def __init__(self) -> None:
            self.sent: list[Any] = []

        def submit(self, request: Any) -> Future:
            self.sent.append(request)
            return Future()

    cfg = SimpleNamespace(judge_trials=3, judge_timeout_s=60.0, baseline_cache="/tmp/kf-b")
    ctx = SimpleNamespace(
        device="cuda",
        task=get_task("silu_fp16"),
        config=cfg,
        policy=SimpleNamespace(trusted_code=True),
        seams=SimpleNamespace(scripted_measure=None),
    )
    executor = Recorder()
    assert baselines_ahead(ctx, executor) is not None
    (sent,) = executor.sent
    assert isinstance(sent, BaselineRequest) and sent.base.task_id == "silu_fp16"
    assert sent.base.config == judge_config(ctx)  # the judge's own config: the same cache keys
    ctx.device = "cpu"
    assert baselines_ahead(ctx, executor) is None and len(executor.sent) == 1
    ctx.device, executor.kind = "cuda", "inline"  # measured right there: nothing overlapped
    assert baselines_ahead(ctx, executor) is None and len(executor.sent) == 1
