"""GPU checks of the profiling package: run on the device machine (`pytest -m gpu`)."""

from __future__ import annotations

import sys
import textwrap
import time

import pytest
import torch

from profiling import peaks as peaks_mod
from profiling.hardware import match_sheet
from profiling.ncu import diagnose, ncu_available, run_ncu, summarize
from profiling.roofline import attainment, roofline_time_s
from profiling.timing import launch_floor_us, time_cuda

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU"),
]


def _sheet():
    return match_sheet(torch.cuda.get_device_name())


def test_time_cuda_agrees_with_host_time_of_back_to_back_copies():
    n_bytes = 512 * 2**20
    src = torch.randn(n_bytes // 4, device="cuda")
    dst = torch.empty_like(src)
    result = time_cuda(lambda: dst.copy_(src))

    # Independent clock: many copies back to back, host wall time around them.
    for _ in range(3):
        dst.copy_(src)
    torch.cuda.synchronize()
    reps = 50
    t0 = time.perf_counter()
    for _ in range(reps):
        dst.copy_(src)
    torch.cuda.synchronize()
    host_us = (time.perf_counter() - t0) / reps * 1e6

    assert result.reps >= 10
    assert result.min_us <= result.p20_us <= result.median_us <= result.p80_us
    assert result.median_us == pytest.approx(host_us, rel=0.15)
    sheet = _sheet()
    if sheet is not None:
        achieved = 2 * n_bytes / (result.median_us * 1e-6)
        assert 0.3 * sheet.bandwidth_bytes_per_s < achieved < 1.05 * sheet.bandwidth_bytes_per_s


def test_device_wide_timing_sees_work_on_a_side_stream():
    a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    c = torch.empty_like(a)
    matmul_us = time_cuda(lambda: torch.mm(a, b, out=c)).median_us
    side = torch.cuda.Stream()

    def hides_its_work() -> None:
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            torch.mm(a, b, out=c)

    stream_only = time_cuda(hides_its_work, rep_ms=50).median_us
    device_wide = time_cuda(hides_its_work, rep_ms=50, device_wide=True).median_us
    torch.cuda.synchronize()
    assert stream_only < 0.5 * matmul_us  # the escape the option exists to stop
    assert device_wide > 0.8 * matmul_us


def test_launch_floor_is_a_few_microseconds():
    floor = launch_floor_us()
    assert 0.5 < floor < 50.0
    assert launch_floor_us(device_wide=True) >= 0.5 * floor


@pytest.fixture(scope="module")
def calibrated(tmp_path_factory):
    mp = pytest.MonkeyPatch()
    mp.setenv("KERNFORGE_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
    t0 = time.perf_counter()
    peaks = peaks_mod.get_peaks("cuda", recalibrate=True)
    seconds = time.perf_counter() - t0
    yield peaks, seconds
    mp.undo()


def test_calibration_is_near_the_datasheet(calibrated):
    peaks, seconds = calibrated
    print(f"calibration took {seconds:.1f} s: {peaks.to_dict()}")
    assert peaks.measured
    assert seconds < 60
    sheet = _sheet()
    if sheet is None:
        pytest.skip(f"no datasheet for {torch.cuda.get_device_name()}")
    assert 0.5 <= peaks.bandwidth_bytes_per_s / sheet.bandwidth_bytes_per_s <= 1.1
    for key in ("fp16", "bf16"):
        ratio = peaks.matmul_flops_per_s[key] / sheet.peak_flops_per_s(key)
        assert 0.5 <= ratio <= 1.1, (key, ratio)
    assert peaks.datasheet_name == sheet.name


def test_calibration_is_cached(calibrated):
    peaks, _ = calibrated
    assert peaks_mod.load_peaks(peaks.fingerprint_key) == peaks  # written to the cache dir
    assert peaks_mod.get_peaks("cuda") == peaks  # memoised in the process


@pytest.mark.parametrize("shape", [(4096, 4096, 4096), (8192, 4096, 4096), (8192, 8192, 8192)])
def test_eager_matmul_is_never_impossible_against_the_calibrated_peak(calibrated, shape):
    peaks, _ = calibrated
    m, n, k = shape
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
    t = time_cuda(lambda: a @ b).median_us * 1e-6
    t_roof = roofline_time_s(
        2 * m * n * k,
        (m * k + k * n + m * n) * 2,
        peaks.matmul_flops_per_s["bf16"],
        peaks.bandwidth_bytes_per_s,
    )
    assert attainment(t_roof, t) <= 1.0 / 0.95


_NCU_SCRIPT = textwrap.dedent(
    """
    import torch
    import triton
    import triton.language as tl

    @triton.jit
    def kf_copy_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)

    n = 1 << 26
    x = torch.randn(n, device="cuda")
    y = torch.empty_like(x)
    kf_copy_kernel[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024)
    torch.cuda.synchronize()
    """
)


@pytest.mark.skipif(not ncu_available(), reason="ncu is not installed")
def test_ncu_profiles_a_copy_kernel(tmp_path):
    script = tmp_path / "kf_ncu_copy_probe.py"
    script.write_text(_NCU_SCRIPT)
    kernels = run_ncu([sys.executable, str(script)], "kf_copy_kernel", timeout_s=300)
    assert len(kernels) == 1
    summary = summarize(kernels[0])
    print(summary, diagnose(summary))
    assert summary.kernel_name and "kf_copy_kernel" in summary.kernel_name
    assert summary.duration_us and summary.duration_us > 1.0
    assert summary.dram_throughput_pct is not None and summary.dram_throughput_pct > 30
    assert diagnose(summary).startswith("memory-bound")
