"""Seeded input builders shared by the task files.

Every builder draws from the `torch.Generator` it is given and creates its tensor on that
generator's device, so a task's inputs are a pure function of (dims, dtype, mode, seed, device).

Modes:
- "standard": well-scaled values (unit normal, or what the task says).
- "outlier": the same, with a rare fraction of elements amplified by 10-1000x. A softmax that
  skips max-subtraction overflows here; a norm that accumulates in fp16 loses precision here.
"""

from __future__ import annotations

import torch

OUTLIER_FRACTION = 1e-3
OUTLIER_SCALE = (10.0, 1000.0)


def randn(
    shape: tuple[int, ...] | list[int],
    dtype: torch.dtype,
    gen: torch.Generator,
    std: float = 1.0,
    mean: float = 0.0,
) -> torch.Tensor:
    x = torch.randn(tuple(shape), generator=gen, device=gen.device, dtype=torch.float32)
    return (x * std + mean).to(dtype)


def rand(
    shape: tuple[int, ...] | list[int],
    dtype: torch.dtype,
    gen: torch.Generator,
    low: float = 0.0,
    high: float = 1.0,
) -> torch.Tensor:
    x = torch.rand(tuple(shape), generator=gen, device=gen.device, dtype=torch.float32)
    return (x * (high - low) + low).to(dtype)


def randint(
    shape: tuple[int, ...] | list[int],
    low: int,
    high: int,
    gen: torch.Generator,
    dtype: torch.dtype = torch.int64,
) -> torch.Tensor:
    return torch.randint(low, high, tuple(shape), generator=gen, device=gen.device, dtype=dtype)


def amplify_outliers(
    x: torch.Tensor,
    gen: torch.Generator,
    fraction: float = OUTLIER_FRACTION,
    scale: tuple[float, float] = OUTLIER_SCALE,
) -> torch.Tensor:
    """Multiply a random `fraction` of elements (at least one) by a factor in `scale`, keeping
    the dtype. Values are clamped to the dtype's finite range so the input stays finite."""
    if x.numel() == 0:
        return x
    flat = x.detach().to(torch.float32).reshape(-1).clone()
    count = max(1, int(flat.numel() * fraction))
    # unique indices: a scatter with repeated indices is nondeterministic on CUDA, and the judge
    # regenerates inputs in another process, so both must come out bit-identical
    idx = torch.unique(torch.randint(0, flat.numel(), (count,), generator=gen, device=gen.device))
    factor = (
        torch.rand((idx.numel(),), generator=gen, device=gen.device) * (scale[1] - scale[0])
        + scale[0]
    )
    # an outlier is big in magnitude: push small picks away from zero before scaling
    base = flat[idx]
    base = torch.where(base.abs() < 0.5, torch.sign(base) + (base == 0).float(), base)
    flat[idx] = base * factor
    if x.dtype.is_floating_point:
        info = torch.finfo(x.dtype)
        flat = flat.clamp(info.min, info.max)
    return flat.reshape(x.shape).to(x.dtype)


def maybe_outliers(x: torch.Tensor, mode: str, gen: torch.Generator) -> torch.Tensor:
    """`amplify_outliers` in "outlier" mode, the tensor unchanged otherwise."""
    return amplify_outliers(x, gen) if mode == "outlier" else x


def elem_size(dtype: torch.dtype) -> int:
    return torch.empty((), dtype=dtype).element_size()
