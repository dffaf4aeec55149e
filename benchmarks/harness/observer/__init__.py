"""The launches a candidate's process made, as a CUPTI library in that process counted them.

On a GPU the fallback decision must not rest on what the candidate's own Python reports (its
process can rewrite those reports; docs/judge.md). `kf_observer.c`, loaded by the CUDA driver
into the worker when it initialises CUDA (`CUDA_INJECTION64_PATH`, before any candidate code is
imported), counts every kernel launch by function and remembers which shared object launched
each function first: Triton's generated launcher, or libtorch, cuBLAS, cuDNN and the like. At
every launch of the worker's marker kernel it writes the counts since the previous marker to a
pipe whose read end the judge holds, each line numbered and tagged (SipHash-2-4) with a key the
judge wrote to another pipe that the library read and closed before the candidate existed.

The worker launches the marker at fixed points, so the counts come in windows:

    0  the worker's warm-up (timing, profiler, trial files): the harness's own kernel names
    1  the digests the worker computes of what it ships (`transport.digest`, on 64-bit words)
    2  the task loaded and each shape's inputs made once per mode: a task's one-time work (a
       TritonBench file runs its own tests when loaded); judged by nothing, allowed nowhere
    3  the dry pass: every correctness trial's inputs made, copied and compared as the trial
       will, before the candidate is imported (its launches counted exactly)
    4  the candidate imported and bound to each shape (not judged: no input exists yet)
    5  the correctness trials
    6  the per-call timing of every timed shape (when it ran)
    7  the timing as served, in CUDA graphs (when it ran; empty when no shape is)

The judge (`check`) then decides from the counts alone: in the trials, every launch not made by
Triton's launcher must be a fill or a copy, or be matched one for one by the dry pass (the
worker's own input making), or carry a name of the digest window (the digests of shipped
tensors, whose number depends on the outputs); anything else is PyTorch or a library computing
(`fallback`). In the timing windows the same by name, the warm-up's names (the timer's own
kernels) allowed too. The library also counts each window's launches per stream: while timed per
call, work queued on a stream other than the one the timer records its events on (the marker's
stream, or one the worker's own input making used) goes unmeasured unless the worker timed
device-wide, so such launches with a per-stream timing are an evasion. Fewer windows than the worker's markers, more, a line out of sequence or with a bad tag
means the observation was tampered with (`trace_evaded`).

Limits (docs/judge.md): native code in the candidate's process can still reach the library's
memory or CUPTI itself; the checks above make silencing it show (missing windows, missing
worker launches). Kernels in a CUDA graph's replays are not seen one by one (the capture is);
a graph launched during the trials is a fallback.
"""

from __future__ import annotations

import os
import secrets
import threading
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[3]

LIB_ENV = "KERNFORGE_OBSERVER_LIB"  # the built library; default DEFAULT_LIB
OFF_ENV = "KERNFORGE_OBSERVER_OFF"  # "1": do not observe even where the library is built
FD_ENV = "KERNFORGE_OBSERVER_FD"
KEY_FD_ENV = "KERNFORGE_OBSERVER_KEY_FD"
INJECTION_ENV = "CUDA_INJECTION64_PATH"
DEFAULT_LIB = REPO_ROOT / "build" / "observer" / "libkf_observer.so"
MARKER = "_kernforge_observer_marker"

# the windows the worker's markers close (module docstring)
WARM_UP, DIGEST, PREPARE, DRY, IMPORT, TRIALS, TIMING, GRAPHS = range(8)

# where Triton's generated launcher lives: `__triton_launcher.<abi>.so` in the Triton cache
TRITON_ORIGINS = ("__triton_launcher",)
# kernels that only fill or copy memory (the aten ops fallback.ALLOWED_ATEN_OPS allows):
# PyTorch's fill and copy kernels, by the functor or function their mangled names carry
ALLOWED_KERNEL_PARTS = ("FillFunctor", "direct_copy_kernel", "copy_kernel_impl", "CopyKernel")
GRAPH_LAUNCH = "<graph-launch>"
HOST_FUNCTION = "<host-function>"

Launch = tuple[str, str]  # (origin: the launching shared object's file name, kernel name)

# PyTorch's elementwise loops come in variants that differ only in how memory is walked, chosen
# per call from the operands' alignment (`vectorized_elementwise_kernel<4, F>` for aligned
# pointers, `unrolled_elementwise_kernel<F>` for a one-element view at an odd offset): the same
# op on data drawn with another seed can take the other variant. Counts are compared per op.
_LOOPS = (
    ("_ZN2at6native29vectorized_elementwise_kernelI", True),
    ("_ZN2at6native27unrolled_elementwise_kernelI", False),
)
_ARRAY = "St5arrayIPcLm"


def op_key(name: str) -> str:
    """`name` with the loop variant of PyTorch's elementwise kernels left out: the functor and
    its operand count; any other name unchanged."""
    for prefix, has_width in _LOOPS:
        if not name.startswith(prefix):
            continue
        rest = name[len(prefix) :]
        if has_width:  # the vector width: "Li4E"
            if not rest.startswith("Li") or "E" not in rest:
                return name
            rest = rest[rest.index("E") + 1 :]
        cut = rest.find(_ARRAY)
        if cut <= 0:
            return name
        operands = rest[cut + len(_ARRAY) :].split("E", 1)[0]
        return f"at::native elementwise {rest[:cut]} x{operands}"
    return name


def library() -> Path | None:
    """The observer library to load into candidates' workers, or None (not built, or off)."""
    if os.environ.get(OFF_ENV) == "1":
        return None
    path = Path(os.environ.get(LIB_ENV) or DEFAULT_LIB)
    return path if path.is_file() else None


def describe(device: str) -> str:
    """One line for `kernforge doctor` and the verdict: whether launches are observed."""
    if device != "cuda":
        return "launches not observed from outside (CPU: no CUDA launches to observe)"
    lib = library()
    if lib is None:
        why = "switched off" if os.environ.get(OFF_ENV) == "1" else "library not built"
        return (
            f"launches not observed from outside ({why}; `bash scripts/build_observer.sh` "
            "builds it where the CUDA toolkit's CUPTI is)"
        )
    return f"launches observed from outside the candidate (CUPTI library {lib})"


def is_triton(origin: str) -> bool:
    return origin.startswith(TRITON_ORIGINS)


def is_fill_or_copy(name: str) -> bool:
    return any(part in name for part in ALLOWED_KERNEL_PARTS)


class ObservationError(Exception):
    """The observer's stream is not what the library writes: tampered with, or cut short."""


# ---- SipHash-2-4, as kf_observer.c computes it ------------------------------------------------
_M64 = 2**64 - 1


def _rotl(x: int, b: int) -> int:
    return ((x << b) | (x >> (64 - b))) & _M64


def siphash24(key: bytes, data: bytes) -> int:
    """SipHash-2-4 of `data` under the 16-byte `key` (64-bit tag)."""
    k0, k1 = int.from_bytes(key[:8], "little"), int.from_bytes(key[8:16], "little")
    v = [0x736F6D6570736575 ^ k0, 0x646F72616E646F6D ^ k1, 0x6C7967656E657261 ^ k0,
         0x7465646279746573 ^ k1]  # fmt: skip

    def rounds(n: int) -> None:
        for _ in range(n):
            v[0] = (v[0] + v[1]) & _M64
            v[1] = _rotl(v[1], 13) ^ v[0]
            v[0] = _rotl(v[0], 32)
            v[2] = (v[2] + v[3]) & _M64
            v[3] = _rotl(v[3], 16) ^ v[2]
            v[0] = (v[0] + v[3]) & _M64
            v[3] = _rotl(v[3], 21) ^ v[0]
            v[2] = (v[2] + v[1]) & _M64
            v[1] = _rotl(v[1], 17) ^ v[2]
            v[2] = _rotl(v[2], 32)

    end = len(data) - len(data) % 8
    for i in range(0, end, 8):
        m = int.from_bytes(data[i : i + 8], "little")
        v[3] ^= m
        rounds(2)
        v[0] ^= m
    b = (len(data) & 0xFF) << 56 | int.from_bytes(data[end:], "little")
    v[3] ^= b
    rounds(2)
    v[0] ^= b
    v[2] ^= 0xFF
    rounds(4)
    return v[0] ^ v[1] ^ v[2] ^ v[3]


# ---- the judge's end of the pipe --------------------------------------------------------------
@dataclass
class Windows:
    """The counts of each window the markers closed, in order."""

    counts: list[Counter[Launch]] = field(default_factory=list)
    # per window, the launches per stream (the library's stream ids) and the marker's stream
    streams: list[Counter[str]] = field(default_factory=list)
    refs: list[str] = field(default_factory=list)
    pid: int = 0


def parse(data: bytes, key: bytes) -> Windows:
    """The windows in the stream `data`, every line's number and tag checked against `key`;
    an ObservationError says what was wrong and where."""
    windows = Windows()
    current: Counter[Launch] = Counter()
    streams: Counter[str] = Counter()
    ref = ""
    lines_in_window = 0
    expected = 0
    for raw in data.split(b"\n")[:-1] if data.endswith(b"\n") or not data else data.split(b"\n"):
        parts = raw.split(b" ", 6)
        if len(parts) != 7:
            raise ObservationError(f"line {expected} of the observer's stream is malformed")
        seq_b, kind_b, window_b, count_b, origin_b, tag_b, name_b = parts
        try:
            seq, window, count, tag = int(seq_b), int(window_b), int(count_b), int(tag_b, 16)
        except ValueError:
            raise ObservationError(
                f"line {expected} of the observer's stream is malformed"
            ) from None
        body = b" ".join((seq_b, kind_b, window_b, count_b, origin_b, name_b))
        if siphash24(key, body) != tag:
            raise ObservationError(
                f"line {expected} of the observer's stream carries a tag its library did not "
                "write: something else in the candidate's process wrote to its pipe"
            )
        if seq != expected:
            raise ObservationError(
                f"the observer's stream skipped from line {expected} to {seq}: lines were lost"
            )
        expected += 1
        kind, origin, name = (
            kind_b.decode(),
            origin_b.decode(errors="replace"),
            name_b.decode(errors="replace"),
        )
        if seq == 0:
            if kind != "B":
                raise ObservationError("the observer's stream does not start with its own line")
            windows.pid = count
            continue
        if window != len(windows.counts):
            raise ObservationError(f"line {seq} of the observer's stream is in the wrong window")
        if kind == "C":
            current[(origin, name)] += count
            lines_in_window += 1
        elif kind == "S":
            streams[name] += count
            if origin == "ref":
                ref = name
            lines_in_window += 1
        elif kind == "E":
            if count != lines_in_window:
                raise ObservationError(f"window {window} of the observer's stream lost lines")
            if not ref:
                raise ObservationError(f"window {window} of the observer's stream names no stream")
            windows.counts.append(current)
            windows.streams.append(streams)
            windows.refs.append(ref)
            current, streams, ref, lines_in_window = Counter(), Counter(), "", 0
        else:
            raise ObservationError(f"line {seq} of the observer's stream is of no known kind")
    if expected == 0:
        raise ObservationError("the observer wrote nothing: it never started in the worker")
    return windows


class ObserverStream:
    """The judge's end of one worker's observer pipe, drained by a thread of its own; `arm`
    makes the pipes and the worker's environment."""

    def __init__(self, fd: int, key: bytes) -> None:
        self.key = key
        self._fd = fd
        self._chunks: list[bytes] = []
        self._size = 0
        self.closed = threading.Event()
        self._thread = threading.Thread(target=self._drain, name="observer-pipe", daemon=True)
        self._thread.start()

    def _drain(self) -> None:
        try:
            while True:
                chunk = os.read(self._fd, 65536)
                if not chunk:
                    break
                if self._size < 64 * 2**20:  # a flood from the candidate is cut, then fails
                    self._chunks.append(chunk)
                    self._size += len(chunk)
        finally:
            os.close(self._fd)
            self.closed.set()

    def windows(self, wait_s: float = 5.0) -> Windows:
        """The windows written so far (after the worker's exit: all of them)."""
        self.closed.wait(wait_s)
        return parse(b"".join(self._chunks), self.key)


def arm(env: dict[str, str], lib: Path) -> tuple[dict[str, str], tuple[int, ...], ObserverStream]:
    """The worker's environment with the observer switched on, the descriptors it must inherit
    (close them here once it started), and the stream the judge reads."""
    key = secrets.token_bytes(16)
    key_r, key_w = os.pipe()
    os.write(key_w, key)  # 16 bytes: fits the pipe's buffer, read once by the library
    os.close(key_w)
    out_r, out_w = os.pipe()
    env = {**env, INJECTION_ENV: str(lib), FD_ENV: str(out_w), KEY_FD_ENV: str(key_r)}
    return env, (key_r, out_w), ObserverStream(out_r, key)


# ---- the decision ------------------------------------------------------------------------------
@dataclass
class Finding:
    """Why the observed launches fail the candidate: "fallback" or "trace_evaded", and what."""

    error: str
    message: str


def _short(name: str) -> str:
    return name if len(name) <= 200 else name[:197] + "..."


def _listed(counts: Counter[Launch]) -> str:
    items = sorted(counts.items(), key=lambda kv: -kv[1])[:6]
    return ", ".join(f"{_short(name)} x{n} (from {origin})" for (origin, name), n in items)


def _by_op(counts: Counter[Launch]) -> Counter[Launch]:
    out: Counter[Launch] = Counter()
    for (origin, name), n in counts.items():
        out[(origin, op_key(name))] += n
    return out


def check(windows: Windows, timed: bool, device_wide: bool = False) -> Finding | None:
    """The judge's decision from the observed counts (module docstring); None when they are
    what an honest Triton candidate and the worker's own work launch. `device_wide`: the worker
    timed every shape with a device-wide synchronize (it saw the candidate use side streams)."""
    want = GRAPHS + 1 if timed else TRIALS + 1
    got = len(windows.counts)
    if got != want:
        return Finding(
            "trace_evaded",
            f"the launch observer saw {got} of the worker's markers where there are {want}: "
            + (
                "the candidate's process launched the marker kernel itself"
                if got > want
                else "the observation stopped (CUPTI detached, or the worker's markers skipped)"
            ),
        )
    digests = {op_key(name) for _, name in windows.counts[DIGEST]}
    dry = _by_op(windows.counts[DRY])
    trials = _by_op(windows.counts[TRIALS])
    extra: Counter[Launch] = Counter()
    missing: Counter[Launch] = Counter()
    triton = 0
    for launch in set(trials) | set(dry):
        origin, name = launch
        if is_triton(origin):
            triton += trials[launch]
            continue
        if is_fill_or_copy(name):
            continue
        diff = trials[launch] - dry[launch]
        if diff > 0 and name not in digests:
            extra[launch] = diff
        elif diff < 0:
            missing[launch] = -diff
    if extra:
        return Finding(
            "fallback",
            "kernels not launched by Triton computed in the correctness trials, seen from "
            f"outside the candidate's Python: {_listed(extra)}",
        )
    if missing:
        return Finding(
            "trace_evaded",
            "launches the worker itself makes for the trials' inputs were missing from the "
            f"trials (the markers moved): {_listed(missing)}",
        )
    if triton == 0:
        return Finding(
            "fallback",
            "the launch observer saw no Triton kernel launched in the correctness trials",
        )
    if timed:
        return _check_timed(windows, digests, device_wide)
    return None


def _check_timed(windows: Windows, digests: set[str], device_wide: bool) -> Finding | None:
    # the worker's own kernels: its warm-up (the timer's), the digests, its input making (not
    # the task's one-time work in PREPARE: a TritonBench file's tests run its reference there)
    allowed = digests | {
        op_key(name) for index in (WARM_UP, DIGEST, DRY) for _, name in windows.counts[index]
    }
    for index, what in ((TIMING, "while the candidate was timed"), (GRAPHS, "in its CUDA graphs")):
        odd = Counter(
            {
                launch: n
                for launch, n in windows.counts[index].items()
                if not is_triton(launch[0])
                and not is_fill_or_copy(launch[1])
                and op_key(launch[1]) not in allowed
                and launch[1] != GRAPH_LAUNCH
            }
        )
        if odd:
            return Finding(
                "fallback",
                f"kernels not launched by Triton computed {what}, seen from outside its "
                f"Python: {_listed(odd)}",
            )
    # the timer's events are on the marker's stream; the worker's own launches (its input
    # making, before the candidate existed) show which handles that stream goes by
    own = set(windows.refs) | set(windows.streams[DRY])
    aside = sum(n for stream, n in windows.streams[TIMING].items() if stream not in own)
    if aside and not device_wide:
        return Finding(
            "trace_evaded",
            f"{aside} launches while the candidate was timed went to streams other than the one "
            "the timer records its events on, and the worker timed on that stream alone (it saw "
            "no side stream in the candidate's Triton launches): their work was not measured",
        )
    return None


def summary(windows: Windows) -> str:
    """One line for the verdict: what the observer counted in the trials and while timed."""

    def part(index: int, what: str) -> str:
        if index >= len(windows.counts):
            return f"{what}: not run"
        counts = windows.counts[index]
        triton = sum(n for (origin, _), n in counts.items() if is_triton(origin))
        return f"{what}: {triton} Triton launches, {sum(counts.values()) - triton} others"

    return (
        "launches observed from outside the candidate (CUPTI); "
        f"{part(TRIALS, 'trials')}; {part(TIMING, 'timed')}; {part(GRAPHS, 'graphs')}"
    )


__all__ = [
    "DEFAULT_LIB",
    "FD_ENV",
    "INJECTION_ENV",
    "KEY_FD_ENV",
    "LIB_ENV",
    "MARKER",
    "OFF_ENV",
    "Finding",
    "ObservationError",
    "ObserverStream",
    "Windows",
    "arm",
    "check",
    "describe",
    "op_key",
    "library",
    "parse",
    "siphash24",
    "summary",
]
