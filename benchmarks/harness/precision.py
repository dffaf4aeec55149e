"""The numeric settings references and baselines run under.

A task's reference states its precision in code (fp32 means IEEE fp32); PyTorch's defaults may
quietly lower it: cuDNN convolutions use TF32 unless told not to, and half-precision cuBLAS GEMMs
may reduce in reduced precision. The judge computes references under `full_precision()`, and the
eager and torch.compile baselines are compiled and timed under it too, so a candidate is compared
with (and raced against) the computation its task describes. Without it, torch.compile of the
fp32 convolution tasks ran faster than the fp32 roofline allows: cuDNN's TF32 default, since
Inductor does not see the reference's own `allow_tf32 = False` (docs/results/design_measurements.md,
"Full precision").
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def full_precision() -> Iterator[None]:
    """No TF32 in cuBLAS or cuDNN and no reduced-precision reductions in half-precision GEMMs,
    for the duration; the previous settings are restored afterwards."""
    import torch

    cuda_mm = torch.backends.cuda.matmul
    cudnn = torch.backends.cudnn
    saved = (
        cuda_mm.allow_tf32,
        cudnn.allow_tf32,
        cuda_mm.allow_fp16_reduced_precision_reduction,
        cuda_mm.allow_bf16_reduced_precision_reduction,
    )
    cuda_mm.allow_tf32 = False
    cudnn.allow_tf32 = False
    cuda_mm.allow_fp16_reduced_precision_reduction = False
    cuda_mm.allow_bf16_reduced_precision_reduction = False
    try:
        yield
    finally:
        (
            cuda_mm.allow_tf32,
            cudnn.allow_tf32,
            cuda_mm.allow_fp16_reduced_precision_reduction,
            cuda_mm.allow_bf16_reduced_precision_reduction,
        ) = saved
