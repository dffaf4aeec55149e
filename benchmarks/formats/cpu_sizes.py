"""Choosing the sizes an imported problem runs at on the CPU interpreter.

The interpreter runs a kernel as Python over numpy blocks: a KernelBench problem at its published
sizes (4096 x 4096 matmuls, 8 GiB of inputs) would run for hours. So the judge runs it smaller,
and every size it tries is *probed*: the file run with those sizes, the Model built, its forward
run once, the inputs counted and the FLOPs counted (`Probe`). The search:

1. every dim is shrunk to the cap (`shrink.SIZE_CAP`), and the cap halved (down to
   `shrink.MIN_CAP`) while the inputs and outputs are over `CPU_ELEMENT_BUDGET` elements or the
   forward over `CPU_FLOP_BUDGET` counted FLOPs;
2. a size that breaks the problem (an assert on image and patch sizes, a network whose output
   shrinks to nothing) is repaired: each shrunk dim is tried alone at its published value; the
   first that makes the problem run again is pinned to the smallest value (doubling from the
   shrunk one) that works, and the search goes on; where no dim alone helps, each pair is tried
   the same way (an image's height and width, both shrunk below a window). Where no single dim is to blame, the dims the
   constructor reads are restored together; where that fails too, the last cap that worked is
   kept. Pins hold for one cap: at the next, every dim is shrunk afresh (a smaller patch size
   lets a smaller image through);
3. small constructor arguments the inputs do not size (`hyper`: a kernel size, stride, padding,
   dilation or group count, at most `HYPER_MAX`) are kept at their published values: shrunk,
   they would change the operator, not its size (a stride of 5 judged as a stride of 2 on the
   CPU and 5 on the GPU is two problems). Only where the problem cannot fit the budget with them
   kept are they shrunk like any other dim, and the notes say so;
4. a problem still over budget is not judged on the CPU (`CpuSizes.refusal`): it is judged on
   the GPU only, and the verdict says so before anything runs. A problem that fails at its own
   sizes too does not run here at all (`Unrunnable`).

Sizes too large to try (inputs and outputs over `TRY_LIMIT` elements) are never run: they are
counted on the meta device.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import combinations

from benchmarks.formats.shrink import MIN_CAP, SIZE_CAP, describe, shrink

CPU_ELEMENT_BUDGET = 1 << 16  # elements of one call's inputs (and, for KernelBench, outputs)
CPU_FLOP_BUDGET = 1 << 27  # FLOPs of one reference call, as FlopCounterMode counts them
TRY_LIMIT = 1 << 24  # input elements above which a size is never run on the CPU, only counted
HYPER_MAX = 16  # a constructor-only dim up to this value is a hyperparameter, kept as published


class Unrunnable(Exception):
    """The problem fails at every size tried, its own included: the file does not run here.
    `field` names the part that failed (as `Probe.field`)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


@dataclass
class Probe:
    """What running the problem at some sizes gave: an error (None: it built and ran), the
    elements of its inputs and outputs together, and the counted FLOPs of one forward."""

    error: str | None
    elements: int = 0
    flops: float = 0.0
    field: str = ""  # the part of the problem that failed ("get_inputs", "Model", ...)

    def fits(self) -> bool:
        return (
            self.error is None
            and self.elements <= CPU_ELEMENT_BUDGET
            and self.flops <= CPU_FLOP_BUDGET
        )

    def cost(self) -> str:
        return (
            f"inputs and outputs {self.elements} elements (budget {CPU_ELEMENT_BUDGET}), "
            f"{self.flops:.3g} counted FLOPs (budget {CPU_FLOP_BUDGET:.3g})"
        )


@dataclass
class CpuSizes:
    """The sizes the CPU interpreter runs, what was changed or kept and why, and whether the
    CPU can judge the problem at all."""

    dims: dict[str, int]
    notes: list[str] = field(default_factory=list)
    refusal: str | None = None  # why the CPU does not judge it (then: GPU only)


def search(
    dims: dict[str, int],
    probe: Callable[[dict[str, int]], Probe],
    init_dims: set[str],
    hyper: set[str] | frozenset[str] = frozenset(),
) -> CpuSizes:
    """The CPU sizes for a problem whose published sizes are `dims` (see the module docstring).
    `probe` runs the problem at given sizes; `init_dims` are the dims its constructor reads;
    `hyper` the constructor-only dims (those of them up to `HYPER_MAX` are kept if they can be)."""
    fixed = {k: dims[k] for k in sorted(hyper) if k in dims and MIN_CAP < dims[k] <= HYPER_MAX}
    if fixed:
        try:
            kept = _search(dims, probe, init_dims, fixed)
        except Unrunnable:
            kept = None
        if kept is not None and kept.refusal is None:
            kept.notes.append(
                f"kept at the published values (constructor arguments that shape the operator, "
                f"not its size): {', '.join(f'{k} {v}' for k, v in fixed.items())}"
            )
            return kept
    found = _search(dims, probe, init_dims, {})
    if fixed and any(found.dims.get(k) != v for k, v in fixed.items()):
        found.notes.append(
            f"constructor arguments shrunk too ({', '.join(fixed)}): with their published values "
            "the problem does not fit the CPU interpreter's budget"
        )
    return found


def _search(
    dims: dict[str, int],
    probe: Callable[[dict[str, int]], Probe],
    init_dims: set[str],
    fixed: dict[str, int],
) -> CpuSizes:
    """`search` with the dims of `fixed` held at those values."""
    if not dims:
        found = probe({})
        if found.error is not None:
            raise Unrunnable(found.field, found.error)
        notes = ["no sizes found to shrink: the CPU interpreter runs the file's own sizes"]
        return CpuSizes({}, notes, _over(found, "at the file's own sizes"))
    cap = SIZE_CAP
    good: tuple[dict[str, int], Probe, dict[str, int], list[str]] | None = None
    broke = ""
    while True:
        small, found, pinned, kept = _at_cap(dims, cap, probe, init_dims, fixed)
        if found.error is not None:
            if small == dims:  # the file's own sizes: nothing was shrunk, the file fails as is
                raise Unrunnable(found.field, found.error)
            broke = found.error
            break
        good = (small, found, pinned, kept)
        if found.fits() or cap <= MIN_CAP:
            break
        cap //= 2
    if good is None:
        return CpuSizes(
            dict(dims),
            [f"shrinking broke the problem ({broke}); the file's own sizes were kept"],
            _refusal_at_full(dims, probe, broke),
        )
    small, found, pinned, kept = good
    notes = []
    changed = describe(dims, small)
    if changed:
        notes.append(f"sizes shrunk for the CPU interpreter: {changed}")
    notes.extend(kept)
    if broke:
        notes.append(f"not shrunk further: at the next smaller sizes the problem fails ({broke})")
    unshrunk = [k for k in dims if small[k] == dims[k] and dims[k] > SIZE_CAP and k not in pinned]
    if unshrunk:
        notes.append(f"kept at the published value: {', '.join(unshrunk)}")
    return CpuSizes(small, notes, _over(found, "after shrinking"))


def _at_cap(
    dims: dict[str, int],
    cap: int,
    probe: Callable[[dict[str, int]], Probe],
    init_dims: set[str],
    fixed: dict[str, int],
) -> tuple[dict[str, int], Probe, dict[str, int], list[str]]:
    """The dims shrunk to `cap` (those of `fixed` held), repaired where that breaks the problem:
    (dims, their probe, the dims kept larger, notes on why)."""
    pinned: dict[str, int] = dict(fixed)
    kept: list[str] = []
    small = shrink(dims, cap, pinned)
    found = probe(small)
    while found.error is not None:
        repair = _repair(dims, small, pinned, probe, init_dims, found.error)
        if repair is None:
            break
        pinned.update(repair[0])
        kept.extend(repair[1])
        small = shrink(dims, cap, pinned)
        found = probe(small)
    return small, found, pinned, kept


def _over(found: Probe, when: str) -> str | None:
    if found.fits():
        return None
    return f"over the CPU interpreter's budget {when} ({found.cost()}): judged on the GPU only"


def _refusal_at_full(
    dims: dict[str, int], probe: Callable[[dict[str, int]], Probe], broke: str
) -> str | None:
    found = probe(dims)
    if found.error is not None:
        raise Unrunnable(found.field, f"{found.error} (shrunk for the CPU it fails too: {broke})")
    return _over(found, "at the file's own sizes (shrinking broke it)")


def _repair(
    dims: dict[str, int],
    small: dict[str, int],
    pinned: dict[str, int],
    probe: Callable[[dict[str, int]], Probe],
    init_dims: set[str],
    error: str,
) -> tuple[dict[str, int], list[str]] | None:
    """New pins that make the problem run at `small` again, with the notes that say why; None
    when neither one dim nor the constructor's dims are to blame."""
    changed = [k for k in dims if small[k] != dims[k] and k not in pinned]
    for name in changed:
        if probe({**small, name: dims[name]}).error is not None:
            continue
        value = small[name] * 2 or 1
        while value < dims[name] and probe({**small, name: value}).error is not None:
            value *= 2
        value = min(value, dims[name])
        return {name: value}, [
            f"{name} kept at {value} (published {dims[name]}): shrunk to {small[name]} the problem fails ({error})"
        ]
    # two dims together (an image's height and width, both below a kept window): grown jointly
    for a, b in combinations(changed, 2):
        if probe({**small, a: dims[a], b: dims[b]}).error is not None:
            continue
        grown = {a: small[a] * 2 or 1, b: small[b] * 2 or 1}
        while (
            any(grown[k] < dims[k] for k in grown) and probe({**small, **grown}).error is not None
        ):
            grown = {k: min(v * 2, dims[k]) for k, v in grown.items()}
        grown = {k: min(v, dims[k]) for k, v in grown.items()}
        return grown, [
            f"{a} and {b} kept at {grown[a]} and {grown[b]} (published {dims[a]} and {dims[b]}): "
            f"shrunk to {small[a]} and {small[b]} the problem fails ({error})"
        ]
    restore = {k: dims[k] for k in changed if k in init_dims}
    if restore and probe({**small, **restore}).error is None:
        return restore, [
            f"{', '.join(restore)} kept at the published values: shrunk, the problem fails ({error})"
        ]
    return None
