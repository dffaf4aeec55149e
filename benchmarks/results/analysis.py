"""Analyses over result rows: what a method comparison reports.

Every function takes `ResultRow`s (benchmarks/results/rows.py) and returns plain records the report
renders. Methods are shown by `row.label()`, so rows from a scripted provider form their own
group, named "<method> [scripted]", and never mix with real ones.

Two views of the rows:
- per attempt: every judged kernel (iteration curves, repair bias);
- per run outcome (`final_rows`): for each run (task, method, seed, device, run id) the best
  attempt -- correct before incorrect, then the fastest measured, then the furthest stage, then
  the earliest. Pass rates, fast_p, geomean speedups, S_agg, the category x method and per-task
  tables, the variance shares, portability and feature adoption read these. A run that judged
  nothing is one "no_kernel" row (`benchmarks.results.rows.no_kernel_row`), so it is an outcome
  too: a failed one, in every denominator.

Speed figures exist only where rows were judged on a GPU and timed. Anything else is reported
as "not measured", with the reason -- never as a number. The formulas (fast_p, geomean, suite
score) are `profiling.roofline`'s; weights and the serving suite are `benchmarks.weights` and
`benchmarks.suites`'.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from benchmarks.harness.ptx import FEATURES
from benchmarks.results.per_shape import ShapeLine, shape_lines
from benchmarks.results.rows import CPU_DEVICE_NAME, ResultRow
from benchmarks.results.throughput import Throughput, throughput
from benchmarks.verdict import STAGE_ORDER, Stage
from profiling import roofline

NOT_MEASURED = "not measured"
PASS_STAGES: tuple[Stage, ...] = (
    Stage.COMPILE,
    Stage.CALL,
    Stage.CORRECT_STANDARD,
    Stage.CORRECT_OUTLIER,
    Stage.NO_FALLBACK,
)
STAGE_TITLES = {
    Stage.COMPILE: "compiles",
    Stage.CALL: "runs (call)",
    Stage.CORRECT_STANDARD: "correct (standard inputs)",
    Stage.CORRECT_OUTLIER: "correct (outlier inputs)",
    Stage.NO_FALLBACK: "no PyTorch fallback",
}
FAST_P_GRID: tuple[float, ...] = tuple(round(0.05 * i, 2) for i in range(61))  # 0.00 .. 3.00

Measured = float | str  # a number, or NOT_MEASURED / a reason that starts with it


def _nm(reason: str) -> str:
    return f"{NOT_MEASURED} ({reason})"


def is_measured(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def on_gpu(row: ResultRow) -> bool:
    return row.device != CPU_DEVICE_NAME and not row.device.startswith("cpu")


def speedup(row: ResultRow, baseline: str) -> float | None:
    value = row.geomean_speedup_eager if baseline == "eager" else row.geomean_speedup_compile
    return value if value is not None and value > 0 else None


def _stage_index(row: ResultRow) -> int:
    return STAGE_ORDER.index(Stage(row.stage_reached)) if row.stage_reached else -1


def labels(rows: Iterable[ResultRow]) -> list[str]:
    """Method labels in a stable order: real methods first, scripted after, each alphabetical."""
    seen = {(r.scripted, r.label()) for r in rows}
    return [label for _, label in sorted(seen)]


def _by(rows: Iterable[ResultRow], key: Callable[[ResultRow], Any]) -> dict[Any, list[ResultRow]]:
    out: dict[Any, list[ResultRow]] = defaultdict(list)
    for r in rows:
        out[key(r)].append(r)
    return out


def run_key(row: ResultRow) -> tuple[str, str, int, str, str]:
    """Which run an attempt belongs to: task, method label, seed, device, run id."""
    return (row.task_id, row.label(), row.seed, row.device, row.run_id)


def final_rows(rows: Iterable[ResultRow]) -> list[ResultRow]:
    """The outcome of each run (task, method, seed, device, run id): its best attempt. Two runs
    of the same task, method and seed (run twice) are two outcomes; a run with no judged kernel
    is its "no_kernel" row."""

    def rank(r: ResultRow) -> tuple:
        s = speedup(r, "eager")
        return (r.passed, s if s is not None else -1.0, _stage_index(r), r.judged, -r.attempt)

    groups = _by(rows, lambda r: (r.task_id, r.label(), r.seed, r.device, r.run_id))
    return [max(group, key=rank) for _, group in sorted(groups.items())]


# --------------------------------------------------------------------------------------------
# Stage pass rates
# --------------------------------------------------------------------------------------------


@dataclass
class Rate:
    hits: int
    total: int

    @property
    def rate(self) -> float:
        return self.hits / self.total if self.total else 0.0


CANNOT_PASS_FLAG = "task_cannot_pass"  # the judge's flag on a task no kernel can pass


def stage_pass_rates(
    rows: Iterable[ResultRow], include_flagged: bool = False
) -> dict[str, dict[Stage, Rate]]:
    """Per method: the share of run outcomes that passed each stage (compile, call, correct on
    standard inputs, correct on outliers, no fallback). Rows of tasks no kernel can pass (the
    judge flags them, `Task.cannot_pass`) are left out unless `include_flagged`."""
    if not include_flagged:
        rows = [r for r in rows if CANNOT_PASS_FLAG not in r.flags]
    finals = final_rows(rows)
    out: dict[str, dict[Stage, Rate]] = {}
    for label in labels(finals):
        mine = [r for r in finals if r.label() == label]
        out[label] = {
            stage: Rate(sum(r.reached(stage) for r in mine), len(mine)) for stage in PASS_STAGES
        }
    return out


# --------------------------------------------------------------------------------------------
# Speed: fast_p, geomean speedups, S_agg
# --------------------------------------------------------------------------------------------


def _speed_unmeasured(rows: list[ResultRow], baseline: str) -> str | None:
    """Why speed figures cannot be given for these run outcomes, or None when they can."""
    if not rows:
        return _nm("no rows")
    # a run that judged nothing is a failure wherever it ran, not a CPU measurement
    cpu = [r for r in rows if not on_gpu(r) and r.judged]
    if cpu:
        return _nm(f"{len(cpu)} of {len(rows)} judged on the CPU interpreter, which times nothing")
    untimed = [r for r in rows if r.passed and speedup(r, baseline) is None]
    if untimed:
        return _nm(f"{len(untimed)} correct kernel(s) have no {baseline} timing")
    return None


@dataclass
class FastPCurve:
    baseline: str
    ps: tuple[float, ...]
    values: list[float] | None  # None when not measured
    reason: str = ""
    tasks: int = 0

    @property
    def measured(self) -> bool:
        return self.values is not None


def fast_p_curves(
    rows: Iterable[ResultRow], baseline: str = "eager", ps: tuple[float, ...] = FAST_P_GRID
) -> dict[str, FastPCurve]:
    """Per method: fast_p (share of outcomes correct AND faster than the baseline by more than p)
    for p in `ps`, over every run outcome of the method (failures count in the denominator)."""
    finals = final_rows(rows)
    out = {}
    for label in labels(finals):
        mine = [r for r in finals if r.label() == label]
        why = _speed_unmeasured(mine, baseline)
        if why:
            out[label] = FastPCurve(baseline, ps, None, why, len(mine))
            continue
        speeds = [speedup(r, baseline) for r in mine]
        correct = [r.passed for r in mine]
        out[label] = FastPCurve(
            baseline, ps, [roofline.fast_p(speeds, correct, p) for p in ps], "", len(mine)
        )
    return out


@dataclass
class GeomeanSpeedup:
    eager: Measured
    compile: Measured
    correct: int  # correct run outcomes (the geomean is over these)
    total: int


def geomean_speedups(rows: Iterable[ResultRow]) -> dict[str, GeomeanSpeedup]:
    """Per method: geometric mean speedup over PyTorch eager and over torch.compile, over the
    correct run outcomes (KernelBench's convention; the pass rate says how many those are)."""
    finals = final_rows(rows)
    out = {}
    for label in labels(finals):
        mine = [r for r in finals if r.label() == label]
        correct = [r for r in mine if r.passed]
        values: dict[str, Measured] = {}
        for baseline in ("eager", "compile"):
            why = _speed_unmeasured(mine, baseline)
            if why:
                values[baseline] = why
            elif not correct:
                values[baseline] = _nm("no correct kernel")
            else:
                values[baseline] = roofline.geomean([speedup(r, baseline) for r in correct])
        out[label] = GeomeanSpeedup(values["eager"], values["compile"], len(correct), len(mine))
    return out


@dataclass
class SAgg:
    value: Measured
    covered: list[str]  # serving tasks present in the rows
    missing: list[str]  # serving tasks with no row for this method
    task_scores: dict[str, float] = field(default_factory=dict)
    weights: dict[str, float] = field(default_factory=dict)


def serving_weights() -> dict[str, float]:
    """Serving importance weight per task id of the serving suite (benchmarks/weights.py)."""
    from benchmarks.results.rows import all_tasks
    from benchmarks.suites import suite_tasks
    from benchmarks.weights import task_weights

    return task_weights(suite_tasks("serving", all_tasks()))


def s_agg(rows: Iterable[ResultRow], weights: dict[str, float] | None = None) -> dict[str, SAgg]:
    """Per method: S_agg = sum_i w_i S_i / sum_i w_i over the serving-suite tasks present in the
    rows (S_i: the task's attainment score, best over seeds; 0 when no correct kernel). The weights
    are the serving weights (`benchmarks.weights`), renormalised over the tasks covered; the
    report states the coverage beside the number."""
    weights = weights if weights is not None else serving_weights()
    finals = final_rows(rows)
    out = {}
    for label in labels(finals):
        mine = [r for r in finals if r.label() == label and r.task_id in weights]
        covered = sorted({r.task_id for r in mine})
        missing = sorted(set(weights) - set(covered))
        if not mine:
            out[label] = SAgg(_nm("no serving-suite task in these rows"), covered, missing)
            continue
        why = _speed_unmeasured(mine, "eager")
        untimed = [r for r in mine if r.passed and r.score is None]
        if why is None and untimed:
            why = _nm(f"{len(untimed)} correct kernel(s) have no roofline attainment")
        if why:
            out[label] = SAgg(why, covered, missing)
            continue
        scores: dict[str, float] = {}
        for r in mine:
            s = r.score if r.passed and r.score is not None else 0.0
            scores[r.task_id] = max(scores.get(r.task_id, 0.0), s)
        w = {t: weights[t] for t in covered}
        out[label] = SAgg(roofline.suite_score(scores, w), covered, missing, scores, w)
    return out


# --------------------------------------------------------------------------------------------
# Category x method, variance shares
# --------------------------------------------------------------------------------------------


@dataclass
class Cell:
    solved: int
    total: int
    geomean_eager: Measured

    @property
    def rate(self) -> float:
        return self.solved / self.total if self.total else 0.0


def category_method_table(rows: Iterable[ResultRow]) -> dict[tuple[str, str], Cell]:
    """(category, method) -> correct outcomes / outcomes and the geomean speedup over eager."""
    finals = final_rows(rows)
    out = {}
    for (category, label), mine in sorted(_by(finals, lambda r: (r.category, r.label())).items()):
        correct = [r for r in mine if r.passed]
        why = _speed_unmeasured(mine, "eager")
        if why:
            g: Measured = why
        elif not correct:
            g = _nm("no correct kernel")
        else:
            g = roofline.geomean([speedup(r, "eager") for r in correct])
        out[(category, label)] = Cell(len(correct), len(mine), g)
    return out


@dataclass
class TaskEntry:
    """One method on one task and device, over its run outcomes there."""

    task_id: str
    category: str
    device: str
    method: str
    correct: int
    total: int
    speedup_eager: Measured  # best correct speedup over eager
    speedup_compile: Measured  # best correct speedup over torch.compile
    score: Measured  # S: best attainment score over the outcomes (0 when none is correct)
    best: bool = False  # the highest S on this task and device (eager and torch.compile included)


def per_task(rows: Iterable[ResultRow]) -> list[TaskEntry]:
    """Per (task, device, method): correct outcomes, the best correct speedups over eager and
    torch.compile, and S (the best roofline attainment score, 0 when no outcome is correct); the
    method with the highest measured S on the task and device is marked best."""
    out: list[TaskEntry] = []
    by_task = _by(final_rows(rows), lambda r: (r.task_id, r.device))
    for (task_id, device), task_rows in sorted(by_task.items()):
        entries = []
        for label in labels(task_rows):
            mine = [r for r in task_rows if r.label() == label]
            correct = [r for r in mine if r.passed]
            best: dict[str, Measured] = {}
            for baseline in ("eager", "compile"):
                why = _speed_unmeasured(mine, baseline)
                if why is None and not correct:
                    why = _nm("no correct kernel")
                best[baseline] = why or max(speedup(r, baseline) for r in correct)  # type: ignore[type-var]
            why = _speed_unmeasured(mine, "eager")
            if why is None and any(r.score is None for r in correct):
                why = _nm("a correct kernel has no roofline attainment")
            score: Measured = why or max(
                [r.score for r in correct if r.score is not None], default=0.0
            )
            entries.append(
                TaskEntry(
                    task_id,
                    mine[0].category,
                    device,
                    label,
                    len(correct),
                    len(mine),
                    best["eager"],
                    best["compile"],
                    score,
                )
            )
        scored = [e for e in entries if is_measured(e.score)]
        if scored:
            top = max(float(e.score) for e in scored)
            for e in scored:
                e.best = e.score == top and top > 0
        out.extend(entries)
    return out


@dataclass
class VarianceShare:
    category: float | None  # eta^2 of category (None: undefined)
    method: float | None
    cells: float | None  # eta^2 of the category x method cells (both factors and their interaction)
    interaction: float | None  # cells - category - method, for a balanced design only
    residual: float | None  # 1 - cells: tasks within a category, seeds
    n: int
    balanced: bool
    note: str = ""


def _eta_squared(ys: list[float], groups: list[Any]) -> float:
    mean = sum(ys) / len(ys)
    ss_total = sum((y - mean) ** 2 for y in ys)
    by: dict[Any, list[float]] = defaultdict(list)
    for y, g in zip(ys, groups, strict=True):
        by[g].append(y)
    ss_between = sum(len(v) * (sum(v) / len(v) - mean) ** 2 for v in by.values())
    return ss_between / ss_total


def variance_share(rows: Iterable[ResultRow]) -> VarianceShare:
    """How much of the variance of correctness (1 = correct outcome, 0 = not) is explained by
    the task's category and how much by the method: eta^2 = SS_between / SS_total of each
    factor, from a two-way (category x method) decomposition of the pass indicator over run
    outcomes. In a balanced design SS_cells = SS_category + SS_method + SS_interaction."""
    finals = final_rows(rows)
    n = len(finals)
    if n < 2:
        return VarianceShare(None, None, None, None, None, n, False, "fewer than two run outcomes")
    ys = [1.0 if r.passed else 0.0 for r in finals]
    if len(set(ys)) == 1:
        return VarianceShare(
            None,
            None,
            None,
            None,
            None,
            n,
            False,
            "undefined: every outcome is the same (all correct or all incorrect)",
        )
    cats = [r.category for r in finals]
    meths = [r.label() for r in finals]
    cells = list(zip(cats, meths, strict=True))
    counts = _by(finals, lambda r: (r.category, r.label()))
    balanced = (
        len(counts) == len(set(cats)) * len(set(meths))
        and len({len(v) for v in counts.values()}) == 1
    )
    eta_c, eta_m, eta_cells = (
        _eta_squared(ys, cats),
        _eta_squared(ys, meths),
        _eta_squared(ys, cells),
    )
    inter = eta_cells - eta_c - eta_m if balanced else None
    note = (
        ""
        if balanced
        else "unbalanced design (cells differ in size): shares of category and method overlap; no interaction term"
    )
    return VarianceShare(eta_c, eta_m, eta_cells, inter, 1.0 - eta_cells, n, balanced, note)


# --------------------------------------------------------------------------------------------
# Iteration curves, repair bias
# --------------------------------------------------------------------------------------------


def iteration_of(row: ResultRow) -> int:
    return row.iteration if row.iteration is not None else row.attempt + 1


BEST_SO_FAR_FLOOR = 1.0  # a run's best speedup before it has a correct kernel faster than eager


@dataclass
class IterationPoint:
    iteration: int
    attempts: int  # kernels judged in this round ("no_kernel" rows are runs, not attempts)
    compile_rate: float
    correct_rate: float
    solved_share: float  # runs with a correct kernel by this iteration, over all runs
    best_speedup: Measured  # geomean over all runs of max(floor, best correct speedup so far)


def iteration_curves(rows: Iterable[ResultRow]) -> dict[str, list[IterationPoint]]:
    """Per method and evaluator round: share of that round's attempts that compile and that are
    correct; share of the method's runs solved so far; and the best speedup so far, defined on
    the fixed set of all the method's runs so that it never falls: each run contributes the best
    of eager (`BEST_SO_FAR_FLOOR`, 1.0: what a user keeps while no correct kernel beats it) and
    every correct kernel timed up to this round, and the point is the geomean over runs. A run
    with nothing correct yet counts at the floor; a run that stops early keeps its best."""
    rows = list(rows)
    out = {}
    for label in labels(rows):
        mine = [r for r in rows if r.label() == label]
        runs = _by(mine, run_key)
        judged = [r for r in mine if r.judged]
        last = max((iteration_of(r) for r in judged), default=1)
        untimed: str | None = None
        if not judged:
            untimed = _nm("nothing judged")
        elif not all(on_gpu(r) for r in judged):
            untimed = _nm("judged on the CPU interpreter")
        points = []
        for it in range(1, last + 1):
            now = [r for r in judged if iteration_of(r) == it]
            solved = 0
            bests: list[float] = []
            why = untimed
            for group in runs.values():
                so_far = [r for r in group if r.judged and iteration_of(r) <= it and r.passed]
                solved += bool(so_far)
                timed = [s for r in so_far if (s := speedup(r, "eager")) is not None]
                if len(timed) < len(so_far):
                    why = why or _nm("a correct kernel has no timing")
                bests.append(max([BEST_SO_FAR_FLOOR, *timed]))
            best: Measured = why if why else roofline.geomean(bests)
            points.append(
                IterationPoint(
                    iteration=it,
                    attempts=len(now),
                    compile_rate=sum(r.reached(Stage.COMPILE) for r in now) / len(now)
                    if now
                    else 0.0,
                    correct_rate=sum(r.passed for r in now) / len(now) if now else 0.0,
                    solved_share=solved / len(runs),
                    best_speedup=best,
                )
            )
        out[label] = points
    return out


@dataclass
class RepairBias:
    rescued: int  # correct attempts with a failed ancestor
    first_try: int  # correct attempts with no parent (the first kernel of its line)
    descended: int  # correct attempts revising a correct parent, no failure above (not compared)
    rescued_speedup: Measured
    first_try_speedup: Measured
    ratio: Measured  # rescued / first try


def _ancestors_failed(row: ResultRow, by_attempt: dict[int, ResultRow]) -> bool:
    seen: set[int] = set()
    parent = row.parent_attempt
    while parent is not None and parent in by_attempt and parent not in seen:
        seen.add(parent)
        if not by_attempt[parent].passed:
            return True
        parent = by_attempt[parent].parent_attempt
    return False


def repair_bias(rows: Iterable[ResultRow]) -> dict[str, RepairBias]:
    """Per method: are kernels rescued by repair (correct, with a failed ancestor) slower than
    kernels correct at the first try (correct, no parent)? Geomean speedups over eager of each
    group and their ratio (below 1: repaired kernels are slower)."""
    rows = list(rows)
    out = {}
    for label in labels(rows):
        rescued: list[ResultRow] = []
        first: list[ResultRow] = []
        descended = 0
        for group in _by([r for r in rows if r.label() == label], run_key).values():
            by_attempt = {r.attempt: r for r in group}
            for r in group:
                if not r.passed:
                    continue
                if _ancestors_failed(r, by_attempt):
                    rescued.append(r)
                elif r.parent_attempt is None:
                    first.append(r)
                else:
                    descended += 1

        def geo(group: list[ResultRow]) -> Measured:
            if not group:
                return _nm("no such kernel")
            if any(not on_gpu(r) for r in group):
                return _nm("judged on the CPU interpreter")
            timed = [s for r in group if (s := speedup(r, "eager")) is not None]
            return (
                roofline.geomean(timed)
                if len(timed) == len(group)
                else _nm("some kernels have no timing")
            )

        g_rescued, g_first = geo(rescued), geo(first)
        ratio: Measured = (
            g_rescued / g_first
            if is_measured(g_rescued) and is_measured(g_first)
            else _nm("needs both groups timed")
        )
        out[label] = RepairBias(len(rescued), len(first), descended, g_rescued, g_first, ratio)
    return out


# --------------------------------------------------------------------------------------------
# Portability, hardware features
# --------------------------------------------------------------------------------------------


@dataclass
class Portability:
    task_id: str
    method: str
    speedups: dict[str, float]  # device -> best correct speedup over eager
    ratio: float  # max / min across devices


@dataclass
class PortabilitySummary:
    devices: list[str]
    entries: list[Portability]
    by_method: dict[str, Measured]  # geomean of max/min ratios
    reason: str = ""


def portability(rows: Iterable[ResultRow]) -> PortabilitySummary:
    """For each (task, method) correct and timed on two or more GPUs: the best speedup over eager
    on each device and max/min across devices (1.0 = equally good everywhere)."""
    finals = [r for r in final_rows(rows) if on_gpu(r)]
    devices = sorted({r.device for r in finals})
    if len(devices) < 2:
        why = _nm(f"needs rows from at least two GPUs; these have {len(devices)}")
        return PortabilitySummary(devices, [], {}, why)
    entries = []
    for (task_id, label), group in sorted(_by(finals, lambda r: (r.task_id, r.label())).items()):
        best: dict[str, float] = {}
        for r in group:
            s = speedup(r, "eager")
            if r.passed and s is not None:
                best[r.device] = max(best.get(r.device, 0.0), s)
        if len(best) >= 2:
            entries.append(
                Portability(task_id, label, best, max(best.values()) / min(best.values()))
            )
    by_method: dict[str, Measured] = {}
    for label in labels(finals):
        ratios = [e.ratio for e in entries if e.method == label]
        by_method[label] = (
            roofline.geomean(ratios) if ratios else _nm("no task correct and timed on two GPUs")
        )
    return PortabilitySummary(devices, entries, by_method)


@dataclass
class FeatureAdoption:
    kernels: int  # correct run outcomes with PTX
    without_ptx: int  # correct run outcomes without PTX
    shares: dict[str, Measured]


def feature_adoption(rows: Iterable[ResultRow]) -> dict[str, FeatureAdoption]:
    """Per method: the share of correct kernels whose compiled PTX uses each feature (wgmma, TMA,
    bulk copies, mma.sync, cp.async, 128-bit vector loads); "not measured" without PTX."""
    finals = final_rows(rows)
    out = {}
    for label in labels(finals):
        correct = [r for r in finals if r.label() == label and r.passed]
        with_ptx = [r for r in correct if r.ptx_features is not None]
        shares: dict[str, Measured] = {}
        for name in FEATURES:
            if not with_ptx:
                shares[name] = _nm("no PTX for these kernels" if correct else "no correct kernel")
            else:
                shares[name] = sum(bool(r.ptx_features.get(name)) for r in with_ptx) / len(with_ptx)  # type: ignore[union-attr]
        out[label] = FeatureAdoption(len(with_ptx), len(correct) - len(with_ptx), shares)
    return out


# --------------------------------------------------------------------------------------------
# Everything at once
# --------------------------------------------------------------------------------------------


@dataclass
class Analysis:
    rows: list[ResultRow]
    finals: list[ResultRow]
    methods: list[str]
    # eager and torch.compile as methods (benchmarks.results.baselines), in the speed figures only
    baselines: list[ResultRow]
    speed_methods: list[str]
    stage_rates: dict[str, dict[Stage, Rate]]
    fast_p_eager: dict[str, FastPCurve]
    fast_p_compile: dict[str, FastPCurve]
    speedups: dict[str, GeomeanSpeedup]
    s_agg: dict[str, SAgg]
    table: dict[tuple[str, str], Cell]
    variance: VarianceShare
    iterations: dict[str, list[IterationPoint]]
    repair: dict[str, RepairBias]
    portability: PortabilitySummary
    features: dict[str, FeatureAdoption]
    tasks: list[TaskEntry]
    shapes: list[ShapeLine]
    throughput: dict[str, Throughput]


def analyze(rows: Iterable[ResultRow], weights: dict[str, float] | None = None) -> Analysis:
    """Every analysis of `rows` (one list of rows: any mix of kernforge's runs, benches and
    imports), plus the eager and torch.compile rows derived from them."""
    from benchmarks.results.baselines import baseline_rows

    rows = list(rows)
    if not rows:
        raise ValueError("no result rows to analyse")
    base = baseline_rows(rows)
    timed = rows + base
    return Analysis(
        rows=rows,
        finals=final_rows(rows),
        methods=labels(rows),
        baselines=base,
        speed_methods=labels(rows) + labels(base),
        stage_rates=stage_pass_rates(rows),
        fast_p_eager=fast_p_curves(timed, "eager"),
        fast_p_compile=fast_p_curves(timed, "compile"),
        speedups=geomean_speedups(timed),
        s_agg=s_agg(timed, weights),
        table=category_method_table(rows),
        variance=variance_share(rows),
        iterations=iteration_curves(rows),
        repair=repair_bias(rows),
        portability=portability(rows),
        features=feature_adoption(rows),
        tasks=per_task(timed),
        shapes=shape_lines(rows, base),
        throughput=throughput(rows),
    )
