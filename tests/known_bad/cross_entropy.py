# expect: nan_inf_mismatch
# bug: log-sum-exp without subtracting the row max: exp of a 1000x outlier logit overflows and the loss becomes inf
"""Known-bad cross-entropy: direct log(sum(exp(x)))."""

import torch
import triton
import triton.language as tl


@triton.jit
def _ce_row_kernel(x_ptr, t_ptr, loss_ptr, valid_ptr, stride_x, V, BLOCK_V: tl.constexpr):
    row = tl.program_id(0)
    x_row = x_ptr + row.to(tl.int64) * stride_x
    offs = tl.arange(0, BLOCK_V)
    s = tl.zeros([BLOCK_V], tl.float32)
    for start in range(0, V, BLOCK_V):
        cols = start + offs
        x = tl.load(x_row + cols, mask=cols < V, other=float("-inf")).to(tl.float32)
        s += tl.exp(x)
    lse = tl.log(tl.sum(s, axis=0))
    t = tl.load(t_ptr + row)
    valid = t != -100
    picked = tl.load(x_row + tl.where(valid, t, 0)).to(tl.float32)
    tl.store(loss_ptr + row, tl.where(valid, lse - picked, 0.0))
    tl.store(valid_ptr + row, valid.to(tl.float32))


@triton.jit
def _ce_mean_kernel(loss_ptr, valid_ptr, out_ptr, M, BLOCK_M: tl.constexpr):
    offs = tl.arange(0, BLOCK_M)
    acc = tl.zeros([BLOCK_M], tl.float32)
    cnt = tl.zeros([BLOCK_M], tl.float32)
    for start in range(0, M, BLOCK_M):
        rows = start + offs
        acc += tl.load(loss_ptr + rows, mask=rows < M, other=0.0)
        cnt += tl.load(valid_ptr + rows, mask=rows < M, other=0.0)
    tl.store(out_ptr, tl.sum(acc, axis=0) / tl.sum(cnt, axis=0))


def cross_entropy(logits: torch.Tensor, targets: torch.Tensor, BLOCK_V: int = 4096) -> torch.Tensor:
    logits = logits.contiguous()
    M, V = logits.shape
    losses = torch.empty((M,), dtype=torch.float32, device=logits.device)
    valid = torch.empty((M,), dtype=torch.float32, device=logits.device)
    out = torch.empty((), dtype=torch.float32, device=logits.device)
    _ce_row_kernel[(M,)](
        logits,
        targets,
        losses,
        valid,
        logits.stride(0),
        V,
        BLOCK_V=min(BLOCK_V, triton.next_power_of_2(V)),
        num_warps=8,
    )
    _ce_mean_kernel[(1,)](losses, valid, out, M, BLOCK_M=min(1024, triton.next_power_of_2(M)))
    return out
