"""Decode shapes timed as served: many calls captured into one CUDA graph, then replayed.

A decode step runs a few microseconds of GPU work per operator. Timed call by call, what is
measured there is the host: Python, the launcher, the driver (3.5-5 µs per call on an H200, and
48-100 µs for a generated GEMM's launcher), not the kernel. Serving stacks (vLLM, SGLang,
TensorRT-LLM) run decode under CUDA graphs, where a launch costs well under a microsecond. So
the judge times every decode-phase shape twice: call by call as always, and as served here. The
same function times the candidate (in its sandboxed worker) and the task's reference eagerly and
under torch.compile (in the trusted baseline worker), so the three figures are alike; the
verdict keeps both figures and says which one its score uses (`benchmarks.harness.perf`).

How one shape is timed:

- **Copies.** The calls rotate over `calls` copies of the timing inputs (same sizes, strides and
  values; the first copy is the timing inputs themselves), enough that the bytes they read
  together are at least the flush size (twice the L2 cache): each call then reads its inputs from
  HBM, as a served step reads each layer's weights, and not from the L2 the previous call warmed.
  At least MIN_CALLS calls (the replay's own launch is amortised), at most MAX_CALLS, and the
  copies together under MAX_COPY_BYTES. An input that cannot be copied with its strides (an
  expanded view) is shared by every call.
- **Capture.** One uncaptured call per copy on a side stream first (what a candidate allocates
  or caches on a first call happens outside the graph), then every call captured into one graph.
  The candidate's worker traces both as one call (its PyTorch ops, Python element reads and
  Triton launches: twice `calls` times one call's launches) and checks its tracers were not
  tampered with; the replay goes through the C++ graph type, so nothing the candidate set on an
  object runs in its place.
- **Time.** `profiling.time_cuda` of a replay (L2 flushed before each, device-wide sync), divided
  by the number of calls.
- **Check** (the candidate only). The first copy's inputs are changed in place at
  `after_timing.CHANGED_PER_INPUT` positions each (`graph_nudge`) and the graph is replayed:
  its answer lands in the first call's output, which the worker ships as a trial file. The judge
  regenerates the inputs, makes the same changes and compares. A candidate that does its work only
  outside capture (returns a cached tensor while `torch.cuda.is_current_stream_capturing()`, or
  captures a copy of an answer computed before) replays a stale answer and fails.

A capture that fails (a candidate that synchronises, reads a scalar, or uses an API a graph
cannot hold) leaves the shape timed call by call, with the reason in the verdict: that is a
property of the kernel, and the score then uses the per-call figure for every method alike.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

# the serving phases timed as served (the task's Shape.phase)
GRAPH_PHASES = ("decode",)
MIN_CALLS = 8
MAX_CALLS = 256
MAX_COPY_BYTES = 4 << 30


def wants_graph(phase: str) -> bool:
    """Whether shapes of this serving phase are also timed inside a CUDA graph."""
    return phase in GRAPH_PHASES


def graph_nudge(args: tuple | list, base: int, shape: str, skip: tuple[int, ...] = ()) -> None:
    """The change made to the first copy's inputs before the graph's checked replay
    (`after_timing.change_inputs` for "after-graph"): the worker and the judge both call this."""
    from benchmarks.harness.after_timing import change_inputs

    change_inputs(args, base, shape, "after-graph", skip=skip)


def plan_calls(
    input_bytes: int,
    flush_bytes: int,
    *,
    min_calls: int = MIN_CALLS,
    max_calls: int = MAX_CALLS,
    max_total: int = MAX_COPY_BYTES,
) -> int:
    """How many calls (one per input copy) a graph holds: enough copies that they read at least
    `flush_bytes` together, within [min_calls, max_calls], and no more copies than fit in
    `max_total` bytes (but at least 2 when even that does not fit: the L2 then holds neither)."""
    per = max(1, int(input_bytes))
    calls = max(min_calls, math.ceil(flush_bytes / per))
    calls = min(calls, max_calls)
    if calls * per > max_total:
        calls = max(2, max_total // per)
    return int(calls)


def input_bytes(args: tuple | list) -> int:
    """The bytes of the tensors in `args` (each storage counted once)."""
    import torch

    seen: set[int] = set()
    total = 0
    for a in args:
        if isinstance(a, torch.Tensor) and a.numel():
            key = a.untyped_storage().data_ptr()
            if key not in seen:
                seen.add(key)
                total += a.untyped_storage().nbytes()
    return total


def copy_inputs(args: tuple | list) -> tuple:
    """A copy of `args`: every tensor with the same size, strides and values in fresh memory;
    what is not a tensor, and a tensor that cannot be written with its own strides (an
    expanded view), is shared."""
    import torch

    out = []
    for a in args:
        if isinstance(a, torch.Tensor):
            try:
                c = torch.empty_strided(a.size(), a.stride(), dtype=a.dtype, device=a.device)
                c.copy_(a)
            except RuntimeError:
                c = a
            out.append(c)
        else:
            out.append(a)
    return tuple(out)


@dataclass
class Captured:
    """A graph of one call per copy of the inputs, and each call's output."""

    graph: Any
    copies: list[tuple]
    outs: list[Any]

    @property
    def calls(self) -> int:
        return len(self.copies)


def make_copies(args: tuple | list, flush_bytes: int) -> list[tuple]:
    """The inputs of a graph's calls: `args` itself, then copies (`plan_calls` of them in all).
    Made before any candidate code runs in the capture, so their copies are not its work."""
    calls = plan_calls(input_bytes(args), flush_bytes)
    return [tuple(args)] + [copy_inputs(args) for _ in range(calls - 1)]


def capture(fn: Callable[..., Any], copies: list[tuple]) -> Captured:
    """`fn` called once per copy uncaptured on a side stream (lazy set-up, caches keyed on
    pointers), then once per copy captured into one CUDA graph. The caller traces this: it is
    the candidate's code, 2 x len(copies) calls. Raises what the capture raised."""
    import torch

    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for c in copies:
            fn(*c)
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    outs: list[Any] = []
    with torch.cuda.graph(graph):
        for c in copies:
            outs.append(fn(*c))
    torch.cuda.synchronize()
    return Captured(graph=graph, copies=copies, outs=outs)


def replay(captured: Captured) -> None:
    """Replay the graph through the C++ type's method: an attribute the candidate's code set on
    the graph object, or on torch's Python subclass, is never what runs."""
    import torch

    torch._C._CUDAGraph.replay(captured.graph)


def time_replay(captured: Captured, **budget: Any) -> tuple[float, float, float, int]:
    """(median, p20, p80) microseconds per call of the captured graph's replays, and the reps.
    `budget`: `profiling.time_cuda`'s warmup_ms / rep_ms / max_reps (its defaults without)."""
    from profiling import time_cuda

    replay(captured)  # one replay outside the clock
    timing = time_cuda(lambda: replay(captured), device_wide=True, **budget)
    n = captured.calls
    return timing.median_us / n, timing.p20_us / n, timing.p80_us / n, timing.reps


def time_in_graph(fn: Callable[..., Any], args: tuple, **budget: Any) -> tuple[float | None, str]:
    """Per-call microseconds of `fn(*args)` inside a CUDA graph, or (None, why the capture
    failed): the baselines (trusted code) and the sweep's ranking (`budget` as `time_replay`'s).
    Not the judge's timing of a candidate, which traces the capture (worker._time_graph)."""
    import torch

    from profiling import flush_bytes

    try:
        captured = capture(fn, make_copies(args, flush_bytes(torch.cuda.current_device())))
        median, _, _, _ = time_replay(captured, **budget)
        del captured
        torch.cuda.synchronize()
    except Exception as exc:  # noqa: BLE001 - what cannot be captured is timed per call
        torch.cuda.synchronize()
        return None, f"{type(exc).__name__}: {str(exc)[:300]}"
    return median, ""
