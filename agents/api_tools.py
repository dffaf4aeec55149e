"""The Python API beyond a run: the work behind `kernforge tasks`, `kb`, `bench`, `import`,
`report` and `pairs export`, as functions that return records instead of printing.

    import agents
    lite = agents.tasks("lite").tasks                     # benchmarks.Task records
    hits = agents.kb_search("online softmax", k=3)        # knowledge_base Hit records
    result = agents.bench_methods(tasks="softmax_fp32", methods="offline", out="runs/b")
    report = agents.report(["runs/b"])                    # report.files.html, .markdown, plots
    pairs = agents.export_pairs(["runs/b/runs"], out="pairs.jsonl")
    imported = agents.import_kernels("geak_out.jsonl", out="runs/geak", device="cpu")

Each calls the same function its CLI command calls (agents/cli/*, knowledge_base/cli.py), so
the two cannot drift (`bench_methods` is `kernforge bench`: `agents.bench` names the bench's
package). The runs themselves (evaluate, run, resume) are in agents/api.py; this
module cannot sit there, since the bench runs through that one. Bad input raises `InputError`,
a knowledge base that fails `KnowledgeBaseError`; errors that already say what and where keep
their own type (`benchmarks.TaskError`, `benchmarks.RunFileError`, `agents.bench.BenchError`,
`agents.core.settings.SettingsError`). Every message is one line.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agents.core.crashlog import one_line
from benchmarks import JudgeConfig, RunFileError

if TYPE_CHECKING:
    from rich.console import Console

    from agents.bench import BenchPlan, BenchResult, Cell, CellOutcome
    from agents.core.seams import Seams
    from benchmarks import ResultStore, Task
    from benchmarks.loading import NotLoaded
    from benchmarks.results.importers import ImportReport
    from benchmarks.results.pairs_export import ExportResult
    from benchmarks.results.report import ReportFiles
    from benchmarks.results.rows import ResultRow
    from knowledge_base.hits import Hit
    from knowledge_base.retrieve import KnowledgeBase
    from knowledge_base.store import BuildReport


class InputError(ValueError):
    """An API call's input is wrong (a path that does not exist, an unknown format, suite or
    task): what and where, in one line. `skipped` names what was passed over on the way, each
    with its reason (a report's damaged sources, when none is left to report)."""

    def __init__(self, message: str, skipped: list[str] | None = None) -> None:
        super().__init__(message)
        self.skipped = list(skipped or [])


class KnowledgeBaseError(RuntimeError):
    """The knowledge base could not be opened, built or searched: where and why, in one line."""


def _line(exc: BaseException) -> str:
    """An exception's message as one line (a KeyError's without its quotes)."""
    if isinstance(exc, KeyError) and exc.args:
        return " ".join(str(exc.args[0]).split())
    return " ".join(str(exc).split()) or type(exc).__name__


# -- tasks ----------------------------------------------------------------------------------------


@dataclass
class TaskList:
    """The tasks of a suite, and for a folder suite the files that did not load and why."""

    tasks: list[Task]
    not_loaded: list[NotLoaded] = field(default_factory=list)


def task(ref: str) -> Task:
    """One task, by id (`softmax_fp32`) or task file (native, KernelBench or TritonBench)."""
    from benchmarks import get_task

    try:
        return get_task(ref)
    except KeyError as exc:
        raise InputError(_line(exc)) from None


def tasks(suite: str | None = None, *, category: str | None = None) -> TaskList:
    """The tasks of `suite` (full, lite, quant, serving, or a folder of task files; None: every
    native task), of `category` only when given. A folder's files are loaded one by one: one
    that fails is in `not_loaded` with its reason."""
    from benchmarks import is_folder_suite, load_all, load_folder, suite_tasks

    not_loaded: list[NotLoaded] = []
    try:
        if suite and is_folder_suite(suite):
            folder = load_folder(suite)
            found, not_loaded = list(folder.tasks), list(folder.not_loaded)
        else:
            found = suite_tasks(suite) if suite else list(load_all().values())
    except KeyError as exc:  # an unknown suite name
        raise InputError(_line(exc)) from None
    unique = list({t.id: t for t in found}.values())
    categories = sorted({t.category for t in unique})
    if category and categories and category not in categories:
        from benchmarks import unknown_name

        raise InputError(unknown_name("category", category, categories))
    return TaskList(
        tasks=[t for t in unique if category is None or t.category == category],
        not_loaded=not_loaded,
    )


# -- the knowledge base ---------------------------------------------------------------------------


def _open_kb(url: str | None, kb: KnowledgeBase | None) -> KnowledgeBase:
    if kb is not None:
        return kb
    from knowledge_base import default_kb

    try:
        return default_kb(url)
    except Exception as exc:  # noqa: BLE001 - chromadb: a refused connection, a bad URL, a damaged store
        where = url or "the embedded store"
        raise KnowledgeBaseError(
            f"cannot open the knowledge base at {where}: {one_line(exc)}"
        ) from None


def kb_build(
    *, force: bool = False, url: str | None = None, kb: KnowledgeBase | None = None
) -> BuildReport:
    """Index the knowledge base's docs, kernels and hardware sheets (only changed sources are
    embedded; every one with `force`). `url`: a chroma server (default $KERNFORGE_KB_URL, else
    the embedded store in .kb/); `kb`: an already open KnowledgeBase instead."""
    store = _open_kb(url, kb)
    try:
        return store.build(force=force)
    except (ValueError, TimeoutError) as exc:  # a file that cannot be indexed; a stalled server
        raise KnowledgeBaseError(_line(exc)) from None


def kb_search(
    query: str = "",
    *,
    task: str | None = None,
    k: int = 5,
    hidden: bool = False,
    kinds: Iterable[str] = ("kernel", "doc"),
    hardware: str | None = None,
    url: str | None = None,
    kb: KnowledgeBase | None = None,
) -> list[Hit]:
    """The `k` best documents and kernels for `query` and/or `task`. `hidden` applies benchmark
    mode's provenance hiding (the task's own solution and anything derived from it are never
    returned; it needs `task`). The knowledge base is built on first use if empty."""
    if hidden and not task:
        raise InputError("kb_search: hidden=True needs task= (it hides that task's own solution)")
    store = _open_kb(url, kb)
    try:
        return store.search(
            query,
            k=k,
            task=task,
            hidden_task=task if hidden else None,
            kinds=tuple(kinds),
            hardware=hardware,
        )
    except (KeyError, ValueError) as exc:  # an unknown task, kind or filter
        raise InputError(f"kb_search: {_line(exc)}") from None
    except TimeoutError as exc:  # knowledge_base.KBTimeout: the server stalled
        raise KnowledgeBaseError(_line(exc)) from None


def kb_stats(*, url: str | None = None, kb: KnowledgeBase | None = None) -> dict[str, Any]:
    """What is indexed: location, sources and chunks, counts by kind, tier and topic, which
    kernels are templates and which solve tasks (`KnowledgeBase.stats`)."""
    store = _open_kb(url, kb)
    try:
        return store.stats()
    except TimeoutError as exc:
        raise KnowledgeBaseError(_line(exc)) from None


# -- bench, import, report, pairs -----------------------------------------------------------------


def bench_methods(
    *,
    suite: str | None = None,
    tasks: str | list[str] | None = None,
    methods: str | list[str] | None = None,
    llm: str | None = None,
    seeds: int | None = None,
    budget: str | Mapping[str, Any] | None = None,
    settings: Mapping[str, Any] | None = None,
    device: str | None = None,
    out: str | Path | None = None,
    benchmark: bool | None = None,
    resume: bool = False,
    workers: int = 1,
    executor: str | None = None,
    ray_address: str | None = None,
    console: Console | None = None,
    verbose: bool = False,
    on_cell: Callable[[int, int, CellOutcome], None] | None = None,
    on_plan: Callable[[BenchPlan], None] | None = None,
    on_start: Callable[[Cell], None] | None = None,
    seams: Seams | None = None,
) -> BenchResult:
    """`kernforge bench`: every method on every task and seed as agent runs, one result row per
    attempt in `out` (default runs/bench-<suite>), resumable. Arguments left None take the CLI's
    defaults, or with `resume` the bench.json already in `out` (`agents.bench.plan_bench`).
    `settings` are {dotted key: value} for every run; `on_plan(plan)` is called once the plan
    and executor are known good, before any run; `on_start(cell)` as each run starts and
    `on_cell(number, total, outcome)` as each ends; `seams` are for tests only. A plan that
    cannot run is a BenchError; runs that stopped or were busy are in the result (`stopped`,
    `busy`), not raised."""
    from agents.bench import executor_spec, plan_bench, run_bench

    plan = plan_bench(
        out,
        suite=suite,
        tasks=tasks,
        methods=methods,
        seeds=seeds,
        llm=llm,
        budget=budget,
        settings=settings,
        device=device,
        benchmark=benchmark,
        resume=resume,
    )
    spec = executor_spec(executor, ray_address)
    if on_plan is not None:
        on_plan(plan)
    return run_bench(
        plan,
        console=console,
        verbose=verbose,
        on_cell=on_cell,
        seams=seams,
        workers=workers,
        executor=spec,
        on_start=on_start,
    )


@dataclass
class Imported:
    """What an import did: the report (judged, already stored, unknown, skipped, not judged,
    the tasks built) and the store its rows went to (store.jsonl, store.parquet, its warnings)."""

    format: str
    found: int  # kernels the source holds
    report: ImportReport
    store: ResultStore

    @property
    def judged_nothing(self) -> bool:
        """Nothing judged now nor before (the CLI's exit 1; the reasons are in `report`)."""
        return self.report.judged_nothing


def import_kernels(
    source: str | Path,
    *,
    out: str | Path,
    fmt: str = "auto",
    method: str | None = None,
    model: str = "",
    dtype: str | None = None,
    task: str | None = None,
    device: str = "auto",
    trials: int = JudgeConfig.trials,
    seed: int = 0,
    timeout_s: float = JudgeConfig.timeout_s,
    on_row: Callable[[ResultRow], None] | None = None,
    on_judging: Callable[[str, str], None] | None = None,
) -> Imported:
    """`kernforge import`: judge kernels made by another system (a folder of <task_id>.py, GEAK
    JSONL, KernelAgent sessions; `fmt` auto detects which) and store one row per kernel in
    `out` (resumable). `task`: a single KernelAgent session's task id; `on_judging(task id,
    origin)` is called as each judge call starts, `on_row` with each row as it is stored. An
    import that judged nothing is returned, with its reasons."""
    from benchmarks import ResultStore, read_source, resolve_device
    from benchmarks import import_kernels as judge_imports

    try:
        resolve_device(device)
        plan = read_source(source, fmt, task)
    except RunFileError:
        raise
    except (ValueError, FileNotFoundError, RuntimeError) as exc:
        raise InputError(_line(exc)) from None
    store = ResultStore(out)
    config = JudgeConfig(device=device, trials=trials, seed=seed, timeout_s=timeout_s)
    report = judge_imports(
        plan,
        store,
        method=method,
        model=model,
        dtype=dtype,
        judge_config=config,
        on_row=on_row,
        on_judging=on_judging,
    )
    return Imported(format=plan.format, found=len(plan.kernels), report=report, store=store)


@dataclass
class Report:
    """A written report: its files, the rows it shows, one line per source read, and one per
    thing skipped (a damaged line, run or file, named)."""

    out: Path
    files: ReportFiles
    rows: list[ResultRow]
    sources: list[str]
    skipped: list[str]

    @property
    def scripted(self) -> int:
        """Rows from scripted (replay) runs, labelled as such in the report."""
        return sum(r.scripted for r in self.rows)


def report(
    paths: Iterable[str | Path], *, out: str | Path | None = None, title: str = "kernforge report"
) -> Report:
    """`kernforge report`: a self-contained HTML page, a Markdown summary and plots (SVG and
    PNG) of any mix of bench or import folders, run directories, folders of runs and results
    files, in `out` (default <first path>/report). No result rows at all is an InputError
    (its `skipped`: the sources that could not be read, and why)."""
    from benchmarks import collect_rows, write_report

    given = [Path(p) for p in paths]
    if not given:
        raise InputError("report: no paths given")
    try:
        rows, sources, skipped = collect_rows(given)
    except RunFileError:
        raise
    except (FileNotFoundError, ValueError) as exc:
        raise InputError(_line(exc)) from None
    if not rows:
        raise InputError(f"no result rows in {', '.join(str(p) for p in given)}", skipped)
    first = given[0]
    folder = (
        Path(out) if out is not None else (first.parent if first.is_file() else first) / "report"
    )
    files = write_report(rows, folder, [*sources, *skipped], title)
    return Report(out=folder, files=files, rows=rows, sources=sources, skipped=skipped)


def export_pairs(
    runs: Iterable[str | Path], *, out: str | Path, fmt: str = "jsonl"
) -> ExportResult:
    """`kernforge pairs export`: every run's error -> fix pairs under `runs` (run directories or
    folders of them), deduplicated, written as `fmt` (jsonl, parquet, or hf: a Hugging Face
    datasets folder) to `out` with a README.md card beside it."""
    from benchmarks import export_pairs as write_pairs

    try:
        return write_pairs([Path(r) for r in runs], fmt, out)
    except RunFileError:
        raise
    except (FileNotFoundError, ValueError, RuntimeError) as exc:
        raise InputError(_line(exc)) from None
