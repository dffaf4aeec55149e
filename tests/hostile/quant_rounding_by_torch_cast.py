# expect: fallback
# task: fp8_per_tensor_quant_fp32
# why: Triton only scales and clamps into fp32; .to(torch.float8_e4m3fn) (an allowed cast, a copy op) does the rounding to nearest even, which is the task's real work, and a Triton kernel copies the bytes through uint8 views into the output; a cast from floating point to fp8 or an integer type is now computation
import torch
import triton
import triton.language as tl


@triton.jit
def _scale_clamp(x_ptr, s_ptr, v_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=0.0).to(tl.float32)
    s = tl.load(s_ptr)
    v = tl.minimum(tl.maximum(x / s, -448.0), 448.0)
    tl.store(v_ptr + offs, v, mask=m)


@triton.jit
def _copy(src, dst, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(dst + offs, tl.load(src + offs, mask=m), mask=m)


def fp8_per_tensor_quant(x: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    x = x.contiguous()
    n = x.numel()
    v = torch.empty(x.shape, dtype=torch.float32)
    _scale_clamp[(triton.cdiv(n, 1024),)](x, scale, v, n, BLOCK=1024)
    q8 = v.to(torch.float8_e4m3fn)
    out = torch.empty(x.shape, dtype=torch.float8_e4m3fn)
    _copy[(triton.cdiv(n, 1024),)](q8.view(torch.uint8), out.view(torch.uint8), n, BLOCK=1024)
    return out
