"""Rotary position embedding (NeoX / rotate-half style) on the query and key heads of one layer."""

import torch

from benchmarks.inputs import elem_size, maybe_outliers, randint, randn

NAME = "rope_neox_qk"
CATEGORY = "fusion"
DESCRIPTION = """
Rotary embedding, NeoX ("rotate half") layout, applied to q and k after the QKV projection, as
vLLM's rotary_embedding does for Llama/Qwen. Inputs:
    positions[T]        int64 token positions, each in [0, P)
    q[T, HQ, D], k[T, HKV, D]   in the task dtype (contiguous)
    cos_sin_cache[P, D] fp32; row p is [cos(p * f_0), .., cos(p * f_{D/2-1}) | sin(p * f_0), ..],
                        f_i = theta^(-2i / D), theta = 500000 (Llama-3)
For every token t, head h and i < D/2, with c = cache[positions[t], i], s = cache[positions[t], D/2 + i]:
    out[t, h, i]       = x[t, h, i] * c - x[t, h, i + D/2] * s
    out[t, h, i + D/2] = x[t, h, i + D/2] * c + x[t, h, i] * s
for x = q and x = k. Math in fp32, rounded once to the dtype. Returns the new tensors (q_out, k_out)
with q's and k's shapes; the inputs are not modified. Positions repeat and are in no order (a
decode batch holds sequences of different lengths): the cache is a gather by position.
"outlier" mode puts rare values up to 1000x in q and k.
"""
ENTRY_POINT = "rope_neox_qk"
DTYPES = ("fp32", "fp16", "bf16")
SPARSE_READS = True  # only the cache rows of the T positions are read
THETA = 500000.0
SHAPES = [
    {"name": "llama3_8b_prefill", "dims": {"T": 8192, "HQ": 32, "HKV": 8, "D": 128, "P": 8192}, "weight": 0.4,
     "phase": "prefill",
     "source": "Llama-3-8B attention RoPE (32 q heads, 8 kv heads, head_dim 128, max positions 8192), 8192-token prefill"},
    {"name": "llama3_8b_decode", "dims": {"T": 32, "HQ": 32, "HKV": 8, "D": 128, "P": 8192}, "weight": 0.3,
     "phase": "decode", "source": "Llama-3-8B attention RoPE, batch-32 decode"},
    {"name": "llama3_70b_prefill", "dims": {"T": 4096, "HQ": 64, "HKV": 8, "D": 128, "P": 8192}, "weight": 0.15,
     "phase": "prefill", "source": "Llama-3-70B attention RoPE (64 q heads, 8 kv heads), 4096-token prefill"},
    {"name": "qwen2_7b_decode_tail", "dims": {"T": 13, "HQ": 28, "HKV": 4, "D": 128, "P": 32768}, "weight": 0.15,
     "phase": "decode",
     "source": "Qwen2-7B attention RoPE (28 q heads, 4 kv heads, max positions 32768), batch 13 decode (tail size)"},
]
CPU_SHAPES = [
    {"name": "tiny", "dims": {"T": 4, "HQ": 4, "HKV": 2, "D": 16, "P": 32}},
    {"name": "tail", "dims": {"T": 7, "HQ": 3, "HKV": 1, "D": 24, "P": 50}},
]
# fp32: two products and a sum; fused multiply-add vs separate rounding moves the result by an ulp
# of the larger product (~1e-7 relative to |x|), which atol covers where the sum cancels.
# fp16/bf16: both sides round the same fp32 value once, so at most one ulp apart.
TOLERANCE = {
    "fp32": {"atol": 1e-5, "rtol": 1e-5},
    "fp16": {"atol": 1e-4, "rtol": 2e-3},
    "bf16": {"atol": 1e-3, "rtol": 1.6e-2},
}
FORBIDDEN = ("torch.view_as_complex", "torch.polar", "torch.complex")


def rope_neox_qk(positions: torch.Tensor, q: torch.Tensor, k: torch.Tensor,
                 cos_sin_cache: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    half = q.shape[-1] // 2
    cs = cos_sin_cache[positions]  # [T, D]
    cos = cs[:, None, :half]
    sin = cs[:, None, half:]

    def rotate(x: torch.Tensor) -> torch.Tensor:
        xf = x.float()
        x1, x2 = xf[..., :half], xf[..., half:]
        return torch.cat((x1 * cos - x2 * sin, x2 * cos + x1 * sin), dim=-1).to(x.dtype)

    return rotate(q), rotate(k)


def make_inputs(dims, dtype, mode, gen):
    T, HQ, HKV, D, P = dims["T"], dims["HQ"], dims["HKV"], dims["D"], dims["P"]
    positions = randint((T,), 0, P, gen)
    q = maybe_outliers(randn((T, HQ, D), dtype, gen), mode, gen)
    k = maybe_outliers(randn((T, HKV, D), dtype, gen), mode, gen)
    inv_freq = THETA ** (-torch.arange(0, D, 2, device=gen.device, dtype=torch.float64) / D)
    angles = torch.arange(P, device=gen.device, dtype=torch.float64)[:, None] * inv_freq[None, :]
    cache = torch.cat((torch.cos(angles), torch.sin(angles)), dim=-1).to(torch.float32)
    return (positions, q, k, cache)


def flops(dims, dtype):
    # per rotated pair: 4 multiplies and 2 adds -> 3 per element of q and k
    return 3.0 * dims["T"] * (dims["HQ"] + dims["HKV"]) * dims["D"]


def min_bytes(dims, dtype):
    T, HQ, HKV, D, P = dims["T"], dims["HQ"], dims["HKV"], dims["D"], dims["P"]
    e = elem_size(dtype)
    distinct = P * (1.0 - (1.0 - 1.0 / P) ** T)  # expected distinct positions among T draws
    # q and k read and written once, positions read, one fp32 cache row per distinct position
    return 2.0 * T * (HQ + HKV) * D * e + T * 8.0 + distinct * D * 4.0
