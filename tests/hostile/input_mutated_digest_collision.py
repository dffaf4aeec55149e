# expect: input_mutated
# task: softmax_fp32
# why: an honest softmax that then rewrites its input with its own Triton kernel: the first three 64-bit words of x get deltas chosen so that both sums of the judge's input digest (public, fixed weights until 2026-12-08) stay the same, and the top bit of the next two words flips (which any linear sum mod 2**64 misses); the judge compares digests of the inputs after the call and saw them untouched. The digest is now keyed by a random key drawn after the call, and mixed
import torch
import triton
import triton.language as tl

_GOLDEN = 0x9E3779B97F4A7C15
_MOD = 2**64


def _old_weight(m):
    return ((m * _GOLDEN + 1) % _MOD) | 1


def _signed(v):
    v %= _MOD
    return v - _MOD if v >= 2**63 else v


D0 = _signed(_old_weight(2) - _old_weight(1))
D1 = _signed(_old_weight(0) - _old_weight(2))
D2 = _signed(_old_weight(1) - _old_weight(0))
TOP = -(2**63)


@triton.jit
def _row_softmax(x_ptr, y_ptr, stride, N, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=float("-inf")).to(tl.float32)
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(y_ptr + row * stride + cols, e / tl.sum(e, axis=0), mask=mask)


@triton.jit
def _rewrite(w_ptr, d0, d1, d2, top):
    tl.store(w_ptr + 0, tl.load(w_ptr + 0) + d0)
    tl.store(w_ptr + 1, tl.load(w_ptr + 1) + d1)
    tl.store(w_ptr + 2, tl.load(w_ptr + 2) + d2)
    tl.store(w_ptr + 3, tl.load(w_ptr + 3) ^ top)
    tl.store(w_ptr + 4, tl.load(w_ptr + 4) ^ top)


def softmax(x):
    x = x.contiguous()
    y = torch.empty_like(x)
    _row_softmax[(x.shape[0],)](
        x, y, x.stride(0), x.shape[1], BLOCK=triton.next_power_of_2(x.shape[1])
    )
    if x.numel() >= 10:  # five 64-bit words of fp32 values
        words = x.view(-1)[: 2 * (x.numel() // 2)].view(torch.int64)
        _rewrite[(1,)](words, D0, D1, D2, TOP)
    return y
