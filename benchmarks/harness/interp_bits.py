"""Bit conversions of the floating-point formats numpy lacks (bf16, fp8), as the GPU rounds them;
used by the mends of Triton's CPU interpreter (`interp_rounding`, `interp_math`). Pure numpy:
they run inside a candidate's traced launch, where PyTorch calls would count as the candidate's."""

from __future__ import annotations

import numpy as np


def fp32_to_bf16_bits(values: np.ndarray) -> np.ndarray:
    """The bf16 bit patterns (uint16) nearest to fp32 `values`, ties to even; NaN stays NaN."""
    data = np.ascontiguousarray(values, dtype=np.float32)
    bits = data.view(np.uint32).astype(np.uint64)
    odd = (bits >> 16) & 1
    rounded = ((bits + 0x7FFF + odd) >> 16).astype(np.uint16)
    quiet_nan = ((bits >> 16) | 0x40).astype(np.uint16)
    return np.where(np.isnan(data), quiet_nan, rounded).reshape(data.shape)


def bf16_bits_to_fp32(bits: np.ndarray) -> np.ndarray:
    """The float32 values that bf16 bit patterns (uint16) stand for (exact)."""
    data = np.ascontiguousarray(bits, dtype=np.uint16)
    return (data.astype(np.uint32) << 16).view(np.float32).reshape(data.shape)


# fp8 formats the GPU casts to: (mantissa bits, exponent bias, largest finite value, NaN's bits)
_FP8 = {"float8e4nv": (3, 7, 448.0, 0x7F), "float8e5": (2, 15, 57344.0, 0x7F)}


def fp8_bits(values: np.ndarray, fmt: str) -> np.ndarray:
    """The fp8 bit patterns (uint8) of float `values`: rounded to nearest even, saturated at the
    largest finite value (the GPU's `cvt.rn.satfinite`), NaN kept. Pure numpy: it runs inside the
    candidate's traced launch, where PyTorch calls would count as the candidate's."""
    mbits, bias, top, nan_bits = _FP8[fmt]
    x = np.asarray(values, dtype=np.float64)
    sign = np.signbit(x).astype(np.uint8) << 7
    nan = np.isnan(x)
    a = np.minimum(np.where(nan, 0.0, np.abs(x)), top)
    emin = 1 - bias
    normal = a >= 2.0**emin
    frac, exp = np.frexp(np.where(normal, a, 1.0))  # a = frac * 2**exp, frac in [0.5, 1)
    unbiased = exp.astype(np.int64) - 1
    mant = np.rint((frac * 2.0 - 1.0) * 2**mbits).astype(np.int64)
    carry = mant == 2**mbits
    unbiased, mant = np.where(carry, unbiased + 1, unbiased), np.where(carry, 0, mant)
    normal_bits = ((unbiased + bias) << mbits) | mant
    sub_bits = np.rint(np.where(normal, 0.0, a) / 2.0 ** (emin - mbits)).astype(np.int64)
    bits = np.where(normal, normal_bits, sub_bits).astype(np.uint8)
    return (np.where(nan, np.uint8(nan_bits), bits) | sign).astype(np.uint8)
