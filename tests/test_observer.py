"""The launch observer's judge side (benchmarks/harness/observer): the stream's tags and order,
and the decision from the counts. The library itself runs on a GPU only (tests marked gpu in
tests/test_observer_gpu.py); its tag and line format are checked here against a program built
from the same C source without CUPTI."""

from __future__ import annotations

import shutil
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from benchmarks.harness import observer
from benchmarks.harness.observer import (
    DIGEST,
    DRY,
    GRAPHS,
    IMPORT,
    PREPARE,
    TIMING,
    TRIALS,
    WARM_UP,
    ObservationError,
    Windows,
    check,
    op_key,
    parse,
    siphash24,
)

SOURCE = Path(observer.__file__).with_name("kf_observer.c")
KEY = bytes(range(16))
TRITON = "__triton_launcher.cpython-312-x86_64-linux-gnu.so"
TORCH = "libtorch_cuda.so"
MUL = (
    "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_13BinaryFunctorIfffNS0_10MulFunctorIfEEEE"
)
RANDN = "_ZN2at6native43distribution_elementwise_grid_stride_kernelIfLi4EZNS0_9templates4cuda20normal_and_transform"
FILL = "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEESt5arrayIPcLm1EEEEviT0_T1_"
DIGEST_SUM = "_ZN2at6native13reduce_kernelILi512ELi1ENS0_8ReduceOpIlNS0_14func_wrapper_tIlNS0_6sum"
# the same in-place int64 add, on an aligned element and on one at an odd offset (the MoE task's
# input making: `counts[argmax] += rest`, where argmax depends on the seed)
ADD_VEC = "_ZN2at6native29vectorized_elementwise_kernelILi2ENS0_21CUDAFunctorOnSelf_addIlEESt5arrayIPcLm2EEEEviT0_T1_"
ADD_UNROLLED = (
    "_ZN2at6native27unrolled_elementwise_kernelINS0_21CUDAFunctorOnSelf_addIlEESt5arrayIPcLm2EE"
    "23TrivialOffsetCalculatorILi1EjESA_NS0_6memory15LoadWithoutCastENSB_16StoreWithoutCastEEEviT_T0_T1_T2_T3_T4_"
)
ADD_FLOAT = "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_21CUDAFunctorOnSelf_addIfEESt5arrayIPcLm2EEEEviT0_T1_"
LEGACY = "1"  # the library's id of the legacy default stream


def test_siphash_matches_the_reference_vector() -> None:
    # SipHash-2-4 paper, appendix A: key 00..0f, message 00..0e
    assert siphash24(KEY, bytes(range(15))) == 0xA129CA6149BE45E5


def _stream(
    windows: list[dict[tuple[str, str], int]],
    key: bytes = KEY,
    streams: dict[int, dict[str, int]] | None = None,
) -> bytes:
    """The bytes the library writes for `windows` (kf_observer.c's `emit`): every launch on
    the legacy default stream, the markers' stream, unless `streams` says otherwise for a
    window (stream id -> launches)."""
    lines: list[bytes] = []

    def emit(kind: str, window: int, count: int, origin: str, name: str) -> None:
        seq = len(lines)
        body = f"{seq} {kind} {window} {count} {origin} {name}".encode()
        tag = siphash24(key, body)
        lines.append(f"{seq} {kind} {window} {count} {origin} {tag:016x} {name}\n".encode())

    emit("B", 0, 4242, "-", "kf_observer")
    for w, counts in enumerate(windows):
        for (origin, name), n in counts.items():
            emit("C", w, n, origin, name)
        per_stream = (streams or {}).get(w, {LEGACY: sum(counts.values())})
        for stream, n in per_stream.items():
            emit("S", w, n, "ref" if stream == LEGACY else "other", stream)
        emit("E", w, len(counts) + len(per_stream), "-", "-")
    return b"".join(lines)


def _honest(timed: bool = True) -> list[dict[tuple[str, str], int]]:
    windows = [
        {(TORCH, RANDN): 3, (TRITON, "_copy_scaled_kernel"): 5},  # warm-up
        {(TORCH, DIGEST_SUM): 8},  # digests
        {(TORCH, RANDN): 4},  # the task loaded, each shape's inputs made once per mode
        {(TORCH, RANDN): 12, (TORCH, FILL): 2},  # dry pass
        {},  # import
        {(TORCH, RANDN): 12, (TRITON, "softmax_kernel"): 15, (TORCH, DIGEST_SUM): 40,
         (TORCH, FILL): 9},  # trials
    ]  # fmt: skip
    if timed:
        windows.append({(TRITON, "softmax_kernel"): 900, (TORCH, RANDN): 3, (TORCH, FILL): 900})
        windows.append({(TRITON, "softmax_kernel"): 40, (TORCH, observer.GRAPH_LAUNCH): 1})
    return windows


def test_the_c_library_and_the_parser_agree() -> None:
    """The tag and line format of kf_observer.c's `emit`, built without CUPTI."""
    cc = shutil.which("gcc") or shutil.which("cc")
    if cc is None:
        pytest.skip("no C compiler on this machine")
    exe = Path(subprocess.check_output(["mktemp", "-d"], text=True).strip()) / "kf_selftest"
    subprocess.run(
        [cc, "-std=c11", "-DKF_OBSERVER_SELFTEST", str(SOURCE), "-o", str(exe)],
        check=True,
        capture_output=True,
    )
    out = subprocess.run([str(exe), KEY.hex()], check=True, capture_output=True).stdout
    windows = parse(out, KEY)
    assert windows.pid == 4242
    origin = exe.name
    assert windows.counts == [
        Counter({(origin, "kernel_one"): 2, (origin, "kernel_two_with_spaces"): 1}),
        Counter({(origin, "kernel_two_with_spaces"): 1}),
    ]
    # per stream: the legacy default stream (the markers'), a stream of its own, the per-thread
    # default stream; the marker's stream named even where nothing else ran on it
    assert windows.streams == [Counter({"1": 2, "5a5a00": 1}), Counter({"2": 1, "1": 0})]
    assert windows.refs == ["1", "1"]
    with pytest.raises(ObservationError, match="tag"):
        parse(out, bytes(16))  # another key


def test_an_honest_stream_passes() -> None:
    windows = parse(_stream(_honest()), KEY)
    assert len(windows.counts) == GRAPHS + 1
    assert check(windows, timed=True) is None
    assert check(parse(_stream(_honest(timed=False)), KEY), timed=False) is None
    assert "trials: 15 Triton launches" in observer.summary(windows)


def test_pytorch_compute_in_the_trials_is_a_fallback() -> None:
    windows = _honest()
    windows[TRIALS][(TORCH, MUL)] = 3
    finding = check(parse(_stream(windows), KEY), timed=True)
    assert finding is not None and finding.error == "fallback"
    assert "MulFunctor" in finding.message and "x3" in finding.message


def test_pytorch_compute_hidden_among_the_workers_own_kernels_is_counted() -> None:
    """A fallback using a kernel the worker's input making also launches (a normal draw here)
    shows as more launches of it than the dry pass made."""
    windows = _honest()
    windows[TRIALS][(TORCH, RANDN)] += 1
    finding = check(parse(_stream(windows), KEY), timed=True)
    assert finding is not None and finding.error == "fallback"


def test_a_graph_launched_in_the_trials_is_a_fallback() -> None:
    windows = _honest()
    windows[TRIALS][("libtorch_cuda.so", observer.GRAPH_LAUNCH)] = 1
    finding = check(parse(_stream(windows), KEY), timed=True)
    assert finding is not None and finding.error == "fallback"


def test_pytorch_compute_while_timed_is_a_fallback() -> None:
    windows = _honest()
    windows[TIMING][(TORCH, MUL)] = 100
    finding = check(parse(_stream(windows), KEY), timed=True)
    assert finding is not None and finding.error == "fallback" and "timed" in finding.message


def test_no_triton_launch_in_the_trials_is_a_fallback() -> None:
    windows = _honest()
    del windows[TRIALS][(TRITON, "softmax_kernel")]
    finding = check(parse(_stream(windows), KEY), timed=True)
    assert finding is not None and finding.error == "fallback"


@pytest.mark.parametrize("how", ["extra marker", "missing marker"])
def test_markers_launched_or_skipped_are_an_evasion(how: str) -> None:
    windows = _honest()
    if how == "extra marker":
        windows.insert(TRIALS, {})  # the candidate launched the marker kernel itself
    else:
        windows.pop()  # the observation stopped before the worker's last marker
    finding = check(parse(_stream(windows), KEY), timed=True)
    assert finding is not None and finding.error == "trace_evaded"


def test_a_moved_marker_shows_as_the_workers_launches_missing() -> None:
    """The trials' window opened late (the marker after the trials' first inputs were made):
    fewer of the worker's own launches in it than the dry pass made."""
    windows = _honest()
    windows[TRIALS][(TORCH, RANDN)] -= 2
    windows[IMPORT][(TORCH, RANDN)] = 2
    finding = check(parse(_stream(windows), KEY), timed=True)
    assert finding is not None and finding.error == "trace_evaded"


def test_forged_cut_or_reordered_lines_are_refused() -> None:
    good = _stream(_honest())
    forged = _stream(_honest(), key=bytes(16))
    with pytest.raises(ObservationError, match="tag"):
        parse(forged, KEY)
    lines = good.splitlines(keepends=True)
    with pytest.raises(ObservationError, match="skipped"):
        parse(b"".join(lines[:3] + lines[4:]), KEY)
    with pytest.raises(ObservationError, match="nothing"):
        parse(b"", KEY)
    with pytest.raises(ObservationError, match="malformed"):
        parse(good + b"garbage\n", KEY)
    # a line appended by the candidate with a tag it made up
    with pytest.raises(ObservationError):
        parse(good + b"99 C 6 1 x 0000000000000000 k\n", KEY)
    # a window that names no stream (the marker's at least) is not the library's
    with pytest.raises(ObservationError, match="names no stream"):
        parse(_stream([{}], KEY, streams={0: {}}), KEY)


def test_loop_variants_of_one_elementwise_op_count_as_one() -> None:
    """Seen on the H100 (2026-12-06): the MoE task's inputs add in place to one int64 element
    chosen by the seed; at an odd offset PyTorch runs its unrolled loop, at an even one its
    vectorized one. The dry pass (seed 0) and the trials (the judge's seed) differ only in
    that: an honest candidate, not a fallback."""
    assert op_key(ADD_VEC) == op_key(ADD_UNROLLED)
    assert op_key(ADD_VEC) != op_key(ADD_FLOAT)  # another dtype is another op
    assert op_key(MUL) == MUL  # cut short, unlike any real name: left as it is
    assert op_key(RANDN) == RANDN
    windows = _honest()
    windows[DRY][(TORCH, ADD_VEC)] = 3
    windows[TRIALS][(TORCH, ADD_VEC)] = 1
    windows[TRIALS][(TORCH, ADD_UNROLLED)] = 2
    assert check(parse(_stream(windows), KEY), timed=True) is None
    windows[TRIALS][(TORCH, ADD_UNROLLED)] = 3  # one more than the dry pass made: computing
    finding = check(parse(_stream(windows), KEY), timed=True)
    assert finding is not None and finding.error == "fallback"


def test_a_tasks_one_time_work_is_neither_missing_nor_allowed() -> None:
    """Seen on the H100 (2026-12-07): a TritonBench task runs its own tests (the reference and
    its comparisons) when the worker loads it. In the dry pass's window those launches showed
    as the worker's own, missing from the trials ("the markers moved"), and failed honest
    candidates; they now sit in a window of their own, which allows nothing later: the
    reference's kernel while timed is still a fallback."""
    SUM = "_ZN2at6native13reduce_kernelILi512ELi1ENS0_8ReduceOpIfNS0_14func_wrapper_tIfNS0_11sum"
    windows = _honest()
    windows[PREPARE][(TORCH, SUM)] = 12
    assert check(parse(_stream(windows), KEY), timed=True) is None
    windows[TIMING][(TORCH, SUM)] = 100
    finding = check(parse(_stream(windows), KEY), timed=True)
    assert finding is not None and finding.error == "fallback" and "timed" in finding.message
    windows = _honest()
    windows[DRY][(TORCH, SUM)] = 12  # as before the fix: the dry pass counted them
    finding = check(parse(_stream(windows), KEY), timed=True)
    assert finding is not None and finding.error == "trace_evaded"


def test_pytorch_compute_in_the_graphs_is_a_fallback() -> None:
    windows = _honest()
    windows[GRAPHS][(TORCH, MUL)] = 2  # captured with the candidate's kernels
    finding = check(parse(_stream(windows), KEY), timed=True)
    assert finding is not None and finding.error == "fallback" and "graphs" in finding.message


def test_work_on_a_side_stream_while_timed_on_one_stream_is_an_evasion() -> None:
    """The timer records its events on the marker's stream; a kernel queued elsewhere is not in
    the figure unless the worker timed device-wide."""
    windows = _honest()
    timing = sum(windows[TIMING].values())
    aside = {TIMING: {LEGACY: timing - 300, "7f00aa": 300}}
    finding = check(parse(_stream(windows, streams=aside), KEY), timed=True)
    assert finding is not None and finding.error == "trace_evaded"
    assert "300 launches" in finding.message
    # the worker saw the side stream and timed device-wide: measured, so allowed
    assert check(parse(_stream(windows, streams=aside), KEY), timed=True, device_wide=True) is None
    # a stream the worker's own input making used (a handle the runtime gives the default
    # stream) is the timer's stream too
    own = {DRY: {LEGACY: 10, "beef": 4}, TIMING: {LEGACY: timing - 300, "beef": 300}}
    assert check(parse(_stream(windows, streams=own), KEY), timed=True) is None
    # side streams in the graphs' window are the capture's own: not judged by stream
    graphs = {GRAPHS: {LEGACY: 1, "c0ffee": 40}}
    assert check(parse(_stream(windows, streams=graphs), KEY), timed=True) is None


def test_the_windows_are_named_in_order() -> None:
    assert (WARM_UP, DIGEST, PREPARE, DRY, IMPORT, TRIALS, TIMING, GRAPHS) == tuple(range(8))
    assert isinstance(Windows(), Windows)


def test_no_library_means_unobserved_and_said(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv(observer.LIB_ENV, str(tmp_path / "missing.so"))
    assert observer.library() is None
    assert "not observed" in observer.describe("cuda")
    lib = tmp_path / "lib.so"
    lib.write_bytes(b"")
    monkeypatch.setenv(observer.LIB_ENV, str(lib))
    assert observer.library() == lib
    monkeypatch.setenv(observer.OFF_ENV, "1")
    assert observer.library() is None and "switched off" in observer.describe("cuda")


def test_arm_hands_the_key_to_the_library_once() -> None:
    import os

    env, fds, stream = observer.arm({"PATH": "/bin"}, Path("/x/lib.so"))
    key_fd, out_fd = fds
    assert env[observer.INJECTION_ENV] == "/x/lib.so"
    assert int(env[observer.KEY_FD_ENV]) == key_fd and int(env[observer.FD_ENV]) == out_fd
    assert os.read(key_fd, 64) == stream.key and len(stream.key) == 16
    os.write(out_fd, _stream(_honest(), key=stream.key))
    for fd in fds:
        os.close(fd)
    assert check(stream.windows(), timed=True) is None


def test_an_impossible_time_the_observer_explains_is_named_as_the_evasion() -> None:
    """A hidden side stream makes the timer read almost nothing, so the roofline check fails the
    kernel first (impossible_time); the judge still asks the observer, and the verdict names
    the cause it saw rather than the symptom."""
    from types import SimpleNamespace

    from benchmarks.harness import judge
    from benchmarks.verdict import ErrorClass

    windows = _honest()
    timing = sum(windows[TIMING].values())
    aside = {TIMING: {LEGACY: timing - 300, "7f00aa": 300}}
    stream = _stream(windows, streams=aside)

    def judged(error: ErrorClass, passed: bool) -> judge.Verdict:
        verdict = judge.Verdict(task_id="softmax_fp32", device="cuda")
        verdict.passed, verdict.error_class = passed, error
        verdict.message = "timed faster than the hardware allows" if not passed else ""
        child = SimpleNamespace(
            device="cuda",
            observer=SimpleNamespace(windows=lambda: parse(stream, KEY)),
            wait=lambda seconds: None,
            ops=SimpleNamespace(seen=lambda: []),
        )
        perf = SimpleNamespace(shapes={"s": SimpleNamespace(side_stream=False)})
        checker = SimpleNamespace(ops_closed_early=False)
        return judge._outside_checks(verdict, child, checker, SimpleNamespace(perf=perf))

    after = judged(ErrorClass.IMPOSSIBLE_TIME, passed=False)
    assert after.error_class == ErrorClass.TRACE_EVADED and not after.passed
    assert (
        "streams other than" in after.message and "below the hardware's roofline" in after.message
    )
    # another failure is not the observer's to explain: it stands as it was
    other = judged(ErrorClass.NUMERICAL_MISMATCH, passed=False)
    assert other.error_class == ErrorClass.NUMERICAL_MISMATCH
