"""Fallback detection: did the candidate compute with Triton, or did PyTorch do the work?

Two tracers run around one candidate call inside the worker process:

- `AtenRecorder`, a `TorchDispatchMode`, records every aten op that PyTorch dispatches. Ops that
  allocate, view, copy or describe tensors are fine (a Triton wrapper needs them); anything else
  is compute done by PyTorch, and the candidate fails as `fallback`, naming the ops.
- `TritonLaunchCounter` wraps the launch path of every `@triton.jit` function (compiled and
  interpreted) and counts launches by kernel name; an autotuner's benchmark launches are counted
  apart (`tuning`), so every call of a shape launches the same kernels. Ops dispatched *inside* a
  Triton launch are recorded apart (`launch_ops`): the interpreter's own copies to and from host
  memory are allowed ops, but under `TRITON_INTERPRET` a kernel body is Python and can call
  PyTorch, and compute there is a fallback like any other.

Both are installed by the worker before the candidate module is imported, and `record_call`
traces every call the worker makes, with the probes of `benchmarks.harness.probes` beside them.
The worker only records; the judge decides (`benchmarks.harness.calls`).

Every compute op the recorder sees is also written, as it is dispatched, to a pipe whose other
end the judge holds (`OPS_FD_ENV` names it; `benchmarks.harness.child.Child` reads it): the
recorder's own counts live in the candidate's process, which can clear them in place
(tests/hostile/calls_clear_the_recorder.py passed that way), but a name written to the pipe
cannot be taken back. The judge fails any evaluation whose pipe carried a compute op, and one
whose pipe closed before the worker's result came.
"""

from __future__ import annotations

import os
import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from benchmarks.harness.messages import OPS_FD_ENV
from benchmarks.harness.probes import TAMPERED_EXIT
from benchmarks.harness.transport import plain

# aten ops a Triton wrapper may run: allocation, views and reshapes, copies and casts, metadata.
# Everything else is compute done by PyTorch.
ALLOWED_ATEN_OPS: frozenset[str] = frozenset(
    {
        # allocation and fills used to initialise buffers
        "empty",
        "empty_like",
        "empty_strided",
        "empty_permuted",
        "new_empty",
        "new_empty_strided",
        "zeros",
        "zeros_like",
        "new_zeros",
        "ones",
        "ones_like",
        "new_ones",
        "full",
        "full_like",
        "new_full",
        "fill_",
        "fill",
        "zero_",
        "scalar_tensor",
        "arange",
        "lift_fresh",
        "lift_fresh_copy",
        "resize_",
        "set_",
        # views and layout
        "view",
        "_unsafe_view",
        "reshape",
        "as_strided",
        "as_strided_",
        "permute",
        "transpose",
        "transpose_",
        "t",
        "t_",
        "expand",
        "expand_as",
        "unsqueeze",
        "unsqueeze_",
        "squeeze",
        "squeeze_",
        "slice",
        "select",
        "narrow",
        "split",
        "split_with_sizes",
        "chunk",
        "unbind",
        "unfold",
        "flatten",
        "unflatten",
        "movedim",
        "alias",
        "detach",
        "detach_",
        "view_as",
        "view_as_real",
        "view_as_complex",
        "_reshape_alias",
        "diagonal",
        "contiguous",
        "clone",
        "_to_copy",
        "copy_",
        "to",
        "_copy_from",
        "_copy_from_and_resize",
        "set_requires_grad",
        # metadata and host syncs
        "sym_size",
        "sym_stride",
        "sym_numel",
        "sym_storage_offset",
        "size",
        "stride",
        "numel",
        "dim",
        "is_contiguous",
        "is_same_size",
        "is_nonzero",
        "_local_scalar_dense",
        "item",
        "record_stream",
        "_has_compatible_shallow_copy_type",
        "storage_offset",
    }
)


def op_name(func: Any) -> str:
    """'aten::softmax.int' -> 'softmax' (the overload packet name without namespace)."""
    packet = getattr(func, "overloadpacket", None)
    name = getattr(packet, "__name__", None) or str(func)
    return name.split("::")[-1].split(".")[0]


class _State(threading.local):
    in_triton_launch: int = 0
    tuning: int = 0  # inside an autotuner's benchmark of its configs


_state = _State()


# Allowed ops that write data (rather than allocate, fill or view). A wrapper may use them on
# its way in (make an input contiguous, cast it); if the *output* is the storage one of them
# wrote, PyTorch produced the answer — on a permutation task that is the whole job.
COPY_WRITERS: frozenset[str] = frozenset(
    {"clone", "_to_copy", "copy_", "_copy_from", "_copy_from_and_resize", "contiguous", "to"}
)


def _copied(name: str, args: Any, result: Any) -> int:
    """Elements a copy op wrote: its destination (an in-place copy's first operand) or its result."""
    in_place = name.endswith("_") and args and isinstance(args[0], torch.Tensor)
    target = args[0] if in_place else result
    if isinstance(target, tuple | list):
        return sum(int(t.numel()) for t in target if isinstance(t, torch.Tensor))
    return int(target.numel()) if isinstance(target, torch.Tensor) else 0


_FP8 = {d for d in (getattr(torch, n, None) for n in dir(torch) if n.startswith("float8")) if d}


def _quantizing(name: str, args: Any, result: Any) -> int:
    """Elements a copy op rounded from floating point to fp8 or to an integer type: a cast that
    is a quantization's whole computation (the rounding), not a copy."""
    if name.endswith("_"):
        dst, src = (args[0], args[1]) if len(args) > 1 else (None, None)
    else:
        dst, src = result, (args[0] if args else None)
    if not (isinstance(dst, torch.Tensor) and isinstance(src, torch.Tensor)):
        return 0
    if not src.is_floating_point() or src.dtype in _FP8:
        return 0
    narrowing = dst.dtype in _FP8 or not (dst.is_floating_point() or dst.is_complex())
    return int(dst.numel()) if narrowing and dst.dtype != torch.bool else 0


def storage_key(t: torch.Tensor) -> int:
    """The address of a tensor's storage: views of one buffer share it."""
    return int(t.untyped_storage().data_ptr())


def _ops_fd() -> int:
    """The op pipe's descriptor (-1 outside a judge's worker)."""
    try:
        return int(os.environ.pop(OPS_FD_ENV, "-1"))
    except ValueError:
        return -1


def pipe_identity(fd: int) -> tuple[int, int] | None:
    """What `fd` refers to (device and inode of the open file), or None when it is not open. A
    descriptor pointed elsewhere (`os.dup2` of another file onto its number) answers otherwise."""
    try:
        found = os.fstat(fd)
    except (OSError, ValueError):
        return None
    return (found.st_dev, found.st_ino)


_OPS_FD = _ops_fd()
_OPS_ID = pipe_identity(_OPS_FD) if _OPS_FD >= 0 else None  # the pipe the judge reads
_ARMED = False  # set by `arm_reports` when the worker takes a candidate job (never unset)
_write, _fstat, _exit = os.write, os.fstat, os._exit


def ops_fd() -> tuple[int, tuple[int, int] | None]:
    """The op pipe's descriptor in this process (-1 outside a judge's worker) and what it
    referred to when this module was imported."""
    return _OPS_FD, _OPS_ID


def arm_reports() -> None:
    """Start writing compute ops to the judge's pipe: called by the worker once it has a
    candidate's job, before the candidate is imported and before this module is sealed (the
    worker's own warm-up dispatches compute ops that are nobody's fallback)."""
    global _ARMED
    _ARMED = True


def _report(name: str, inside: bool) -> None:
    """Write one compute op's name to the judge's pipe ("launch:" before it when dispatched
    inside a Triton launch). A write that fails is not the call's concern: the judge sees the
    pipe closed. A descriptor that no longer refers to the judge's pipe (a copy of the pipe kept
    open elsewhere, another file put on its number: tests/hostile/calls_dup_the_op_pipe.py)
    ends the process as tampering: the report would go nowhere while the judge saw nothing
    close."""
    if not _ARMED or _OPS_FD < 0 or name in ALLOWED_ATEN_OPS:
        return
    try:
        found = _fstat(_OPS_FD)
        moved = (found.st_dev, found.st_ino) != _OPS_ID
    except (OSError, ValueError):
        return  # closed: the judge sees the pipe close before the result
    if moved:
        try:
            _write(2, b"\nreplaced: the op pipe's descriptor points elsewhere\n")
        finally:
            _exit(TAMPERED_EXIT)
    try:
        _write(_OPS_FD, (("launch:" if inside else "") + name + "\n").encode())
    except OSError:
        pass


class AtenRecorder(TorchDispatchMode):
    """Counts the aten ops dispatched while active, except inside Triton launches, and remembers
    which storages copy ops wrote."""

    def __init__(self) -> None:
        super().__init__()
        self.ops: Counter[str] = Counter()
        self.launch_ops: Counter[str] = Counter()  # dispatched inside a Triton launch
        self.copy_written: dict[int, str] = {}
        self.copied = 0  # elements PyTorch copy ops wrote (`_copied`)
        self.quantized = 0  # elements cast from floating point to fp8 or an integer type

    @classmethod
    def _should_skip_dynamo(cls) -> bool:
        """False: leave `__torch_dispatch__` as written. PyTorch would otherwise wrap it in
        `torch._disable_dynamo`, whose first call imports the whole of torch._dynamo: 1.2-1.5
        CPU-s in every fresh worker on this project's CPU machine, about a third of a worker's
        start, spent on a compiler no honest candidate uses. (The wrapper only keeps Dynamo from
        tracing this method's frames, and a candidate that compiles with Dynamo inside a traced
        call is a fallback whichever way the recorder's frames are handled:
        tests/hostile/torch_compile.py.)"""
        return False

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # noqa: ANN001
        result = func(*args, **(kwargs or {}))
        if _state.in_triton_launch:
            self.launch_ops[op_name(func)] += 1
            _report(op_name(func), True)
        else:
            name = op_name(func)
            self.ops[name] += 1
            _report(name, False)
            if name in COPY_WRITERS:
                targets = (
                    [args[0]]
                    if name.endswith("_") and args
                    else (result if isinstance(result, tuple | list) else [result])
                )
                for t in targets:
                    if isinstance(t, torch.Tensor) and t.numel() > 0:
                        self.copy_written[storage_key(t)] = name
                self.copied += _copied(name, args, result)
                self.quantized += _quantizing(name, args, result)
        return result

    def compute_ops(self) -> dict[str, int]:
        return {name: n for name, n in sorted(self.ops.items()) if name not in ALLOWED_ATEN_OPS}


class TritonLaunchCounter:
    """Wraps `run` of Triton's JIT and interpreter function classes to count kernel launches."""

    def __init__(self) -> None:
        self.launches: Counter[str] = Counter()
        self.tuning: Counter[str] = Counter()  # launches an autotuner made to time its configs
        self._installed: list[tuple[type, Any]] = []
        self.tracking = False  # record the storages handed to kernels (only while tracing)
        self.storages: set[int] = set()
        # per kernel name, the hardware features of its compiled PTX (GPU only: the interpreter
        # compiles nothing), read from what Triton's launch returns while tracing
        self.ptx_features: dict[str, dict[str, bool]] = {}
        # when a set: the CUDA stream each launch went to (the handle Triton launches on), so the
        # worker can tell side streams where torch.profiler cannot run (the launch observer)
        self.streams: set[int] | None = None
        # launches in all when the last traced call returned (inside every probe): the worker
        # checks that none follow until it has shipped that call's outputs
        self.closed_at = 0

    def install(self) -> None:
        classes: list[type] = []
        from triton.runtime.jit import JITFunction

        classes.append(JITFunction)
        try:
            from triton.runtime.interpreter import InterpretedFunction

            classes.append(InterpretedFunction)
        except ImportError:  # pragma: no cover - every triton we support has the interpreter
            pass
        for cls in classes:
            original = cls.run
            self._installed.append((cls, original))
            cls.run = self._wrap(original)  # type: ignore[method-assign]
        try:
            from triton.runtime.autotuner import Autotuner
        except ImportError:  # pragma: no cover
            return
        bench = Autotuner._bench
        self._installed.append((Autotuner, bench))

        def _bench(tuner: Any, *args: Any, **kwargs: Any) -> Any:
            _state.tuning += 1
            try:
                return bench(tuner, *args, **kwargs)
            finally:
                _state.tuning -= 1

        Autotuner._bench = _bench  # type: ignore[method-assign]

    def uninstall(self) -> None:
        for cls, original in self._installed:
            setattr(cls, original.__name__, original)
        self._installed.clear()

    def record_ptx(self, name: str, compiled: Any) -> None:
        """Scan the PTX of a compiled kernel (Triton's CompiledKernel keeps it in `asm["ptx"]`)."""
        from benchmarks.harness.ptx import merge_features, ptx_features

        asm = getattr(compiled, "asm", None)
        text = asm.get("ptx") if isinstance(asm, dict) else None
        if isinstance(text, bytes):
            text = text.decode(errors="replace")
        if isinstance(text, str) and text:
            found = ptx_features(text)
            self.ptx_features[name] = (
                merge_features([self.ptx_features[name], found])
                if name in self.ptx_features
                else found
            )

    def _wrap(self, original: Any) -> Any:
        counter = self

        def run(fn_self: Any, *args: Any, **kwargs: Any) -> Any:
            if not kwargs.get("warmup", False):
                inner = getattr(fn_self, "fn", None)
                name = getattr(inner, "__name__", repr(fn_self))
                (counter.tuning if _state.tuning else counter.launches)[name] += 1
                if counter.streams is not None:
                    counter.streams.add(torch.cuda.current_stream().cuda_stream)
                if counter.tracking:
                    for a in (*args, *kwargs.values()):
                        if isinstance(a, torch.Tensor):
                            counter.storages.add(storage_key(a))
            _state.in_triton_launch += 1
            try:
                compiled = original(fn_self, *args, **kwargs)
            finally:
                _state.in_triton_launch -= 1
            if counter.tracking and not kwargs.get("warmup", False):
                counter.record_ptx(
                    getattr(getattr(fn_self, "fn", None), "__name__", repr(fn_self)), compiled
                )
            return compiled

        return run

    def snapshot(self) -> Counter[str]:
        return Counter(self.launches)


@contextmanager
def trace_call(counter: TritonLaunchCounter) -> Iterator[tuple[AtenRecorder, Counter[str]]]:
    """Record aten ops and the Triton launches made during the block.

    Yields (recorder, launches); `launches` is filled in when the block exits."""
    before = counter.snapshot()
    launches: Counter[str] = Counter()
    recorder = AtenRecorder()
    counter.storages = set()
    counter.tracking = True
    try:
        with recorder:
            yield recorder, launches
    finally:
        counter.tracking = False
    launches.update(counter.snapshot() - before)


def record_call(counter: TritonLaunchCounter, fn: Any, args: tuple, sync: Any) -> tuple[Any, Any]:
    """Call `fn(*args)` (then `sync()`) traced and probed: (its output, rebuilt by `plain`, and
    its `FallbackInfo`)."""
    from benchmarks.harness import probes
    from benchmarks.harness.messages import FallbackInfo

    with trace_call(counter) as (recorder, launches):
        with probes.watch(recorder, read_cap=probes.PYTHON_READ_STOP) as probe:
            out = fn(*args)
            sync()
            counter.closed_at = sum(counter.launches.values())
            out = plain(out)
            for arg in args:  # the inputs, which the worker also reads after the call
                plain(arg)  # for its tensors' attributes, dropped in place
    outs = list(out) if type(out) in (tuple, list) else [out]
    return out, FallbackInfo(
        compute_ops=recorder.compute_ops(),
        all_ops=dict(recorder.ops),
        launches=dict(launches),
        output_problems=output_problems(outs, recorder, counter),
        launch_ops=dict(recorder.launch_ops),
        scalar_reads=probe.scalar_reads,
        python_elements=probe.python_elements,
        native_threads=probe.native_threads,
        evasions=list(probe.evasions),
        copied=recorder.copied,
        quantized=recorder.quantized,
        out_elements=sum(o.numel() for o in outs if isinstance(o, torch.Tensor)),
    )


def protect_tracers(counter: TritonLaunchCounter) -> None:
    """Register the tracers' code with `probes.protect`, so a candidate that patches them
    (through sys.modules) is seen after its next call."""
    import sys

    from benchmarks.harness import probes

    probes.protect(
        AtenRecorder, ["__torch_dispatch__", "compute_ops", "__init__", "__enter__", "__exit__"]
    )
    probes.protect(TritonLaunchCounter, ["_wrap", "snapshot", "record_ptx"])
    probes.protect(
        sys.modules[__name__],
        ["trace_call", "record_call", "output_problems", "op_name", "storage_key", "_state"],
    )
    for cls, _ in counter._installed:
        probes.protect(cls, ["run", "_bench"])
    probes.protect(counter, ["launches", "tuning"])


def output_problems(
    outputs: list[Any], recorder: AtenRecorder, counter: TritonLaunchCounter
) -> list[str]:
    """Outputs a Triton kernel did not produce: written by a PyTorch copy op, or never handed to
    any Triton kernel during the call."""
    problems = []
    for i, out in enumerate(outputs):
        if not isinstance(out, torch.Tensor) or out.numel() == 0:
            continue
        key = storage_key(out)
        if key in recorder.copy_written:
            problems.append(
                f"output {i} is storage written by PyTorch ({recorder.copy_written[key]}), not by a Triton kernel"
            )
        elif key not in counter.storages:
            problems.append(f"output {i} was never passed to a Triton kernel")
    return problems


def allowed(name: str) -> bool:
    return name in ALLOWED_ATEN_OPS


__all__ = [
    "ALLOWED_ATEN_OPS",
    "AtenRecorder",
    "TritonLaunchCounter",
    "allowed",
    "op_name",
    "output_problems",
    "protect_tracers",
    "record_call",
    "trace_call",
]
