"""adam_fp32: generated from the task's PyTorch reference by agents/offline/codegen/translate.py.

Reference ops (aten, in order): mul.Tensor, add.Tensor, mul.Tensor, mul.Tensor, add.Tensor,
mul.Tensor, mul.Tensor, mul.Tensor, add.Tensor, sqrt.default, div.Tensor, add.Tensor,
mul.Tensor, div.Tensor, sub.Tensor.
Structure: pointwise. The tensors are flattened; each program handles BLOCK contiguous
elements, the last block masked, with int64 offsets.
Numerics: fp32 inside the kernel; values the reference holds in fp16/bf16/fp8 are rounded
where it rounds them; one cast to the output dtype on store.
Tunables: BLOCK, num_warps.
"""

import torch
import triton
import triton.language as tl

KB_META = {'tunables': {'BLOCK': [256, 512, 1024, 2048, 4096], 'num_warps': [2, 4, 8]}, 'generated_by': 'agents/offline/codegen/translate.py', 'structure': 'pointwise'}


@triton.jit
def _adam_kernel(param_ptr, grad_ptr, exp_avg_ptr, exp_avg_sq_ptr, out0_ptr, out1_ptr, out2_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    param = tl.load(param_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    grad = tl.load(grad_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    exp_avg = tl.load(exp_avg_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    exp_avg_sq = tl.load(exp_avg_sq_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    v0 = param * 0.0001  # mul.Tensor
    v1 = grad + v0  # add.Tensor
    v2 = exp_avg * 0.9  # mul.Tensor
    v3 = v1 * 0.09999999999999998  # mul.Tensor
    v4 = v2 + v3  # add.Tensor
    v5 = exp_avg_sq * 0.999  # mul.Tensor
    v6 = v1 * 0.0010000000000000009  # mul.Tensor
    v7 = v6 * v1  # mul.Tensor
    v8 = v5 + v7  # add.Tensor
    v9 = tl.sqrt(v8)  # sqrt.default
    v10 = v9 / 0.09977534660552057  # div.Tensor
    v11 = v10 + 1e-08  # add.Tensor
    v12 = v4 * 0.0015353399327876296  # mul.Tensor
    v13 = v12 / v11  # div.Tensor
    v14 = param - v13  # sub.Tensor
    tl.store(out0_ptr + offs, v14.to(out0_ptr.dtype.element_ty), mask=mask)
    tl.store(out1_ptr + offs, v4.to(out1_ptr.dtype.element_ty), mask=mask)
    tl.store(out2_ptr + offs, v8.to(out2_ptr.dtype.element_ty), mask=mask)


def adam(param, grad, exp_avg, exp_avg_sq, BLOCK: int = 1024, num_warps: int = 4):
    param = param.contiguous()
    grad = grad.contiguous()
    exp_avg = exp_avg.contiguous()
    exp_avg_sq = exp_avg_sq.contiguous()
    out0 = torch.empty(param.shape, dtype=param.dtype, device=param.device)
    out1 = torch.empty(param.shape, dtype=param.dtype, device=param.device)
    out2 = torch.empty(param.shape, dtype=param.dtype, device=param.device)
    n = out0.numel()
    if n == 0:
        return (out0, out1, out2)
    grid = (triton.cdiv(n, BLOCK),)
    _adam_kernel[grid](param, grad, exp_avg, exp_avg_sq, out0, out1, out2, n, BLOCK=BLOCK, num_warps=num_warps)
    return (out0, out1, out2)
