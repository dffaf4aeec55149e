"""DeepSeek-V3 activation quantization: fp8 e4m3 with one scale per token per 128 channels (1 x 128)."""

import torch

from benchmarks.inputs import elem_size, maybe_outliers, randn

NAME = "fp8_act_block_quant"
CATEGORY = "quantization"
DESCRIPTION = """
Block-scaled fp8 quantization of activations as in DeepSeek-V3's FP8 recipe (1 x 128 tiles):
x[M, K] with K a multiple of 128; group g of row i is x[i, 128 g : 128 (g + 1)]. In fp32:
    s[i, g] = max(max_{k in g} |x[i, k]|, 1e-10) / 448
    q[i, k] = e4m3_round_nearest_even(clamp(x[i, k] / s[i, k // 128], -448, 448))
Returns (q, s): q [M, K] torch.float8_e4m3fn, s [M, K / 128] fp32. IEEE fp32 division; the fp8
conversion rounds to nearest, ties to even (torch's .to(torch.float8_e4m3fn), cvt.rn.satfinite).
Library quantization calls are forbidden. "outlier" mode puts rare 10-1000x values in x (only
their group is affected); "zero_groups" zeroes every fifth group of each row (s = 1e-10 / 448,
q = 0); "ties" mode gives every group an abs-max of exactly 448 (s = 1) and draws the other values
from e4m3 grid points and the midpoints between them. The CPU interpreter's own fp32 -> fp8
conversion rounds wrongly: round onto the e4m3 grid in fp32 first, then convert.
"""
ENTRY_POINT = "fp8_act_block_quant"
DTYPES = ("fp32", "fp16", "bf16")
MODES = ("zero_groups", "ties")
GROUP = 128
SHAPES = [
    {"name": "deepseek_v3_hidden_prefill", "dims": {"M": 4096, "K": 7168}, "weight": 0.3, "phase": "prefill",
     "source": "DeepSeek-V3 hidden states (7168 = 56 groups) entering the MLA / MoE projections, 4096-token "
               "prefill"},
    {"name": "deepseek_v3_expert_down_in_prefill", "dims": {"M": 32768, "K": 2048}, "weight": 0.3,
     "phase": "prefill",
     "source": "DeepSeek-V3 routed-expert activations entering the down projection (moe_intermediate 2048), "
               "4096 tokens x top-8 = 32768 rows"},
    {"name": "deepseek_v3_hidden_decode", "dims": {"M": 32, "K": 7168}, "weight": 0.2, "phase": "decode",
     "source": "DeepSeek-V3 hidden states (7168), batch-32 decode"},
    {"name": "deepseek_v3_dense_down_in_tail", "dims": {"M": 13, "K": 18432}, "weight": 0.2, "phase": "decode",
     "source": "DeepSeek-V3 dense-layer MLP activations entering the down projection (18432 = 144 groups), "
               "batch 13 (tail)"},
]
CPU_SHAPES = [
    {"name": "small", "dims": {"M": 10, "K": 256}},
    {"name": "tail", "dims": {"M": 7, "K": 640}},
]
TOLERANCE = {
    "cosine": 0.9995,
    "rel_l1": 3e-3,
    "rmse": 2.5,
    "why": (
        "Both outputs are compared as numbers: q in e4m3 values up to 448 (neighbours 1/16 to 1/8 "
        "apart), s in fp32. A kernel that follows the contract is bit-exact. A correct kernel may "
        "differ in the last bit of x / s (multiplying by 448 / amax, or Triton's approximate divide), "
        "moving values within an ulp of a rounding midpoint to the neighbouring e4m3 value. Measured "
        "for that variant over the CPU shapes and GPU-width rows, all modes, 3 seeds: rel_l1 <= 4.8e-4, "
        "rmse <= 0.89, cosine >= 0.99997 (worst with bf16 inputs, whose ratios to a bf16 amax often "
        "land near e4m3 midpoints). Rejected, as measured: rounding toward zero (rel_l1 >= 0.043, "
        "rmse >= 9.9, cosine <= 0.99889), ties away from zero in 'ties' mode (rel_l1 0.020, rmse 4.4, "
        "cosine 0.99932), one scale per row instead of per group (rel_l1 20 on the scales), a scale "
        "of amax / 240 (the fnuz range) (rel_l1 0.87)."
    ),
}
FORBIDDEN = ("torch.quantize_per_tensor", "torch.quantize_per_channel", "torch.quantize_per_tensor_dynamic",
             "torch.ao", "torch.quantization", "torch._scaled_mm", "torch.fake_quantize_per_tensor_affine")


def fp8_act_block_quant(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    M, K = x.shape
    xg = x.float().reshape(M, K // GROUP, GROUP)
    s = torch.clamp_min(xg.abs().amax(dim=2, keepdim=True), 1e-10) / 448.0
    q = torch.clamp(xg / s, -448.0, 448.0).to(torch.float8_e4m3fn)  # round to nearest, ties to even
    return q.reshape(M, K), s.reshape(M, K // GROUP)


def e4m3_ties(shape: tuple[int, ...], gen: torch.Generator) -> torch.Tensor:
    """fp32 values drawn from the finite e4m3 grid and the midpoints between its neighbours."""
    grid = torch.arange(256, dtype=torch.uint8, device=gen.device).view(torch.float8_e4m3fn).float()
    pos = torch.unique(grid[torch.isfinite(grid) & (grid > 0)])
    pts = torch.cat([pos, (pos[1:] + pos[:-1]) / 2])
    idx = torch.randint(0, pts.numel(), shape, generator=gen, device=gen.device)
    sign = torch.where(torch.rand(shape, generator=gen, device=gen.device) < 0.5, -1.0, 1.0)
    return pts[idx] * sign


def make_inputs(dims, dtype, mode, gen):
    M, K = dims["M"], dims["K"]
    assert K % GROUP == 0
    if mode == "ties":  # one 448 per group: s = 1
        x = e4m3_ties((M, K), gen)
        G = M * K // GROUP
        col = torch.randint(0, GROUP, (G,), generator=gen, device=gen.device)
        x.view(G, GROUP)[torch.arange(G, device=gen.device), col] = 448.0
        return (x.to(dtype),)
    x = maybe_outliers(randn((M, K), dtype, gen), mode, gen)
    if mode == "zero_groups":
        x.view(M, K // GROUP, GROUP)[:, ::5] = 0
    return (x,)


def flops(dims, dtype):
    return 4.0 * dims["M"] * dims["K"]


def min_bytes(dims, dtype):
    M, K = dims["M"], dims["K"]
    return M * K * float(elem_size(dtype)) + M * K + 4.0 * M * (K // GROUP)
