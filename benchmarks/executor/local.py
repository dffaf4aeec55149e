"""The local executor: a CPU stage on worker processes, then one lane per GPU.

    submit -> [compile workers: static check, Triton compile, in parallel]  -> ready queue
           -> [lane 0: GPU 0] [lane 1: GPU 1] ...  (each judges one candidate at a time)

The CPU stage (`benchmarks.executor.precompile`) runs the static check and, on a GPU machine,
compiles the candidate's Triton kernels for the GPU's architecture in a sandboxed CPU process;
the lane copies that cache into the candidate's own worker before judging it.

A lane is a long-lived judge process (`lane_main`) pinned to its GPU (CUDA_VISIBLE_DEVICES set
before torch starts), fed by a thread of this process. It judges with
`benchmarks.harness.judge.evaluate`, so each candidate still runs in its own sandboxed worker
and the verdict is the one a direct call gives; what the lane adds is warmth: its spare workers,
its loaded tasks, its baseline cache and device fingerprint stay between candidates. One lane per
GPU means two timings never share a GPU. On the CPU there are `lanes` of them (the Triton
interpreter runs on the CPU, so more lanes than cores only slow each other down).

A re-measurement and a sweep (`SweepRequest`: many configurations of one kernel timed in one
worker, for a ranking) are GPU work and go to a lane like a candidate, so they never overlap
another timing. A sweep's CPU stage compiles its configurations ahead, dealt over the compile
workers (one sandboxed process per chunk), and its worker is seeded with the union. A sweep told
of ahead (`prepare`: the agent does so while its first candidate is judged) starts that stage
then, and its later submission goes straight to a lane once the stage is done.

A lane whose process dies while judging (killed, out of memory), or that finds its CUDA context
broken after an evaluation (a `torch.cuda.synchronize()` that raises), is replaced by a fresh
process; a request it was judging is judged once more on the fresh one. A request that fails a
second time fails its future with an ExecutorError.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import queue
import shutil
import signal
import subprocess
import threading
import time
import traceback
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass, field, replace
from multiprocessing.connection import Connection, wait
from typing import Any

from benchmarks.executor.base import Executor
from benchmarks.executor.precompile import (
    CompiledMemo,
    Precompiled,
    compile_key,
    enable_spares,
    merged,
    precompile,
    precompile_remeasure,
    precompile_sweep,
    seed_folder,
    seeded,
    sweep_chunks,
    sweep_key,
)
from benchmarks.executor.request import (
    BaselineRequest,
    BaselinesReady,
    EvalRequest,
    ExecutorError,
    RemeasureRequest,
    Request,
    SweepRequest,
    run_request,
)

# sweeps told of ahead (LocalExecutor.prepare) whose CPU stage is kept for their submission
PREPARED_KEPT = 2


def visible_gpus() -> list[str]:
    """The CUDA_VISIBLE_DEVICES entries of the GPUs this process may use (all of them when the
    variable is unset)."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None:
        return [v.strip() for v in visible.split(",") if v.strip()]
    import torch

    return [str(i) for i in range(torch.cuda.device_count())]


def gpu_arch(gpu: str) -> tuple[int, int] | None:
    """The compute capability of GPU `gpu` (a CUDA_VISIBLE_DEVICES entry) from nvidia-smi, so
    that this process need not start CUDA; None where it cannot be asked."""
    exe = shutil.which("nvidia-smi")
    if exe is None:
        return None
    try:
        out = subprocess.run(
            [exe, "--query-gpu=compute_cap", "--format=csv,noheader", "-i", gpu],
            capture_output=True,
            text=True,
            timeout=20,
            check=True,
        ).stdout.strip()
        major, minor = out.splitlines()[0].strip().split(".")
        return int(major), int(minor)
    except (OSError, subprocess.SubprocessError, ValueError, IndexError):
        return None


def _ignore_ctrl_c() -> None:
    """A compile worker leaves Ctrl-C to the executor's process, which shuts the pool down (the
    terminal sends SIGINT to the whole process group: without this, every idle worker printed a
    KeyboardInterrupt traceback)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _compile_worker_init(target: tuple[int, int] | None) -> None:
    """A compile worker: Ctrl-C left to the executor (`_ignore_ctrl_c`), and on a GPU machine a
    spare compile process kept ready (`benchmarks.executor.precompile.enable_spares`)."""
    _ignore_ctrl_c()
    enable_spares(target)


def _started() -> None:
    """Nothing: submitted once per worker so that the pool starts them all at once."""


def lane_main(conn: Connection, gpu: str | None, device: str) -> None:
    """A lane's process: judge each request that arrives on `conn` and send back
    (kind, body, traceback, healthy); None ends it."""
    if gpu is not None:
        os.environ["CUDA_VISIBLE_DEVICES"] = gpu
    from benchmarks.harness.child import drain_spares

    try:
        import benchmarks.harness.judge  # noqa: F401  (torch and the judge, before the first request)

        if device == "cuda":
            import torch

            torch.cuda.init()
        while True:
            try:
                request = conn.recv()
            except EOFError:
                return
            if request is None:
                return
            try:
                reply = ("ok", run_request(request).model_dump_json(), "")
            except Exception as exc:  # noqa: BLE001 - the parent decides what it means
                reply = ("error", f"{type(exc).__name__}: {exc}", traceback.format_exc()[-4000:])
            healthy = _healthy(device)
            conn.send((*reply, healthy))
            if not healthy:
                return
    except KeyboardInterrupt:
        return
    finally:
        drain_spares()  # a spawned process skips atexit: end the judge's spare workers here


def _healthy(device: str) -> bool:
    """Whether this process's CUDA context still works (always, on the CPU)."""
    if device != "cuda":
        return True
    try:
        import torch

        torch.cuda.synchronize()
        torch.empty(1, device="cuda").add_(1)
        torch.cuda.synchronize()
        return True
    except Exception:  # noqa: BLE001 - a broken context raises anything; the lane is replaced
        return False


def _label(request: Request) -> str:
    if isinstance(request, RemeasureRequest | SweepRequest | BaselineRequest):
        return request.label
    return request.label or request.candidate


def parse_answer(request: Request, body: str) -> Any:
    """A lane's answer as its record: a Verdict, a Remeasure for a re-measurement, a Sweep for
    a sweep."""
    if isinstance(request, RemeasureRequest):
        from benchmarks.harness.remeasure import Remeasure

        return Remeasure.model_validate_json(body)
    if isinstance(request, SweepRequest):
        from benchmarks.harness.sweep import Sweep

        return Sweep.model_validate_json(body)
    if isinstance(request, BaselineRequest):
        return BaselinesReady.model_validate_json(body)
    from benchmarks.verdict import Verdict

    return Verdict.model_validate_json(body)


@dataclass
class _Job:
    request: Request
    future: Future
    precompiled: Precompiled | None = None
    submitted: float = field(default_factory=time.perf_counter)
    started: float = 0.0  # when a lane took it


def _executor_stages(job: _Job, result: Any) -> None:
    """A verdict's seconds spent in the executor before its judge: `executor_cpu_stage` (the
    compile workers' static check and compile-ahead), `executor_queue` (from submission to a lane
    taking it, the CPU stage included). Other results (re-measures, sweeps) are left as they are."""
    stages = getattr(result, "stage_seconds", None)
    if not isinstance(stages, dict) or not isinstance(job.request, EvalRequest):
        return
    if job.precompiled is not None:
        stages["executor_cpu_stage"] = round(job.precompiled.seconds, 4)
    stages["executor_queue"] = round(job.started - job.submitted, 4)


class _LaneLost(Exception):
    pass


class _Lane:
    """One lane: its judge process and the thread of this process that feeds it."""

    def __init__(self, owner: LocalExecutor, index: int, gpu: str | None) -> None:
        self.owner, self.index, self.gpu = owner, index, gpu
        self.proc: Any = None
        self.conn: Connection | None = None
        self.current: str | None = None  # the request being judged (its label)
        self._start()
        self.thread = threading.Thread(target=self._serve, name=f"kernforge-lane-{index}")
        self.thread.daemon = True
        self.thread.start()

    def _start(self) -> None:
        ctx = mp.get_context("spawn")
        parent, child = ctx.Pipe()
        self.proc = ctx.Process(
            target=lane_main,
            args=(child, self.gpu, self.owner.device),
            name=f"kernforge-lane-{self.index}",
            daemon=True,
        )
        self.proc.start()
        child.close()
        self.conn = parent

    def _stop_process(self) -> None:
        if self.conn is not None:
            try:
                self.conn.send(None)
            except (OSError, ValueError):
                pass
        if self.proc is not None:
            self.proc.join(timeout=30)
            if self.proc.is_alive():
                self.proc.kill()
                self.proc.join(timeout=10)
        if self.conn is not None:
            self.conn.close()
            self.conn = None

    def replace(self, why: str) -> None:
        """A fresh process for this lane (the old one is killed if it still runs)."""
        if self.proc is not None and self.proc.is_alive():
            self.proc.kill()
        if self.proc is not None:
            self.proc.join(timeout=10)
        if self.conn is not None:
            self.conn.close()
        self.owner.note(f"lane {self.index}{self._where()}: {why}; replaced by a fresh process")
        self._start()

    def _where(self) -> str:
        return f" (GPU {self.gpu})" if self.gpu is not None else ""

    def _ask(self, request: Request) -> tuple[str, str, str, bool]:
        assert self.conn is not None
        try:
            self.conn.send(request)
        except (OSError, ValueError) as exc:
            raise _LaneLost(f"could not hand it the request: {exc}") from None
        wait([self.conn, self.proc.sentinel])
        if self.conn.poll():
            try:
                return self.conn.recv()
            except (EOFError, OSError):
                pass
        self.proc.join(timeout=5)
        raise _LaneLost(f"its process ended with exit code {self.proc.exitcode}")

    def _serve(self) -> None:
        while True:
            job = self.owner.ready.get()
            if job is None:
                break
            if self.owner.closing:
                job.future.cancel()  # queued when the executor closed: never started
                continue
            if not job.future.set_running_or_notify_cancel():
                continue  # cancelled before it started
            self.current = _label(job.request)
            job.started = time.perf_counter()
            try:
                self._judge(job)
            finally:
                self.current = None
        self._stop_process()

    def _judge(self, job: _Job) -> None:
        from benchmarks.harness.child import default_root

        seed = seed_folder(job.precompiled, default_root())
        job.request = seeded(job.request, seed, job.precompiled)
        try:
            self._judge_once_more_if_lost(job)
        finally:
            if seed is not None:
                shutil.rmtree(seed, ignore_errors=True)

    def _judge_once_more_if_lost(self, job: _Job) -> None:
        what = _label(job.request)
        for attempt in (1, 2):
            try:
                kind, body, tb, healthy = self._ask(job.request)
            except _LaneLost as lost:
                if self.owner.closing:
                    job.future.set_exception(ExecutorError(f"{what}: the executor was closed"))
                    return
                self.replace(f"lost while judging {what} ({lost})")
                if attempt == 2:
                    job.future.set_exception(
                        ExecutorError(f"{what}: the judge's process was lost twice ({lost})")
                    )
                    return
                continue
            if kind == "ok":
                result = parse_answer(job.request, body)
                _executor_stages(job, result)
                job.future.set_result(result)
                if not healthy:
                    self.replace(f"its CUDA context failed a check after judging {what}")
                return
            # the judge itself raised (its own fault, never the candidate's): once more, fresh
            self.replace(f"the judge raised while judging {what}: {body}")
            if attempt == 2:
                job.future.set_exception(ExecutorError(f"{what}: the judge failed twice: {body}"))
                return


class LocalExecutor(Executor):
    """See the module docstring. `lanes` counts on the CPU only; on CUDA there is one lane per
    visible GPU. `compile_workers` processes run the CPU stage (0: none, the lanes do it)."""

    kind = "local"

    def __init__(self, device: str, *, lanes: int = 1, compile_workers: int = 2) -> None:
        if device not in ("cpu", "cuda"):
            raise ExecutorError(f"the local executor runs on cpu or cuda, not {device!r}")
        if lanes < 1 or compile_workers < 0:
            raise ExecutorError(
                f"local executor: lanes must be >= 1 and compile workers >= 0, got {lanes} and {compile_workers}"
            )
        self.device = device
        gpus: list[str | None] = list(visible_gpus()) if device == "cuda" else [None] * lanes
        if not gpus:
            raise ExecutorError(
                "the local executor was asked for CUDA lanes, but no GPU is visible"
            )
        self.ready: queue.Queue[_Job | None] = queue.Queue()
        self.closing = False
        self.notes: list[str] = []
        self._lock = threading.Lock()
        # the GPUs' architecture, for the CPU stage's compile-ahead (None on the CPU)
        self.target = gpu_arch(str(gpus[0])) if device == "cuda" else None
        self._pool = (
            ProcessPoolExecutor(
                compile_workers,
                mp_context=mp.get_context("spawn"),
                initializer=_compile_worker_init,
                initargs=(self.target,),
            )
            if compile_workers
            else None
        )
        if self._pool is not None and self.target is not None:
            # every worker started now, each setting up its first spare compile process while
            # the run retrieves, generates and measures baselines
            for _ in range(compile_workers):
                self._pool.submit(_started)
        self.lanes = [_Lane(self, i, gpu) for i, gpu in enumerate(gpus)]
        self.slots = 2 * len(self.lanes)
        self.memo = CompiledMemo()  # compiled caches of sources judged before
        # sweeps told of ahead (`prepare`): their CPU stage's future, by `sweep_key`, oldest first
        self._prepared: dict[str, Future] = {}

    def note(self, text: str) -> None:
        with self._lock:
            self.notes.append(text)

    def describe(self) -> str:
        where = (
            f"{len(self.lanes)} GPU lane(s)"
            if self.device == "cuda"
            else f"{len(self.lanes)} CPU lane(s)"
        )
        pool = self._pool._max_workers if self._pool else 0  # noqa: SLF001
        return f"local: {where}, {pool} compile worker(s)"

    def lane_pids(self) -> list[int]:
        """The process ids of the lanes' judge processes (for monitoring)."""
        return [lane.proc.pid for lane in self.lanes if lane.proc is not None]

    def busy(self) -> dict[int, str]:
        """The lanes judging a request now: their process id -> the request's label."""
        return {
            lane.proc.pid: lane.current
            for lane in self.lanes
            if lane.current is not None and lane.proc is not None
        }

    def submit(self, request: Request) -> Future:
        if self.closing:
            raise ExecutorError("the executor is closed")
        job = _Job(request.portable(), Future())
        if isinstance(job.request, SweepRequest) and self._pool is not None and self.target:
            with self._lock:
                ahead = self._prepared.pop(sweep_key(job.request, self.target), None)
            staged = ahead if ahead is not None else self._stage_sweep(job.request)

            def to_lane(done: Future, job: _Job = job, ahead: bool = ahead is not None) -> None:
                job.precompiled = done.result()
                if ahead and job.precompiled is not None:
                    note = "compiled ahead while an earlier request was judged (prepare); "
                    job.precompiled = replace(
                        job.precompiled, compile_note=note + job.precompiled.compile_note
                    )
                self.ready.put(job)

            staged.add_done_callback(to_lane)
        elif isinstance(job.request, RemeasureRequest) and self._pool is not None and self.target:
            cand = job.request.candidate
            keys = [compile_key(cand, self.target, job.request.incumbent_source)]
            keys.append(compile_key(cand, self.target))
            job.precompiled = self.memo.reused(keys)
            if job.precompiled is not None:
                self.ready.put(job)
            else:
                stage = self._pool.submit(precompile_remeasure, job.request, self.target)
                stage.add_done_callback(lambda done, job=job: self._staged(job, done))
        elif self._pool is None or isinstance(
            request, RemeasureRequest | SweepRequest | BaselineRequest
        ):
            self.ready.put(job)
        else:
            assert isinstance(job.request, EvalRequest)
            key = compile_key(job.request, self.target) if self.target else ""
            job.precompiled = self.memo.reused([key]) if key else None
            if job.precompiled is not None:
                self.ready.put(job)
            else:
                stage = self._pool.submit(precompile, job.request, self.target)
                stage.add_done_callback(lambda done, job=job, k=key: self._staged(job, done, k))
        return job.future

    def _staged(self, job: _Job, done: Future, key: str = "") -> None:
        """The CPU stage finished (or failed: then the judge runs it itself, as always). A
        candidate's compiled cache is kept under `key` for the same source judged again."""
        if not done.cancelled() and done.exception() is None:
            job.precompiled = done.result()
            if key and job.precompiled.static_ok:
                self.memo.put(key, job.precompiled.triton_files)
        self.ready.put(job)

    def prepare(self, request: Request) -> None:
        """Start the CPU stage of a sweep expected soon (see Executor.prepare): its
        configurations compile on the compile workers while the GPU judges something else, and
        the same sweep submitted later goes to a lane as soon as that stage is done. Only the
        last PREPARED_KEPT sweeps told of are kept; one never submitted costs only CPU time."""
        if not isinstance(request, SweepRequest) or self._pool is None or not self.target:
            return
        request = request.portable()
        key = sweep_key(request, self.target)
        with self._lock:
            if self.closing or key in self._prepared:
                return
            while len(self._prepared) >= PREPARED_KEPT:
                self._prepared.pop(next(iter(self._prepared)))
            # half the compile workers: the other half, and the cores they leave, serve the
            # judge timing meanwhile (a launch-bound shape's time is the host's as much as the GPU's)
            self._prepared[key] = self._stage_sweep(request, max(1, self._pool._max_workers // 2))  # noqa: SLF001

    def _stage_sweep(self, request: SweepRequest, processes: int = 0) -> Future:
        """A sweep's CPU stage: its configurations dealt to the compile workers, each chunk
        compiled in one sandboxed process; a future of the union of their caches (None when
        every chunk failed: the lane then compiles them itself), done once every chunk is. At
        most `processes` chunks (0: one per compile worker)."""
        assert self._pool is not None
        workers = processes or self._pool._max_workers  # noqa: SLF001
        chunks = sweep_chunks(len(request.sources), workers)
        stages = [self._pool.submit(precompile_sweep, request, self.target, c) for c in chunks]
        union: Future = Future()
        left = [len(stages)]
        lock = threading.Lock()

        def one_done(_: Future) -> None:
            with lock:
                left[0] -= 1
                if left[0]:
                    return
            parts = [f.result() for f in stages if not f.cancelled() and f.exception() is None]
            union.set_result(merged(parts) if parts else None)

        for stage in stages:
            stage.add_done_callback(one_done)
        return union

    def close(self) -> None:
        if self.closing:
            return
        self.closing = True
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
        for _ in self.lanes:
            self.ready.put(None)
        for lane in self.lanes:
            lane.thread.join()
        while True:  # anything still queued was never started
            try:
                job = self.ready.get_nowait()
            except queue.Empty:
                break
            if job is not None:
                job.future.cancel()
