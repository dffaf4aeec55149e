"""The error -> fix data set: `kernforge pairs export`.

Reads every run directory's `pairs.jsonl` (written by the agent, agents/core/pairs.py: per line a
failing attempt and the attempt that fixed it, each with code and verdict, the diff, the fix class
and its reasons) plus the run's `manifest.json` (task, method, model, device, date), and writes
one flat record per pair:

    jsonl     one JSON object per line
    parquet   one table
    hf        a Hugging Face `datasets` folder (Dataset.save_to_disk), loadable offline with
              datasets.load_from_disk

Pairs are deduplicated by a hash of both sides' normalised code (comments, docstrings and
formatting removed), first occurrence kept. A dataset card (README.md) describes the fields and
the provenance: runs, models, scripted or not, dates, and what was skipped and why.

Tolerant by design: a line that is not JSON (a last line torn by a crash included), is not a
pair record (`benchmarks.results.records.RunPair`) or has no code on either side is skipped with
its file and line; missing optional fields (model, category, fix class, verdicts, diff) are
filled with "unknown" / recomputed / empty and counted in the card. A run whose manifest.json
does not parse is left out whole, named with the file (the provenance of its pairs would be
unknown), and a pair whose verdict.json does not parse is skipped, named the same way: one
damaged run never stops the export of the others.
"""

from __future__ import annotations

import ast
import difflib
import hashlib
import json
import os
import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from benchmarks.pyparse import parse as parse_python
from benchmarks.results.jsonl import read_jsonl
from benchmarks.results.records import (
    MANIFEST_FILE,
    PAIRS_FILE,
    PairSide,
    RunFileError,
    RunManifest,
    RunPair,
    problem_of,
    read_json,
    read_manifest,
)
from benchmarks.results.rows import category_of, is_scripted_llm

FORMATS = ("jsonl", "parquet", "hf")
CARD_MARKER = "<!-- kernforge pairs card -->"


class PairRecord(BaseModel):
    """One error -> fix pair, flat (verdicts as JSON text) so every format holds it unchanged."""

    id: str  # hash of both sides' normalised code: the dedup key
    task_id: str
    category: str
    method: str
    model: str
    scripted: bool  # the run used the replay provider: scripted kernels, not a model's
    run_id: str
    device: str
    created: str  # when the run started (ISO 8601), "" when unknown
    error_class: str  # why the failing attempt failed (benchmarks.verdict.ErrorClass)
    fix_class: str  # agents/core/pairs.py's classes, "unknown" when the record had none
    fix_reasons: list[str]
    hops: int  # 1: the fix revised the failing attempt directly; more: a chain of failures
    failing_attempt: int | None
    fixing_attempt: int | None
    failing_node: str
    fixing_node: str
    failing_stage: str  # last stage the failing attempt passed ("" for none)
    fixing_stage: str
    failing_message: str
    fixing_speedup_eager: float | None
    failing_code: str
    fixing_code: str
    diff: str
    failing_verdict: str  # the full verdict, JSON text ("" when absent)
    fixing_verdict: str
    source: str  # pairs.jsonl path and line


FIELD_DOCS: dict[str, str] = {
    "id": "16-hex hash of both sides' normalised code (comments, docstrings, formatting removed); the dedup key",
    "task_id": "kernforge task id (benchmarks/tasks), e.g. softmax_fp16",
    "category": "task category (activation, normalization, matmul, attention, ...)",
    "method": "method preset of the run (aka, geak, kernelagent, single-shot, offline)",
    "model": "LLM provider:model of the run; replay:... is scripted, offline is the rule-based policy",
    "scripted": "true when the run's replies came from a replay script (not a model): pipeline demonstration data",
    "run_id": "the run directory's id",
    "device": "device the verdicts were judged on",
    "created": "when the run started (ISO 8601 UTC)",
    "error_class": "why the failing attempt failed, from the judge's fixed taxonomy",
    "fix_class": "what kind of change fixed it (mask/bounds, dtype/cast, indexing/stride, grid/launch, API misuse, numerical stability, structural rewrite)",
    "fix_reasons": "the rules that chose the fix class",
    "hops": "1 when the fixing attempt revised the failing one directly; n for the n-th failing ancestor",
    "failing_attempt": "attempt id of the failing kernel in its run",
    "fixing_attempt": "attempt id of the kernel that passed",
    "failing_node": "graph node that wrote the failing kernel",
    "fixing_node": "graph node that wrote the fix",
    "failing_stage": "last judge stage the failing kernel passed",
    "fixing_stage": "last judge stage the fixing kernel passed",
    "failing_message": "the judge's message for the failure",
    "fixing_speedup_eager": "geomean speedup over PyTorch eager of the fix (null: not measured, e.g. CPU interpreter)",
    "failing_code": "the failing kernel's source",
    "fixing_code": "the fixing kernel's source",
    "diff": "unified diff failing -> fixing",
    "failing_verdict": "the failing kernel's full verdict (JSON text)",
    "fixing_verdict": "the fixing kernel's full verdict (JSON text)",
    "source": "pairs.jsonl file and line the pair came from",
}


@dataclass
class RunInfo:
    run_id: str
    path: str
    task_id: str
    method: str
    model: str
    scripted: bool
    created: str
    device: str
    pairs_read: int = 0
    pairs_kept: int = 0


@dataclass
class PairSet:
    records: list[PairRecord] = field(default_factory=list)
    runs: list[RunInfo] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # "file:line: reason"
    duplicates: int = 0
    filled: Counter = field(
        default_factory=Counter
    )  # optional field -> records it was missing from


# --------------------------------------------------------------------------------------------
# Normalised code and dedup
# --------------------------------------------------------------------------------------------


def _drop_docstrings(tree: ast.AST) -> None:
    for node in ast.walk(tree):
        if (
            isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
            and node.body
        ):
            first = node.body[0]
            if (
                isinstance(first, ast.Expr)
                and isinstance(first.value, ast.Constant)
                and isinstance(first.value.value, str)
            ):
                node.body = node.body[1:] or [ast.Pass()]


def normalise_code(code: str) -> str:
    """The code's structure without comments, docstrings or formatting (its AST); for code that
    does not parse, the text without comments and with whitespace collapsed."""
    try:
        tree = parse_python(code)
    except SyntaxError:
        lines = (
            re.sub(r"\s+", " ", re.sub(r"#[^\n]*", "", line)).strip() for line in code.splitlines()
        )
        return "\n".join(line for line in lines if line)
    _drop_docstrings(tree)
    return ast.dump(tree)


def pair_hash(failing_code: str, fixing_code: str) -> str:
    joined = normalise_code(failing_code) + "\0" + normalise_code(fixing_code)
    return hashlib.sha256(joined.encode()).hexdigest()[:16]


# --------------------------------------------------------------------------------------------
# Reading runs
# --------------------------------------------------------------------------------------------


def find_pair_files(paths: list[str | Path]) -> list[Path]:
    """pairs.jsonl of each run directory given, or of the run directories under a folder."""
    files: list[Path] = []
    for p in map(Path, paths):
        if not p.exists():
            raise FileNotFoundError(f"{p} does not exist")
        if p.is_file() and p.name.endswith(".jsonl"):
            files.append(p)
        elif (p / PAIRS_FILE).is_file():
            files.append(p / PAIRS_FILE)
        else:
            found = sorted(f for f in p.rglob(PAIRS_FILE) if len(f.relative_to(p).parts) <= 4)
            if not found and not (p / "manifest.json").is_file():
                raise FileNotFoundError(
                    f"no {PAIRS_FILE} in or under {p} (give run directories, or a folder holding them)"
                )
            files.extend(found)
    return list(dict.fromkeys(files))


def _run_info(run_dir: Path) -> RunInfo:
    manifest = read_manifest(run_dir) if (run_dir / MANIFEST_FILE).is_file() else RunManifest()
    config = manifest.cfg
    return RunInfo(
        run_id=str(manifest.run_id or run_dir.name),
        path=str(run_dir),
        task_id=manifest.task_id,
        method=str(config.method or ""),
        model=manifest.model,
        scripted=is_scripted_llm(manifest.model) or is_scripted_llm(str(config.llm or "")),
        created=str(manifest.created or ""),
        device=manifest.device_name,
    )


def _side_code(side: PairSide, run_dir: Path) -> str | None:
    if side.code and side.code.strip():
        return side.code
    if side.code_path and (run_dir / side.code_path).is_file():
        return (run_dir / side.code_path).read_text(encoding="utf-8")
    return None


def _side_verdict(side: PairSide, run_dir: Path) -> dict[str, Any] | None:
    if side.verdict is not None:
        return side.verdict
    path = run_dir / "attempts" / str(side.id) / "verdict.json"
    if side.id is None or not path.is_file():
        return None
    return read_json(path)


def _record(
    pair: RunPair, run: RunInfo, run_dir: Path, where: str, filled: Counter
) -> PairRecord | str:
    failing, fixing = pair.failing, pair.fixing
    failing_code, fixing_code = _side_code(failing, run_dir), _side_code(fixing, run_dir)
    if failing_code is None or fixing_code is None:
        return f"no code for the {'failing' if failing_code is None else 'fixing'} side (neither 'code' nor a readable 'code_path')"
    fv, xv = _side_verdict(failing, run_dir), _side_verdict(fixing, run_dir)

    def pick(name: str, *values: Any, default: Any = "unknown") -> Any:
        for v in values:
            if v not in (None, ""):
                return v
        filled[name] += 1
        return default

    task_id = pick(
        "task_id",
        pair.task_id,
        pair.task,
        run.task_id,
        (fv or {}).get("task_id"),
        (xv or {}).get("task_id"),
    )
    diff = pair.diff
    if not diff:
        filled["diff (recomputed)"] += 1
        diff = "".join(
            difflib.unified_diff(
                failing_code.splitlines(keepends=True),
                fixing_code.splitlines(keepends=True),
                f"attempts/{failing.id}/code.py",
                f"attempts/{fixing.id}/code.py",
            )
        )
    if fv is None:
        filled["failing_verdict"] += 1
    if xv is None:
        filled["fixing_verdict"] += 1
    model = pick("model", pair.model, run.model)
    return PairRecord(
        id=pair_hash(failing_code, fixing_code),
        task_id=task_id,
        category=pick(
            "category", pair.category, category_of(task_id) if task_id != "unknown" else None
        ),
        method=pick("method", pair.method, run.method),
        model=model,
        scripted=bool(pair.scripted) or run.scripted or is_scripted_llm(str(model)),
        run_id=run.run_id,
        device=pick("device", pair.device, run.device, (xv or {}).get("device")),
        created=pick("created", pair.created, run.created, default=""),
        error_class=pick("error_class", pair.error_class, (fv or {}).get("error_class")),
        fix_class=pick("fix_class", pair.fix_class),
        fix_reasons=list(pair.fix_reasons or []),
        hops=pair.hops or 1,
        failing_attempt=failing.id,
        fixing_attempt=fixing.id,
        failing_node=failing.node or "",
        fixing_node=fixing.node or "",
        failing_stage=str((fv or {}).get("stage_reached") or ""),
        fixing_stage=str((xv or {}).get("stage_reached") or ""),
        failing_message=str((fv or {}).get("message") or ""),
        fixing_speedup_eager=(xv or {}).get("geomean_speedup_eager"),
        failing_code=failing_code,
        fixing_code=fixing_code,
        diff=diff,
        failing_verdict=json.dumps(fv) if fv is not None else "",
        fixing_verdict=json.dumps(xv) if xv is not None else "",
        source=where,
    )


def collect_pairs(paths: list[str | Path]) -> PairSet:
    """Every pair of every run under `paths`, deduplicated, with provenance and what was skipped."""
    result = PairSet()
    seen: set[str] = set()
    for pairs_file in find_pair_files(paths):
        run_dir = pairs_file.parent
        try:
            run = _run_info(run_dir)
        except RunFileError as exc:  # one bad run never hides the others' pairs
            result.skipped.append(f"{run_dir} left out: {exc}")
            continue
        result.runs.append(run)
        lines, damaged = read_jsonl(pairs_file)
        result.skipped.extend(damaged)
        for n, raw in lines:
            where = f"{pairs_file}:{n}"
            if not isinstance(raw, dict):
                result.skipped.append(f"{where}: not a JSON object")
                continue
            run.pairs_read += 1
            try:
                pair = RunPair.model_validate(raw)
            except ValidationError as exc:
                result.skipped.append(f"{where}: not a pair record ({problem_of(exc)})")
                continue
            try:
                record = _record(pair, run, run_dir, where, result.filled)
            except RunFileError as exc:
                record = str(exc)
            if isinstance(record, str):
                result.skipped.append(f"{where}: {record}")
                continue
            if record.id in seen:
                result.duplicates += 1
                continue
            seen.add(record.id)
            run.pairs_kept += 1
            result.records.append(record)
    return result


# --------------------------------------------------------------------------------------------
# Writing
# --------------------------------------------------------------------------------------------


def dataset_card(pairs: PairSet, fmt: str) -> str:
    records = pairs.records
    scripted = sum(r.scripted for r in records)
    dates = sorted(r.created for r in records if r.created)
    n = len(records)
    size = "n<1K" if n < 1000 else "1K<n<10K" if n < 10_000 else "10K<n<100K"
    lines = [
        "---",
        "pretty_name: kernforge error-fix pairs",
        "tags:",
        "- triton",
        "- gpu-kernels",
        "- code-repair",
        f"size_categories:\n- {size}",
        "---",
        "",
        "# kernforge error → fix pairs",
        CARD_MARKER,
        "",
        "Pairs of Triton kernels written by kernforge's agent: a kernel the judge rejected and the later kernel, "
        "in the same run, that fixed it. Every verdict comes from kernforge's judge (static check, compile, call, "
        "correctness on standard and outlier inputs at every shape, determinism, no PyTorch fallback, timing on a GPU).",
        "",
        f"- **pairs**: {n} (format: {fmt}), after removing {pairs.duplicates} duplicate(s) by normalised code of both sides",
        f"- **scripted**: {scripted} of {n} pairs come from runs with the replay provider (`scripted = true`): their "
        "kernels were served from a script, not written by a model; use them to test pipelines, not to train or rank models."
        if scripted
        else f"- **scripted**: none of the {n} pairs come from the replay provider",
        f"- **runs**: {len(pairs.runs)}; dates {dates[0]} … {dates[-1]}"
        if dates
        else f"- **runs**: {len(pairs.runs)}",
        f"- **exported**: {datetime.now(UTC).isoformat(timespec='seconds')}",
        "",
        "## Provenance",
        "",
        "| run | task | method | model | scripted | device | created | pairs read | kept |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in pairs.runs:
        lines.append(
            f"| {r.run_id} | {r.task_id or '—'} | {r.method or '—'} | {r.model or '—'} | {'yes' if r.scripted else 'no'} | "
            f"{r.device or '—'} | {r.created or '—'} | {r.pairs_read} | {r.pairs_kept} |"
        )
    lines += ["", "## Fix classes", "", "| fix class | pairs |", "|---|---|"]
    lines += [f"| {k} | {v} |" for k, v in Counter(r.fix_class for r in records).most_common()]
    lines += [
        "",
        "## Error classes of the failing side",
        "",
        "| error class | pairs |",
        "|---|---|",
    ]
    lines += [f"| {k} | {v} |" for k, v in Counter(r.error_class for r in records).most_common()]
    lines += ["", "## Fields", "", "| field | type | meaning |", "|---|---|---|"]
    for name, info in PairRecord.model_fields.items():
        type_name = getattr(info.annotation, "__name__", str(info.annotation)).replace("|", "or")
        lines.append(f"| {name} | {type_name} | {FIELD_DOCS.get(name, '')} |")
    lines += ["", "## What was filled in or skipped", ""]
    if pairs.filled:
        lines += [
            f'- `{k}` missing in {v} record(s): filled with "unknown" (or recomputed / left empty)'
            for k, v in sorted(pairs.filled.items())
        ]
    if pairs.skipped:
        lines += [f"- skipped {s}" for s in pairs.skipped]
    if not pairs.filled and not pairs.skipped:
        lines.append("- nothing: every record was complete")
    lines += [
        "",
        "## Caveats",
        "",
        "- Speedups exist only for runs judged on a GPU; on the CPU interpreter they are null (not measured).",
        "- The fix class is a rule-based label over the diff and the failing verdict, not a human annotation.",
        "- Load the hf format offline with `datasets.load_from_disk(path)`; verdicts are JSON text (`json.loads`).",
        "",
    ]
    return "\n".join(lines)


def _card_path(out: Path, fmt: str) -> Path:
    if fmt == "hf":
        return out / "README.md"
    readme = out.parent / "README.md"
    if not readme.exists() or CARD_MARKER in readme.read_text(encoding="utf-8", errors="replace"):
        return readme
    return out.with_name(f"{out.stem}.README.md")  # never overwrite someone else's README


@dataclass
class ExportResult:
    out: Path
    card: Path
    pairs: PairSet


def export_pairs(paths: list[str | Path], fmt: str, out: str | Path) -> ExportResult:
    """Collect, deduplicate and write the pairs of the runs under `paths` as `fmt` to `out`."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
    out = Path(out)
    pairs = collect_pairs(paths)
    rows = [r.model_dump(mode="json") for r in pairs.records]
    out.parent.mkdir(parents=True, exist_ok=True)
    if fmt == "jsonl":
        tmp = out.with_name(f".{out.name}.tmp")
        tmp.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        os.replace(tmp, out)
    elif fmt == "parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        pq.write_table(pa.Table.from_pylist(rows, schema=_arrow_schema(pa)), out)
    else:
        os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        try:
            import datasets
        except ImportError as exc:  # pragma: no cover - depends on the install
            raise RuntimeError(
                "--format hf needs the Hugging Face datasets library: pip install 'datasets>=2.19'"
            ) from exc
        datasets.disable_progress_bars()
        datasets.Dataset.from_list(rows, features=_hf_features(datasets)).save_to_disk(str(out))
    card = _card_path(out, fmt)
    card.write_text(dataset_card(pairs, fmt), encoding="utf-8")
    return ExportResult(out, card, pairs)


def _arrow_schema(pa: Any) -> Any:
    types = {str: pa.string(), bool: pa.bool_(), int: pa.int64(), float: pa.float64()}
    fields = []
    for name, info in PairRecord.model_fields.items():
        ann = info.annotation
        if ann == list[str]:
            fields.append(pa.field(name, pa.list_(pa.string())))
            continue
        base = next(
            (
                t
                for t in (str, bool, int, float)
                if ann is t or (hasattr(ann, "__args__") and t in ann.__args__)
            ),
            str,
        )
        fields.append(pa.field(name, types[base]))
    return pa.schema(fields)


def _hf_features(datasets: Any) -> Any:
    kinds = {str: "string", bool: "bool", int: "int64", float: "float64"}
    feats = {}
    for name, info in PairRecord.model_fields.items():
        ann = info.annotation
        if ann == list[str]:
            feats[name] = datasets.Sequence(datasets.Value("string"))
            continue
        base = next(
            (
                t
                for t in (str, bool, int, float)
                if ann is t or (hasattr(ann, "__args__") and t in ann.__args__)
            ),
            str,
        )
        feats[name] = datasets.Value(kinds[base])
    return datasets.Features(feats)
