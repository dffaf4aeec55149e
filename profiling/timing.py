"""Honest GPU timing.

How `time_cuda` measures one callable:

1. One untimed call (Triton compiles and autotunes here), then a device-wide synchronize.
2. A short estimate (5 timed calls) sizes the warm-up and the number of repetitions from
   `warmup_ms` and `rep_ms`, clamped to [`min_reps`, `max_reps`].
3. Warm-up calls, untimed.
4. Each timed repetition: read a buffer at least twice the L2 size (so the call starts with a
   cold L2, as it would in a model where other layers ran in between; reading rather than
   writing leaves clean lines, so the call does not pay for someone else's write-backs), record a
   CUDA event, call, record a second event. The flush is queued *before* the start event, so it
   is not timed. Between the flush and the start event a spin kernel (`torch.cuda._sleep`, about
   20 us) keeps the GPU busy while the host enqueues the call, so the start event cannot fire
   while Python is still launching the kernel; a real model's stream hides the launch the same
   way. One gap against ncu remains open (docs/results/design_measurements.md, "Clock against
   Nsight Compute").
5. Median of the per-call times (mean, min, p20 and p80 come along).

`device_wide=True` adds `torch.cuda.synchronize()` after the call and records the end event only
after it returns, so work a candidate launches on other streams cannot escape the clock. The price:
the host's synchronize round trip (a few microseconds) is inside every sample. `launch_floor_us`
measures an empty Triton kernel with the same protocol, so compare small shapes against the floor
measured the same way.

`time_cpu` is host wall-clock time, for the harness's own bookkeeping; it never times a kernel.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

import torch

# Captured once, at import. The candidate under test runs in the same worker process as this
# timer; a candidate that later replaces `torch.cuda.synchronize`, `torch.cuda.Event.record`,
# `elapsed_time` or `Tensor.zero_` (to return flattering numbers or skip the L2 flush) changes
# the names in torch's namespace, not these references, so it cannot change how we measure.
# The worker must import this module before it imports the candidate.
_perf_counter = time.perf_counter
_sync = torch.cuda.synchronize
_cuda_available = torch.cuda.is_available
_current_device = torch.cuda.current_device
_current_stream = torch.cuda.current_stream
_device_props = torch.cuda.get_device_properties
_Event = torch.cuda.Event
_event_record = torch.cuda.Event.record
_event_elapsed_ms = torch.cuda.Event.elapsed_time
_empty = torch.empty
_zero_ = torch.Tensor.zero_
_sum = torch.sum
_spin = torch.cuda._sleep
_uint8 = torch.uint8
_float32 = torch.float32
_IS_HIP = getattr(torch.version, "hip", None) is not None

_MIB = 1 << 20
_FALLBACK_L2_BYTES = 256 * _MIB
# AMD MI300-class parts keep a 256 MB Infinity Cache behind the L2 that L2_cache_size does not
# count; flush at least this much there.
_HIP_MIN_FLUSH_BYTES = 512 * _MIB
_ESTIMATE_REPS = 5
# GPU clock cycles the spin kernel waits before each start event: about 20 us at a 2 GHz clock,
# longer than the host needs to launch a Triton kernel from Python
_SPIN_CYCLES = 40_000


@dataclass
class TimingResult:
    """Per-call times in microseconds, from `time_cuda`, `time_cpu` or `summarize_samples`."""

    median_us: float
    mean_us: float
    min_us: float
    p20_us: float
    p80_us: float
    reps: int
    method: str
    samples_us: list[float] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def percentile(values: list[float], q: float) -> float:
    """The q-th percentile (0..100) with linear interpolation between order statistics."""
    if not values:
        raise ValueError("percentile of an empty list")
    if not 0.0 <= q <= 100.0:
        raise ValueError(f"percentile q must be in [0, 100], got {q}")
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q / 100.0
    lo = math.floor(pos)
    hi = math.ceil(pos)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def summarize_samples(samples_us: list[float], method: str) -> TimingResult:
    """Reduce per-call samples (microseconds) to a `TimingResult`."""
    if not samples_us:
        raise ValueError("no timing samples to summarize")
    samples = [float(s) for s in samples_us]
    return TimingResult(
        median_us=percentile(samples, 50.0),
        mean_us=sum(samples) / len(samples),
        min_us=min(samples),
        p20_us=percentile(samples, 20.0),
        p80_us=percentile(samples, 80.0),
        reps=len(samples),
        method=method,
        samples_us=samples,
    )


def flush_bytes(device_index: int | None = None) -> int:
    """Bytes read before each timed call: twice the L2 (256 MB assumed if unknown)."""
    if device_index is None:
        device_index = _current_device()
    l2 = int(getattr(_device_props(device_index), "L2_cache_size", 0) or 0)
    size = 2 * (l2 if l2 > 0 else _FALLBACK_L2_BYTES)
    if _IS_HIP:
        size = max(size, _HIP_MIN_FLUSH_BYTES)
    return size


def _timed_calls(
    fn: Callable[[], Any],
    reps: int,
    stream: Any,
    flush_buffer: Any,
    device_wide: bool,
) -> list[float]:
    """Run `fn` `reps` times under the protocol in the module docstring; per-call microseconds."""
    starts = [_Event(enable_timing=True) for _ in range(reps)]
    ends = [_Event(enable_timing=True) for _ in range(reps)]
    for start, end in zip(starts, ends, strict=True):
        if flush_buffer is not None:
            # Flush by READING a buffer twice the L2: the L2 is left full of clean lines, as after
            # ncu's cache invalidation. Writing it (zero_) would leave dirty lines whose
            # write-back the timed kernel then pays for (docs/results/design_measurements.md,
            # "L2 flush").
            _sum(flush_buffer)
        _spin(_SPIN_CYCLES)
        _event_record(start, stream)
        fn()
        if device_wide:
            _sync()
        _event_record(end, stream)
    _sync()
    return [_event_elapsed_ms(start, end) * 1000.0 for start, end in zip(starts, ends, strict=True)]


def time_cuda(
    fn: Callable[[], Any],
    *,
    warmup_ms: float = 25.0,
    rep_ms: float = 100.0,
    min_reps: int = 10,
    max_reps: int = 1000,
    flush: bool = True,
    device_wide: bool = False,
) -> TimingResult:
    """Time `fn()` on the current CUDA device; see the module docstring for the protocol.

    Raises RuntimeError without a CUDA device: callers then report performance as
    "not measured", never a number.
    """
    if not _cuda_available():
        raise RuntimeError(
            "time_cuda needs a CUDA device; without one, performance is not measured"
        )
    if min_reps < 1 or max_reps < min_reps:
        raise ValueError(f"need 1 <= min_reps <= max_reps, got {min_reps} and {max_reps}")
    if warmup_ms < 0 or rep_ms <= 0:
        raise ValueError(f"need warmup_ms >= 0 and rep_ms > 0, got {warmup_ms} and {rep_ms}")

    device_index = _current_device()
    stream = _current_stream(device_index)
    n_flush = flush_bytes(device_index) if flush else 0
    flush_buffer = (
        _zero_(_empty(n_flush // 4, dtype=_float32, device=f"cuda:{device_index}"))
        if flush
        else None
    )

    fn()  # compile, autotune, allocate: never timed
    _sync()

    estimate_us = max(
        percentile(_timed_calls(fn, _ESTIMATE_REPS, stream, flush_buffer, device_wide), 50.0), 1e-3
    )
    n_warmup = max(1, math.ceil(warmup_ms * 1000.0 / estimate_us)) if warmup_ms > 0 else 0
    n_reps = min(max_reps, max(min_reps, math.ceil(rep_ms * 1000.0 / estimate_us)))

    # Stop warming up at whichever comes first: n_warmup calls (GPU time) or warmup_ms of host
    # time (a tiny kernel's launches are host-bound, and thousands of them warm nothing more).
    warmup_start = _perf_counter()
    for i in range(n_warmup):
        fn()
        if i > 0 and (_perf_counter() - warmup_start) * 1000.0 > warmup_ms:
            n_warmup = i + 1
            break
    _sync()
    samples = _timed_calls(fn, n_reps, stream, flush_buffer, device_wide)

    method = "cuda events around each call; " + (
        f"{n_flush // _MIB} MiB read before each call to flush L2; " if flush else "no L2 flush; "
    )
    method += (
        "end event recorded after a device-wide synchronize; "
        if device_wide
        else "end event on the launching stream; "
    )
    method += f"{n_warmup} warm-up calls; median of {n_reps}; a ~20 us spin kernel before each start event"
    return summarize_samples(samples, method)


_launch_floor_cache: dict[tuple[int, bool, bool], float] = {}


def launch_floor_us(*, flush: bool = True, device_wide: bool = False) -> float:
    """Median time of an empty Triton kernel launch, timed as `time_cuda` times a candidate.

    A shape whose measured time sits near this floor is launch-bound: its kernel cannot get
    faster, only fewer launches can help. Cached per device and protocol for the process.
    """
    if not _cuda_available():
        raise RuntimeError("launch_floor_us needs a CUDA device; without one it is not measured")
    device_index = _current_device()
    key = (device_index, flush, device_wide)
    if key not in _launch_floor_cache:
        from profiling._empty_kernel import empty_kernel

        target = _empty(1, dtype=_uint8, device=f"cuda:{device_index}")

        def launch() -> None:
            empty_kernel[(1,)](target)

        result = time_cuda(launch, flush=flush, device_wide=device_wide)
        _launch_floor_cache[key] = result.median_us
    return _launch_floor_cache[key]


def time_cpu(fn: Callable[[], Any], reps: int = 10, *, warmup: int = 1) -> TimingResult:
    """Host wall-clock time of `fn()` with `time.perf_counter`: harness bookkeeping only.

    No GPU synchronisation happens here, so it must never be read as a kernel's time.
    """
    if reps < 1 or warmup < 0:
        raise ValueError(f"need reps >= 1 and warmup >= 0, got {reps} and {warmup}")
    for _ in range(warmup):
        fn()
    samples = []
    for _ in range(reps):
        t0 = _perf_counter()
        fn()
        samples.append((_perf_counter() - t0) * 1e6)
    return summarize_samples(samples, f"host wall clock (time.perf_counter); median of {reps}")
