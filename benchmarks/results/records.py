"""The records of an agent run's files that the results code reads, each defined once, here.

An agent run directory (`runs/<run-id>/`, written by `agents.core.rundir`) holds:

    manifest.json              the run: id, date, task, model, config, device fingerprint
    summary.json               written when the run stops: whether it finished and why
    attempts/<n>/attempt.json  one attempt: its round, parent, mode, re-measurement
    attempts/<n>/verdict.json  the judge's verdict (`benchmarks.verdict.Verdict`, `read_verdict`)
    pairs.jsonl                one error -> fix pair per line (`RunPair`)

The agent builds `RunPair` (agents/core/pairs.py) and writes it with `RunPair.to_json`; the
results code (`benchmarks.results.rows`, `benchmarks.results.pairs_export`) parses the files into
these models instead of reading raw dicts. `RunManifest` and `AttemptFile` are views: they name
only the fields results read and ignore the rest of what the agent writes. A file that does not
parse is a `RunFileError` naming the file and the field.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from benchmarks.verdict import Verdict

MANIFEST_FILE = "manifest.json"
SUMMARY_FILE = "summary.json"
ATTEMPT_FILE = "attempt.json"
VERDICT_FILE = "verdict.json"
PAIRS_FILE = "pairs.jsonl"


class RunFileError(ValueError):
    """A file that kernforge wrote and reads back (a run's manifest, attempt, verdict or pair
    line; a results file; a bench plan) that cannot be read: the file and what is wrong, in one
    line, with what to do where there is something to do."""

    def __init__(self, where: Path | str, problem: str) -> None:
        self.where = str(where)
        self.problem = problem
        super().__init__(f"{where}: {problem}")


def problem_of(exc: ValidationError | json.JSONDecodeError) -> str:
    """One line for what pydantic or json found wrong (the first error, with its field)."""
    if isinstance(exc, json.JSONDecodeError):
        return f"not JSON ({exc.msg}: line {exc.lineno} column {exc.colno})"
    first = exc.errors()[0]
    field = ".".join(str(p) for p in first["loc"]) or "<root>"
    more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
    return f"{field}: {first['msg']}{more}"


# --------------------------------------------------------------------------------------------
# pairs.jsonl
# --------------------------------------------------------------------------------------------


class PairSide(BaseModel):
    """One side of a pair: the attempt, the graph node that wrote it, its code and verdict."""

    model_config = ConfigDict(extra="ignore")

    id: int | None = None  # attempt id in its run
    node: str | None = None
    code_path: str | None = None  # relative to the run directory
    code: str | None = None  # None or "" when only code_path is given
    verdict: dict[str, Any] | None = None  # the full Verdict JSON; None: read verdict.json


class RunPair(BaseModel):
    """One line of pairs.jsonl: a failing attempt and the later attempt that fixed it.

    The agent writes the first seven fields, every one set; readers take None as "not recorded"
    (a pair from an older or foreign writer). The provenance fields after them are optional, for
    pairs that come from elsewhere (the run's manifest supplies them otherwise)."""

    model_config = ConfigDict(extra="ignore")

    failing: PairSide
    fixing: PairSide
    hops: int | None = None  # 1: the fix revised the failing attempt directly; n: n-th ancestor
    error_class: str | None = None  # why the failing attempt failed (benchmarks.verdict.ErrorClass)
    fix_class: str | None = None  # agents/core/pairs.py FIX_CLASSES
    fix_reasons: list[str] | None = None
    diff: str | None = None  # unified diff failing -> fixing
    task_id: str | None = None
    task: str | None = None
    category: str | None = None
    method: str | None = None
    model: str | None = None
    scripted: bool | None = None
    device: str | None = None
    created: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The line as written to pairs.jsonl: the fields that were given, in field order."""
        return self.model_dump(mode="json", exclude_unset=True)


# --------------------------------------------------------------------------------------------
# manifest.json, attempts/<n>/attempt.json
# --------------------------------------------------------------------------------------------


class ManifestTask(BaseModel):
    model_config = ConfigDict(extra="ignore")

    id: str | None = None


class ManifestConfig(BaseModel):
    """The parts of the run's AgentConfig that results read."""

    model_config = ConfigDict(extra="ignore")

    task: str | None = None
    llm: str | None = None
    method: str | None = None  # None: not recorded (each reader picks its default)
    seed: int | None = None
    scripted_measure: bool | None = None


class ManifestDevice(BaseModel):
    model_config = ConfigDict(extra="ignore")

    resolved: str | None = None


class RunManifest(BaseModel):
    """The parts of a run's manifest.json that results read."""

    model_config = ConfigDict(extra="ignore")

    run_id: str | None = None
    created: str | None = None
    llm: str | None = None
    task: ManifestTask | None = None
    config: ManifestConfig | None = None
    fingerprint: dict[str, Any] | None = None
    device: ManifestDevice | None = None

    @property
    def cfg(self) -> ManifestConfig:
        """The config (an empty one when the manifest has none)."""
        return self.config or ManifestConfig()

    @property
    def task_id(self) -> str:
        """The task the run worked on: the resolved id, else the task the config named."""
        return (self.task.id if self.task else "") or self.cfg.task or ""

    @property
    def model(self) -> str:
        """The provider:model that wrote the kernels ("" when not recorded)."""
        return str(self.llm or self.cfg.llm or "")

    @property
    def device_name(self) -> str:
        """The device the run was judged on: GPU name, else the fingerprint's or resolved device."""
        fp = self.fingerprint or {}
        return str(
            fp.get("gpu_name")
            or fp.get("device")
            or (self.device.resolved if self.device else "")
            or ""
        )


class RunSummary(BaseModel):
    """The parts of a run's summary.json that results read."""

    model_config = ConfigDict(extra="ignore")

    finished: bool | None = None
    finish_reason: str | None = None


class AttemptMeasurement(BaseModel):
    model_config = ConfigDict(extra="ignore")

    scripted: bool | None = None


class AttemptFile(BaseModel):
    """The parts of attempts/<n>/attempt.json that results read."""

    model_config = ConfigDict(extra="ignore")

    iteration: int | None = None
    parent_id: int | None = None
    mode: str | None = None
    measurement: AttemptMeasurement | None = None
    provenance: dict[str, Any] | None = None  # agents.core.state.Provenance, as written

    def came_from(self) -> str:
        """Where the attempt's code came from, short: `generated:rowwise`, `model:openai:gpt-4o`,
        `optimized-from:3 (generated:rowwise)`; "" when the record has none (an older run)."""
        p = self.provenance or {}
        label = str(p.get("label") or p.get("kind") or "")
        base = p.get("base")
        if label and isinstance(base, dict) and (base.get("label") or base.get("kind")):
            label += f" ({base.get('label') or base.get('kind')})"
        return label


def _text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise RunFileError(path, "damaged: not UTF-8 text") from None
    except OSError as exc:
        raise RunFileError(path, f"unreadable ({exc.strerror or exc})") from None


def read_json(path: Path) -> dict[str, Any]:
    """The JSON object in `path`; `RunFileError` naming the file when it is not one."""
    path = Path(path)
    try:
        data = json.loads(_text(path))
    except json.JSONDecodeError as exc:
        raise RunFileError(path, problem_of(exc)) from None
    if not isinstance(data, dict):
        raise RunFileError(path, f"not a JSON object (a {type(data).__name__})")
    return data


def _read_model(path: Path, model: type[BaseModel], what: str) -> Any:
    try:
        return model.model_validate_json(_text(path))
    except ValidationError as exc:
        errors = exc.errors()
        if errors and errors[0]["type"] == "json_invalid":
            raise RunFileError(path, f"not JSON ({errors[0]['msg']})") from None
        raise RunFileError(path, f"not {what}: {problem_of(exc)}") from None


def read_manifest(run_dir: Path) -> RunManifest:
    """`run_dir/manifest.json` as a `RunManifest`; `RunFileError` naming the file when malformed."""
    return _read_model(Path(run_dir) / MANIFEST_FILE, RunManifest, "a run manifest")


def read_verdict(folder: Path) -> Verdict:
    """`folder/verdict.json` as a `Verdict`; `RunFileError` naming the file when malformed."""
    return _read_model(Path(folder) / VERDICT_FILE, Verdict, "a verdict")


def read_attempt(folder: Path) -> AttemptFile:
    """`folder/attempt.json` as an `AttemptFile` (empty when the file is absent); `RunFileError`
    naming the file when malformed."""
    path = Path(folder) / ATTEMPT_FILE
    if not path.is_file():
        return AttemptFile()
    return _read_model(path, AttemptFile, "an attempt record")


def read_summary(run_dir: Path) -> RunSummary | None:
    """`run_dir/summary.json` as a `RunSummary`, None when the run has written none yet;
    `RunFileError` naming the file when malformed."""
    path = Path(run_dir) / SUMMARY_FILE
    if not path.is_file():
        return None
    return _read_model(path, RunSummary, "a run summary")
