"""DeepSeek-V3 weight quantization: fp8 e4m3 with one scale per 128 x 128 block (weight load / RL sync)."""

import torch

from benchmarks.inputs import elem_size, maybe_outliers, randn

NAME = "fp8_weight_block_quant"
CATEGORY = "quantization"
DESCRIPTION = """
Block-scaled fp8 quantization of a weight w[N, K] as in DeepSeek-V3's FP8 checkpoints: one scale
per 128 x 128 block; block (bn, bk) covers rows 128 bn .. 128 bn + 127 and columns 128 bk ..
128 bk + 127, clipped at the edges when N or K is not a multiple of 128 (a partial block's scale
is over its existing elements). In fp32:
    s[bn, bk] = max(max_{(n, k) in block} |w[n, k]|, 1e-10) / 448
    q[n, k]   = e4m3_round_nearest_even(clamp(w[n, k] / s[n // 128, k // 128], -448, 448))
Returns (q, s): q [N, K] torch.float8_e4m3fn, s [ceil(N / 128), ceil(K / 128)] fp32. IEEE fp32
division; ties-to-even fp8 rounding (torch's .to(torch.float8_e4m3fn), cvt.rn.satfinite). Runs
when a bf16 checkpoint is loaded into an FP8 engine, or on every weight sync of RL training into
an FP8 rollout engine. Library quantization calls are forbidden. "outlier" mode puts rare
10-1000x values in w (only their block is affected); "ties" mode gives every block an abs-max of
exactly 448 (s = 1) and draws the other values from e4m3 grid points and midpoints. The CPU
interpreter's own fp32 -> fp8 conversion rounds wrongly: round onto the e4m3 grid in fp32 first.
"""
ENTRY_POINT = "fp8_weight_block_quant"
DTYPES = ("fp32", "fp16", "bf16")
MODES = ("ties",)
BLOCK = 128
SHAPES = [
    {"name": "deepseek_v3_dense_gate_up", "dims": {"N": 36864, "K": 7168}, "weight": 0.35, "phase": "prefill",
     "source": "DeepSeek-V3 dense-layer fused gate/up weight (7168 -> 2 x 18432)"},
    {"name": "deepseek_v3_o_proj", "dims": {"N": 7168, "K": 16384}, "weight": 0.25, "phase": "prefill",
     "source": "DeepSeek-V3 attention output projection weight (128 heads x 128 -> 7168)"},
    {"name": "deepseek_v3_q_b_proj", "dims": {"N": 24576, "K": 1536}, "weight": 0.2, "phase": "prefill",
     "source": "DeepSeek-V3 MLA q_b_proj weight (q_lora_rank 1536 -> 128 heads x 192)"},
    {"name": "deepseek_v3_kv_a_proj_tail", "dims": {"N": 576, "K": 7168}, "weight": 0.2, "phase": "prefill",
     "source": "DeepSeek-V3 MLA kv_a_proj_with_mqa weight (7168 -> 512 + 64: 4.5 row blocks, partial edge)"},
]
CPU_SHAPES = [
    {"name": "small", "dims": {"N": 128, "K": 256}},
    {"name": "tail", "dims": {"N": 200, "K": 300}},
]
TOLERANCE = {
    "cosine": 0.9995,
    "rel_l1": 3e-3,
    "rmse": 2.5,
    "why": (
        "Both outputs are compared as numbers: q in e4m3 values up to 448 (neighbours 1/16 to 1/8 "
        "apart), s in fp32. A kernel that follows the contract is bit-exact. A correct kernel may "
        "differ in the last bit of w / s (multiplying by 448 / amax, or Triton's approximate divide), "
        "moving values within an ulp of a rounding midpoint to the neighbouring e4m3 value. Measured "
        "for that variant on the CPU shapes and GPU-shaped slices (576 x 1536, 256 x 7168), all modes, "
        "3 seeds: rel_l1 <= 1.5e-4, rmse <= 0.32, cosine >= 0.99999. Rejected, as measured: rounding "
        "toward zero (rel_l1 >= 0.045, rmse >= 7, cosine <= 0.99891), ties away from zero in 'ties' "
        "mode (rel_l1 0.022, rmse 4.4, cosine 0.99925), one scale per 128-row band instead of per "
        "block (rel_l1 0.21)."
    ),
}
FORBIDDEN = ("torch.quantize_per_tensor", "torch.quantize_per_channel", "torch.quantize_per_tensor_dynamic",
             "torch.ao", "torch.quantization", "torch._scaled_mm", "torch.fake_quantize_per_tensor_affine")


def fp8_weight_block_quant(w: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    N, K = w.shape
    nb, kb = -(-N // BLOCK), -(-K // BLOCK)
    wp = torch.zeros((nb * BLOCK, kb * BLOCK), dtype=torch.float32, device=w.device)
    wp[:N, :K] = w.float()  # zero padding does not change an abs-max
    blocks = wp.reshape(nb, BLOCK, kb, BLOCK)
    s = torch.clamp_min(blocks.abs().amax(dim=(1, 3), keepdim=True), 1e-10) / 448.0
    q = torch.clamp(blocks / s, -448.0, 448.0).to(torch.float8_e4m3fn)  # ties to even
    return q.reshape(nb * BLOCK, kb * BLOCK)[:N, :K].contiguous(), s.reshape(nb, kb)


def e4m3_ties(shape: tuple[int, ...], gen: torch.Generator) -> torch.Tensor:
    """fp32 values drawn from the finite e4m3 grid and the midpoints between its neighbours."""
    grid = torch.arange(256, dtype=torch.uint8, device=gen.device).view(torch.float8_e4m3fn).float()
    pos = torch.unique(grid[torch.isfinite(grid) & (grid > 0)])
    pts = torch.cat([pos, (pos[1:] + pos[:-1]) / 2])
    idx = torch.randint(0, pts.numel(), shape, generator=gen, device=gen.device)
    sign = torch.where(torch.rand(shape, generator=gen, device=gen.device) < 0.5, -1.0, 1.0)
    return pts[idx] * sign


def make_inputs(dims, dtype, mode, gen):
    N, K = dims["N"], dims["K"]
    if mode == "ties":  # the first element of every block is 448: s = 1 everywhere
        w = e4m3_ties((N, K), gen)
        w[::BLOCK, ::BLOCK] = 448.0
        return (w.to(dtype),)
    w = maybe_outliers(randn((N, K), torch.float32, gen, std=0.02), mode, gen)
    return (w.to(dtype),)


def flops(dims, dtype):
    return 4.0 * dims["N"] * dims["K"]


def min_bytes(dims, dtype):
    N, K = dims["N"], dims["K"]
    blocks = (-(-N // BLOCK)) * (-(-K // BLOCK))
    return N * K * float(elem_size(dtype)) + N * K + 4.0 * blocks
