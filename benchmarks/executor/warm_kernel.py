"""The kernel a spare compile process compiles while it waits for its job
(`benchmarks.executor.warm_compile.spare`): Triton's compiler is loaded before the candidate's
first compile, not during it. Imported only by a compile process, after it has turned Triton's
interpreter off."""

import triton
import triton.language as tl


@triton.jit
def double(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    """y = 2 x."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2.0, mask=mask)
