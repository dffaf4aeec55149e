"""Seeded input builders shared by the task files.

Every builder draws from the `torch.Generator` it is given and creates its tensor on that
generator's device, so a task's inputs are a pure function of (dims, dtype, mode, seed, device).

Modes:
- "standard": well-scaled values (unit normal, or what the task says).
- "outlier": the same, with a rare fraction of elements amplified by 10-1000x. A softmax that
  skips max-subtraction overflows here; a norm that accumulates in fp16 loses precision here.

Imported problems (`benchmarks.formats`) also use `in_range_outliers` (outliers for a reference
defined on its inputs' range only) and `signed` (a sign-broadened copy of one-sided inputs).
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
    the dtype. Values are clamped to the dtype's finite range so the input stays finite.
    Half-precision and fp32 inputs are computed in fp32; float64 and complex inputs in their own
    dtype (a complex element keeps its phase and grows in magnitude).

    The first pick always takes the largest factor; in a real tensor holding both signs the
    first pick is made positive, the second negative, and both take the largest factor. Every
    outlier input then carries a full-scale value of each sign it can hold: without that a small
    tensor's few picks could all be small or negative, and a softmax that never subtracts the
    row maximum would pass."""
    if x.numel() == 0:
        return x
    wide = x.dtype in (torch.float64, torch.complex64, torch.complex128)
    flat = x.detach().to(x.dtype if wide else torch.float32).reshape(-1).clone()
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
    if base.is_complex():
        unit = torch.where(
            base.abs() > 0, base / base.abs().clamp_min(1e-30), torch.ones_like(base)
        )
        base = torch.where(base.abs() < 0.5, unit, base)
        flat[idx] = base * factor.to(base.real.dtype)
        return flat.reshape(x.shape)
    base = torch.where(base.abs() < 0.5, torch.sign(base) + (base == 0).to(base.dtype), base)
    factor[0] = scale[1]
    if bool((flat > 0).any()) and bool((flat < 0).any()):
        base[0] = base[0].abs()
        if base.numel() > 1:
            base[1] = -base[1].abs()
            factor[1] = scale[1]
    flat[idx] = base * factor.to(base.dtype)
    if x.dtype.is_floating_point:
        info = torch.finfo(x.dtype)
        flat = flat.clamp(info.min, info.max)
    return flat.reshape(x.shape).to(x.dtype)


def in_range_outliers(x: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
    """Outliers that stay inside the tensor's own range: a random `OUTLIER_FRACTION` of the
    elements (at least one) moved to its ends, each to the minimum or the maximum at random. For a
    reference defined only on that range (probabilities for a cross-entropy, a variance under a
    square root) this is the extreme input it still accepts. Real floating-point tensors only."""
    if x.numel() == 0 or not x.dtype.is_floating_point:
        return x
    flat = x.detach().reshape(-1).clone()
    count = max(1, int(flat.numel() * OUTLIER_FRACTION))
    idx = torch.unique(torch.randint(0, flat.numel(), (count,), generator=gen, device=gen.device))
    high = torch.rand((idx.numel(),), generator=gen, device=gen.device) < 0.5
    lo, hi = flat.min(), flat.max()
    flat[idx] = torch.where(high, hi, lo).to(flat.dtype)
    return flat.reshape(x.shape)


def one_sided(x: torch.Tensor) -> bool:
    """Whether a real floating-point tensor holds values of one sign only (and not only zeros)."""
    if not x.dtype.is_floating_point or x.numel() < 2:
        return False
    lo, hi = float(x.min()), float(x.max())
    return (lo >= 0 and hi > 0) or (hi <= 0 and lo < 0)


def signed(x: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
    """A one-sided tensor with the sign of a random half of its elements flipped (magnitudes
    kept); any other tensor unchanged. Inputs drawn with `torch.rand` are non-negative, and on them
    an identity passes a ReLU: signed inputs tell the two apart."""
    if not one_sided(x):
        return x
    flip = torch.rand(x.shape, generator=gen, device=gen.device) < 0.5
    return torch.where(flip, -x, x)


def maybe_outliers(x: torch.Tensor, mode: str, gen: torch.Generator) -> torch.Tensor:
    """`amplify_outliers` in "outlier" mode, the tensor unchanged otherwise."""
    return amplify_outliers(x, gen) if mode == "outlier" else x


def elem_size(dtype: torch.dtype) -> int:
    return torch.empty((), dtype=dtype).element_size()
