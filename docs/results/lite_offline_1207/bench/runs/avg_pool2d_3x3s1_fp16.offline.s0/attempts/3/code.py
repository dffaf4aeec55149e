"""avg_pool2d_3x3s1_fp16: generated from the task's PyTorch reference by agents/offline/codegen/translate.py.

Reference ops (aten, in order): _to_copy.default, avg_pool2d.default, _to_copy.default.
Structure: pointwise. The tensors are flattened; each program handles BLOCK contiguous
elements, the last block masked; offsets are int32 unless a tensor has 2**30 elements
or more (WIDE).
Index maps (pads, pools): each output element's offset is decoded into its coordinates,
and the source is read at coordinates computed from them by masked loads (a pool's
window unrolled); the sizes are computed by the launcher, and those the coordinates are
decoded by are constexprs (a division by a constant is a multiply and a shift; by a
runtime value it is ~20 instructions an element): one compile per shape.
Numerics: fp32 inside the kernel; values the reference holds in fp16/bf16/fp8 are rounded
where it rounds them; one cast to the output dtype on store.
Tunables: BLOCK, num_warps.
"""

import torch
import triton
import triton.language as tl

KB_META = {'tunables': {'BLOCK': [256, 512, 1024, 2048, 4096], 'num_warps': [2, 4, 8]}, 'generated_by': 'agents/offline/codegen/translate.py', 'structure': 'pointwise'}


@triton.jit
def _avg_pool2d_3x3s1_kernel(x_ptr, out0_ptr, n, x_h: tl.constexpr, x_w: tl.constexpr, BLOCK: tl.constexpr, WIDE: tl.constexpr):
    pid = tl.program_id(0)
    if WIDE:
        offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    else:
        offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    v0 = offs % x_w  # avg_pool2d.default
    v1 = offs // x_w  # avg_pool2d.default
    v2 = v1 % x_h  # avg_pool2d.default
    v3 = v1 // x_h  # avg_pool2d.default
    v4 = v3 * (x_h * x_w)  # avg_pool2d.default
    v5 = v2 - 1  # avg_pool2d.default
    v6 = v0 - 1  # avg_pool2d.default
    v7 = mask & (v5 >= 0) & (v5 < x_h)  # avg_pool2d.default
    v8 = v4 + v5 * x_w  # avg_pool2d.default
    v9 = v5 + 1  # avg_pool2d.default
    v10 = mask & (v9 >= 0) & (v9 < x_h)  # avg_pool2d.default
    v11 = v4 + v9 * x_w  # avg_pool2d.default
    v12 = v5 + 2  # avg_pool2d.default
    v13 = mask & (v12 >= 0) & (v12 < x_h)  # avg_pool2d.default
    v14 = v4 + v12 * x_w  # avg_pool2d.default
    v15 = (v6 >= 0) & (v6 < x_w)  # avg_pool2d.default
    v16 = v6 + 1  # avg_pool2d.default
    v17 = (v16 >= 0) & (v16 < x_w)  # avg_pool2d.default
    v18 = v6 + 2  # avg_pool2d.default
    v19 = (v18 >= 0) & (v18 < x_w)  # avg_pool2d.default
    v20 = tl.load(x_ptr + v8 + v6, mask=v7 & v15, other=0.0).to(tl.float32)  # avg_pool2d.default
    v21 = v20 + tl.load(x_ptr + v8 + v16, mask=v7 & v17, other=0.0).to(tl.float32)  # avg_pool2d.default
    v22 = v21 + tl.load(x_ptr + v8 + v18, mask=v7 & v19, other=0.0).to(tl.float32)  # avg_pool2d.default
    v23 = v22 + tl.load(x_ptr + v11 + v6, mask=v10 & v15, other=0.0).to(tl.float32)  # avg_pool2d.default
    v24 = v23 + tl.load(x_ptr + v11 + v16, mask=v10 & v17, other=0.0).to(tl.float32)  # avg_pool2d.default
    v25 = v24 + tl.load(x_ptr + v11 + v18, mask=v10 & v19, other=0.0).to(tl.float32)  # avg_pool2d.default
    v26 = v25 + tl.load(x_ptr + v14 + v6, mask=v13 & v15, other=0.0).to(tl.float32)  # avg_pool2d.default
    v27 = v26 + tl.load(x_ptr + v14 + v16, mask=v13 & v17, other=0.0).to(tl.float32)  # avg_pool2d.default
    v28 = v27 + tl.load(x_ptr + v14 + v18, mask=v13 & v19, other=0.0).to(tl.float32)  # avg_pool2d.default
    v29 = v28 / 9.0  # avg_pool2d.default
    v30 = (v29).to(tl.float16).to(tl.float32)  # _to_copy.default
    tl.store(out0_ptr + offs, v30.to(out0_ptr.dtype.element_ty), mask=mask)


def avg_pool2d_3x3s1(x, BLOCK: int = 256, num_warps: int = 2):
    x = x.contiguous()
    out0 = torch.empty((x.shape[0], x.shape[1], x.shape[2], x.shape[3]), dtype=x.dtype, device=x.device)
    n = out0.numel()
    if n == 0:
        return out0
    x_h = x.shape[2]
    x_w = x.shape[3]
    WIDE = max(n, x.numel()) >= 1073741824
    grid = (triton.cdiv(n, BLOCK),)
    _avg_pool2d_3x3s1_kernel[grid](x, out0, n, x_h, x_w, BLOCK=BLOCK, WIDE=WIDE, num_warps=num_warps)
    return out0
