"""Datasheet records: what the vendor says a GPU can do.

These numbers are the *ceiling on paper*. The judge measures its own ceilings on the device
(`profiling.peaks`) and keeps these beside them, so every figure can say which one it used.

Conventions, the same for every sheet:
- `peak_tflops` holds the vendor's **dense** figures (no 2:4 structured sparsity), in TFLOP/s
  (TOP/s for int8), keyed by one of `DTYPE_KEYS`. A dtype the vendor does not publish for that
  part is simply absent: we never derive a figure the vendor did not print.
- "fp32" is the plain FP32 rate (CUDA cores on NVIDIA; the FP32 matrix rate on AMD CDNA 3, which
  runs FP32 GEMMs on its matrix cores). "fp64" is the FP64 Tensor-Core / matrix rate where one
  is published (that is what a DGEMM runs on).
- On GeForce and Ada/Blackwell workstation parts the tensor rate depends on the accumulator:
  fp16/bf16/fp8 here are the **FP32-accumulate** figures, since that is what PyTorch and Triton
  GEMMs use.
- Bandwidth is decimal (1 TB/s = 1e12 B/s), as vendors print it. Memory capacity, L2 and shared
  memory are binary (1 GB = 2**30 B, 1 MB = 2**20 B, 1 KB = 2**10 B): that is how the hardware
  is built and what `torch.cuda.get_device_properties` reports (an H100's L2 reads 52428800).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

DTYPE_KEYS: tuple[str, ...] = ("fp64", "fp32", "tf32", "fp16", "bf16", "fp8_e4m3", "int8")

_KIB = 1 << 10
_MIB = 1 << 20
_GIB = 1 << 30

# Spellings people and torch use for each dtype key.
_DTYPE_ALIASES: dict[str, str] = {
    "fp64": "fp64",
    "float64": "fp64",
    "double": "fp64",
    "fp32": "fp32",
    "float32": "fp32",
    "float": "fp32",
    "tf32": "tf32",
    "fp16": "fp16",
    "float16": "fp16",
    "half": "fp16",
    "bf16": "bf16",
    "bfloat16": "bf16",
    "fp8": "fp8_e4m3",
    "fp8_e4m3": "fp8_e4m3",
    "float8_e4m3fn": "fp8_e4m3",
    "float8_e4m3fnuz": "fp8_e4m3",
    "e4m3": "fp8_e4m3",
    "int8": "int8",
}


def dtype_key(dtype: object) -> str:
    """Normalise a dtype (a `torch.dtype` or a string such as "bfloat16") to a `DTYPE_KEYS` key.

    Works without importing torch: a torch dtype prints as "torch.bfloat16".
    """
    text = str(dtype).strip().lower()
    if text.startswith("torch."):
        text = text[len("torch.") :]
    key = _DTYPE_ALIASES.get(text)
    if key is None:
        raise ValueError(
            f"unknown dtype {dtype!r}: expected one of {', '.join(DTYPE_KEYS)} "
            "(or a torch dtype such as torch.bfloat16)"
        )
    return key


@dataclass(frozen=True)
class HardwareSheet:
    """One GPU's published figures. See the module docstring for units and conventions."""

    name: str
    vendor: str
    peak_tflops: dict[str, float]
    bandwidth_bytes_per_s: float  # HBM (or GDDR on the PCIe/GeForce parts)
    sm_count: int  # SMs on NVIDIA, compute units (CUs) on AMD
    shared_memory_per_sm_bytes: int  # max shared memory (LDS on AMD) per SM/CU
    l2_bytes: int
    memory_bytes: int
    source: str
    notes: str = ""

    def peak_flops_per_s(self, dtype: object) -> float | None:
        """Dense peak in FLOP/s (OP/s for int8) for `dtype`, or None if the vendor gives none."""
        tflops = self.peak_tflops.get(dtype_key(dtype))
        return None if tflops is None else tflops * 1e12

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "vendor": self.vendor,
            "peak_tflops": dict(self.peak_tflops),
            "bandwidth_bytes_per_s": self.bandwidth_bytes_per_s,
            "sm_count": self.sm_count,
            "shared_memory_per_sm_bytes": self.shared_memory_per_sm_bytes,
            "l2_bytes": self.l2_bytes,
            "memory_bytes": self.memory_bytes,
            "source": self.source,
            "notes": self.notes,
        }


# The Hopper parts (GH100) share their compute figures; only memory differs between H100 and H200.
_HOPPER_SXM_TFLOPS = {
    "fp64": 67.0,  # FP64 Tensor Core (FP64 non-tensor: 34)
    "fp32": 67.0,
    "tf32": 494.5,  # 989 with sparsity
    "fp16": 989.5,  # 1,979 with sparsity
    "bf16": 989.5,
    "fp8_e4m3": 1979.0,  # 3,958 with sparsity
    "int8": 1979.0,
}

H100_SXM = HardwareSheet(
    name="H100 SXM",
    vendor="NVIDIA",
    peak_tflops=dict(_HOPPER_SXM_TFLOPS),
    bandwidth_bytes_per_s=3.35e12,
    sm_count=132,
    shared_memory_per_sm_bytes=228 * _KIB,
    l2_bytes=50 * _MIB,
    memory_bytes=80 * _GIB,
    source=(
        "NVIDIA H100 Tensor Core GPU datasheet (SXM column; sparse figures halved) and "
        "NVIDIA H100 architecture whitepaper (132 SMs, 50 MB L2, 228 KB shared memory per SM)"
    ),
)

H200_SXM = HardwareSheet(
    name="H200 SXM",
    vendor="NVIDIA",
    peak_tflops=dict(_HOPPER_SXM_TFLOPS),
    bandwidth_bytes_per_s=4.8e12,
    sm_count=132,
    shared_memory_per_sm_bytes=228 * _KIB,
    l2_bytes=50 * _MIB,
    memory_bytes=141 * _GIB,
    source=(
        "NVIDIA H200 Tensor Core GPU datasheet (SXM column: 141 GB HBM3e, 4.8 TB/s; sparse "
        "figures halved); SM count, L2 and shared memory as the GH100 in the H100 SXM"
    ),
    notes="torch reports about 139.8 GiB usable; the H200 NVL is a different part (lower clocks).",
)

A100_SXM_80GB = HardwareSheet(
    name="A100 SXM 80GB",
    vendor="NVIDIA",
    peak_tflops={
        "fp64": 19.5,  # FP64 Tensor Core (FP64 non-tensor: 9.7)
        "fp32": 19.5,
        "tf32": 156.0,  # 312 with sparsity
        "fp16": 312.0,  # 624 with sparsity
        "bf16": 312.0,
        "int8": 624.0,  # 1,248 with sparsity
    },
    bandwidth_bytes_per_s=2.039e12,
    sm_count=108,
    shared_memory_per_sm_bytes=164 * _KIB,
    l2_bytes=40 * _MIB,
    memory_bytes=80 * _GIB,
    source=(
        "NVIDIA A100 Tensor Core GPU datasheet (80GB SXM column: 2,039 GB/s; dense figures) and "
        "NVIDIA A100 architecture whitepaper (108 SMs, 40 MB L2, 164 KB shared memory per SM)"
    ),
    notes="No FP8 on Ampere.",
)

L40S = HardwareSheet(
    name="L40S",
    vendor="NVIDIA",
    peak_tflops={
        "fp32": 91.6,
        "tf32": 183.0,  # 366 with sparsity
        "fp16": 362.05,  # 733 with sparsity
        "bf16": 362.05,
        "fp8_e4m3": 733.0,  # 1,466 with sparsity
        "int8": 733.0,  # 1,466 with sparsity
    },
    bandwidth_bytes_per_s=864e9,
    sm_count=142,
    shared_memory_per_sm_bytes=100 * _KIB,
    l2_bytes=96 * _MIB,
    memory_bytes=48 * _GIB,
    source=(
        "NVIDIA L40S datasheet (48 GB GDDR6, 864 GB/s; sparse figures halved); 142 SMs; "
        "Ada Lovelace (sm_89): 100 KB shared memory per SM (CUDA C++ Programming Guide)"
    ),
    notes="FP64 is not on the datasheet.",
)

RTX_4090 = HardwareSheet(
    name="RTX 4090",
    vendor="NVIDIA",
    peak_tflops={
        "fp32": 82.6,
        "tf32": 82.6,  # 165.2 with sparsity
        "fp16": 165.2,  # FP32 accumulate (330.3 with FP16 accumulate)
        "bf16": 165.2,  # FP32 accumulate
        "fp8_e4m3": 330.3,  # FP32 accumulate (660.6 with FP16 accumulate)
        "int8": 660.6,
    },
    bandwidth_bytes_per_s=1008e9,
    sm_count=128,
    shared_memory_per_sm_bytes=100 * _KIB,
    l2_bytes=72 * _MIB,
    memory_bytes=24 * _GIB,
    source=(
        "NVIDIA Ada Lovelace GPU architecture whitepaper, appendix table for the GeForce RTX 4090 "
        "(dense, FP32-accumulate tensor figures; 128 SMs, 72 MB L2, 24 GB GDDR6X at 1,008 GB/s)"
    ),
    notes="GeForce: FP32-accumulate tensor math runs at half the FP16-accumulate rate.",
)

RTX_5090 = HardwareSheet(
    name="RTX 5090",
    vendor="NVIDIA",
    peak_tflops={
        "fp32": 104.8,
        "tf32": 104.8,  # 209.5 with sparsity
        "fp16": 209.5,  # FP32 accumulate (419 with FP16 accumulate)
        "bf16": 209.5,  # FP32 accumulate
        "fp8_e4m3": 419.0,  # FP32 accumulate (838 with FP16 accumulate)
        "int8": 838.0,
    },
    bandwidth_bytes_per_s=1792e9,
    sm_count=170,
    shared_memory_per_sm_bytes=100 * _KIB,
    l2_bytes=96 * _MIB,
    memory_bytes=32 * _GIB,
    source=(
        "NVIDIA RTX Blackwell GPU architecture whitepaper, appendix table for the GeForce RTX "
        "5090 (dense, FP32-accumulate tensor figures; 170 SMs, 96 MB L2, 32 GB GDDR7 at "
        "1,792 GB/s); sm_120: 100 KB shared memory per SM (CUDA C++ Programming Guide)"
    ),
    notes="GeForce: FP32-accumulate tensor math runs at half the FP16-accumulate rate.",
)

MI300X = HardwareSheet(
    name="MI300X",
    vendor="AMD",
    peak_tflops={
        "fp64": 163.4,  # matrix (vector: 81.7)
        "fp32": 163.4,  # matrix (vector: 163.4)
        "tf32": 653.7,  # 1,307.4 with sparsity
        "fp16": 1307.4,  # 2,614.9 with sparsity
        "bf16": 1307.4,
        "fp8_e4m3": 2614.9,  # 5,229.8 with sparsity; MI300X's FP8 is e4m3fnuz
        "int8": 2614.9,  # 5,229.8 with sparsity
    },
    bandwidth_bytes_per_s=5.3e12,
    sm_count=304,
    shared_memory_per_sm_bytes=64 * _KIB,
    l2_bytes=32 * _MIB,
    memory_bytes=192 * _GIB,
    source=(
        "AMD Instinct MI300X accelerator product page and CDNA 3 architecture whitepaper "
        "(304 CUs, 192 GB HBM3 at 5.3 TB/s, 4 MB L2 per XCD x 8, 64 KB LDS per CU; dense figures)"
    ),
    notes=(
        "Behind the L2 sits a 256 MB Infinity Cache: an L2 flush sized from l2_bytes alone "
        "does not empty it. FP8 on MI300X is the fnuz variant of e4m3."
    ),
)

SHEETS: dict[str, HardwareSheet] = {
    sheet.name: sheet
    for sheet in (H100_SXM, H200_SXM, A100_SXM_80GB, L40S, RTX_4090, RTX_5090, MI300X)
}

# (pattern that must match, pattern that must not match, sheet). The device names come from
# `torch.cuda.get_device_name()`: "NVIDIA H100 80GB HBM3", "NVIDIA H200", "NVIDIA A100-SXM4-80GB",
# "NVIDIA L40S", "NVIDIA GeForce RTX 4090", "AMD Instinct MI300X", ... Variants with different
# clocks or memory (PCIe, NVL, 40GB, "D" models, GH200) match nothing rather than the wrong sheet.
_MATCHERS: tuple[tuple[str, str | None, HardwareSheet], ...] = (
    (r"\bh200\b", r"\bnvl\b|pcie", H200_SXM),
    (r"\bh100\b", r"\bnvl\b|pcie", H100_SXM),
    (r"\ba100\b.*\bsxm\w*\b.*\b80\s*gb\b", None, A100_SXM_80GB),
    (r"\bl40s\b", None, L40S),
    (r"\brtx\s*4090\b", r"4090\s*d\b|laptop|mobile", RTX_4090),
    (r"\brtx\s*5090\b", r"5090\s*d\b|laptop|mobile", RTX_5090),
    (r"\bmi300x\b", None, MI300X),
)


def match_sheet(device_name: str) -> HardwareSheet | None:
    """The datasheet for a device name as torch reports it, or None when we have none for it.

    >>> match_sheet("NVIDIA H200").name
    'H200 SXM'
    """
    text = device_name.lower().replace("_", " ").replace("-", " ")
    for wanted, unwanted, sheet in _MATCHERS:
        if re.search(wanted, text) and not (unwanted and re.search(unwanted, text)):
            return sheet
    return None
