"""Datasheets, device fingerprints and the peaks cache, on the CPU."""

from __future__ import annotations

import json

import pytest
import torch

from profiling import peaks as peaks_mod
from profiling.fingerprint import device_fingerprint
from profiling.hardware import DTYPE_KEYS, SHEETS, dtype_key, match_sheet
from profiling.peaks import NOT_MEASURED, Peaks, cache_path, get_peaks, load_peaks, save_peaks


def test_every_sheet_is_complete_and_sourced():
    assert set(SHEETS) == {
        "H100 SXM",
        "H200 SXM",
        "A100 SXM 80GB",
        "L40S",
        "RTX 4090",
        "RTX 5090",
        "MI300X",
    }
    for sheet in SHEETS.values():
        assert sheet.source, sheet.name
        assert set(sheet.peak_tflops) <= set(DTYPE_KEYS), sheet.name
        assert {"fp32", "fp16", "bf16"} <= set(sheet.peak_tflops), sheet.name
        assert all(v > 0 for v in sheet.peak_tflops.values()), sheet.name
        assert sheet.bandwidth_bytes_per_s > 1e11
        assert sheet.sm_count > 0 and sheet.l2_bytes > 0 and sheet.memory_bytes > 0
        assert sheet.shared_memory_per_sm_bytes >= 64 * 1024
        # dense tensor rates sit above plain fp32 on every part we list
        assert sheet.peak_tflops["bf16"] > sheet.peak_tflops["fp32"]


def test_h200_sheet_matches_the_datasheet():
    h200 = SHEETS["H200 SXM"]
    assert h200.peak_tflops["bf16"] == pytest.approx(989.5)  # 1,979 sparse / 2
    assert h200.peak_tflops["fp16"] == pytest.approx(989.5)
    assert h200.peak_tflops["fp8_e4m3"] == pytest.approx(1979.0)
    assert h200.bandwidth_bytes_per_s == pytest.approx(4.8e12)
    assert h200.sm_count == 132
    assert h200.l2_bytes == 50 * 2**20  # what torch reports as L2_cache_size
    assert h200.peak_flops_per_s("bfloat16") == pytest.approx(989.5e12)
    assert h200.peak_flops_per_s(torch.bfloat16) == pytest.approx(989.5e12)
    assert SHEETS["A100 SXM 80GB"].peak_flops_per_s("fp8_e4m3") is None  # no FP8 on Ampere


@pytest.mark.parametrize(
    ("device_name", "sheet_name"),
    [
        ("NVIDIA H200", "H200 SXM"),
        ("NVIDIA H100 80GB HBM3", "H100 SXM"),
        ("NVIDIA A100-SXM4-80GB", "A100 SXM 80GB"),
        ("NVIDIA L40S", "L40S"),
        ("NVIDIA GeForce RTX 4090", "RTX 4090"),
        ("NVIDIA GeForce RTX 5090", "RTX 5090"),
        ("AMD Instinct MI300X", "MI300X"),
        # variants with other clocks or memory match nothing rather than the wrong sheet
        ("NVIDIA H200 NVL", None),
        ("NVIDIA H100 PCIe", None),
        ("NVIDIA GH200 480GB", None),
        ("NVIDIA A100-SXM4-40GB", None),
        ("NVIDIA A100 80GB PCIe", None),
        ("NVIDIA L40", None),
        ("NVIDIA GeForce RTX 4090 D", None),
        ("Tesla T4", None),
        ("", None),
    ],
)
def test_match_sheet(device_name, sheet_name):
    sheet = match_sheet(device_name)
    assert (sheet.name if sheet else None) == sheet_name


def test_dtype_key():
    assert dtype_key(torch.float16) == "fp16"
    assert dtype_key(torch.bfloat16) == "bf16"
    assert dtype_key(torch.float32) == "fp32"
    assert dtype_key("float8_e4m3fn") == "fp8_e4m3"
    assert dtype_key("BF16") == "bf16"
    with pytest.raises(ValueError, match="unknown dtype"):
        dtype_key("fp4")


def test_fingerprint_on_cpu_says_no_gpu():
    fp = device_fingerprint("cpu")
    assert fp["gpu_available"] is False
    assert fp["gpu_name"] is None and fp["compute_capability"] is None
    assert "no GPU" in fp["note"]
    assert fp["torch_version"] == torch.__version__
    assert fp["python_version"] and fp["hostname"]
    assert len(fp["key"]) == 16
    assert device_fingerprint("cpu")["key"] == fp["key"]  # stable
    json.dumps(fp)  # travels inside verdicts


def test_fingerprint_rejects_unknown_devices():
    with pytest.raises(ValueError, match="device must be"):
        device_fingerprint("tpu")


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the no-GPU path")
def test_peaks_without_gpu_are_not_measured():
    peaks = get_peaks("cuda")
    assert peaks.measured is False
    assert peaks.bandwidth_bytes_per_s is None and peaks.matmul_flops_per_s == {}
    assert peaks.datasheet_flops_per_s == {}  # datasheet-free: there is no device to match
    assert peaks.note.startswith(NOT_MEASURED)
    assert peaks.flops_for("bf16") == (None, NOT_MEASURED)
    assert peaks.bandwidth() == (None, NOT_MEASURED)
    assert peaks_mod.peaks_for(torch.bfloat16) == (None, NOT_MEASURED)
    assert get_peaks("cpu").measured is False


def _fake_peaks(key: str = "fakekey000000001") -> Peaks:
    return Peaks(
        measured=True,
        fingerprint_key=key,
        device_name="NVIDIA H200",
        bandwidth_bytes_per_s=4.0e12,
        matmul_flops_per_s={"bf16": 731e12, "fp16": 750e12},
        datasheet_name="H200 SXM",
        datasheet_bandwidth_bytes_per_s=4.8e12,
        datasheet_flops_per_s={"bf16": 989.5e12, "int8": 1979e12},
        method="test",
        date="2026-11-29T12:00:00+00:00",
        fingerprint={"gpu_name": "NVIDIA H200", "key": key},
        details=[{"kind": "matmul", "dtype": "bf16", "shape": [4096, 4096, 4096], "value": 731e12}],
    )


def test_peaks_cache_round_trip(tmp_path, monkeypatch):
    monkeypatch.setenv("KERNFORGE_CACHE_DIR", str(tmp_path))
    peaks = _fake_peaks()
    path = save_peaks(peaks)
    assert path == cache_path(peaks.fingerprint_key)
    assert path.is_relative_to(tmp_path)
    assert json.loads(path.read_text())["schema"] == peaks_mod.SCHEMA_VERSION
    assert load_peaks(peaks.fingerprint_key) == peaks
    assert load_peaks("nosuchkey") is None
    assert list(path.parent.glob("*.tmp")) == []  # atomic write leaves no temp file


def test_unreadable_cache_is_ignored(tmp_path, monkeypatch):
    monkeypatch.setenv("KERNFORGE_CACHE_DIR", str(tmp_path))
    path = cache_path("brokenkey0000001")
    path.parent.mkdir(parents=True)
    path.write_text("{not json")
    with pytest.warns(UserWarning, match="unreadable peaks cache"):
        assert load_peaks("brokenkey0000001") is None
    path.write_text(json.dumps({"schema": 0, "peaks": {}}))
    assert load_peaks("brokenkey0000001") is None  # old schema: recalibrate


def test_get_peaks_reads_the_cache_for_a_known_fingerprint(tmp_path, monkeypatch):
    monkeypatch.setenv("KERNFORGE_CACHE_DIR", str(tmp_path))
    peaks = _fake_peaks("gpufingerprint01")
    save_peaks(peaks)
    fake_fp = {"gpu_available": True, "key": "gpufingerprint01", "note": "", "device": "cuda:0"}
    monkeypatch.setattr(peaks_mod, "device_fingerprint", lambda device: dict(fake_fp))
    monkeypatch.setattr(peaks_mod, "_memo", {})

    def no_calibration(device):
        raise AssertionError("a cached fingerprint must not be recalibrated")

    monkeypatch.setattr(peaks_mod, "calibrate", no_calibration)
    assert get_peaks("cuda") == peaks
    assert peaks_mod.peaks_for("bf16")[0] == pytest.approx(731e12)


def test_peaks_lookup_says_its_source():
    peaks = _fake_peaks()
    value, source = peaks.flops_for(torch.bfloat16)
    assert value == pytest.approx(731e12) and source.startswith("measured")
    value, source = peaks.flops_for("int8")  # not calibrated: datasheet, and it says so
    assert value == pytest.approx(1979e12) and source == "datasheet (H200 SXM)"
    assert peaks.flops_for("fp64") == (None, NOT_MEASURED)
    value, source = peaks.bandwidth()
    assert value == pytest.approx(4.0e12) and source.startswith("measured")
    assert Peaks.from_dict(json.loads(json.dumps(peaks.to_dict()))) == peaks


def test_a_calibration_far_under_the_datasheet_is_not_used_or_cached(tmp_path, monkeypatch):
    """A GPU shared during calibration measured fp32 GEMMs at 25 TFLOP/s (datasheet 67): a Triton
    convolution then scored attainment 1.03. Such a ceiling gives way to the datasheet's, says
    so, and is not cached for the next process."""
    monkeypatch.setenv("KERNFORGE_CACHE_DIR", str(tmp_path))
    peaks = _fake_peaks("sharedgpu0000001")
    peaks.matmul_flops_per_s["fp32"] = 25e12
    peaks.datasheet_flops_per_s["fp32"] = 67e12
    value, source = peaks.flops_for("fp32")
    assert value == pytest.approx(67e12)
    assert source.startswith("datasheet (H200 SXM)") and "25 TFLOP/s" in source
    assert peaks.flops_for("bf16")[1].startswith("measured")  # 731 of 989: plausible
    peaks.bandwidth_bytes_per_s = 1.5e12  # under half of 4.8 TB/s
    value, source = peaks.bandwidth()
    assert value == pytest.approx(peaks.datasheet_bandwidth_bytes_per_s) and "1500 GB/s" in source
    assert peaks.suspect() == ["fp32 matmul", "bandwidth"]

    fake_fp = {"gpu_available": True, "key": "sharedgpu0000001", "note": "", "device": "cuda:0"}
    monkeypatch.setattr(peaks_mod, "device_fingerprint", lambda device: dict(fake_fp))
    monkeypatch.setattr(peaks_mod, "_memo", {})
    monkeypatch.setattr(peaks_mod, "calibrate", lambda device: peaks)
    with pytest.warns(UserWarning, match="fp32 matmul, bandwidth under 50% of the datasheet"):
        assert get_peaks("cuda") is peaks
    assert load_peaks("sharedgpu0000001") is None  # not cached: the next process calibrates
