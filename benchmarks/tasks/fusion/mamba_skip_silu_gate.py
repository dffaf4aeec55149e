"""Mamba-1 output gating: skip connection D * u added to the scan output, then gated by silu(z)."""

import torch

from benchmarks.inputs import elem_size, maybe_outliers, randn

NAME = "mamba_skip_silu_gate"
CATEGORY = "fusion"
DESCRIPTION = """
The tail of a Mamba-1 mixer between the selective scan and out_proj: the scan output y gets the
skip term D * u, and the result is gated by SiLU of the z branch of in_proj. Token-major inputs
y[M, E] (scan output), u[M, E] (scan input, after the causal conv), z[M, E] (gate branch), all in
the task dtype, and the skip parameter Dskip[E] in fp32 (Mamba keeps it in fp32):
    out[i, c] = (y[i, c] + u[i, c] * Dskip[c]) * z[i, c] / (1 + exp(-z[i, c]))
Output is [M, E] in the task dtype; compute in fp32 and round once. E = d_inner = 2 * d_model.
"outlier" mode puts rare values up to 1000x in y and u, and rare large NEGATIVE values in z
(exp(-z) overflows there: the sigmoid must saturate to 0, never NaN). Large positive gates are
left out on purpose: silu(z) ~ z would multiply the fp32 rounding of y + u * D -- which differs by
an ulp of u * D between a fused multiply-add and a separate multiply and add, both legitimate --
by 1000x wherever y and u * D nearly cancel (measured on an H200 (torch 2.11, triton 3.6, 2026-11-29) with such gates: the fused and the
unfused result then differed by up to 2.9x the fp32 bounds, on 9 of 67M elements).
"""
ENTRY_POINT = "mamba_skip_silu_gate"
DTYPES = ("fp32", "fp16", "bf16")
SHAPES = [
    {"name": "falcon_mamba_7b_prefill", "dims": {"M": 8192, "E": 8192}, "weight": 0.4, "phase": "prefill",
     "source": "Falcon-Mamba-7B mixer gate (d_model 4096, d_inner 8192), 8192-token prefill"},
    {"name": "falcon_mamba_7b_decode", "dims": {"M": 32, "E": 8192}, "weight": 0.25, "phase": "decode",
     "source": "Falcon-Mamba-7B mixer gate, batch-32 decode"},
    {"name": "mamba_2p8b_prefill_tail", "dims": {"M": 4093, "E": 5120}, "weight": 0.2, "phase": "prefill",
     "source": "Mamba-2.8B mixer gate (d_model 2560, d_inner 5120), 4093-token prefill (tail size)"},
    {"name": "mamba_790m_decode_tail", "dims": {"M": 13, "E": 3072}, "weight": 0.15, "phase": "decode",
     "source": "Mamba-790M mixer gate (d_model 1536, d_inner 3072), batch 13 decode (tail size)"},
]
CPU_SHAPES = [
    {"name": "tiny", "dims": {"M": 4, "E": 128}},
    {"name": "tail", "dims": {"M": 7, "E": 1000}},
]
# One rounding of an fp32 result on each side: one ulp apart (fp16 2^-10, bf16 2^-7 relative);
# atol absorbs fp32 noise (exp, divide, FMA or not) where y + u * D cancels.
TOLERANCE = {
    "fp32": {"atol": 1e-5, "rtol": 1e-5},
    "fp16": {"atol": 1e-4, "rtol": 2e-3},
    "bf16": {"atol": 1e-3, "rtol": 1.6e-2},
}
FORBIDDEN = ("torch.nn.functional.silu", "torch.nn.SiLU", "torch.sigmoid", "torch.nn.functional.sigmoid",
             "torch.addcmul")


def mamba_skip_silu_gate(y: torch.Tensor, u: torch.Tensor, z: torch.Tensor, d_skip: torch.Tensor) -> torch.Tensor:
    zf = z.float()
    out = (y.float() + u.float() * d_skip.float()) * (zf / (1.0 + torch.exp(-zf)))
    return out.to(y.dtype)


def make_inputs(dims, dtype, mode, gen):
    M, E = dims["M"], dims["E"]
    y = maybe_outliers(randn((M, E), dtype, gen), mode, gen)
    u = maybe_outliers(randn((M, E), dtype, gen), mode, gen)
    z = randn((M, E), dtype, gen, std=2.0)
    z_out = maybe_outliers(z, mode, gen)
    z = torch.where(z_out != z, -z_out.abs(), z)  # outliers in the gate are negative only
    d_skip = randn((E,), torch.float32, gen, std=0.5, mean=1.0)
    return (y, u, z, d_skip)


def flops(dims, dtype):
    # multiply-add of the skip, silu (negate, exp, add, divide), the gate product: 7 per element
    return 7.0 * dims["M"] * dims["E"]


def min_bytes(dims, dtype):
    # read y, u, z and Dskip (fp32); write out
    return 4.0 * dims["M"] * dims["E"] * elem_size(dtype) + 4.0 * dims["E"]
