"""The bench's plan: which tasks, methods and seeds, under which model, budget and settings.

`make_plan` checks what the CLI (or the worked example) asked for and returns a `BenchPlan`;
`plan_bench` is the same with the CLI's defaults and `--resume` (what is not given is taken from
the folder's bench.json); `merge_with_stored` checks a plan against the one already saved in the
bench folder (bench.json),
so one folder never mixes rows of different models, budgets, settings or devices. The folder's
layout (PLAN_FILE, EVENTS_FILE, RUNS) is named here too.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from agents.core.presets import NEEDS_MODEL, PRESETS
from agents.core.settings import BY_KEY, SettingsError, convert, parse_budget

PLAN_FILE = "bench.json"
EVENTS_FILE = "events.jsonl"
RUNS = "runs"
DEFAULT_MODEL_METHODS = ("aka", "geak", "kernelagent", "single-shot")
# settings the bench sets itself for each run, so --set may not
BENCH_KEYS = ("llm", "method", "seed", "runs_dir", "device", "benchmark")
# what every row of one bench folder must share for the comparison to be fair
FAIRNESS = ("llm", "budget", "settings", "device", "benchmark")


class BenchError(ValueError):
    """A bench that cannot start as asked (unknown method or task, a conflicting folder, ...)."""


@dataclass(frozen=True)
class Cell:
    """One agent run of the bench."""

    task: str
    method: str
    seed: int

    @property
    def run_id(self) -> str:
        return f"{self.task}.{self.method}.s{self.seed}"


@dataclass
class BenchPlan:
    """What a bench runs and under which terms; saved as the folder's bench.json."""

    out: Path
    suite: str | None  # None when the tasks were listed by id
    tasks: list[str]
    methods: list[str]
    seeds: list[int]
    llm: str
    budget: dict[str, Any] = field(default_factory=dict)  # dotted budget keys -> typed value
    settings: dict[str, Any] = field(default_factory=dict)  # --set KEY=VALUE, typed
    device: str = "auto"
    benchmark: bool = True
    # a folder suite's tasks: task id -> its file (runs are started on the file); empty otherwise
    task_files: dict[str, str] = field(default_factory=dict)
    # what a folder suite holds but the bench does not run: task id or file -> why
    excluded: dict[str, str] = field(default_factory=dict)

    def task_ref(self, task_id: str) -> str:
        """What a run of `task_id` is started on: its file for a folder suite, else the id."""
        return self.task_files.get(task_id, task_id)

    def cells(self) -> list[Cell]:
        """Task by task, then seed, then method: a partial bench compares methods early."""
        return [Cell(t, m, s) for t in self.tasks for s in self.seeds for m in self.methods]

    def llm_for(self, method: str) -> str:
        """The model a method's runs get: the bench's, or none for a method that needs none."""
        return "offline" if method not in NEEDS_MODEL else self.llm

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["out"] = str(self.out)
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> BenchPlan:
        known = set(cls.__dataclass_fields__)
        values = {k: v for k, v in data.items() if k in known}
        values["out"] = Path(values["out"])
        return cls(**values)


def _split(text: str | list[str] | None) -> list[str]:
    if text is None:
        return []
    items = text if isinstance(text, list) else text.split(",")
    return [i.strip() for i in items if i.strip()]


def _absolute_replay(spec: str) -> str:
    kind, sep, rest = spec.partition(":")
    if kind == "replay" and sep:
        return f"replay:{Path(rest).expanduser().resolve()}"
    return spec


def _check_llm(spec: str) -> None:
    from agents.core.llm.base import LLMError
    from agents.core.llm.factory import make_provider

    try:
        make_provider(spec)
    except (ValueError, LLMError) as exc:
        raise BenchError(f"--llm {spec}: {exc}") from None


def _typed_settings(items: Mapping[str, Any]) -> dict[str, Any]:
    out = {}
    for key, value in items.items():
        if key not in BY_KEY:
            raise BenchError(f"--set {key}: unknown setting; known: {', '.join(BY_KEY)}")
        if key in BENCH_KEYS:
            raise BenchError(
                f"--set {key}: the bench sets {key} for each run itself "
                "(use --llm, --methods, --seeds, --device, --benchmark/--no-benchmark)"
            )
        if key.startswith("budget."):
            raise BenchError(f"--set {key}: give budgets with --budget, e.g. --budget iterations=8")
        try:
            out[key] = convert(BY_KEY[key], value, f"--set {key}")
        except SettingsError as exc:
            raise BenchError(str(exc)) from None
    return out


def make_plan(
    out: str | Path,
    *,
    suite: str | None = "lite",
    tasks: str | list[str] | None = None,
    methods: str | list[str] | None = None,
    seeds: int = 1,
    llm: str | None = None,
    budget: str | Mapping[str, Any] | None = None,
    settings: Mapping[str, Any] | None = None,
    device: str = "auto",
    benchmark: bool = True,
) -> BenchPlan:
    """A checked plan. `tasks` (ids) replaces the suite's tasks; `methods` defaults to the
    model-driven presets, or to `offline` when there is no model."""
    from benchmarks import is_folder_suite, suite_tasks

    folder = _folder_suite(suite) if suite and is_folder_suite(suite) else None
    from agents.core.llm.factory import default_spec
    from benchmarks import all_tasks, unknown_name

    spec = _absolute_replay((llm or default_spec()).strip())
    _check_llm(spec)
    names = _split(methods) or (["offline"] if spec == "offline" else list(DEFAULT_MODEL_METHODS))
    unknown = [m for m in names if m not in PRESETS]
    if unknown:
        raise BenchError("; ".join(unknown_name("method", m, PRESETS) for m in unknown))
    known = folder[0] if folder else all_tasks()
    ids = _split(tasks)
    if folder and not ids:
        ids = list(known)
        if not ids:
            raise BenchError(f"suite {suite}: no task of the folder can be benched ({folder[2]})")
    elif ids:
        missing = [t for t in ids if t not in known]
        if missing:
            raise BenchError(
                "; ".join(
                    unknown_name("task", t, known, "`kernforge tasks list` shows them")
                    for t in missing
                )
            )
        suite = suite if folder else None
    else:
        try:
            ids = [t.id for t in suite_tasks(suite or "lite", known)]
        except KeyError as exc:
            raise BenchError(str(exc.args[0])) from None
        if not ids:
            raise BenchError(f"suite {suite} has no tasks in this checkout")
    if seeds < 1:
        raise BenchError(f"--seeds must be >= 1, got {seeds}")
    if device not in BY_KEY["device"].choices:
        raise BenchError(
            f"--device {device}: expected one of {', '.join(BY_KEY['device'].choices)}"
        )
    try:
        parsed = parse_budget(budget) if isinstance(budget, str) else dict(budget or {})
    except SettingsError as exc:
        raise BenchError(str(exc)) from None
    typed_budget: dict[str, Any] = {}
    for key, value in parsed.items():
        key = key if key.startswith("budget.") else f"budget.{key}"
        if key not in BY_KEY:
            raise BenchError(f"--budget: unknown budget {key!r}")
        try:
            typed_budget[key] = convert(BY_KEY[key], value, "--budget")
        except SettingsError as exc:
            raise BenchError(str(exc)) from None
    return BenchPlan(
        out=Path(out),
        suite=suite,
        tasks=ids,
        methods=list(dict.fromkeys(names)),
        seeds=list(range(seeds)),
        llm=spec,
        budget=typed_budget,
        settings=_typed_settings(settings or {}),
        device=device,
        benchmark=benchmark,
        task_files={t: str(known[t].path) for t in ids} if folder else {},
        excluded=folder[1] if folder else {},
    )


def _folder_suite(suite: str) -> tuple[dict[str, Any], dict[str, str], str]:
    """A folder suite's tasks that can be benched (id -> task), what is left out and why (files
    that do not load, tasks no kernel can pass), and that as one line."""
    from benchmarks import TaskError, load_folder

    try:
        loaded = load_folder(suite)
    except TaskError as exc:
        raise BenchError(str(exc)) from None
    excluded = {str(n.path): f"not loaded: {n.reason}" for n in loaded.not_loaded}
    tasks = {}
    for task in loaded.tasks:
        if task.cannot_pass():
            excluded[task.id] = f"no kernel can pass it: {'; '.join(task.cannot_pass())}"
        else:
            tasks[task.id] = task
    return tasks, excluded, "; ".join(f"{k}: {v}" for k, v in excluded.items()) or "none loads"


def stored_plan(out: str | Path) -> BenchPlan | None:
    """The plan saved in `out`/bench.json, or None where there is none; a BenchError of one
    line naming the file when it is damaged."""
    from benchmarks import RunFileError, read_json

    path = Path(out) / PLAN_FILE
    if not path.is_file():
        return None
    redo = (
        f"move it aside and run the bench's command again with its flags (the runs in "
        f"{Path(out) / RUNS} are kept and taken up again)"
    )
    try:
        return BenchPlan.from_json(read_json(path))
    except RunFileError as exc:
        raise BenchError(f"{exc}: {redo}") from None
    except (ValueError, TypeError, KeyError) as exc:
        raise BenchError(f"{path}: not a bench plan ({exc}): {redo}") from None


def plan_bench(
    out: str | Path | None = None,
    *,
    suite: str | None = None,
    tasks: str | list[str] | None = None,
    methods: str | list[str] | None = None,
    seeds: int | None = None,
    llm: str | None = None,
    budget: str | Mapping[str, Any] | None = None,
    settings: Mapping[str, Any] | None = None,
    device: str | None = None,
    benchmark: bool | None = None,
    resume: bool = False,
) -> BenchPlan:
    """The plan of a `kernforge bench` call. None means "not given": with `resume`, it is taken
    from the bench.json in `out` (what is given overrides it; `merge_with_stored` checks the
    result when the bench runs); otherwise the default: suite lite, one seed, device auto,
    hidden provenance, `out` runs/bench-<suite>. A `resume` without a bench.json in `out` is a
    BenchError."""
    folder = Path(out) if out is not None else Path("runs") / f"bench-{suite or 'lite'}"
    stored = stored_plan(folder) if resume else None
    if resume and stored is None:
        raise BenchError(
            f"--resume: {folder} holds no bench.json; give the --out of the bench to continue"
        )
    if stored is not None:
        if suite is None and tasks is None:
            tasks = list(stored.tasks)
        methods = methods or list(stored.methods)
        llm = llm or stored.llm
        seeds = seeds if seeds is not None else len(stored.seeds)
        if budget is None:
            budget = dict(stored.budget)
        settings = settings or dict(stored.settings)
        device = device or stored.device
        benchmark = stored.benchmark if benchmark is None else benchmark
    return make_plan(
        folder,
        suite=suite or "lite",
        tasks=tasks,
        methods=methods,
        seeds=seeds if seeds is not None else 1,
        llm=llm,
        budget=budget,
        settings=settings,
        device=device or "auto",
        benchmark=True if benchmark is None else benchmark,
    )


def _fair_value(plan: BenchPlan, key: str) -> Any:
    """What `key` must agree on between a stored plan and a new one. A replay script inside the
    bench folder or beside it (the worked example keeps it next to `bench/`) counts by its place
    relative to the folder, so a folder renamed, or moved to another checkout, still resumes;
    anywhere else it counts by its own path."""
    value = getattr(plan, key)
    kind, sep, rest = str(value).partition(":") if key == "llm" else ("", "", "")
    if kind != "replay" or not sep:
        return value
    folder = Path(plan.out)
    for base, mark in ((folder, "<bench>/"), (folder.parent, "<bench>/../")):
        edge = "/" + str(base).strip("/") + "/"
        at = rest.rfind(edge)
        if str(base) not in ("", ".") and at >= 0:
            return f"replay:{mark}{rest[at + len(edge) :]}"
    return value


def merge_with_stored(plan: BenchPlan) -> BenchPlan:
    """Check `plan` against the bench already in its folder and return what bench.json should
    hold: the union of tasks, methods and seeds. A different model, budget, settings or device
    would mix incomparable rows in one folder: that is an error."""
    stored = stored_plan(plan.out)
    if stored is None:
        return plan
    differ = [k for k in FAIRNESS if _fair_value(stored, k) != _fair_value(plan, k)]
    if differ:
        lines = "; ".join(
            f"{k}: {getattr(stored, k)!r} there, {getattr(plan, k)!r} now" for k in differ
        )
        raise BenchError(
            f"{plan.out} holds a bench run with other settings ({lines}). Rows of different "
            "models or budgets must not be mixed: use another --out, or the same settings"
        )
    return BenchPlan(
        out=plan.out,
        suite=plan.suite if plan.suite == stored.suite else None,
        tasks=list(dict.fromkeys([*stored.tasks, *plan.tasks])),
        methods=list(dict.fromkeys([*stored.methods, *plan.methods])),
        seeds=sorted({*stored.seeds, *plan.seeds}),
        llm=plan.llm,
        budget=plan.budget,
        settings=plan.settings,
        device=plan.device,
        benchmark=plan.benchmark,
        task_files={**stored.task_files, **plan.task_files},
        excluded=plan.excluded,
    )


def skipped_methods(plan: BenchPlan) -> dict[str, str]:
    """Methods that need a model when the bench has none: method -> why it is skipped."""
    if plan.llm != "offline":
        return {}
    return {
        m: f"method {m} needs a model and --llm is offline: skipped "
        "(the offline policy is its own method: --methods offline)"
        for m in plan.methods
        if m in NEEDS_MODEL
    }
