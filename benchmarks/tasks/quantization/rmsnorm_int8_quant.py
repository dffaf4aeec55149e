"""RMSNorm fused with dynamic per-token int8 quantization (SmoothQuant W8A8 serving, before QKV / gate-up)."""

import torch

from benchmarks.inputs import elem_size, maybe_outliers, randn

NAME = "rmsnorm_int8_quant"
CATEGORY = "quantization"
DESCRIPTION = """
RMSNorm of x[M, K] with weight w[K], followed by per-token symmetric int8 quantization of the
normalized row, without writing the normalized activations out (vLLM's
rms_norm_dynamic_per_token_quant). All in fp32, eps = 1e-5 (Llama-3's rms_norm_eps):
    rstd[i] = 1 / sqrt(sum_k x[i, k]^2 / K + eps)
    h[i, k] = (x[i, k] * rstd[i]) * w[k]                     kept in fp32 (no rounding to x's dtype)
    s[i]    = max(max_k |h[i, k]|, 1e-10) / 127
    q[i, k] = clamp(round_half_even(h[i, k] / s[i]), -128, 127)
Returns (q, s): q [M, K] int8, s [M, 1] fp32. Library quantization and normalization calls are
forbidden. "outlier" mode puts rare 10-1000x values in x (they dominate both rstd and s of their
row); "quiet_rows" zeroes every fifth row (rstd = 1/sqrt(eps), h = 0, s = 1e-10 / 127, q = 0) and
scales the next row of each five by 1e-3, where eps weighs as much as the mean square.
"""
ENTRY_POINT = "rmsnorm_int8_quant"
DTYPES = ("fp32", "fp16", "bf16")
MODES = ("quiet_rows",)
EPS = 1e-5
SHAPES = [
    {"name": "llama3_8b_prefill", "dims": {"M": 8192, "K": 4096}, "weight": 0.35, "phase": "prefill",
     "source": "Llama-3-8B W8A8: input RMSNorm (hidden 4096) + quantization for the QKV projection, 8192-token "
               "prefill"},
    {"name": "llama3_70b_prefill", "dims": {"M": 4096, "K": 8192}, "weight": 0.25, "phase": "prefill",
     "source": "Llama-3-70B W8A8: post-attention RMSNorm (hidden 8192) + quantization for gate/up, 4096-token "
               "prefill"},
    {"name": "llama3_8b_decode", "dims": {"M": 32, "K": 4096}, "weight": 0.2, "phase": "decode",
     "source": "Llama-3-8B W8A8: RMSNorm + quantization, batch-32 decode"},
    {"name": "qwen2_7b_decode_tail", "dims": {"M": 13, "K": 3584}, "weight": 0.2, "phase": "decode",
     "source": "Qwen2-7B W8A8: RMSNorm (hidden 3584) + quantization, batch 13 (tail)"},
]
CPU_SHAPES = [
    {"name": "small", "dims": {"M": 10, "K": 256}},
    {"name": "tail", "dims": {"M": 7, "K": 1000}},
]
TOLERANCE = {
    "cosine": 0.99999,
    "rel_l1": 2e-4,
    "rmse": 0.06,
    "why": (
        "Both outputs are compared as numbers (q in int8 steps, s in fp32). rstd and h are fp32 values "
        "that a correct kernel computes with a different summation order, an approximate or correctly "
        "rounded rsqrt, or a reciprocal instead of a division: an ulp or two in h and s, which flips q "
        "by one step where h / s sits that close to a .5 boundary. Measured over the CPU shapes and "
        "GPU-width rows, all modes, 3 seeds, with rstd moved by one ulp and a reciprocal "
        "quantization: rel_l1 <= 1.4e-5, rmse <= 0.02, cosine >= 0.9999998. Rejected, as measured: "
        "rounding h to bf16 before quantizing (rel_l1 2.9e-3, rmse 0.25; rounding to fp16 costs "
        "rel_l1 4e-4, rmse 0.09, also rejected), truncating instead of rounding (rel_l1 0.32), "
        "forgetting the weight (rel_l1 0.13), eps = 1e-6 instead of 1e-5 (the 'quiet_rows' scales: "
        "rel_l1 0.22, cosine 0.962), a scale of amax / 128 (rel_l1 0.013)."
    ),
}
FORBIDDEN = ("torch.quantize_per_tensor", "torch.quantize_per_channel", "torch.quantize_per_tensor_dynamic",
             "torch.ao", "torch.quantization", "torch.nn.functional.rms_norm", "torch.rms_norm", "torch.nn.RMSNorm",
             "torch.norm", "torch.linalg.vector_norm")


def rmsnorm_int8_quant(x: torch.Tensor, w: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    xf = x.float()
    rstd = torch.rsqrt((xf * xf).mean(dim=1, keepdim=True) + EPS)
    h = xf * rstd * w.float()
    s = torch.clamp_min(h.abs().amax(dim=1, keepdim=True), 1e-10) / 127.0
    q = torch.clamp(torch.round(h / s), -128.0, 127.0).to(torch.int8)  # torch.round: ties to even
    return q, s


def make_inputs(dims, dtype, mode, gen):
    M, K = dims["M"], dims["K"]
    x = maybe_outliers(randn((M, K), dtype, gen), mode, gen)
    if mode == "quiet_rows":
        x[::5] = 0
        x[1::5] *= 1e-3
    w = randn((K,), dtype, gen, std=0.1, mean=1.0)
    return (x, w)


def flops(dims, dtype):
    # square-sum, normalise, *w, abs-max, divide, round, clamp: about 7 per element
    return 7.0 * dims["M"] * dims["K"]


def min_bytes(dims, dtype):
    M, K = dims["M"], dims["K"]
    e = float(elem_size(dtype))
    return M * K * e + K * e + M * K + 4.0 * M
