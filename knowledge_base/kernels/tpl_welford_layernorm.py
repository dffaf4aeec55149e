"""LayerNorm with Welford statistics: one program per row, chunked, numerically stable.

Op: y[i, :] = (x[i, :] - mean_i) * rstd_i * w + b, rstd_i = 1 / sqrt(var_i + eps), biased
variance over the last dimension (as torch.nn.functional.layer_norm); fp32 statistics, output in
x's dtype. mean and rstd are also returned (fp32, [M]) since a backward pass needs them.
Traffic: minimal (2 * M * N + 2 * N) * elem + 8 * M. The row is read twice (statistics, then
normalise); the second read hits L2 for rows up to hundreds of KB, so DRAM sees about one read.
Why Welford: the one-pass formula var = E[x^2] - E[x]^2 cancels catastrophically when |mean| >>
std (activations with a large DC offset, fp16 inputs of magnitude 1e3): both terms are ~mean^2
and their difference loses every significant bit. Welford keeps (count, mean, M2) per lane and
merges lanes with Chan's parallel formula: delta = mean_b - mean_a; n = n_a + n_b;
mean = mean_a + delta * n_b / n; M2 = M2_a + M2_b + delta^2 * n_a * n_b / n. This is the
combine function given to `tl.reduce`, so the lane merge is a tree, not a serial chain.
Shift: Welford alone still rounds the mean at the data's magnitude (ulp(3000) = 2.4e-4 in fp32,
and a 512-lane merge tree compounds it). Running it on x - x[0] (the row's first element) makes
every intermediate of size ~std; by Sterbenz's lemma x - x[0] is exact when the two are within a
factor of two, and the output uses the shifted values directly.
Tiling: one program per row, BLOCK_N lanes walk the row; each lane keeps its own Welford state
across chunks (masked lanes keep count 0 and are neutral in the merge).
Tunables: BLOCK_N (power of two, 512-8192; >= N makes the loop a single trip), num_warps (4-16).
"""

import torch
import triton
import triton.language as tl

KB_META = {
    "op_family": "row_normalization",
    "category": "normalization",
    "dtypes": ["fp32", "fp16", "bf16"],
    "techniques": [
        "welford",
        "chan_merge",
        "shifted_data",
        "tl_reduce_combine",
        "fp32_accumulation",
        "masking",
        "two_pass_l2_reuse",
    ],
    "tunables": {"BLOCK_N": [512, 1024, 2048, 4096, 8192], "num_warps": [4, 8, 16]},
    "verified_on": ["NVIDIA H200"],
    "attainment": {"8192x4096 bf16": 0.2955, "source": "docs/results/templates_h200.json (NVIDIA H200, torch 2.11.0+cu130, triton 3.6.0, 2026-11-29)"},
    "template": True,
}


@triton.jit
def _welford_combine(mean_a, m2_a, n_a, mean_b, m2_b, n_b):
    # Chan et al.'s parallel combine of two Welford states (mean, M2, count); a zero count is
    # guarded so padding lanes combine as no-ops
    n = n_a + n_b
    delta = mean_b - mean_a
    frac_b = tl.where(n == 0.0, 0.0, n_b / tl.where(n == 0.0, 1.0, n))
    mean = mean_a + delta * frac_b
    m2 = m2_a + m2_b + delta * delta * n_a * frac_b
    return mean, m2, n


@triton.jit
def _layernorm_kernel(
    x_ptr,
    w_ptr,
    b_ptr,
    y_ptr,
    mean_ptr,
    rstd_ptr,
    N,
    stride_x,
    stride_y,
    eps,
    BLOCK_N: tl.constexpr,
):
    # one program per row; int64 row offsets
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * stride_x
    y_row = y_ptr + row * stride_y
    offs = tl.arange(0, BLOCK_N)
    # shift by the row's first element: the statistics of x - shift equal those of x, and a large
    # common offset no longer eats fp32 digits
    shift = tl.load(x_row).to(tl.float32)

    # Per-lane Welford state; a lane's count is the number of chunks where it was in range.
    mean = tl.zeros((BLOCK_N,), tl.float32)
    m2 = tl.zeros((BLOCK_N,), tl.float32)
    cnt = tl.zeros((BLOCK_N,), tl.float32)
    for start in range(0, N, BLOCK_N):
        cols = start + offs
        ok = cols < N
        x = tl.load(x_row + cols, mask=ok, other=0.0).to(tl.float32) - shift
        # Welford's update per lane: one pass, numerically stable (no E[x**2] - mean**2); masked
        # lanes leave their state unchanged
        new_cnt = cnt + tl.where(ok, 1.0, 0.0)
        delta = tl.where(ok, x - mean, 0.0)
        mean = mean + delta / tl.where(new_cnt == 0.0, 1.0, new_cnt)
        m2 = m2 + delta * tl.where(ok, x - mean, 0.0)
        cnt = new_cnt
    # fold the BLOCK_N lane states into the row's with the combine above
    row_mean, row_m2, row_n = tl.reduce((mean, m2, cnt), 0, _welford_combine)
    # biased variance (M2 / N), eps inside the root, as torch
    rstd = 1.0 / tl.sqrt(row_m2 / row_n + eps)
    # mean and rstd are returned too (what a backward pass needs); undo the shift for the mean
    tl.store(mean_ptr + row, row_mean + shift)
    tl.store(rstd_ptr + row, rstd)

    for start in range(0, N, BLOCK_N):
        cols = start + offs
        ok = cols < N
        # pass 2: normalise with the shifted mean (the shift cancels in x - mean)
        x = tl.load(x_row + cols, mask=ok, other=0.0).to(tl.float32) - shift
        w = tl.load(w_ptr + cols, mask=ok, other=0.0).to(tl.float32)
        b = tl.load(b_ptr + cols, mask=ok, other=0.0).to(tl.float32)
        y = (x - row_mean) * rstd * w + b
        tl.store(y_row + cols, y.to(y_ptr.dtype.element_ty), mask=ok)


def welford_layernorm(
    x: torch.Tensor,
    weight: torch.Tensor,
    bias: torch.Tensor,
    eps: float = 1e-5,
    BLOCK_N: int = 4096,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    assert x.dim() == 2 and weight.shape == bias.shape == (x.shape[1],), (
        "expected x[M, N], w[N], b[N]"
    )
    if x.stride(1) != 1:
        x = x.contiguous()
    M, N = x.shape
    y = torch.empty((M, N), device=x.device, dtype=x.dtype)
    mean = torch.empty((M,), device=x.device, dtype=torch.float32)
    rstd = torch.empty((M,), device=x.device, dtype=torch.float32)
    block = min(BLOCK_N, triton.next_power_of_2(N))
    # more warps for wider blocks
    num_warps = 4 if block <= 1024 else 8 if block <= 4096 else 16
    _layernorm_kernel[(M,)](
        x,
        weight,
        bias,
        y,
        mean,
        rstd,
        N,
        x.stride(0),
        y.stride(0),
        eps,
        BLOCK_N=block,
        num_warps=num_warps,
    )
    return y, mean, rstd
