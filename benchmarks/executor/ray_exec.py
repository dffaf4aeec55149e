"""The Ray executor: the local executor's two stages as Ray tasks, on a cluster or a local Ray.

    kernforge bench --executor ray --ray-address ray://head:10001 ...   # an existing cluster
    kernforge bench --executor ray ...                                  # a Ray started here

Each request is two tasks: the CPU stage (`precompile`, one CPU: the static check and, on CUDA,
the candidate's kernels compiled for the GPUs' architecture, carried to its judge) and the judge (`judge_on_ray`:
one GPU on CUDA, so Ray never puts two timings on one GPU; one CPU on the CPU), the second
depending on the first. The judge task runs `benchmarks.harness.judge.evaluate` in a Ray worker
process, which Ray keeps between tasks, so its spare workers, loaded tasks and baseline cache stay
warm. A request carries its task's files, so a node whose checkout lacks (or differs in) the
task file still judges the right one. A task whose worker process or node is lost is run again
by Ray (`max_retries`); a candidate's own faults never raise (they are verdicts), so only the
machinery's failures are retried. A re-measurement (`RemeasureRequest`) is one GPU task of its
own, so it never shares a GPU with a judge's timing either; so is a sweep (`SweepRequest`), after
its CPU stage's chunks (its configurations compiled ahead, a CPU task per chunk), whose caches'
union seeds its worker.

Every node needs kernforge installed (the same version as the caller: the verdicts are its
code's). Ray is an optional dependency (`pip install 'kernforge[ray]'`), imported only here.
"""

from __future__ import annotations

import os
from concurrent.futures import Future
from pathlib import Path
from typing import Any

from benchmarks.executor.base import Executor
from benchmarks.executor.local import gpu_arch, parse_answer
from benchmarks.executor.precompile import (
    Precompiled,
    merged,
    precompile,
    precompile_sweep,
    seed_folder,
    seeded,
    sweep_chunks,
)
from benchmarks.executor.request import (
    BaselineRequest,
    EvalRequest,
    ExecutorError,
    RemeasureRequest,
    Request,
    SweepRequest,
    baselines_request,
    judge_request,
    measure_request,
    sweep_request,
)

REPO_ROOT = Path(__file__).resolve().parents[2]
MAX_RETRIES = 3
INSTALL_HINT = "the ray executor needs Ray: pip install 'kernforge[ray]' (or: pip install ray)"


def import_ray() -> Any:
    """The `ray` module, or an ExecutorError that says how to install it."""
    try:
        import ray
    except ImportError:
        raise ExecutorError(INSTALL_HINT) from None
    return ray


def judge_on_ray(request: EvalRequest, staged: Precompiled | None) -> str:
    """The Ray task that judges one request (after its CPU stage, `staged`, whose compiled
    Triton cache, if any, is handed to this candidate's worker); the verdict as JSON."""
    import dataclasses
    import shutil

    from benchmarks.harness.child import default_root

    seed = seed_folder(staged, default_root())
    if seed is not None:
        config = dataclasses.replace(request.config, triton_cache_seed=str(seed))
        request = dataclasses.replace(request, config=config)
    try:
        return judge_request(request).model_dump_json()
    finally:
        if seed is not None:
            shutil.rmtree(seed, ignore_errors=True)


def measure_on_ray(request: RemeasureRequest) -> str:
    """The Ray task that re-measures a candidate against the incumbent; the Remeasure as JSON."""
    return measure_request(request).model_dump_json()


def baselines_on_ray(request: BaselineRequest) -> str:
    """The Ray task that measures a task's baselines into its node's cache ahead of the first
    candidate; the BaselinesReady as JSON."""
    return baselines_request(request).model_dump_json()


def sweep_on_ray(request: SweepRequest, *staged: Precompiled) -> str:
    """The Ray task that times a sweep's configurations (after its CPU stage's chunks, `staged`,
    whose caches' union is handed to its worker); the Sweep as JSON."""
    import shutil

    from benchmarks.harness.child import default_root

    union = merged(list(staged)) if staged else None
    seed = seed_folder(union, default_root())
    try:
        return sweep_request(seeded(request, seed, union)).model_dump_json()
    finally:
        if seed is not None:
            shutil.rmtree(seed, ignore_errors=True)


class RayExecutor(Executor):
    """See the module docstring. `address`: a running cluster ("auto", "ray://host:port");
    None starts a local Ray with `num_cpus` (and stops it on close)."""

    kind = "ray"

    def __init__(
        self,
        device: str,
        *,
        address: str | None = None,
        num_cpus: int | None = None,
        max_retries: int = MAX_RETRIES,
    ) -> None:
        ray = import_ray()
        self.device = device
        self._ray = ray
        self._owns = False
        if not ray.is_initialized():
            env = {
                "PYTHONPATH": os.pathsep.join(
                    filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH")])
                )
            }
            try:
                ray.init(
                    address=address,
                    num_cpus=num_cpus if address is None else None,
                    include_dashboard=False,
                    log_to_driver=False,
                    runtime_env={"env_vars": env} if address is None else None,
                )
            except (ConnectionError, RuntimeError, ValueError) as exc:
                where = address or "a local Ray instance"
                raise ExecutorError(f"ray executor: cannot start or reach {where}: {exc}") from None
            self._owns = True
        gpu = {"num_gpus": 1} if device == "cuda" else {}
        # the GPUs' architecture for the CPU stage's compile-ahead: this machine's first GPU
        # (a cluster of one GPU model); None where this machine has none (nothing compiled ahead)
        self.target = gpu_arch("0") if device == "cuda" else None
        self._stage = ray.remote(num_cpus=1, max_retries=max_retries)(precompile)
        self._judge = ray.remote(num_cpus=1, max_retries=max_retries, **gpu)(judge_on_ray)
        self._measure = ray.remote(num_cpus=1, max_retries=max_retries, **gpu)(measure_on_ray)
        self._baselines = ray.remote(num_cpus=1, max_retries=max_retries, **gpu)(baselines_on_ray)
        self._stage_sweep = ray.remote(num_cpus=1, max_retries=max_retries)(precompile_sweep)
        self._sweep = ray.remote(num_cpus=1, max_retries=max_retries, **gpu)(sweep_on_ray)
        resources = ray.cluster_resources()
        self.slots = max(1, int(resources.get("GPU" if device == "cuda" else "CPU", 1)))
        # a sweep's CPU stage is dealt over this many compile tasks (the cluster's CPUs)
        self.compile_slots = max(1, int(resources.get("CPU", 1)))
        if device == "cuda" and not resources.get("GPU"):
            raise ExecutorError(
                "ray executor: CUDA was asked for, but the Ray cluster offers no GPU "
                f"(resources: {dict(resources)})"
            )

    def describe(self) -> str:
        where = "local Ray" if self._owns else "Ray cluster"
        return f"ray: {where}, {self.slots} {'GPU' if self.device == 'cuda' else 'CPU'} slot(s)"

    def address(self) -> str:
        """The address other processes may join this Ray at (its GCS address)."""
        return str(self._ray.get_runtime_context().gcs_address)

    def submit(self, request: Request) -> Future:
        portable = request.portable()
        if isinstance(portable, RemeasureRequest):
            ref = self._measure.remote(portable)
            what = portable.label
        elif isinstance(portable, BaselineRequest):
            ref = self._baselines.remote(portable)
            what = portable.label
        elif isinstance(portable, SweepRequest):
            # the CPU stage in chunks, one Ray task each (one CPU), then one GPU task
            chunks = sweep_chunks(len(portable.sources), self.compile_slots) if self.target else []
            staged = [self._stage_sweep.remote(portable, self.target, c) for c in chunks]
            ref = self._sweep.remote(portable, *staged)
            what = portable.label
        else:
            ref = self._judge.remote(portable, self._stage.remote(portable, self.target))
            what = portable.label or portable.candidate
        out: Future = Future()
        out.set_running_or_notify_cancel()

        def done(inner: Future) -> None:
            try:
                out.set_result(parse_answer(portable, inner.result()))
            except Exception as exc:  # noqa: BLE001 - Ray's errors become the executor's
                out.set_exception(
                    ExecutorError(f"{what}: Ray could not judge it: {type(exc).__name__}: {exc}")
                )

        ref.future().add_done_callback(done)
        return out

    def close(self) -> None:
        if self._owns and self._ray.is_initialized():
            self._ray.shutdown()
        self._owns = False
