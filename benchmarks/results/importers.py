"""Judge kernels produced elsewhere: `kernforge import`.

Three layouts are read; each becomes a list of `ImportedKernel`s (task name as the source spells
it, the code, where it came from), then every kernel goes through our judge and lands in a
`ResultStore` as a `ResultRow` with `source="import:<format>"`.

folder        `<dir>/<task_id>.py`, one candidate per file, named by task id (or by task name
              with `--dtype`: `softmax.py` + fp16 -> softmax_fp16).
geak          GEAK-agent output: JSONL (or a JSON list) with one object per problem. GEAK writes
              {"instruction", "label", "filename", "test_code", "predict"} per line into
              `<name>_<iter>.jsonl` after each iteration: the problem is "filename" (e.g.
              "softmax.py"), the generated code is "predict" ("label" is the dataset's reference,
              never the candidate: with "test_code" it is the task). Other spellings are
              accepted (task / task_id / problem / name / op, code / solution / generated_code /
              kernel_code / completion / output / response). The iteration n comes from an "iteration"/"iter"/"round" field or the
              `_<n>` suffix of the file name, counted from 0 as GEAK does; the row's attempt is n
              and its iteration n + 1 (kernforge counts rounds from 1). Without one, repeated
              lines of a task are attempts 0, 1, ... in file order. GEAK's memory files
              (`*_mem_<n>.json`) are not outputs and are skipped with a note.
kernelagent   KernelAgent (meta-pytorch/KernelAgent) sessions: each `session_<timestamp>/` holds
              problem.txt, test.py, seed_<i>.py, and -- when a worker passed KernelAgent's own test
              -- final_kernel.py and result.json ({"success", "worker_id", "kernel_code",
              "rounds"}). Sessions are found as `<root>/<task>/final_kernel.py`,
              `<root>/<task>/session_*/...` (several sessions of one task are seeds 0, 1, ... in
              name order), or any folder whose result.json / meta.json names the task ("task",
              "task_id", "problem", "problem_name"). KernelAgent kernels expose `kernel_function`;
              when the task's entry point is missing, a one-line wrapper with the task's signature
              is appended and the row says so. A session with no final kernel is a failure of the
              method and is recorded as a row with error class "no_kernel".

Which task a kernel is judged on: the problem its source published beside it, when that loads
(`benchmarks.results.import_tasks`): a GEAK record's `label` + `test_code` (TritonBench-G: the
label is itself Triton code, and GEAK's kernels write into an `out` argument, which the task then
counts as an output), a KernelAgent session's `problem.txt` (a KernelBench problem; sessions of
one problem named only by time are seeds of one task). Otherwise the kernforge task its name
gives, as below.

Anything unusable -- a line that is not JSON, an object with no name or no code field, a task
name that is not ours, a problem that does not load -- is reported with its file and line,
skipped and counted. A usable kernel that cannot be judged here -- its task flagged as passable
by no kernel, refused on the CPU, or a kernel asserting a CUDA device on the CPU -- is reported as
not judged: that is no failure of the method, and no row is stored.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.pyparse import parse as parse_python
from benchmarks.results.import_tasks import (
    TaskFiles,
    geak_task_source,
    model_new_from,
    needs_cuda,
    on_cpu,
)
from benchmarks.results.rows import (
    ResultRow,
    ResultStore,
    Source,
    all_tasks,
    no_kernel_row,
    row_from_verdict,
)
from benchmarks.task import DTYPE_NAMES, Task, TaskError

FORMATS = ("folder", "geak", "kernelagent")
DEFAULT_METHOD = {"folder": "external", "geak": "geak", "kernelagent": "kernelagent"}
NAME_FIELDS = (
    "task_id",
    "task",
    "filename",
    "problem",
    "problem_name",
    "name",
    "op",
    "kernel_name",
)
CODE_FIELDS = (
    "predict",
    "code",
    "solution",
    "generated_code",
    "kernel_code",
    "completion",
    "output",
    "response",
)
ITERATION_FIELDS = ("iteration", "iter", "round")
_ITER_SUFFIX = re.compile(r"_(\d+)$")
_FENCE = re.compile(r"```[ \t]*(?:python|py)?[ \t]*\n(.*?)```", re.S)


@dataclass
class ImportedKernel:
    name: str  # the task as the source names it (task id, task name, or a file name)
    code: str | None  # None: the source produced no kernel for this task
    origin: str  # file, file:line or session folder
    attempt: int = 0
    iteration: int | None = None
    seed: int = 0
    note: str = ""  # e.g. why there is no code, or an adaptation made to the code
    # the problem the source published beside the kernel, as a task file's text (a GEAK record's
    # label + test_code, a KernelAgent session's problem.txt): the kernel is judged on it
    task_source: str | None = None
    task_from: str = ""  # where task_source came from, for messages


@dataclass
class Skipped:
    where: str
    reason: str

    def __str__(self) -> str:
        return f"{self.where}: {self.reason}"


@dataclass
class ImportPlan:
    format: str
    kernels: list[ImportedKernel] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)


def extract_code(text: str) -> str:
    """The code in a model's reply: the longest fenced Python block, or the text itself."""
    blocks = _FENCE.findall(text)
    if blocks:
        return max(blocks, key=len).strip() + "\n"
    return text


def _strip_py(name: str) -> str:
    name = Path(name.strip()).name
    return name[:-3] if name.endswith(".py") else name


# --------------------------------------------------------------------------------------------
# Readers
# --------------------------------------------------------------------------------------------


def read_folder(folder: str | Path) -> ImportPlan:
    """`<folder>/<task>.py` files, one candidate each."""
    folder = Path(folder)
    plan = ImportPlan("folder")
    for path in sorted(folder.iterdir()):
        if path.name.startswith("."):
            continue
        if path.is_file() and path.suffix == ".py":
            plan.kernels.append(
                ImportedKernel(path.stem, path.read_text(encoding="utf-8"), str(path))
            )
        else:
            plan.skipped.append(Skipped(str(path), "not a .py file named by task; ignored"))
    return plan


def _first(obj: dict[str, Any], fields: tuple[str, ...]) -> tuple[str | None, Any]:
    for name in fields:
        if name in obj and obj[name] not in (None, ""):
            return name, obj[name]
    return None, None


def _geak_objects(path: Path, plan: ImportPlan) -> list[tuple[str, Any]]:
    """(where, object) pairs from a GEAK .jsonl or .json file."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".json":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            plan.skipped.append(
                Skipped(str(path), f"not valid JSON ({exc.msg} at line {exc.lineno})")
            )
            return []
        if isinstance(data, list):
            return [(f"{path}[{i}]", obj) for i, obj in enumerate(data)]
        if (
            isinstance(data, dict)
            and all(isinstance(v, dict) for v in data.values())
            and any(
                {"call_candidate", "exe_candidate", "perf_candidates"} & set(v)
                for v in data.values()
            )
        ):
            plan.skipped.append(
                Skipped(
                    str(path),
                    "a GEAK memory file (call/exe candidates per problem), not an output file; skipped",
                )
            )
            return []
        return [(str(path), data)]
    out = []
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            out.append((f"{path}:{n}", json.loads(line)))
        except json.JSONDecodeError as exc:
            plan.skipped.append(
                Skipped(f"{path}:{n}", f"not a JSON object ({exc.msg}); line skipped")
            )
    return out


def read_geak(source: str | Path) -> ImportPlan:
    """GEAK-style outputs: a .jsonl/.json file, or a folder of them (read in name order)."""
    source = Path(source)
    files = (
        sorted(p for p in source.iterdir() if p.suffix in (".jsonl", ".json"))
        if source.is_dir()
        else [source]
    )
    plan = ImportPlan("geak")
    counters: dict[str, int] = {}
    for path in files:
        suffix = _ITER_SUFFIX.search(path.stem)
        file_iter = int(suffix.group(1)) if suffix else None
        for where, obj in _geak_objects(path, plan):
            if not isinstance(obj, dict):
                plan.skipped.append(
                    Skipped(where, f"expected a JSON object, got {type(obj).__name__}")
                )
                continue
            name_field, name = _first(obj, NAME_FIELDS)
            if name_field is None or not isinstance(name, str):
                plan.skipped.append(
                    Skipped(
                        where,
                        f"no task name: none of {', '.join(NAME_FIELDS)} is a non-empty string "
                        f"(fields present: {', '.join(sorted(obj)) or 'none'})",
                    )
                )
                continue
            code_field, code = _first(obj, CODE_FIELDS)
            if code_field is not None and not isinstance(code, str):
                plan.skipped.append(Skipped(where, f"field {code_field!r} is not a string"))
                continue
            it_field, it = _first(obj, ITERATION_FIELDS)
            iteration = int(it) if it_field is not None and str(it).isdigit() else file_iter
            task_name = _strip_py(name)
            if iteration is not None:
                attempt = iteration
            else:
                attempt = counters.get(task_name, 0)
                counters[task_name] = attempt + 1
            own = geak_task_source(obj.get("label"), obj.get("test_code"))
            problem = {"task_source": own, "task_from": "label + test_code"} if own else {}
            if code is None:
                present = [f for f in CODE_FIELDS if f in obj]
                why = (
                    f"empty {present[0]!r}"
                    if present
                    else f"no code field ({', '.join(CODE_FIELDS)})"
                )
                plan.kernels.append(
                    ImportedKernel(
                        task_name,
                        None,
                        where,
                        attempt,
                        None if iteration is None else iteration + 1,
                        note=f"GEAK produced no kernel: {why}",
                        **problem,
                    )
                )
                continue
            plan.kernels.append(
                ImportedKernel(
                    task_name,
                    extract_code(code),
                    where,
                    attempt,
                    None if iteration is None else iteration + 1,
                    **problem,
                )
            )
    if not files:
        plan.skipped.append(Skipped(str(source), "no .jsonl or .json file here"))
    return plan


def _is_session(folder: Path) -> bool:
    return any(
        (folder / name).is_file() for name in ("final_kernel.py", "problem.txt", "result.json")
    ) or any(folder.glob("seed_*.py"))


def _named_task(folder: Path) -> str | None:
    for meta in ("result.json", "meta.json"):
        path = folder / meta
        if path.is_file():
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
            except json.JSONDecodeError:
                continue
            if isinstance(data, dict):
                _, name = _first(data, ("task_id", "task", "problem_name", "problem"))
                if isinstance(name, str) and len(name) < 120 and "\n" not in name:
                    return _strip_py(name)
    return None


def _session_kernel(session: Path, name: str, seed: int) -> ImportedKernel:
    problem = session / "problem.txt"
    own = (
        {"task_source": problem.read_text(encoding="utf-8"), "task_from": str(problem)}
        if problem.is_file()
        else {}
    )
    final = session / "final_kernel.py"
    if final.is_file():
        return ImportedKernel(name, final.read_text(encoding="utf-8"), str(final), seed=seed, **own)
    result = session / "result.json"
    if result.is_file():
        try:
            data = json.loads(result.read_text(encoding="utf-8"))
        except json.JSONDecodeError:
            data = {}
        if (
            isinstance(data, dict)
            and isinstance(data.get("kernel_code"), str)
            and data["kernel_code"].strip()
        ):
            return ImportedKernel(
                name, data["kernel_code"], f"{result} (kernel_code)", seed=seed, **own
            )
    return ImportedKernel(
        name,
        None,
        str(session),
        seed=seed,
        note="KernelAgent session has no final_kernel.py: no worker passed KernelAgent's own test",
        **own,
    )


def read_kernelagent(root: str | Path, task: str | None = None) -> ImportPlan:
    """KernelAgent session folders (see the module docstring for the layouts)."""
    root = Path(root)
    plan = ImportPlan("kernelagent")
    if _is_session(root):
        name = task or _named_task(root) or root.name
        plan.kernels.append(_session_kernel(root, name, 0))
        return plan
    problems: dict[str, list[ImportedKernel]] = {}
    for folder in sorted(p for p in root.iterdir() if p.is_dir()):
        sessions = sorted(p for p in folder.iterdir() if p.is_dir() and _is_session(p))
        if _is_session(folder):
            name = task or _named_task(folder) or folder.name
            if (
                name.startswith("session_")
                and task is None
                and not (folder / "problem.txt").is_file()
            ):
                plan.skipped.append(
                    Skipped(
                        str(folder),
                        "a session folder with no problem.txt that does not say its task: put it "
                        'under a folder named by task id, or add result.json/meta.json with "task"',
                    )
                )
                continue
            kernel = _session_kernel(folder, name, 0)
            if name == folder.name and kernel.task_source is not None:
                # sessions named only by time: those of one problem are seeds 0, 1, ... of one
                # task, named by its first session
                first = problems.setdefault(kernel.task_source, [])
                kernel.seed, kernel.name = len(first), first[0].name if first else name
                first.append(kernel)
            plan.kernels.append(kernel)
        elif sessions:
            for seed, session in enumerate(sessions):
                plan.kernels.append(
                    _session_kernel(session, task or _named_task(session) or folder.name, seed)
                )
        else:
            plan.skipped.append(
                Skipped(
                    str(folder),
                    "no KernelAgent session here (no final_kernel.py, problem.txt, result.json or seed_*.py)",
                )
            )
    return plan


def detect_format(source: str | Path) -> str:
    source = Path(source)
    if source.is_file():
        if source.suffix in (".jsonl", ".json"):
            return "geak"
        raise ValueError(
            f"{source} is a file but not .jsonl/.json; give a folder for --format folder or kernelagent"
        )
    if not source.is_dir():
        raise FileNotFoundError(f"{source} does not exist")
    if any(source.glob("*.jsonl")):
        return "geak"
    if _is_session(source) or any(
        _is_session(p) or any(_is_session(q) for q in p.iterdir() if q.is_dir())
        for p in source.iterdir()
        if p.is_dir()
    ):
        return "kernelagent"
    if any(source.glob("*.py")):
        return "folder"
    raise ValueError(
        f"cannot tell the format of {source}: no *.jsonl (geak), no KernelAgent session, no *.py (folder)"
    )


def read_source(source: str | Path, fmt: str = "auto", task: str | None = None) -> ImportPlan:
    fmt = detect_format(source) if fmt == "auto" else fmt
    if fmt == "folder":
        return read_folder(source)
    if fmt == "geak":
        return read_geak(source)
    if fmt == "kernelagent":
        return read_kernelagent(source, task)
    raise ValueError(f"unknown import format {fmt!r}; choose one of {', '.join(FORMATS)} or auto")


# --------------------------------------------------------------------------------------------
# Task names, entry points
# --------------------------------------------------------------------------------------------


def resolve_task(name: str, tasks: dict[str, Task], dtype: str | None = None) -> Task:
    """Our task for a name from elsewhere: a task id, or a task name with `dtype` (or with a single
    dtype). Raises KeyError with a message that says what to do."""
    if name in tasks:
        return tasks[name]
    variants = [t for t in tasks.values() if t.name == name]
    if dtype:
        if dtype not in DTYPE_NAMES:
            raise KeyError(f"--dtype {dtype!r} is not one of {', '.join(DTYPE_NAMES)}")
        if f"{name}_{dtype}" in tasks:
            return tasks[f"{name}_{dtype}"]
    if len(variants) == 1:
        return variants[0]
    if variants:
        ids = ", ".join(sorted(t.id for t in variants))
        raise KeyError(
            f"{name!r} names a task file with several dtypes ({ids}); name the kernel by task id or pass --dtype"
        )
    close = sorted(t for t in tasks if t.startswith(name[:4]))[:5] if len(name) >= 4 else []
    hint = f" (similar: {', '.join(close)})" if close else ""
    raise KeyError(
        f"{name!r} is not a kernforge task id or task name{hint}; see `kernforge tasks list`"
    )


def _top_level_functions(code: str) -> set[str] | None:
    try:
        tree = parse_python(code)
    except SyntaxError:
        return None
    return {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}


def adapt_entry_point(code: str, task: Task, alias: str = "kernel_function") -> tuple[str, str]:
    """KernelAgent kernels expose `kernel_function`; when the task's entry point is missing, append
    `def <entry>(<params>): return kernel_function(<params>)`. Returns (code, note)."""
    functions = _top_level_functions(code)
    if functions is None or task.entry_point in functions or alias not in functions:
        return code, ""
    params = list(task.signature().parameters)
    args = ", ".join(params)
    shim = f"\n\ndef {task.entry_point}({args}):\n    return {alias}({args})\n"
    return (
        code.rstrip() + "\n" + shim,
        f"entry point {task.entry_point}() added as a wrapper of {alias}()",
    )


# --------------------------------------------------------------------------------------------
# Judging
# --------------------------------------------------------------------------------------------


@dataclass
class ImportReport:
    format: str
    added: list[ResultRow] = field(default_factory=list)
    already: list[str] = field(
        default_factory=list
    )  # kernels whose row was stored by an earlier import
    unknown: list[Skipped] = field(default_factory=list)  # task names that are not ours
    skipped: list[Skipped] = field(default_factory=list)  # unusable lines, files, folders
    # kernels that could not be judged here, for a reason that is not the method's: their task
    # can be passed by no kernel, is too large for the CPU, or the kernel needs a CUDA device
    not_judged: list[Skipped] = field(default_factory=list)
    tasks: dict[str, str] = field(default_factory=dict)  # task id -> the file it was built as

    @property
    def passed(self) -> int:
        return sum(r.passed for r in self.added)

    @property
    def judged_nothing(self) -> bool:
        """Nothing was judged now and nothing had been before: the import achieved nothing."""
        return not self.added and not self.already


def _task_for(
    kernel: ImportedKernel,
    files: TaskFiles,
    tasks: Callable[[], dict[str, Task]],
    dtype: str | None,
) -> tuple[Task | None, str, str]:
    """(the task a kernel is judged on, a note on the choice, why there is none). The problem
    published beside it when it loads; else the kernforge task its name gives."""
    own_error = ""
    if kernel.task_source is not None:
        try:
            return files.task(kernel.name, kernel.task_source), "", ""
        except TaskError as exc:
            own_error = (
                f"its problem ({kernel.task_from}) does not load: field {exc.field}: {exc.problem}"
            )
    try:
        task = resolve_task(kernel.name, tasks(), dtype)
    except KeyError as exc:
        return None, "", (f"{own_error}; and " if own_error else "") + str(exc.args[0])
    return task, (f"judged on kernforge's {task.id}: {own_error}" if own_error else ""), ""


def _adapted(code: str, task: Task, fmt: str, device: str) -> tuple[str, list[str]]:
    """The kernel fitted to the task's entry point and the judged device, with notes."""
    notes = []
    if fmt == "kernelagent":
        if task.entry_kind == "class":
            code, note = model_new_from(code, task)
        else:
            code, note = adapt_entry_point(code, task)
        notes.append(note)
    if device == "cpu":
        code, note = on_cpu(code)
        notes.append(note)
    return code, [n for n in notes if n]


def import_kernels(
    plan: ImportPlan,
    store: ResultStore,
    *,
    method: str | None = None,
    model: str = "",
    dtype: str | None = None,
    judge_config: Any = None,
    scripted: bool = False,
    tasks: dict[str, Task] | None = None,
    on_row: Callable[[ResultRow], None] | None = None,
    on_judging: Callable[[str, str], None] | None = None,
) -> ImportReport:
    """Judge every kernel of `plan` and append a row per kernel to `store` (resumable: a kernel
    whose (task, method, seed, attempt) is stored already is not judged again). `on_judging`
    gets (task id, origin) as each judge call starts, `on_row` each row as it is stored. A kernel is
    judged on the problem its source published beside it (`benchmarks.results.import_tasks`,
    written under `<store>/tasks/<format>/`), else on the kernforge task its name gives."""
    from benchmarks.harness.judge import JudgeConfig, evaluate, resolve_device

    known: dict[str, dict[str, Task]] = {} if tasks is None else {"": tasks}

    def ours() -> dict[str, Task]:
        if "" not in known:
            known[""] = all_tasks()
        return known[""]

    config = judge_config or JudgeConfig(device="auto")
    device = resolve_device(config.device)
    method = method or DEFAULT_METHOD[plan.format]
    source: Source = f"import:{plan.format}"  # type: ignore[assignment]
    report = ImportReport(plan.format, skipped=list(plan.skipped))
    files = TaskFiles(store.dir / "tasks" / plan.format)
    resolved: list[tuple[ImportedKernel, Task, str]] = []
    for kernel in plan.kernels:
        task, choice, why = _task_for(kernel, files, ours, dtype)
        if task is None:
            bucket = report.skipped if kernel.task_source is not None else report.unknown
            bucket.append(Skipped(kernel.origin, why))
            continue
        if task.estimated_costs:
            report.tasks[task.id] = str(task.path)
        resolved.append((kernel, task, choice))
    # a kernel named by task id wins over one named by task name that maps to the same row
    resolved.sort(key=lambda kt: kt[0].name != kt[1].id)
    given: dict[tuple[str, int, int], str] = {}
    for kernel, task, choice in resolved:
        key = (task.id, kernel.seed, kernel.attempt)
        if key in given:
            report.skipped.append(
                Skipped(
                    kernel.origin,
                    f"also {task.id} (seed {kernel.seed}, attempt {kernel.attempt}), "
                    f"already given by {given[key]}; skipped",
                )
            )
            continue
        given[key] = kernel.origin
        if store.has(task.id, method, kernel.seed, kernel.attempt):
            report.already.append(
                f"{task.id} (seed {kernel.seed}, attempt {kernel.attempt}) from {kernel.origin}"
            )
            continue
        why_not = _why_not_judged(task, kernel, device)
        if why_not:
            report.not_judged.append(Skipped(kernel.origin, f"{task.id}: {why_not}"))
            continue
        common = dict(
            category=task.category,
            method=method,
            model=model,
            seed=kernel.seed,
            attempt=kernel.attempt,
            iteration=kernel.iteration,
            scripted=scripted,
            source=source,
        )
        if kernel.code is None:
            row = no_kernel_row(
                task.id, reason=kernel.note or "no kernel", origin=kernel.origin, **common
            )
        else:
            code, notes = _adapted(kernel.code, task, plan.format, device)
            notes = [n for n in (choice, *notes) if n]
            if on_judging is not None:
                on_judging(task.id, kernel.origin)
            verdict = evaluate(task, kernel.origin, config, source=code, label=kernel.origin)
            row = row_from_verdict(
                verdict,
                origin=kernel.origin + (f" [{'; '.join(notes)}]" if notes else ""),
                **common,
            )
        store.append(row)
        report.added.append(row)
        if on_row is not None:
            on_row(row)
    store.write_parquet()
    return report


def _why_not_judged(task: Task, kernel: ImportedKernel, device: str) -> str:
    """Why this kernel is not judged on `device` although it is usable ("" when it is judged):
    its task can be passed by no kernel, the device cannot run the task, or the kernel asserts
    it runs on CUDA and the device is the CPU. None of these is the method's failure."""
    flagged = task.cannot_pass()
    if flagged:
        return f"no kernel can pass this task ({'; '.join(flagged)}); kept out of the results"
    refused = task.refusal(device)
    if refused:
        return f"not judged on the {device}: {refused}"
    if device == "cpu" and kernel.code is not None:
        cuda = needs_cuda(kernel.code)
        if cuda:
            return f"the kernel requires a CUDA device ({cuda}); judge it on a GPU"
    return ""
