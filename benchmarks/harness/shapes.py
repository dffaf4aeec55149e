"""Which shapes one evaluation checks: sizes the candidate cannot guess.

A task declares its shapes (`Task.cpu_shapes`, `Task.shapes`), and a candidate can read them: a
kernel special-cased to the declared sizes, or one that handles only the first 1024 columns, would
pass a judge that checks only those. So the judge checks shapes planned here, per evaluation:

- **On the CPU** each declared CPU shape is replaced by a *drawn* one: the same dims, each moved
  within [v/2, 3v/2] by a random generator seeded from `JudgeConfig.shape_seed` (fresh per
  evaluation unless set; the verdict records it, so `shape_seed=` reproduces the evaluation).
  Free sizes are drawn ragged (never a multiple of 8, so never of 16 or 128), and one shape gets a dim above 1024 where
  the task's dims and the CPU budget allow. The budget: a drawn shape may cost at most
  `BUDGET_FACTOR` times the largest declared CPU shape, in minimal bytes and in FLOPs (the
  interpreter is slow).
- **On the GPU** the declared shapes are judged as declared, plus one *ragged* shape derived from
  the smallest: every free dim that is a multiple of 16 moved off it (d - 1, else d + 7). It has
  weight 0 and is checked for correctness only: never timed, never in the score.

Dims are often tied, and the declared shapes are the only statement of how. What holds in every
declared shape (CPU and GPU) is kept: a dim equal to another stays equal, a power of two stays a
power of two, a multiple of 16 or more (a block size) stays one, a dim that divides another keeps
dividing it, and a dim with the same value everywhere, or with
small values only (a flag, a pad, a ratio), is not varied. Every drawn shape is then tried: the
task's inputs built in every mode and its reference run on them (small sizes: cheap); a draw that
fails is drawn again, a dim that fails alone is kept as declared, and a shape that cannot be
varied at all is judged as declared. What was kept, and why, goes into the verdict's
`unchecked_shapes`; the plans are cached per task and seed in this process.
"""

from __future__ import annotations

import dataclasses
import math
import os
import random
import time
from dataclasses import dataclass, field

from benchmarks.harness.judge_config import JudgeConfig
from benchmarks.harness.precision import full_precision
from benchmarks.task import Shape, Task
from benchmarks.verdict import UncheckedShape, Verdict

# a drawn CPU shape may cost this many times the largest declared CPU shape (bytes and FLOPs);
# the one with a dim above WIDE_ABOVE, WIDE_BUDGET_FACTOR times
BUDGET_FACTOR = 2.0
WIDE_BUDGET_FACTOR = 4.0
# the CPU plan tries to put one dim above this (a row kernel with one fixed block and no loop)
WIDE_ABOVE = 1024
# a GPU shape is ragged when a size is not a multiple of this (nor of 128)
RAGGED = 16
# drawn CPU sizes of this or more are never a multiple of it (so never of 16 or 128 either):
# tails that a kernel assuming 8-wide chunks gets wrong
UNALIGNED = 8
# a dim whose declared CPU values are all at most this is a parameter, not a size
SMALL_PARAMETER = 3
# validated draws per shape before the dims are tried one at a time
DRAW_ATTEMPTS = 4
# "a divides b" is a tie only where b / a is at most this in some declared shape
TIE_RATIO = 8
DRAWN_SUFFIX = ".drawn"
RAGGED_SUFFIX = ".ragged"


@dataclass(frozen=True)
class PlannedShape(Shape):
    """A shape one evaluation checks: a declared shape, or one drawn or derived from it."""

    derived_from: str = ""  # the declared shape it was drawn or derived from; "" = itself
    correctness_only: bool = False  # checked for correctness, never timed or scored


@dataclass
class ShapePlan:
    """The shapes one evaluation checks, the seed they were drawn with, and what went unchecked."""

    shapes: list[PlannedShape]
    seed: int | None  # the shape seed of a CPU plan; None on the GPU (nothing drawn)
    unchecked: list[UncheckedShape] = field(default_factory=list)
    seconds: float = 0.0  # spent planning (drawing, running the reference); 0 when cached


@dataclass(frozen=True)
class DimRules:
    """What every declared shape of a task agrees on, kept by every drawn shape."""

    fixed: dict[str, str]  # dim -> why it is never varied
    pow2: frozenset[str]  # a power of two in every declared shape
    multiple: dict[str, int]  # dim -> a block size (>= 16) every declared value is a multiple of
    equal: dict[str, str]  # dim -> an earlier dim it equals in every declared shape
    divides: tuple[tuple[str, str], ...]  # (a, b): b is a multiple of a in every declared shape
    low: dict[str, int]  # the smallest value a draw may give the dim

    def free(self, dims: dict[str, int]) -> list[str]:
        return [d for d in dims if d not in self.fixed]


def fresh_seed() -> int:
    """A seed nobody can predict (the default shape and input seeds: one per evaluation)."""
    return int.from_bytes(os.urandom(4), "little")


def is_scored(shape: Shape) -> bool:
    """Whether the perf stage times and scores `shape` (all but the correctness-only ones)."""
    return not getattr(shape, "correctness_only", False)


def scored(shapes: list[Shape]) -> list[Shape]:
    """The shapes the perf stage times and scores."""
    return [s for s in shapes if is_scored(s)]


# --------------------------------------------------------------------------------------------
# the plan
# --------------------------------------------------------------------------------------------

_PLANS: dict[tuple, ShapePlan] = {}
_RULES: dict[tuple, DimRules] = {}


def plan_shapes(
    task: Task, device: str, selected: tuple[str, ...] | None, shape_seed: int | None
) -> ShapePlan:
    """The shapes one evaluation of `task` on `device` checks (`selected`: names to keep, declared
    or derived; None: all). Cached per task, device, selection and seed."""
    key = (task.id, str(task.path), device, selected, shape_seed if device == "cpu" else None)
    t0 = time.perf_counter()
    cached = key in _PLANS
    if not cached:
        if device == "cpu":
            _PLANS[key] = _cpu_plan(task, selected, shape_seed if shape_seed is not None else 0)
        else:
            _PLANS[key] = _gpu_plan(task, device, selected)
    plan = _PLANS[key]
    return ShapePlan(
        shapes=list(plan.shapes),
        seed=plan.seed,
        unchecked=list(plan.unchecked),
        seconds=0.0 if cached else time.perf_counter() - t0,
    )


def _selected(shapes: tuple[Shape, ...], selected: tuple[str, ...] | None) -> list[Shape]:
    return [s for s in shapes if selected is None or s.name in selected]


def _not_selected(shapes: list[Shape], why: str) -> list[UncheckedShape]:
    return [UncheckedShape(shape=s.name, dims=dict(s.dims), reason=why) for s in shapes]


def _cpu_plan(task: Task, selected: tuple[str, ...] | None, seed: int) -> ShapePlan:
    rules = dim_rules(task)
    chosen = _selected(task.cpu_shapes, selected)
    unchecked = _not_selected(
        [s for s in task.cpu_shapes if s not in chosen], "not selected (JudgeConfig.shapes)"
    )
    unchecked += _not_selected(
        list(task.shapes),
        "a GPU shape: too large for the CPU interpreter (drawn CPU shapes instead)",
    )
    budget = _budget(task)
    wide = _wide_target(chosen, rules)
    planned: list[PlannedShape] = []
    for shape in chosen:
        rng = random.Random(f"{seed}|{task.id}|{shape.name}")
        want_wide = wide is not None and wide[0] == shape.name
        dims, notes = _draw_valid(
            task, shape, rules, rng, budget, wide[1] if want_wide and wide else None
        )
        planned.append(
            PlannedShape(
                name=shape.name + DRAWN_SUFFIX,
                dims=dims,
                weight=shape.weight,
                phase=shape.phase,
                source=f"drawn from {shape.name} with shape seed {seed}",
                derived_from=shape.name,
            )
        )
        unchecked += [
            UncheckedShape(shape=shape.name, dims=dict(shape.dims), reason=n) for n in notes
        ]
    if wide is None and chosen:
        unchecked.append(
            UncheckedShape(
                shape=chosen[0].name,
                dims=dict(chosen[0].dims),
                reason=f"no dim drawn above {WIDE_ABOVE}: the task has no free size to widen",
            )
        )
    return ShapePlan(shapes=planned, seed=seed, unchecked=unchecked)


def _gpu_plan(task: Task, device: str, selected: tuple[str, ...] | None) -> ShapePlan:
    declared = [
        PlannedShape(
            name=s.name, dims=dict(s.dims), weight=s.weight, phase=s.phase, source=s.source
        )
        for s in _selected(task.shapes, selected)
    ]
    unchecked = _not_selected(
        [s for s in task.shapes if selected is not None and s.name not in selected],
        "not selected (JudgeConfig.shapes)",
    )
    ragged, why = ragged_shape(task, device=device)
    if ragged is None:
        base = smallest_shape(task)
        unchecked.append(
            UncheckedShape(shape=base.name, dims=dict(base.dims), reason=f"no ragged shape: {why}")
        )
    elif selected is None or ragged.name in selected:
        declared.append(ragged)
    else:
        unchecked.append(
            UncheckedShape(
                shape=ragged.name,
                dims=dict(ragged.dims),
                reason="not selected (JudgeConfig.shapes)",
            )
        )
    return ShapePlan(shapes=declared, seed=None, unchecked=unchecked)


# --------------------------------------------------------------------------------------------
# what the declared shapes agree on
# --------------------------------------------------------------------------------------------


def _is_pow2(v: int) -> bool:
    return v > 0 and v & (v - 1) == 0


def dim_rules(task: Task) -> DimRules:
    """The ties every declared shape of `task` (CPU and GPU) agrees on (see the module's doc)."""
    key = (task.id, str(task.path))
    if key in _RULES:
        return _RULES[key]
    declared = list(task.cpu_shapes) + list(task.shapes)
    names = list(dict.fromkeys(d for s in task.cpu_shapes for d in s.dims))
    values = {d: [s.dims[d] for s in declared if d in s.dims] for d in names}
    cpu_values = {d: [s.dims[d] for s in task.cpu_shapes if d in s.dims] for d in names}
    both = [s for s in declared if all(d in s.dims for d in names)]
    fixed: dict[str, str] = {}
    for d in names:
        if not getattr(task, "shape_dims_vary", True):
            fixed[d] = "the task's dims are not sizes (a recorded call): never varied"
        elif max(cpu_values[d]) <= SMALL_PARAMETER:
            fixed[d] = (
                f"a small parameter (declared values {sorted(set(cpu_values[d]))}), not a size"
            )
        elif len(set(values[d])) == 1:
            fixed[d] = f"the same ({values[d][0]}) in every declared shape"
    equal: dict[str, str] = {}
    for i, d in enumerate(names):
        for e in names[:i]:
            if e not in equal and all(s.dims[d] == s.dims[e] for s in both):
                equal[d] = e
                break
    pow2 = frozenset(d for d in names if all(_is_pow2(v) for v in values[d]) and min(values[d]) > 1)
    multiple: dict[str, int] = {}
    for d in names:
        g = math.gcd(*values[d])
        m = g & -g if g else 0
        if m >= RAGGED and d not in pow2:
            multiple[d] = m
    divides = []
    for a in names:
        for b in names:
            if a == b or a in equal or b in equal:
                continue
            if max(cpu_values[a]) <= SMALL_PARAMETER or _explained_by_alignment(
                values[a], values[b]
            ):
                continue  # a batch of 2 "divides" every even size: left to the reference to judge
            pairs = [(s.dims[a], s.dims[b]) for s in both]
            if any(x > 1 for x, _ in pairs) and all(x > 0 and y % x == 0 for x, y in pairs):
                # a tie has a few b per a somewhere (heads per KV head, channels per group)
                if any(x < y for x, y in pairs) and min(y // x for x, y in pairs) <= TIE_RATIO:
                    divides.append((a, b))
    low = {}
    for d in names:
        lo = min(cpu_values[d])
        low[d] = lo if d in pow2 else max(1 if min(values[d]) > 0 else 0, lo // 4)
    rules = DimRules(
        fixed=fixed,
        pow2=pow2,
        multiple=multiple,
        equal=equal,
        divides=tuple(divides),
        low=low,
    )
    _RULES[key] = rules
    return rules


def _explained_by_alignment(a: list[int], b: list[int]) -> bool:
    """Whether "a divides b" in every declared shape follows from b's sizes all being multiples
    of a power of two that covers every a (HKV in {1, 2, 8} "divides" an S that is always a
    multiple of 8): a coincidence of alignment, not a tie."""
    g = math.gcd(*b)
    align = g & -g if g else 0
    return all(_is_pow2(x) and x <= align for x in a)


def _tie(dims: dict[str, int], rules: DimRules) -> dict[str, int]:
    """`dims` with equal dims made equal and every divisibility restored (b rounded to a multiple
    of a)."""
    out = dict(dims)
    for d, e in rules.equal.items():
        if d in out and e in out:
            out[d] = out[e]
    for _ in range(2):
        for a, b in rules.divides:
            if a in out and b in out and out[a] > 0 and out[b] % out[a]:
                out[b] = max(out[a], round(out[b] / out[a]) * out[a])
    return out


# --------------------------------------------------------------------------------------------
# drawing CPU shapes
# --------------------------------------------------------------------------------------------


def _cost(task: Task, dims: dict[str, int]) -> tuple[float, float]:
    return task.min_bytes(dims), task.flops(dims)


def _budget(task: Task, factor: float = BUDGET_FACTOR) -> tuple[float, float]:
    costs = [_cost(task, s.dims) for s in task.cpu_shapes]
    return factor * max(c[0] for c in costs), factor * max(c[1] for c in costs)


def _fits(task: Task, dims: dict[str, int], budget: tuple[float, float]) -> bool:
    try:
        nbytes, flops = _cost(task, dims)
    except Exception:  # noqa: BLE001 - a formula that fails on these dims: the draw is refused
        return False
    return nbytes <= budget[0] and flops <= max(budget[1], 0.0)


def _wide_target(shapes: list[Shape], rules: DimRules) -> tuple[str, str] | None:
    """(shape, dim) to draw above WIDE_ABOVE: the largest free size of the declared shapes that is
    not a power of two, or None when there is none."""
    best: tuple[int, str, str] | None = None
    for s in shapes:
        for d in rules.free(s.dims):
            if d in rules.pow2 or d in rules.equal:
                continue
            if best is None or s.dims[d] > best[0]:
                best = (s.dims[d], s.name, d)
    return (best[1], best[2]) if best else None


def _draw_size(v: int, d: str, rules: DimRules, rng: random.Random) -> int:
    if d in rules.pow2:
        choices = [c for c in (v // 2, v * 2) if c >= rules.low[d]]
        return rng.choice(choices) if choices else v
    m = rules.multiple.get(d, 1)
    lo = max(rules.low[d], (v + 1) // 2)
    hi = max(lo, v + v // 2)
    ks = range(max(1, -(-lo // m)), max(1, hi // m) + 1)
    pick = v
    for _ in range(12):
        pick = rng.choice(ks) * m
        if pick != v and (m > 1 or pick < UNALIGNED or pick % UNALIGNED):
            break
    return pick


def _draw(
    dims: dict[str, int], free: list[str], rules: DimRules, rng: random.Random
) -> dict[str, int]:
    out = dict(dims)
    for d in free:
        out[d] = _draw_size(dims[d], d, rules, rng)
    return _tie(out, rules)


def _widen(
    task: Task,
    dims: dict[str, int],
    wide: str,
    free: list[str],
    rules: DimRules,
    rng: random.Random,
    budget: tuple[float, float],
) -> dict[str, int] | None:
    """`dims` with `wide` drawn above WIDE_ABOVE (ragged) and the other free sizes shrunk until the
    shape fits the budget; None when it cannot."""
    m = rules.multiple.get(wide, 1)
    ks = range(-(-(WIDE_ABOVE + 1) // m), (WIDE_ABOVE + 400) // m + 1)
    value = rng.choice(ks) * m
    while m == 1 and value % UNALIGNED == 0:
        value += 1
    out = dict(dims)
    out[wide] = value
    out = _tie(out, rules)
    for _ in range(64):
        if _fits(task, out, budget):
            break
        shrinkable = [
            d
            for d in free
            if d != wide and rules.equal.get(d) != wide and out[d] > rules.low[d] and out[d] > 1
        ]
        if not shrinkable:
            return None
        d = max(shrinkable, key=lambda k: out[k])
        if d in rules.pow2:
            out[d] = max(rules.low[d], out[d] // 2)
        else:
            step = rules.multiple.get(d, 1)
            out[d] = max(rules.low[d], step, (out[d] // 2) // step * step)
        out = _tie(out, rules)
        if out[wide] != value:  # a tie moved the wide dim back under the line
            return None
    if not _fits(task, out, budget) or out[wide] <= WIDE_ABOVE:
        return None
    return out


def reference_error(task: Task, dims: dict[str, int], device: str = "cpu") -> str | None:
    """Why `task` cannot run at `dims` (its inputs built in every mode, its reference called on
    them, its cost formulas evaluated), or None when it can."""
    import torch

    try:
        gen = torch.Generator(device=device)
        for mode in task.modes:
            gen.manual_seed(12345)
            args = task.make_inputs(dims, mode, gen)
            with torch.no_grad(), full_precision():
                task.reference_for(dims)(*args)
            del args
        for value in _cost(task, dims):
            if not math.isfinite(value) or value < 0:
                return f"its cost formula gives {value!r}"
    except Exception as exc:  # noqa: BLE001 - the task's own code refusing these dims is the answer
        return f"{type(exc).__name__}: {str(exc)[:200]}"
    return None


def _draw_valid(
    task: Task,
    shape: Shape,
    rules: DimRules,
    rng: random.Random,
    budget: tuple[float, float],
    wide: str | None,
) -> tuple[dict[str, int], list[str]]:
    """Drawn dims for `shape` that the task's reference accepts, and notes on what was kept."""
    declared = dict(shape.dims)
    free = rules.free(declared)
    notes = [
        f"dim {d} kept at {declared[d]}: {rules.fixed[d]}" for d in declared if d in rules.fixed
    ]
    if not free:
        notes.append("judged at its declared dims: no dim of the task can be varied")
        return declared, notes
    last = ""
    if wide is not None:
        for _ in range(DRAW_ATTEMPTS):
            roomy = (
                budget[0] * WIDE_BUDGET_FACTOR / BUDGET_FACTOR,
                budget[1] * WIDE_BUDGET_FACTOR / BUDGET_FACTOR,
            )
            dims = _widen(task, _draw(declared, free, rules, rng), wide, free, rules, rng, roomy)
            if dims is None:
                last = f"it does not fit the CPU budget ({WIDE_BUDGET_FACTOR:g}x the largest declared CPU shape) with the dims the task lets vary"
                continue
            err = reference_error(task, dims)
            if err is None:
                return dims, notes
            last = f"the task's reference refused it ({err})"
        notes.append(f"no dim drawn above {WIDE_ABOVE} (dim {wide}): {last}")
    found = _attempts(task, declared, free, rules, rng, budget)
    if isinstance(found, dict):
        return found, notes
    # no joint draw worked: find the dims that can move alone, keep the others as declared
    movable = []
    for d in free:
        alone = _attempts(task, declared, [d], rules, rng, budget, tries=2)
        if isinstance(alone, dict):
            movable.append(d)
        else:
            notes.append(f"dim {d} kept at {declared[d]}: could not be varied ({alone})")
    if movable:
        found = _attempts(task, declared, movable, rules, rng, budget)
        if isinstance(found, dict):
            return found, notes
    notes.append(
        f"judged at its declared dims: no drawn variant passed the task's reference ({found})"
    )
    return declared, notes


def _attempts(
    task: Task,
    declared: dict[str, int],
    free: list[str],
    rules: DimRules,
    rng: random.Random,
    budget: tuple[float, float],
    tries: int = DRAW_ATTEMPTS,
) -> dict[str, int] | str:
    """A validated draw moving `free`, or why none was found in `tries` reference runs."""
    last = "no draw fits the CPU budget and the declared ties"
    validated = 0
    for _ in range(tries * 8):
        dims = _draw(declared, free, rules, rng)
        if dims == declared or not _fits(task, dims, budget):
            continue
        err = reference_error(task, dims)
        if err is None:
            return dims
        last = f"the task's reference refused it: {err}"
        validated += 1
        if validated >= tries:
            break
    return last


# --------------------------------------------------------------------------------------------
# the GPU's ragged shape
# --------------------------------------------------------------------------------------------


def smallest_shape(task: Task) -> Shape:
    """The task's cheapest GPU shape (minimal bytes, then name)."""
    return min(task.shapes, key=lambda s: (task.min_bytes(s.dims), s.name))


def _off_block(v: int, low: int) -> int | None:
    for c in (v - 1, v + 7, v + 1):
        if c >= max(low, 1) and c % RAGGED:
            return c
    return None


def ragged_dims(task: Task) -> tuple[dict[str, int] | None, str]:
    """The smallest GPU shape's dims with every free size that is a multiple of 16 moved off it
    (when none is, every free size moved by one), not yet tried against the reference; or None
    and why there is none."""
    rules = dim_rules(task)
    base = smallest_shape(task)
    sizes = [
        d
        for d in rules.free(base.dims)
        if d not in rules.pow2 and d not in rules.multiple and d not in rules.equal
    ]
    on_block = [d for d in sizes if base.dims[d] >= RAGGED and base.dims[d] % RAGGED == 0]
    out = dict(base.dims)
    moved = []
    for d in on_block or [d for d in sizes if base.dims[d] >= 2]:
        c = _off_block(base.dims[d], rules.low.get(d, 1))
        if c is not None:
            out[d] = c
            moved.append(d)
    out = _tie(out, rules)
    moved = [d for d in moved if out[d] != base.dims[d]]
    if not moved:
        held = ", ".join(f"{d}={v}" for d, v in base.dims.items())
        return None, (
            f"every size of {base.name} ({held}) is fixed by the task "
            "(a parameter, a power of two, a block multiple or a constant)"
        )
    return out, ""


def ragged_shape(task: Task, device: str | None = "cuda") -> tuple[PlannedShape | None, str]:
    """The GPU's correctness-only ragged shape for `task` (weight 0), tried against the task's
    reference on `device` (None: not tried), or None and why there is none. Where the reference
    refuses the shape, each moved dim is tried alone and those it accepts are kept."""
    dims, why = ragged_dims(task)
    if dims is None:
        return None, why
    base = smallest_shape(task)
    if device is not None:
        err = reference_error(task, dims, device)
        if err is not None:
            rules = dim_rules(task)
            alone = []
            for d in [d for d in dims if dims[d] != base.dims[d]]:
                one = _tie({**base.dims, d: dims[d]}, rules)
                if one != base.dims and reference_error(task, one, device) is None:
                    alone.append(d)
            joint = _tie({**base.dims, **{d: dims[d] for d in alone}}, rules)
            if alone and reference_error(task, joint, device) is None:
                dims = joint
            elif alone:
                dims = _tie({**base.dims, alone[0]: dims[alone[0]]}, rules)
            else:
                return None, f"the task's reference refused every size moved off a block ({err})"
    return (
        PlannedShape(
            name=base.name + RAGGED_SUFFIX,
            dims=dims,
            weight=0.0,
            phase=base.phase,
            source=f"derived from {base.name}: sizes moved off multiples of {RAGGED}",
            derived_from=base.name,
            correctness_only=True,
        ),
        "",
    )


# --------------------------------------------------------------------------------------------
# the judge's side
# --------------------------------------------------------------------------------------------


def with_shape_seed(config: JudgeConfig) -> JudgeConfig:
    """`config` with its shape seed and input seed set: a fresh one for each it has none of (once
    per evaluation, so a retried worker checks the same shapes on the same inputs)."""
    if config.shape_seed is None:
        config = dataclasses.replace(config, shape_seed=fresh_seed())
    if config.seed is None:
        config = dataclasses.replace(config, seed=fresh_seed())
    return config


def record_plan(verdict: Verdict, plan: ShapePlan) -> None:
    """Write what the plan checks, its seed and what it leaves unchecked into `verdict`."""
    verdict.shape_seed = plan.seed
    verdict.shape_plan = {s.name: dict(s.dims) for s in plan.shapes}
    verdict.unchecked_shapes = list(plan.unchecked)
    verdict.stage_seconds["shape_plan"] = plan.seconds


def mark_results(verdict: Verdict, shapes: list[Shape]) -> None:
    """Say in each of the verdict's shape results which declared shape it was drawn or derived
    from and whether it is correctness-only."""
    by_name = {s.name: s for s in shapes}
    for result in verdict.shapes:
        shape = by_name.get(result.shape)
        if isinstance(shape, PlannedShape):
            result.derived_from = shape.derived_from
            result.correctness_only = shape.correctness_only
