"""Diagnostic (session 21): what ncu sees of a process that launches Triton and PyTorch kernels."""

import sys
import time

import torch
import triton
import triton.language as tl


@triton.jit
def my_scale_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + i, tl.load(x_ptr + i, mask=i < n) * 2, mask=i < n)


def main() -> None:
    reps = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    x = torch.randn(1 << 20, device="cuda")
    y = torch.empty_like(x)
    t0 = time.perf_counter()
    for _ in range(reps):
        my_scale_kernel[(triton.cdiv(x.numel(), 1024),)](x, y, x.numel(), BLOCK=1024)
    torch.cuda.synchronize()
    t1 = time.perf_counter()
    z = x * 2  # a PyTorch fallback
    w = torch.mm(x[:4096].view(64, 64), x[:4096].view(64, 64))
    torch.cuda.synchronize()
    print(
        f"probe: {reps} triton launches in {t1 - t0:.3f}s; torch ops done {float(z.sum() + w.sum()):.1f}",
        flush=True,
    )


if __name__ == "__main__":
    main()
