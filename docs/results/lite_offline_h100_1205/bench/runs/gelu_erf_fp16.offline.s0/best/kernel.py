"""gelu_erf_fp16: generated from the task's PyTorch reference by agents/offline/codegen/translate.py.

Reference ops (aten, in order): _to_copy.default, mul.Tensor, mul.Tensor, erf.default,
add.Tensor, mul.Tensor, _to_copy.default.
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
def _gelu_erf_kernel(x_ptr, out0_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    v0 = x * 0.5  # mul.Tensor
    v1 = x * 0.7071067811865476  # mul.Tensor
    v2 = tl.erf(v1)  # erf.default
    v3 = v2 + 1.0  # add.Tensor
    v4 = v0 * v3  # mul.Tensor
    v5 = (v4).to(tl.float16).to(tl.float32)  # _to_copy.default
    tl.store(out0_ptr + offs, v5.to(out0_ptr.dtype.element_ty), mask=mask)


def gelu_erf(x, BLOCK: int = 1024, num_warps: int = 4):
    x = x.contiguous()
    out0 = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    n = out0.numel()
    if n == 0:
        return out0
    grid = (triton.cdiv(n, BLOCK),)
    _gelu_erf_kernel[grid](x, out0, n, BLOCK=BLOCK, num_warps=num_warps)
    return out0
