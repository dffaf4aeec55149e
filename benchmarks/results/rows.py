"""Result rows: one record per judged kernel in a bench, an import or an agent run.

The bench, `kernforge import`, the analyses and the report all read and write `ResultRow`, so
it is defined once, here. A row is keyed by (task_id, method, seed, attempt): `attempt` is the
attempt's index within its run (0 for a one-shot import), `iteration` the evaluator round it
belongs to (several attempts may share one).

A `ResultStore` is a folder:

    <dir>/results.jsonl     one row per line, appended and flushed as rows arrive (the record)
    <dir>/results.parquet   the same rows as a table, rewritten by `write_parquet()`

Nested parts (per-shape numbers, the full verdict, PTX features) are JSON objects in the JSONL
file and JSON strings in the Parquet file, whose columns must be flat and typed.

Rows whose kernels came from a scripted provider (`--llm replay:...`) or scripted measurements
have `scripted=True`; everything that shows rows labels them "scripted". Rows imported from
another system's outputs (`source="import:..."`) are labelled "(imported)", so a report that
mixes them with kernforge's own runs of a preset of the same name keeps the two apart.

A run or an imported item that judged nothing is one row with error class "no_kernel"
(`no_kernel_row`): it counts as a failed outcome wherever outcomes are counted.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError

from benchmarks.results.jsonl import append_line, read_jsonl
from benchmarks.results.records import (
    RunFileError,
    problem_of,
    read_attempt,
    read_manifest,
    read_summary,
    read_verdict,
)
from benchmarks.verdict import STAGE_ORDER, Stage, Verdict

RESULTS_JSONL = "results.jsonl"
RESULTS_PARQUET = "results.parquet"
CPU_DEVICE_NAME = "cpu (Triton interpreter)"

# "baseline": eager / torch.compile rows derived from the verdicts (benchmarks.results.baselines)
Source = Literal["kernforge", "import:folder", "import:geak", "import:kernelagent", "baseline"]
RowKey = tuple[str, str, int, int]

# per-shape numbers kept in a row (the rest stays in the verdict)
SHAPE_FIELDS = (
    "shape",
    "dtype",
    "weight",
    "phase",
    "candidate_us",
    "eager_us",
    "compile_us",
    "speedup_eager",
    "speedup_compile",
    "attainment",
    "launch_bound",
    "flops",  # semantic FLOPs of the shape (the task's formula); None in rows written before
    "bytes",  # minimal bytes moved
    "roofline_us",  # the shape's roofline time on the device
    # how the three times above were taken: "call" (call by call) or "graph" (per call inside a
    # CUDA graph, decode shapes); both figures of each method (None in rows written before)
    "timing",
    "call_us",
    "graph_us",
    "eager_call_us",
    "eager_graph_us",
    "compile_call_us",
    "compile_graph_us",
)
NO_KERNEL = "no_kernel"  # error class of a row with nothing judged
IMPORTED_MARK = "(imported)"


class ResultRow(BaseModel):
    """One judged kernel: which task, which method made it, and what the judge said."""

    task_id: str
    category: str = "unknown"
    method: str
    model: str = ""  # e.g. "openai:gpt-4o", "offline", "replay:scripted:file.jsonl"
    seed: int = 0
    attempt: int = 0  # index of the attempt within its run (the row key)
    iteration: int | None = None  # evaluator round (several attempts may share one)
    parent_attempt: int | None = None  # the attempt this one revised (repair or optimisation)
    mode: str = ""  # "fresh", "repair", "optimize", "" when unknown
    run_id: str = ""
    device: str = CPU_DEVICE_NAME  # device name, e.g. "NVIDIA H200"
    device_key: str = ""  # the judge's fingerprint key (name + versions)
    passed: bool = False
    stage_reached: str | None = None  # last stage passed (benchmarks.verdict.Stage), None: nothing
    error_class: str = "none"  # benchmarks.verdict.ErrorClass, or "no_kernel" (nothing to judge)
    message: str = ""
    perf_measured: bool = False  # some shape was timed on a GPU
    geomean_speedup_eager: float | None = None
    geomean_speedup_compile: float | None = None
    score: float | None = None  # attainment S: median roofline attainment over shapes
    shapes: list[dict[str, Any]] = Field(default_factory=list)  # SHAPE_FIELDS per shape
    flags: list[str] = Field(default_factory=list)
    fallback_ops: list[str] = Field(default_factory=list)
    ptx_features: dict[str, bool] | None = None  # None: no PTX available ("not measured")
    scripted: bool = False  # replay provider or scripted measurements: label it everywhere
    source: Source = "kernforge"
    origin: str = ""  # where the code came from (file, JSONL line, session folder)
    came_from: str = ""  # how a kernforge attempt's code was made (its provenance label)
    code_sha256: str = ""
    timestamp: str = Field(default_factory=lambda: datetime.now(UTC).isoformat(timespec="seconds"))
    run_started: str = ""  # when the row's run began (ISO time); "" when unknown (imports)
    verdict: dict[str, Any] | None = None  # the full Verdict JSON; None when there was no kernel

    @property
    def key(self) -> RowKey:
        return (self.task_id, self.method, self.seed, self.attempt)

    def reached(self, stage: Stage | str) -> bool:
        """True when the kernel passed `stage` (or a later one)."""
        if self.stage_reached is None:
            return False
        return STAGE_ORDER.index(Stage(self.stage_reached)) >= STAGE_ORDER.index(Stage(stage))

    @property
    def imported(self) -> bool:
        """The kernel was made by another system and judged here (`kernforge import`)."""
        return self.source.startswith("import:")

    @property
    def judged(self) -> bool:
        """A kernel was judged (False for a "no_kernel" row: nothing to judge)."""
        return self.error_class != NO_KERNEL

    def label(self) -> str:
        """The method as shown in tables and plots; imported and scripted rows say so."""
        label = f"{self.method} {IMPORTED_MARK}" if self.imported else self.method
        return f"{label} [scripted]" if self.scripted else label


def device_name(fingerprint: dict[str, Any]) -> str:
    """A readable device name from a judge fingerprint."""
    if fingerprint.get("gpu_name"):
        return str(fingerprint["gpu_name"])
    if fingerprint.get("device", "cpu") == "cpu":
        return CPU_DEVICE_NAME
    return str(fingerprint.get("device"))


def _shape_numbers(verdict: Verdict) -> list[dict[str, Any]]:
    out = []
    for s in verdict.shapes:
        data = s.model_dump(mode="json")
        out.append({k: data.get(k) for k in SHAPE_FIELDS})
    return out


def row_from_verdict(
    verdict: Verdict,
    *,
    category: str,
    method: str,
    model: str = "",
    seed: int = 0,
    attempt: int = 0,
    iteration: int | None = None,
    parent_attempt: int | None = None,
    mode: str = "",
    run_id: str = "",
    scripted: bool = False,
    source: Source = "kernforge",
    origin: str = "",
    ptx_features: dict[str, bool] | None = None,
    timestamp: str | None = None,
    run_started: str = "",
    came_from: str = "",
) -> ResultRow:
    """A row from a judge verdict plus who produced the kernel."""
    fp = verdict.fingerprint or {}
    fields: dict[str, Any] = dict(
        task_id=verdict.task_id,
        category=category,
        method=method,
        model=model,
        seed=seed,
        attempt=attempt,
        iteration=iteration,
        parent_attempt=parent_attempt,
        mode=mode,
        run_id=run_id,
        run_started=run_started,
        device=device_name(fp)
        if fp
        else (CPU_DEVICE_NAME if verdict.device == "cpu" else verdict.device),
        device_key=str(fp.get("key", "")),
        passed=verdict.passed,
        stage_reached=verdict.stage_reached.value if verdict.stage_reached else None,
        error_class=verdict.error_class.value,
        message=verdict.message,
        perf_measured=any(s.candidate_us is not None for s in verdict.shapes),
        geomean_speedup_eager=verdict.geomean_speedup_eager,
        geomean_speedup_compile=verdict.geomean_speedup_compile,
        score=verdict.score,
        shapes=_shape_numbers(verdict),
        flags=list(verdict.flags),
        fallback_ops=list(verdict.fallback_ops),
        ptx_features=ptx_features if ptx_features is not None else verdict.ptx_features,
        scripted=scripted,
        source=source,
        origin=origin,
        came_from=came_from,
        code_sha256=verdict.candidate_sha256,
        verdict=verdict.model_dump(mode="json"),
    )
    if timestamp:
        fields["timestamp"] = timestamp
    return ResultRow(**fields)


def no_kernel_row(
    task_id: str, *, category: str, method: str, reason: str, **fields: Any
) -> ResultRow:
    """A row for a method that produced no kernel for a task: a failure that must still count."""
    return ResultRow(
        task_id=task_id,
        category=category,
        method=method,
        passed=False,
        stage_reached=None,
        error_class=NO_KERNEL,
        message=reason,
        **fields,
    )


# --------------------------------------------------------------------------------------------
# The store
# --------------------------------------------------------------------------------------------


def _parquet_record(row: ResultRow) -> dict[str, Any]:
    data = row.model_dump(mode="json")
    for name in ("shapes", "verdict", "ptx_features", "flags", "fallback_ops"):
        data[f"{name}_json"] = json.dumps(data.pop(name))
    return data


def _from_parquet_record(data: dict[str, Any]) -> ResultRow:
    data = dict(data)
    for name in ("shapes", "verdict", "ptx_features", "flags", "fallback_ops"):
        raw = data.pop(f"{name}_json", None)
        if raw is not None:
            data[name] = json.loads(raw)
    return ResultRow.model_validate(data)


class MissingPyarrow(RuntimeError):
    """Parquet was asked for where pyarrow is not installed."""


def _pyarrow() -> Any:
    try:
        import pyarrow
        import pyarrow.parquet  # noqa: F401
    except ImportError as exc:
        raise MissingPyarrow(
            "writing or reading Parquet needs pyarrow (pip install 'pyarrow>=15')"
        ) from exc
    return pyarrow


class ResultStore:
    """Rows of a bench or import in `<dir>/results.jsonl` (+ `results.parquet`); resumable.

    `append` skips a row whose key (task_id, method, seed, attempt) is already stored, so a bench
    restarted after a crash continues where it stopped."""

    def __init__(self, directory: str | Path) -> None:
        self.dir = Path(directory)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.jsonl = self.dir / RESULTS_JSONL
        self.parquet = self.dir / RESULTS_PARQUET
        self.warnings: list[str] = []
        self._rows: list[ResultRow] = self._read()
        self._keys: set[RowKey] = {r.key for r in self._rows}

    def _read(self) -> list[ResultRow]:
        records, self.warnings = read_jsonl(self.jsonl)
        return _rows_of(self.jsonl, records, self.warnings)

    def __len__(self) -> int:
        return len(self._rows)

    def rows(self) -> list[ResultRow]:
        return list(self._rows)

    def has(self, task_id: str, method: str, seed: int, attempt: int) -> bool:
        return (task_id, method, seed, attempt) in self._keys

    def append(self, row: ResultRow) -> bool:
        """Add a row unless its key is stored already. Returns True when it was added."""
        if row.key in self._keys:
            return False
        append_line(self.jsonl, row.model_dump_json())
        self._rows.append(row)
        self._keys.add(row.key)
        return True

    def extend(self, rows: Iterable[ResultRow]) -> int:
        """Append rows (skipping stored keys), then rewrite the Parquet file. Returns how many were added."""
        added = sum(1 for row in rows if self.append(row))
        self.write_parquet()
        return added

    def write_parquet(self) -> Path | None:
        """Rewrite results.parquet from every stored row (atomically). Where pyarrow is not
        installed (a minimal GPU machine), the JSONL file stays the record: a warning says so and
        None is returned; `ResultStore(dir).write_parquet()` anywhere with pyarrow writes it later."""
        try:
            write_parquet(self._rows, self.parquet)
        except MissingPyarrow as exc:
            self.warnings.append(f"{self.parquet} not written: {exc}; {self.jsonl} holds every row")
            return None
        return self.parquet

    @classmethod
    def load(cls, directory: str | Path) -> ResultStore:
        directory = Path(directory)
        if not (directory / RESULTS_JSONL).is_file():
            raise FileNotFoundError(
                f"{directory} holds no {RESULTS_JSONL} (is it a bench or import folder?)"
            )
        return cls(directory)


def _rows_of(path: Path, records: list[tuple[int, Any]], warnings: list[str]) -> list[ResultRow]:
    """The rows among a results file's parsed lines; a line that is no row is a warning
    naming `path:line` (a bench re-adds a skipped row's key when its run is collected again)."""
    rows = []
    for number, data in records:
        try:
            rows.append(ResultRow.model_validate(data))
        except ValidationError as exc:
            warnings.append(f"{path}:{number}: not a result row, skipped ({problem_of(exc)})")
    return rows


def read_results_jsonl(path: str | Path) -> tuple[list[ResultRow], list[str]]:
    """The rows of a results .jsonl file, and a warning (`file:line`) per line skipped."""
    records, warnings = read_jsonl(Path(path))
    return _rows_of(Path(path), records, warnings), warnings


def write_parquet(rows: list[ResultRow], path: Path) -> None:
    pa = _pyarrow()
    table = pa.Table.from_pylist([_parquet_record(r) for r in rows]) if rows else _empty_table(pa)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    pa.parquet.write_table(table, tmp)
    os.replace(tmp, path)


def _empty_table(pa: Any) -> Any:
    return pa.Table.from_pylist([_parquet_record(ResultRow(task_id="", method=""))]).slice(0, 0)


def read_parquet(path: str | Path) -> list[ResultRow]:
    """The rows of a results .parquet file; `RunFileError` naming it when it cannot be read."""
    pa = _pyarrow()
    try:
        records = pa.parquet.read_table(path).to_pylist()
    except (OSError, pa.ArrowException) as exc:
        raise RunFileError(path, f"not a readable Parquet file ({exc})") from None
    try:
        return [_from_parquet_record(r) for r in records]
    except (ValidationError, ValueError, TypeError) as exc:
        problem = problem_of(exc) if isinstance(exc, ValidationError) else str(exc)
        raise RunFileError(path, f"not a results table ({problem})") from None


# --------------------------------------------------------------------------------------------
# Rows from an agent run directory (plain files; no import of the agent)
# --------------------------------------------------------------------------------------------


@lru_cache(maxsize=1)
def all_tasks() -> dict[str, Any]:
    """Every task of this checkout, loaded once per process (task id -> benchmarks.task.Task)."""
    from benchmarks.loading import load_all

    return load_all()


def category_of(task_id: str) -> str:
    """The task's category, or "unknown" for a task id this checkout does not have."""
    task = all_tasks().get(task_id)
    return task.category if task is not None else "unknown"


def is_scripted_llm(llm: str) -> bool:
    """True for the replay provider (`replay:...`): its replies are scripted, not a model's."""
    return llm.strip().lower().startswith("replay")


def is_run_dir(path: Path) -> bool:
    return (path / "manifest.json").is_file() and (path / "attempts").is_dir()


def _mtime(path: Path) -> str:
    return datetime.fromtimestamp(path.stat().st_mtime, UTC).isoformat(timespec="seconds")


def rows_from_run_dir(
    run_dir: str | Path,
    *,
    task_id: str | None = None,
    method: str | None = None,
    seed: int | None = None,
) -> list[ResultRow]:
    """One row per judged attempt of an agent run directory (runs/<run-id>/), read from its
    files (`benchmarks.results.records`). A run that judged nothing (it stopped before its first
    verdict, or has not got there yet) is one "no_kernel" row, attempt 0, with the reason from its
    summary.json, so it still counts as a failed outcome. `task_id`, `method` and `seed` stand in
    where the manifest does not record them. A malformed manifest, attempt or verdict file is a
    `RunFileError` naming it."""
    from benchmarks.harness.ptx import ptx_features_of_dir

    run_dir = Path(run_dir)
    manifest = read_manifest(run_dir)
    config = manifest.cfg
    llm = manifest.model
    scripted = (
        is_scripted_llm(llm)
        or is_scripted_llm(str(config.llm or ""))
        or bool(config.scripted_measure)
    )
    task = manifest.task_id or task_id or ""
    common = dict(
        category=category_of(task),
        method=config.method or method or "aka",
        model=llm,
        seed=config.seed if config.seed is not None else (seed or 0),
        run_id=manifest.run_id if manifest.run_id is not None else run_dir.name,
        run_started=manifest.created or "",
        scripted=scripted,
        source="kernforge",
    )
    rows = []
    attempts = run_dir / "attempts"
    for folder in sorted(
        (p for p in attempts.iterdir() if p.is_dir() and p.name.isdigit()),
        key=lambda p: int(p.name),
    ):
        record = read_attempt(folder)
        if not (folder / "verdict.json").is_file():
            continue
        verdict = read_verdict(folder)
        stamp = _mtime(folder / "verdict.json")
        measured_scripted = bool(record.measurement and record.measurement.scripted)
        rows.append(
            row_from_verdict(
                verdict,
                attempt=int(folder.name),
                iteration=record.iteration,
                parent_attempt=record.parent_id,
                mode=record.mode or "",
                origin=f"{run_dir.name}/attempts/{folder.name}/code.py",
                came_from=record.came_from(),
                ptx_features=ptx_features_of_dir(folder),
                timestamp=stamp or manifest.created,
                **{**common, "scripted": common["scripted"] or measured_scripted},
            )
        )
    if rows:
        return rows
    summary = read_summary(run_dir)
    when = manifest.created
    if summary is None:
        why = "the run has not finished (no summary.json)"
    else:
        why = summary.finish_reason or "unknown"
        when = _mtime(run_dir / "summary.json")
    # the device the run was set up on (its manifest's fingerprint), not the row's CPU default
    fingerprint = manifest.fingerprint or {
        "device": (manifest.device.resolved if manifest.device else None) or "cpu"
    }
    return [
        no_kernel_row(
            task,
            reason=f"no kernel judged: {why}",
            attempt=0,
            device=device_name(fingerprint),
            device_key=str(fingerprint.get("key", "")),
            origin=f"{run_dir.name}/summary.json",
            **({**common, "timestamp": when} if when else common),
        )
    ]


def collect_rows(
    paths: Iterable[str | Path],
) -> tuple[list[ResultRow], list[str], list[str]]:
    """Rows from any mix of: a store folder (results.jsonl), a run directory, a results .jsonl or
    .parquet file, or a folder holding any of those one or two levels down. Returns the rows,
    one line per source read (for provenance), and one line per thing skipped: a damaged line of
    a results file (`file:line`), or a run or file that cannot be read (naming the file), so
    one bad run never hides the others. A row read twice (the same attempt of the same run from
    the same origin, e.g. a folder given along with a folder inside it) is kept once, and a line
    says how many were dropped."""
    rows: list[ResultRow] = []
    sources: list[str] = []
    skipped: list[str] = []

    def visit(path: Path, depth: int) -> None:
        if path.is_file():
            if path.suffix == ".parquet":
                got = read_parquet(path)
            else:
                got, warnings = read_results_jsonl(path)
                skipped.extend(warnings)
            rows.extend(got)
            sources.append(f"{path} ({len(got)} rows)")
        elif (path / RESULTS_JSONL).is_file():
            store = ResultStore(path)
            rows.extend(store.rows())
            sources.append(f"{path} ({len(store)} rows)")
            skipped.extend(store.warnings)
        elif is_run_dir(path):
            got = rows_from_run_dir(path)
            rows.extend(got)
            judged = sum(r.judged for r in got)
            sources.append(
                f"{path} (agent run, {judged} attempts)"
                if judged
                else f"{path} (agent run, judged nothing)"
            )
        elif path.is_dir() and depth < 2:
            for child in sorted(path.iterdir()):
                if child.is_dir():
                    visit_one(child, depth + 1)

    def visit_one(path: Path, depth: int) -> None:
        try:
            visit(path, depth)
        except RunFileError as exc:
            skipped.append(f"{path} skipped: {exc}")

    for p in paths:
        p = Path(p)
        if not p.exists():
            raise FileNotFoundError(f"{p} does not exist")
        before = len(sources) + len(skipped)
        visit_one(p, 0)
        if len(sources) + len(skipped) == before:
            raise FileNotFoundError(
                f"{p} holds no results: no {RESULTS_JSONL}, no run directory (manifest.json + attempts/), "
                "no .jsonl/.parquet results file"
            )
    unique: dict[tuple, ResultRow] = {}
    for r in rows:
        unique.setdefault((r.key, r.run_id, r.device, r.source, r.origin, r.code_sha256), r)
    if len(unique) < len(rows):
        sources.append(f"{len(rows) - len(unique)} row(s) read twice, kept once")
    return list(unique.values()), sources, skipped
