"""The call after timing: one element of the timing inputs changed, the answer checked.

The timing loop calls the candidate hundreds of times on one set of tensors. A candidate can
notice that (same pointers, the same few values it peeks at) and answer from a cache instead of
computing, with the same kernel, the same launch count and a time near the roofline: every check
on the timed calls holds. So after timing each shape, the worker changes CHANGED_PER_INPUT elements of
each floating-point input in place (it copies another element of the same tensor there, so the
value stays in the tensor's own range) and calls the candidate once more, traced, on those same
tensors;
it ships that call's output and inputs like a trial's. The judge regenerates the timing inputs from
the seed, makes the same change (`nudge`, the one definition both sides use), computes the
reference and compares. A candidate answering from a cache keyed on anything short of the whole
input returns the old answer and fails, and one that recomputes only part of the output while
timed fails unless every changed element falls in that part; reading the whole input to key the cache costs what
computing costs on a memory-bound task.

Where the reference on the nudged inputs is not finite although it was on the originals (an input
with structure a copied element breaks), the judge skips the comparison and says so.
"""

from __future__ import annotations

import random
from typing import Any

import torch

__all__ = ["CHANGED_PER_INPUT", "change_inputs", "finite", "nudge", "nudge_seed"]

# elements of each input changed before a checked call: an answer that recomputes only a share f
# of the output (the rest kept from before) survives the check with probability about f ** 8
# (one changed element let a 60 % recompute pass 60 % of the time)
CHANGED_PER_INPUT = 8


def nudge_seed(base: int, shape: str, purpose: str = "after-timing", round_: int = 0) -> int:
    """The seed of round `round_` of the changes made to `shape`'s timing inputs for `purpose`
    (from the evaluation's seed)."""
    tail = "" if round_ == 0 and purpose == "after-timing" else f"|{round_}"
    return random.Random(f"{base}|{shape}|{purpose}{tail}").getrandbits(31)


def change_inputs(
    args: tuple | list,
    base: int,
    shape: str,
    purpose: str = "after-timing",
    skip: tuple[int, ...] = (),
) -> list[str]:
    """CHANGED_PER_INPUT rounds of `nudge`, each with its own seed: what the worker does to the
    timing inputs before a checked call, and what the judge does again to check it (purposes:
    "after-timing", the call after the timing loop; "after-graph", the CUDA graph's replay)."""
    changed: list[str] = []
    for r in range(CHANGED_PER_INPUT):
        changed += nudge(args, nudge_seed(base, shape, purpose, r), skip=skip)
    return changed


def _coords(flat: int, shape: tuple[int, ...]) -> tuple[int, ...]:
    out = []
    for size in reversed(shape):
        flat, rem = divmod(flat, size)
        out.append(rem)
    return tuple(reversed(out))


def nudge(args: tuple | list, seed: int, skip: tuple[int, ...] = ()) -> list[str]:
    """Copy one element of each real floating-point tensor in `args` (at least two elements,
    positions in `skip` left alone) onto another position of the same tensor, in place, chosen
    by `seed`. Works on any strides. Returns what changed, for messages."""
    rng = random.Random(seed)
    changed: list[str] = []
    with torch.no_grad():
        for k, a in enumerate(args):
            if k in skip or type(a) is not torch.Tensor or not a.dtype.is_floating_point:
                continue
            n = a.numel()
            if n < 2:
                continue
            for _ in range(8):  # a value onto an equal one changes nothing: try another pair
                src = rng.randrange(n)
                dst = (src + 1 + rng.randrange(n - 1)) % n
                at, frm = _coords(dst, tuple(a.shape)), _coords(src, tuple(a.shape))
                # compared on the host: a comparison kernel here would be the worker's own
                # launch in the timed window, which the launch observer judges by name
                if a[at].item() != a[frm].item():
                    break
            else:  # mostly one value (a mask, a sparse tensor): take a position that differs
                flat = a.reshape(-1).cpu()
                others = (flat != flat[dst]).nonzero().reshape(-1)
                if others.numel():
                    frm = _coords(int(others[rng.randrange(others.numel())]), tuple(a.shape))
            a[at] = a[frm].clone()
            changed.append(f"input {k}{list(at)} = input {k}{list(frm)}")
    return changed


def finite(value: Any) -> bool:
    """Whether every floating-point tensor in `value` (a tensor or nested tuple/list) is finite."""
    if isinstance(value, tuple | list):
        return all(finite(v) for v in value)
    if isinstance(value, torch.Tensor) and (value.dtype.is_floating_point or value.is_complex()):
        if value.dtype.itemsize == 1:  # float8 formats: PyTorch has no isfinite for them
            value = value.float()
        return bool(torch.isfinite(value).all())
    return True
