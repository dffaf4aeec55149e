"""Row mean and (biased) variance: the statistics of LayerNorm and GroupNorm."""

import torch

from benchmarks.inputs import elem_size, maybe_outliers, randn

NAME = "row_mean_var"
CATEGORY = "reduce"
DESCRIPTION = """
Mean and biased variance of each row of x[M, N] (one row = one LayerNorm token, or one
(sample, group) of a GroupNorm flattened over its channels and pixels):
    mean[i] = (1/N) sum_j x[i, j]
    var[i]  = (1/N) sum_j (x[i, j] - mean[i])^2          (biased: divide by N, not N - 1)
Returns the tuple (mean, var), each fp32 of shape [M], whatever x's dtype. Accumulate in fp32. Rows carry a per-row offset of up to +-20 around a unit spread, so
the one-pass E[x^2] - E[x]^2 formula loses digits to cancellation (up to ~400 / 1 in fp32):
use two passes or a Welford/Chan merge. "outlier" mode scales rare values by 10-1000x.
"""
ENTRY_POINT = "row_mean_var"
DTYPES = ("fp32", "fp16", "bf16")
SHAPES = [
    {"name": "sdxl_unet_groupnorm_1024px", "dims": {"M": 64, "N": 163840}, "weight": 0.3, "phase": "prefill",
     "source": "SDXL UNet GroupNorm(32) on 320 ch at 128x128 (1024 px): 2 samples (CFG) x 32 groups, "
               "each 10 ch x 16384 px"},
    {"name": "sd15_unet_groupnorm_train", "dims": {"M": 1024, "N": 40960}, "weight": 0.3, "phase": "train",
     "source": "SD 1.5 UNet GroupNorm(32) on 320 ch at 64x64 (512 px), batch 32 training: 32 x 32 groups"},
    {"name": "vit_l14_layernorm_b64", "dims": {"M": 16448, "N": 1024}, "weight": 0.2, "phase": "prefill",
     "source": "ViT-L/14 at 224 px LayerNorm statistics (hidden 1024), batch 64 x 257 tokens"},
    {"name": "falcon_7b_layernorm_decode_tail", "dims": {"M": 32, "N": 4544}, "weight": 0.2, "phase": "decode",
     "source": "Falcon-7B LayerNorm statistics (hidden 4544, not a power of two), batch-32 decode"},
]
# "tail" is long enough that split-row kernels (16k-element slabs) merge partial statistics
CPU_SHAPES = [
    {"name": "tiny", "dims": {"M": 4, "N": 256}},
    {"name": "tail", "dims": {"M": 3, "N": 17000}},
]
# fp32 two-pass and Welford results agree to a few ulps of the mean (|mean| <= 20) and ~1e-6
# relative of the variance. The one-pass
# E[x^2] - E[x]^2 in fp32 is off by ~1e-4 relative and more: rejected.
TOLERANCE = {
    "fp32": {"atol": 1e-5, "rtol": 1e-5},
    "fp16": {"atol": 1e-5, "rtol": 1e-5},
    "bf16": {"atol": 1e-5, "rtol": 1e-5},
}
FORBIDDEN = ("torch.var", "torch.var_mean", "torch.std", "torch.std_mean", "torch.mean", "torch.sum",
             "torch.nn.functional.layer_norm", "torch.nn.functional.group_norm", "torch.layer_norm",
             "torch.group_norm", "torch.native_layer_norm", "torch.batch_norm_stats")


def row_mean_var(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    var, mean = torch.var_mean(x.float(), dim=-1, correction=0)
    return mean, var


def make_inputs(dims, dtype, mode, gen):
    M, N = dims["M"], dims["N"]
    offset = (torch.rand((M, 1), generator=gen, device=gen.device) * 40.0 - 20.0)
    spread = torch.rand((M, 1), generator=gen, device=gen.device) * 1.5 + 0.5
    x = maybe_outliers(randn((M, N), torch.float32, gen), mode, gen) * spread + offset
    return (x.to(dtype),)


def flops(dims, dtype):
    # sum, then subtract / square / sum: about 4 per element
    return 4.0 * dims["M"] * dims["N"]


def min_bytes(dims, dtype):
    return dims["M"] * dims["N"] * elem_size(dtype) + 2.0 * dims["M"] * 4
