"""pad_constant2d_fp16: generated from the task's PyTorch reference by agents/offline/codegen/translate.py.

Class 0 (x: 4-D float16, pad_left = 1, pad_right = 2, pad_top = 3, pad_bottom = 0, value: a
float): Reference ops (aten, in order): constant_pad_nd.default.
Structure: pointwise. The tensors are flattened; each program handles BLOCK contiguous
elements, the last block masked; offsets are int32 unless a tensor has 2**30 elements
or more (WIDE).
Index maps (pads, pools): each output element's offset is decoded into its coordinates,
and the source is read at coordinates computed from them by masked loads (a pool's
window unrolled); the sizes are computed by the launcher, and those the coordinates are
decoded by are constexprs (a division by a constant is a multiply and a shift; by a
runtime value it is ~20 instructions an element): one compile per shape.
Class 1 (x: 4-D float16, pad_left = 0, pad_right = 1, pad_top = 0, pad_bottom = 1, value: a
float): Reference ops (aten, in order): constant_pad_nd.default.
Structure: pointwise. The tensors are flattened; each program handles BLOCK contiguous
elements, the last block masked; offsets are int32 unless a tensor has 2**30 elements
or more (WIDE).
Index maps (pads, pools): each output element's offset is decoded into its coordinates,
and the source is read at coordinates computed from them by masked loads (a pool's
window unrolled); the sizes are computed by the launcher, and those the coordinates are
decoded by are constexprs (a division by a constant is a multiply and a shift; by a
runtime value it is ~20 instructions an element): one compile per shape.
Class 2 (x: 4-D float16, pad_left = 0, pad_right = 0, pad_top = 80, pad_bottom = 80, value: a
float): Reference ops (aten, in order): constant_pad_nd.default.
Structure: pointwise. The tensors are flattened; each program handles BLOCK contiguous
elements, the last block masked; offsets are int32 unless a tensor has 2**30 elements
or more (WIDE).
Index maps (pads, pools): each output element's offset is decoded into its coordinates,
and the source is read at coordinates computed from them by masked loads (a pool's
window unrolled); the sizes are computed by the launcher, and those the coordinates are
decoded by are constexprs (a division by a constant is a multiply and a shift; by a
runtime value it is ~20 instructions an element): one compile per shape.
Dispatch: one kernel per class of arguments traced (tensor ranks and dtypes, the other
arguments' values; float arguments are kernel arguments); a call of another class raises.
Numerics: fp32 inside the kernel; values the reference holds in fp16/bf16/fp8 are rounded
where it rounds them; one cast to the output dtype on store.
Tunables: BLOCK, num_warps.
"""

import torch
import triton
import triton.language as tl

KB_META = {'tunables': {'BLOCK': [256, 512, 1024, 2048, 4096], 'num_warps': [2, 4, 8]}, 'generated_by': 'agents/offline/codegen/translate.py', 'structure': 'pointwise'}


@triton.jit
def _pad_constant2d_c0_kernel(x_ptr, out0_ptr, n, x_d3, x_d2, pad_d3: tl.constexpr, pad_d2: tl.constexpr, value, BLOCK: tl.constexpr, WIDE: tl.constexpr):
    pid = tl.program_id(0)
    if WIDE:
        offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    else:
        offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    v0 = offs % pad_d3  # constant_pad_nd.default
    v1 = offs // pad_d3  # constant_pad_nd.default
    v2 = v1 % pad_d2  # constant_pad_nd.default
    v3 = v1 // pad_d2  # constant_pad_nd.default
    v4 = v0 - 1  # constant_pad_nd.default
    v5 = v2 - 3  # constant_pad_nd.default
    v6 = mask & (v4 >= 0) & (v4 < x_d3) & (v5 >= 0) & (v5 < x_d2)  # constant_pad_nd.default
    v7 = (tl.load(x_ptr + v3 * x_d3 * x_d2 + v5 * x_d3 + v4, mask=v6, other=value).to(tl.float32)).to(tl.float16).to(tl.float32)  # constant_pad_nd.default
    tl.store(out0_ptr + offs, v7.to(out0_ptr.dtype.element_ty), mask=mask)


def _pad_constant2d_c0(x, pad_left, pad_right, pad_top, pad_bottom, value, BLOCK: int = 1024, num_warps: int = 4):
    x = x.contiguous()
    out0 = torch.empty((*x.shape[:2], x.shape[2] + 3, x.shape[3] + 3), dtype=x.dtype, device=x.device)
    n = out0.numel()
    if n == 0:
        return out0
    x_d3 = x.shape[3]
    x_d2 = x.shape[2]
    pad_d3 = x.shape[3] + 3
    pad_d2 = x.shape[2] + 3
    value = float(value)
    WIDE = max(n, x.numel()) >= 1073741824
    grid = (triton.cdiv(n, BLOCK),)
    _pad_constant2d_c0_kernel[grid](x, out0, n, x_d3, x_d2, pad_d3, pad_d2, value, BLOCK=BLOCK, WIDE=WIDE, num_warps=num_warps)
    return out0


@triton.jit
def _pad_constant2d_c1_kernel(x_ptr, out0_ptr, n, x_d3, x_d2, pad_d3: tl.constexpr, pad_d2: tl.constexpr, value, BLOCK: tl.constexpr, WIDE: tl.constexpr):
    pid = tl.program_id(0)
    if WIDE:
        offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    else:
        offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    v0 = offs % pad_d3  # constant_pad_nd.default
    v1 = offs // pad_d3  # constant_pad_nd.default
    v2 = v1 % pad_d2  # constant_pad_nd.default
    v3 = v1 // pad_d2  # constant_pad_nd.default
    v4 = mask & (v0 >= 0) & (v0 < x_d3) & (v2 >= 0) & (v2 < x_d2)  # constant_pad_nd.default
    v5 = (tl.load(x_ptr + v3 * x_d3 * x_d2 + v2 * x_d3 + v0, mask=v4, other=value).to(tl.float32)).to(tl.float16).to(tl.float32)  # constant_pad_nd.default
    tl.store(out0_ptr + offs, v5.to(out0_ptr.dtype.element_ty), mask=mask)


def _pad_constant2d_c1(x, pad_left, pad_right, pad_top, pad_bottom, value, BLOCK: int = 1024, num_warps: int = 4):
    x = x.contiguous()
    out0 = torch.empty((*x.shape[:2], x.shape[2] + 1, x.shape[3] + 1), dtype=x.dtype, device=x.device)
    n = out0.numel()
    if n == 0:
        return out0
    x_d3 = x.shape[3]
    x_d2 = x.shape[2]
    pad_d3 = x.shape[3] + 1
    pad_d2 = x.shape[2] + 1
    value = float(value)
    WIDE = max(n, x.numel()) >= 1073741824
    grid = (triton.cdiv(n, BLOCK),)
    _pad_constant2d_c1_kernel[grid](x, out0, n, x_d3, x_d2, pad_d3, pad_d2, value, BLOCK=BLOCK, WIDE=WIDE, num_warps=num_warps)
    return out0


@triton.jit
def _pad_constant2d_c2_kernel(x_ptr, out0_ptr, n, x_d3: tl.constexpr, x_d2, pad_d2: tl.constexpr, value, BLOCK: tl.constexpr, WIDE: tl.constexpr):
    pid = tl.program_id(0)
    if WIDE:
        offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    else:
        offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    v0 = offs % x_d3  # constant_pad_nd.default
    v1 = offs // x_d3  # constant_pad_nd.default
    v2 = v1 % pad_d2  # constant_pad_nd.default
    v3 = v1 // pad_d2  # constant_pad_nd.default
    v4 = v2 - 80  # constant_pad_nd.default
    v5 = mask & (v4 >= 0) & (v4 < x_d2)  # constant_pad_nd.default
    v6 = (tl.load(x_ptr + v3 * x_d3 * x_d2 + v4 * x_d3 + v0, mask=v5, other=value).to(tl.float32)).to(tl.float16).to(tl.float32)  # constant_pad_nd.default
    tl.store(out0_ptr + offs, v6.to(out0_ptr.dtype.element_ty), mask=mask)


def _pad_constant2d_c2(x, pad_left, pad_right, pad_top, pad_bottom, value, BLOCK: int = 1024, num_warps: int = 4):
    x = x.contiguous()
    out0 = torch.empty((*x.shape[:2], x.shape[2] + 160, x.shape[3]), dtype=x.dtype, device=x.device)
    n = out0.numel()
    if n == 0:
        return out0
    x_d3 = x.shape[3]
    x_d2 = x.shape[2]
    pad_d2 = x.shape[2] + 160
    value = float(value)
    WIDE = max(n, x.numel()) >= 1073741824
    grid = (triton.cdiv(n, BLOCK),)
    _pad_constant2d_c2_kernel[grid](x, out0, n, x_d3, x_d2, pad_d2, value, BLOCK=BLOCK, WIDE=WIDE, num_warps=num_warps)
    return out0


def pad_constant2d(x, pad_left, pad_right, pad_top, pad_bottom, value, BLOCK: int = 1024, num_warps: int = 4):
    """Launch the kernels generated for the call's class of arguments."""
    if x.dim() == 4 and x.dtype == torch.float16 and type(pad_left) is int and pad_left == 1 and type(pad_right) is int and pad_right == 2 and type(pad_top) is int and pad_top == 3 and type(pad_bottom) is int and pad_bottom == 0 and isinstance(value, float):
        return _pad_constant2d_c0(x, pad_left, pad_right, pad_top, pad_bottom, value, BLOCK=BLOCK, num_warps=num_warps)
    if x.dim() == 4 and x.dtype == torch.float16 and type(pad_left) is int and pad_left == 0 and type(pad_right) is int and pad_right == 1 and type(pad_top) is int and pad_top == 0 and type(pad_bottom) is int and pad_bottom == 1 and isinstance(value, float):
        return _pad_constant2d_c1(x, pad_left, pad_right, pad_top, pad_bottom, value, BLOCK=BLOCK, num_warps=num_warps)
    if x.dim() == 4 and x.dtype == torch.float16 and type(pad_left) is int and pad_left == 0 and type(pad_right) is int and pad_right == 0 and type(pad_top) is int and pad_top == 80 and type(pad_bottom) is int and pad_bottom == 80 and isinstance(value, float):
        return _pad_constant2d_c2(x, pad_left, pad_right, pad_top, pad_bottom, value, BLOCK=BLOCK, num_warps=num_warps)
    raise NotImplementedError(
        "pad_constant2d: no kernel was generated for this class of arguments (tensor ranks and dtypes, other arguments' values); the module docstring lists the classes traced"
    )
