"""Pointwise (1x1) 2-D convolution on NCHW maps as a batched channel GEMM, fp32 accumulation.

Op: y[b, co, h, w] = sum_ci weight[co, ci] * x[b, ci, h, w] (+ bias[co]), i.e. for every image
Y_b[Cout, P] = W[Cout, Cin] @ X_b[Cin, P] over the P = H*W pixels p = h*W + w. This is
F.conv2d(x, weight, bias) with a [Cout, Cin, 1, 1] kernel, stride 1, no padding, groups 1: the
bottleneck reduce/expand projections of ResNets, MobileNet's pointwise half of a depthwise-
separable block, the proj_in/proj_out of diffusion UNets. Output [B, Cout, H, W] in x's dtype.
Traffic: minimal is (B*Cin*P + Cout*Cin + B*Cout*P) * elem bytes. FLOPs are 2*B*Cout*Cin*P, so
per pixel the intensity is about 2*Cin*Cout / ((Cin + Cout) * elem) FLOP/byte: 51 for a 64 -> 256
expansion in bf16, under an H100/H200's bf16 ridge (~200-300), so most 1x1 layers are bandwidth-
bound and the goal is to read x once and write y once. Every x panel [Cin, BLOCK_P] is needed by all
cdiv(Cout, BLOCK_CO) output-channel tiles; the program order below runs those tiles back to back,
so the panel comes from DRAM once and from L2 after. The weight is small (Cout*Cin) and stays in L2.
Tiling: grid (cdiv(Cout, BLOCK_CO) * cdiv(P, BLOCK_P), B); program (t, b) owns one BLOCK_CO x
BLOCK_P tile of image b, with the output-channel tile fastest in t (the co-major order above).
The K loop walks Cin in BLOCK_CI steps, loading W[BLOCK_CO, BLOCK_CI] and X_b[BLOCK_CI, BLOCK_P]
and calling `tl.dot`. The pixel axis is the contiguous one in NCHW, so the x tile's rows are runs
of BLOCK_P adjacent elements (coalesced, vectorised loads) and the output tile is stored the same
way. Tails in Cin, Cout and P are masked (`other=0` adds nothing to the sum), so no dimension needs
to be a multiple of a block. Offsets are int64: b * stride_b passes 2**31 once B*Cin*H*W does
(256 images of 128 x 256 x 256 are exactly 2**31 elements), where int32 would wrap silently.
Strides: x may be any 4-D view (a slice, a channels-last tensor); pixel offsets are h * stride_h +
w * stride_w, computed once per tile. When the (h, w) pair is one dense run (stride_h == W *
stride_w, true of NCHW-contiguous x and of NCHW slices along B or C), the constexpr FLAT_P uses
p * stride_w instead so the compiler sees contiguity; otherwise (channels-last: stride_c == 1) the
loads are correct but strided. The weight may be [Cout, Cin, 1, 1] or [Cout, Cin], any strides.
y is a fresh contiguous NCHW tensor.
Numerics: the accumulator is fp32 whatever the input dtype and the result is rounded once to x's
dtype, after the optional bias (added in fp32). fp16/bf16 operands go to tensor cores as they are
(mma/wgmma, fp32 accumulate). fp32 operands use input_precision="ieee": tl.dot's default on
tensor cores rounds fp32 to TF32 (10-bit mantissa, ~5e-4 relative error per product), which a
contract of IEEE fp32 products rejects; ieee runs FMA-based and costs throughput, not accuracy.
When x and weight differ in dtype both tiles are upcast to fp32 and take the ieee path, so no
operand is rounded below its own precision.
Tunables: BLOCK_CO (16-128; Cout-sized when Cout is small makes the co grid 1), BLOCK_P (32-256;
a 7x7 map has 49 pixels, so 64 wastes less than 128), BLOCK_CI (16-64; 16 minimum for tl.dot),
num_warps (4-8), num_stages (2-4; shared memory is stages * (BLOCK_CO + BLOCK_P) * BLOCK_CI *
elem bytes). All are keyword arguments of `pointwise_conv2d`; `CONFIGS` lists starting points for
`triton.autotune(key=["Cin", "Cout", "P"])`.
"""

import torch
import triton
import triton.language as tl

KB_META = {
    "op_family": "pointwise_conv",
    "category": "convolution",
    "dtypes": ["fp16", "bf16", "fp32"],
    "techniques": [
        "implicit_gemm",
        "batched_gemm",
        "tiling",
        "fp32_accumulation",
        "tensor_cores",
        "ieee_fp32_dot",
        "masking",
        "int64_offsets",
        "strided_input",
        "bias",
    ],
    "tunables": {
        "BLOCK_CO": [32, 64, 128],
        "BLOCK_P": [32, 64, 128, 256],
        "BLOCK_CI": [16, 32, 64],
        "num_warps": [4, 8],
        "num_stages": [2, 3, 4],
    },
    "verified_on": ["NVIDIA H200"],
    "attainment": {"B2 320->320 64x64 float32": 0.4362, "B256 2048->512 7x7 bfloat16": 0.1686, "B32 64->256 56x56 bfloat16": 0.4019, "B32 64->256 56x56 float16": 0.3201, "source": "docs/results/templates_h200_2026-12-02.json (NVIDIA H200, torch 2.11.0+cu130, triton 3.6.0, 2026-12-02)"},
    "template": True,
}

# (BLOCK_CO, BLOCK_P, BLOCK_CI, num_warps, num_stages): first configs to try on sm_80/sm_90.
CONFIGS = [
    (128, 128, 32, 8, 3),
    (64, 128, 32, 4, 3),
    (128, 64, 64, 4, 3),
    (64, 64, 64, 4, 4),
    (32, 64, 32, 4, 2),
]

_SUPPORTED = (torch.float16, torch.bfloat16, torch.float32)


@triton.jit
def _pointwise_conv_kernel(
    x_ptr,
    w_ptr,
    bias_ptr,
    y_ptr,
    Cin,
    Cout,
    P,
    W_img,
    stride_xb,
    stride_xc,
    stride_xh,
    stride_xw,
    stride_wo,
    stride_wi,
    stride_yb,
    stride_yc,
    BLOCK_CO: tl.constexpr,
    BLOCK_P: tl.constexpr,
    BLOCK_CI: tl.constexpr,
    FLAT_P: tl.constexpr,
    HAS_BIAS: tl.constexpr,
    DOT_FP32: tl.constexpr,
):
    # co-major order: the output-channel tiles of one pixel tile are neighbours, so the x panel
    # they all read is fetched from DRAM once
    pid = tl.program_id(0)
    num_co = tl.cdiv(Cout, BLOCK_CO)
    pid_co = pid % num_co
    pid_p = pid // num_co
    b = tl.program_id(1).to(tl.int64)

    co = pid_co.to(tl.int64) * BLOCK_CO + tl.arange(0, BLOCK_CO)
    p = pid_p.to(tl.int64) * BLOCK_P + tl.arange(0, BLOCK_P)
    ci = tl.arange(0, BLOCK_CI)
    co_ok = co < Cout
    p_ok = p < P
    if FLAT_P:
        p_off = p * stride_xw  # one dense run of pixels: contiguity stays visible
    else:
        p_off = (p // W_img) * stride_xh + (p % W_img) * stride_xw
    w_ptrs = w_ptr + co[:, None] * stride_wo + ci[None, :].to(tl.int64) * stride_wi
    x_ptrs = x_ptr + b * stride_xb + ci[:, None].to(tl.int64) * stride_xc + p_off[None, :]

    acc = tl.zeros((BLOCK_CO, BLOCK_P), dtype=tl.float32)
    for k0 in range(0, Cin, BLOCK_CI):
        # Cin tail and edge masks: out-of-range elements read 0 and add nothing
        ci_ok = (k0 + ci) < Cin
        wt = tl.load(w_ptrs, mask=co_ok[:, None] & ci_ok[None, :], other=0.0)
        xt = tl.load(x_ptrs, mask=ci_ok[:, None] & p_ok[None, :], other=0.0)
        if DOT_FP32:
            # IEEE fp32 products (the default would round fp32 operands to TF32)
            acc = tl.dot(wt.to(tl.float32), xt.to(tl.float32), acc, input_precision="ieee")
        else:
            acc = tl.dot(wt, xt, acc)  # fp16/bf16 on tensor cores, fp32 accumulation
        w_ptrs += BLOCK_CI * stride_wi
        x_ptrs += BLOCK_CI * stride_xc

    if HAS_BIAS:
        acc += tl.load(bias_ptr + co, mask=co_ok, other=0.0).to(tl.float32)[:, None]
    y_ptrs = y_ptr + b * stride_yb + co[:, None] * stride_yc + p[None, :]
    tl.store(y_ptrs, acc.to(y_ptr.dtype.element_ty), mask=co_ok[:, None] & p_ok[None, :])


def _weight_2d(weight: torch.Tensor, cin: int) -> torch.Tensor:
    """[Cout, Cin, 1, 1] or [Cout, Cin] -> a [Cout, Cin] view (no copy: strides are kept)."""
    if weight.dim() == 4:
        if tuple(weight.shape[2:]) != (1, 1):
            raise ValueError(f"expected a 1x1 kernel, got weight {tuple(weight.shape)}")
        weight = weight[:, :, 0, 0]
    if weight.dim() != 2 or weight.shape[1] != cin:
        raise ValueError(f"weight {tuple(weight.shape)} does not match Cin={cin}")
    return weight


def pointwise_conv2d(
    x: torch.Tensor,
    weight: torch.Tensor,
    *,
    bias: torch.Tensor | None = None,
    BLOCK_CO: int = 64,
    BLOCK_P: int = 128,
    BLOCK_CI: int = 32,
    num_warps: int = 4,
    num_stages: int = 3,
) -> torch.Tensor:
    """F.conv2d(x, weight, bias) for a 1x1 kernel (stride 1, no padding): [B, Cout, H, W] in x's
    dtype, fp32 accumulation, IEEE fp32 products for fp32 (or mixed-dtype) operands. x is read
    through its strides (no copy); the output is contiguous NCHW."""
    if x.dim() != 4:
        raise ValueError(f"expected x [B, Cin, H, W], got {tuple(x.shape)}")
    if x.dtype not in _SUPPORTED or weight.dtype not in _SUPPORTED:
        raise TypeError(f"fp16/bf16/fp32 only, got x {x.dtype}, weight {weight.dtype}")
    B, Cin, H, W = x.shape
    w2 = _weight_2d(weight, Cin)
    Cout, P = w2.shape[0], H * W
    if bias is not None and tuple(bias.shape) != (Cout,):
        raise ValueError(f"bias must be [{Cout}], got {tuple(bias.shape)}")
    if B > 65535:
        raise ValueError("the batch is grid axis 1, limited to 65535 images")
    y = torch.empty((B, Cout, H, W), device=x.device, dtype=x.dtype)
    if y.numel() == 0:
        return y
    if bias is not None:
        bias = bias.contiguous()
    grid = (triton.cdiv(Cout, BLOCK_CO) * triton.cdiv(P, BLOCK_P), B)
    _pointwise_conv_kernel[grid](
        x,
        w2,
        bias if bias is not None else y,  # never read when HAS_BIAS is False
        y,
        Cin,
        Cout,
        P,
        W,
        x.stride(0),
        x.stride(1),
        x.stride(2),
        x.stride(3),
        w2.stride(0),
        w2.stride(1),
        y.stride(0),
        y.stride(1),
        BLOCK_CO=BLOCK_CO,
        BLOCK_P=BLOCK_P,
        BLOCK_CI=BLOCK_CI,
        FLAT_P=H == 1 or x.stride(2) == W * x.stride(3),
        HAS_BIAS=bias is not None,
        DOT_FP32=x.dtype == torch.float32 or weight.dtype != x.dtype,
        num_warps=num_warps,
        num_stages=num_stages,
    )
    return y


def conv2d_1x1(x, weight, BLOCK_CO=64, BLOCK_P=128, BLOCK_CI=32, num_warps=4, num_stages=3):
    """The task's entry point, delegating to the reference launcher pointwise_conv2d."""
    return pointwise_conv2d(x, weight, BLOCK_CO=BLOCK_CO, BLOCK_P=BLOCK_P, BLOCK_CI=BLOCK_CI, num_warps=num_warps, num_stages=num_stages)
