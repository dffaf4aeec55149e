"""Global average pooling (adaptive_avg_pool2d to 1x1): CNN classifier heads and squeeze-excitation."""

import torch

from benchmarks.inputs import elem_size, maybe_outliers, randn

NAME = "global_avg_pool"
CATEGORY = "pooling"
DESCRIPTION = """
Global average pooling of a contiguous NCHW map x[B, C, H, W] (F.adaptive_avg_pool2d(x, 1)):
    y[b, c, 0, 0] = (1 / (H * W)) * sum_{i, j} x[b, c, i, j]
Output [B, C, 1, 1] in x's dtype. Sum in fp32 and round once.
Each (b, c) plane is one contiguous run of H * W elements: 49 for a ResNet head, 12544 for an
early squeeze-excitation block. "outlier" mode scales rare values by up to 1000x.
"""
ENTRY_POINT = "global_avg_pool"
DTYPES = ("fp32", "fp16", "bf16")
SHAPES = [
    {"name": "resnet50_head_b256", "dims": {"B": 256, "C": 2048, "H": 7, "W": 7}, "weight": 0.4,
     "phase": "prefill", "source": "ResNet-50 head average pool (2048 ch, 7x7), batch 256"},
    {"name": "efficientnet_b0_se_stage2_b256", "dims": {"B": 256, "C": 96, "H": 112, "W": 112}, "weight": 0.3,
     "phase": "prefill", "source": "EfficientNet-B0 stage-2 squeeze-excitation (expanded 96 ch, 112x112), batch 256"},
    {"name": "resnet50_head_b1", "dims": {"B": 1, "C": 2048, "H": 7, "W": 7}, "weight": 0.3, "phase": "decode",
     "source": "ResNet-50 head average pool, batch-1 inference (launch-bound)"},
]
CPU_SHAPES = [
    {"name": "tiny", "dims": {"B": 2, "C": 8, "H": 7, "W": 7}},
    {"name": "tail", "dims": {"B": 3, "C": 5, "H": 37, "W": 29}},
]
# Values O(1), means over 49 to 12544 terms: fp32 sums in different orders agree to ~1e-6.
# fp16/bf16: one rounding of the fp32 mean on each side.
TOLERANCE = {
    "fp32": {"atol": 1e-5, "rtol": 1e-5},
    "fp16": {"atol": 1e-4, "rtol": 2e-3},
    "bf16": {"atol": 1e-3, "rtol": 1.6e-2},
}
FORBIDDEN = ("torch.nn.functional.adaptive_avg_pool2d", "torch.nn.AdaptiveAvgPool2d", "torch.adaptive_avg_pool2d",
             "torch.nn.functional.avg_pool2d", "torch.avg_pool2d", "torch.mean", "torch.sum", "torch.nanmean")


def global_avg_pool(x: torch.Tensor) -> torch.Tensor:
    return x.float().mean(dim=(2, 3), keepdim=True).to(x.dtype)


def make_inputs(dims, dtype, mode, gen):
    # post-ReLU-like activations: mostly positive, O(1)
    x = randn((dims["B"], dims["C"], dims["H"], dims["W"]), dtype, gen, mean=0.5)
    return (maybe_outliers(x, mode, gen),)


def flops(dims, dtype):
    # one add per element
    return 1.0 * dims["B"] * dims["C"] * dims["H"] * dims["W"]


def min_bytes(dims, dtype):
    B, C, H, W = dims["B"], dims["C"], dims["H"], dims["W"]
    return (B * C * H * W + B * C) * float(elem_size(dtype))
