"""VAE posterior sample, z = mean + exp(0.5 * clamp(logvar, -30, 20)) * noise, one fused pass.

Op: moments[B, 2C, H, W] holds the mean in channels [0, C) and the log-variance in [C, 2C);
z[B, C, H, W] = mean + exp(0.5 * logvar) * noise.
Traffic: read moments (2 planes per output) and noise, write z: 4 * B * C * H * W * elem bytes,
bandwidth-bound.
Tiling: 2-D grid (sample b, block of BLOCK elements of that sample's C * H * W output plane).
Within a sample the mean block sits at b * 2CHW + i and the log-variance at b * 2CHW + CHW + i,
so all three input streams and the output are contiguous runs: no per-element division. The last
block of each sample is masked; offsets are int64. fp32 math, one rounding.
Tunables: BLOCK (power of two, 1024-8192), num_warps (4-8).
"""

import torch
import triton
import triton.language as tl

KB_META = {
    "op_family": "elementwise_math",
    "category": "math",
    "dtypes": ["fp32", "fp16", "bf16"],
    "techniques": ["2d_grid_sample_by_block", "contiguous_channel_halves", "tail_mask", "int64_offsets",
                   "fp32_compute", "clamp_before_exp"],
    "tunables": {"BLOCK": [1024, 2048, 4096, 8192], "num_warps": [4, 8]},
    "verified_on": ["NVIDIA H200"],
    "attainment": {"source": "docs/results/solution_times_h200.md (NVIDIA H200, torch 2.11.0+cu130, triton 3.6.0, 2026-11-29)", "vae_gaussian_sample_bf16": 0.4914, "vae_gaussian_sample_fp16": 0.6685, "vae_gaussian_sample_fp32": 0.8382},
}


@triton.jit
def _vae_sample_kernel(m_ptr, noise_ptr, z_ptr, CHW, BLOCK: tl.constexpr):
    # axis 0: a sample; axis 1: a BLOCK of its C * H * W elements
    b = tl.program_id(0).to(tl.int64)
    offs = tl.program_id(1).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < CHW
    # moments [B, 2C, H, W]: per sample, the first C channels are the mean and the next C the
    # log-variance, two contiguous runs of CHW
    m_base = m_ptr + b * (2 * CHW)
    mean = tl.load(m_base + offs, mask=mask, other=0.0).to(tl.float32)
    logvar = tl.load(m_base + CHW + offs, mask=mask, other=0.0).to(tl.float32)
    noise = tl.load(noise_ptr + b * CHW + offs, mask=mask, other=0.0).to(tl.float32)
    # clamp the log-variance to [-30, 20] before the exp, as the reference does; std = exp(logvar /
    # 2)
    logvar = tl.minimum(tl.maximum(logvar, -30.0), 20.0)
    z = mean + tl.exp(0.5 * logvar) * noise
    tl.store(z_ptr + b * CHW + offs, z.to(z_ptr.dtype.element_ty), mask=mask)


def vae_gaussian_sample(moments: torch.Tensor, noise: torch.Tensor, BLOCK: int = 4096,
                        num_warps: int = 8) -> torch.Tensor:
    assert moments.dim() == 4 and moments.shape[1] == 2 * noise.shape[1]
    moments, noise = moments.contiguous(), noise.contiguous()
    B, C, H, W = noise.shape
    z = torch.empty_like(noise)
    chw = C * H * W
    block = min(BLOCK, triton.next_power_of_2(chw))
    _vae_sample_kernel[(B, triton.cdiv(chw, block))](moments, noise, z, chw, BLOCK=block, num_warps=num_warps)
    return z
