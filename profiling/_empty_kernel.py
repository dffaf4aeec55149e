"""An empty Triton kernel: what a launch costs when the kernel does nothing.

Kept in its own module so `profiling.timing` can import Triton only when the launch floor is
asked for. The pointer argument is unused; it gives the launch the same argument-handling cost
as a minimal real kernel.
"""

import triton


@triton.jit
def empty_kernel(x_ptr):
    pass
