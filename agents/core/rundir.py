"""A run directory: plain files a person (or a script) can read, written so a crash loses nothing.

    runs/<run-id>/
      manifest.json        config, settings and their sources, versions, device fingerprint, git
      checkpoint.sqlite    LangGraph checkpoint (what `--resume` continues from)
      events.jsonl         one JSON object per line: what happened, when, with numbers
      budget.json          tokens, cost, wall and GPU time spent so far
      attempts/<n>/        code.py, verdict.json, attempt.json, prompt.md, reply.md, profile.json
      best/                kernel.py + summary.json (the incumbent; updated when it changes)
      pairs.jsonl          error -> fix transition pairs (agents/core/pairs.py)
      model_test/          the model-written test (agent.llm_tests): test_kernel.py, prompt.md, reply.md
      owner.lock           names the one process that owns the run now (agents/core/lock.py)
      error.log            the full trace of an unexpected error, should one end the run

Each attempt's folder is written whole into a temporary folder and renamed into place, so an
attempt folder either is complete or does not exist; every JSON file is replaced atomically;
events and pairs are appended line by line and flushed to disk, a torn last line (a crash in
mid-write) ended before the next (`benchmarks.append_line`). Every file is scrubbed of the
secrets this process knows (agents/core/redact.py) as it is written.

What is read back either recovers or is a `RunFileError` of one line naming the file: a torn or
damaged line of events.jsonl or pairs.jsonl is skipped (`damaged_lines` names it); an
unreadable attempt.json is not taken back on resume (the candidate is judged again and the old
folder kept aside); a damaged manifest or verdict is an error that says what is lost.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from agents.core.crashlog import ERROR_LOG, append_trace
from agents.core.redact import scrub
from agents.core.state import Attempt
from benchmarks import RunFileError, append_line, read_json, read_jsonl, unknown_name

MANIFEST = "manifest.json"
CHECKPOINT = "checkpoint.sqlite"
EVENTS = "events.jsonl"
PAIRS = "pairs.jsonl"
BUDGET = "budget.json"


def new_run_id(task_id: str) -> str:
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    return f"{stamp}-{task_id}-{secrets.token_hex(2)}"


def write_json_atomic(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(scrub(json.dumps(data, indent=2, default=str)) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def _append_line(path: Path, record: dict[str, Any]) -> None:
    append_line(path, scrub(json.dumps(record, default=str)))


class RunDir:
    """The files of one run."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._t0 = time.monotonic()
        self._closers: list[Callable[[], None]] = []

    def on_close(self, closer: Callable[[], None]) -> None:
        """Have `close` call `closer` (e.g. the checkpoint's database connection)."""
        self._closers.append(closer)

    def close(self) -> None:
        """Close what the run holds open. The checkpoint's write-ahead log then goes into
        checkpoint.sqlite, so the folder is whole on its own (a copy of it included)."""
        while self._closers:
            self._closers.pop()()

    # -- locating -------------------------------------------------------------------------
    @classmethod
    def create(cls, runs_dir: str | Path, run_id: str) -> RunDir:
        path = Path(runs_dir) / run_id
        if path.exists() and any(path.iterdir()):
            raise FileExistsError(
                f"run directory {path} already exists; resume it with `kernforge run --resume {run_id}` "
                "or choose another --run-id"
            )
        (path / "attempts").mkdir(parents=True, exist_ok=True)
        return cls(path)

    @classmethod
    def find(cls, ref: str | Path, runs_dir: str | Path) -> RunDir:
        """A run by id (under `runs_dir`) or by path; a clear error when there is none."""
        for candidate in (Path(ref), Path(runs_dir) / str(ref)):
            if (candidate / MANIFEST).is_file():
                return cls(candidate)
        root = Path(runs_dir)
        runs = sorted(p.parent.name for p in root.glob(f"*/{MANIFEST}"))
        raise FileNotFoundError(
            unknown_name(
                "run",
                str(ref),
                runs,
                f"neither {ref} nor {root / str(ref)} holds a {MANIFEST} (list runs with "
                f"`ls {root}/`, or pass --runs-dir)",
            )
        )

    @property
    def run_id(self) -> str:
        return self.path.name

    @property
    def checkpoint(self) -> Path:
        return self.path / CHECKPOINT

    def rel(self, path: Path) -> str:
        return str(path.relative_to(self.path))

    # -- manifest, budget -----------------------------------------------------------------
    def write_manifest(self, manifest: dict[str, Any]) -> None:
        write_json_atomic(self.path / MANIFEST, manifest)

    def manifest(self) -> dict[str, Any]:
        """The manifest; a `RunFileError` (the run cannot be resumed without it) when damaged."""
        try:
            return read_json(self.path / MANIFEST)
        except RunFileError as exc:
            raise RunFileError(
                exc.where,
                f"{exc.problem}: the run cannot be resumed without "
                "its manifest (its attempts on disk are kept)",
            ) from None

    def write_budget(self, snapshot: dict[str, Any]) -> None:
        write_json_atomic(self.path / BUDGET, snapshot)

    # -- events -----------------------------------------------------------------------------
    def event(self, kind: str, **fields: Any) -> dict[str, Any]:
        record = {
            "t": datetime.now(UTC).isoformat(timespec="milliseconds"),
            "elapsed_s": round(time.monotonic() - self._t0, 3),
            "event": kind,
            **fields,
        }
        with self._lock:
            _append_line(self.path / EVENTS, record)
        return record

    def events(self) -> list[dict[str, Any]]:
        """Every readable event (a torn or damaged line is skipped: `damaged_lines`)."""
        return [e for _, e in read_jsonl(self.path / EVENTS)[0] if isinstance(e, dict)]

    def damaged_lines(self) -> list[str]:
        """One warning (`file:line`, why) per line of events.jsonl and pairs.jsonl skipped when
        read: a last line torn by a crash, or a damaged one."""
        return [w for name in (EVENTS, PAIRS) for w in read_jsonl(self.path / name)[1]]

    def log_error(self, exc: BaseException, context: str = "") -> Path:
        """Append `exc`'s full trace to the run's error.log; returns the log's path."""
        return append_trace(self.path / ERROR_LOG, exc, context or f"run {self.run_id}")

    # -- attempts ---------------------------------------------------------------------------
    def attempt_dir(self, attempt_id: int) -> Path:
        return self.path / "attempts" / str(attempt_id)

    def attempt_ids_on_disk(self) -> list[int]:
        root = self.path / "attempts"
        if not root.is_dir():
            return []
        return sorted(int(p.name) for p in root.iterdir() if p.is_dir() and p.name.isdigit())

    def read_attempt(self, attempt_id: int) -> Attempt | None:
        """An attempt's attempt.json (None when absent); `RunFileError` naming it when damaged."""
        path = self.attempt_dir(attempt_id) / "attempt.json"
        if not path.is_file():
            return None
        try:
            return Attempt.model_validate_json(path.read_bytes())
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "<root>"
            raise RunFileError(path, f"not an attempt record ({where}: {first['msg']})") from None

    def find_attempt(self, key: str) -> Attempt | None:
        """The attempt already on disk for a candidate key (work done before a crash), if any.
        A damaged attempt.json is passed over (an event names it): that candidate is judged
        again, and its old folder is kept aside when the new one takes its place."""
        for attempt_id in self.attempt_ids_on_disk():
            try:
                attempt = self.read_attempt(attempt_id)
            except RunFileError as exc:
                self.event("damaged_file", file=self.rel(Path(exc.where)), problem=str(exc))
                continue
            if attempt is not None and attempt.key == key:
                return attempt
        return None

    def read_verdict(self, attempt_id: int) -> dict[str, Any]:
        """An attempt's verdict.json; `RunFileError` naming it (what is lost) when damaged."""
        path = self.attempt_dir(attempt_id) / "verdict.json"
        try:
            return read_json(path)
        except RunFileError as exc:
            raise RunFileError(
                path,
                f"{exc.problem}: attempt {attempt_id}'s verdict is "
                "lost, so the run cannot go on from it (its other files are kept)",
            ) from None

    def write_attempt(
        self, attempt: Attempt, code: str, verdict_json: str, prompt: str, reply: str
    ) -> None:
        """Write an attempt's folder in one piece (temporary folder, then rename)."""
        final = self.attempt_dir(attempt.id)
        tmp = final.with_name(f".{attempt.id}.{os.getpid()}.tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        (tmp / "code.py").write_text(scrub(code), encoding="utf-8")
        (tmp / "verdict.json").write_text(scrub(verdict_json) + "\n", encoding="utf-8")
        if prompt:
            (tmp / "prompt.md").write_text(scrub(prompt), encoding="utf-8")
        if reply:
            (tmp / "reply.md").write_text(scrub(reply), encoding="utf-8")
        (tmp / "attempt.json").write_text(
            scrub(attempt.model_dump_json(indent=2)) + "\n", encoding="utf-8"
        )
        for f in tmp.iterdir():
            with f.open("rb") as handle:
                os.fsync(handle.fileno())
        if final.exists():  # a half-known folder from a killed process: keep it aside, never delete
            final.rename(final.with_name(f".{attempt.id}.replaced.{int(time.time())}"))
        os.replace(tmp, final)

    def update_attempt_record(self, attempt: Attempt) -> None:
        """Rewrite attempt.json (acceptance, masking, profile path); code and verdict stay untouched."""
        write_json_atomic(
            self.attempt_dir(attempt.id) / "attempt.json", attempt.model_dump(mode="json")
        )

    def write_profile(self, attempt_id: int, profile: dict[str, Any]) -> str:
        path = self.attempt_dir(attempt_id) / "profile.json"
        write_json_atomic(path, profile)
        return self.rel(path)

    def read_code(self, attempt: Attempt) -> str:
        return (self.path / attempt.code_path).read_text(encoding="utf-8")

    def write_model_test(self, code: str, prompt: str, reply: str) -> str:
        """Save the model-written test (agent.llm_tests); returns its path in the run."""
        from agents.core.model_tests import TEST_FILE

        folder = self.path / "model_test"
        folder.mkdir(exist_ok=True)
        for name, text in (("prompt.md", prompt), ("reply.md", reply), (TEST_FILE, code)):
            tmp = folder / f".{name}.tmp"
            tmp.write_text(scrub(text), encoding="utf-8")
            os.replace(tmp, folder / name)
        return self.rel(folder / TEST_FILE)

    # -- best, pairs ------------------------------------------------------------------------
    def write_best(self, code: str, summary: dict[str, Any]) -> Path:
        best = self.path / "best"
        best.mkdir(exist_ok=True)
        tmp = best / ".kernel.py.tmp"
        tmp.write_text(scrub(code), encoding="utf-8")
        os.replace(tmp, best / "kernel.py")
        write_json_atomic(best / "summary.json", summary)
        return best / "kernel.py"

    def pairs(self) -> list[dict[str, Any]]:
        """Every readable pair (a torn or damaged line is skipped: `damaged_lines`)."""
        return [p for _, p in read_jsonl(self.path / PAIRS)[0] if isinstance(p, dict)]

    def append_pair(self, record: dict[str, Any]) -> bool:
        """Append an error->fix pair unless the same (failing, fixing) pair is already there."""
        with self._lock:
            for existing in self.pairs():
                if (
                    (existing.get("failing") or {}).get("id"),
                    (existing.get("fixing") or {}).get("id"),
                ) == (
                    record["failing"]["id"],
                    record["fixing"]["id"],
                ):
                    return False
            _append_line(self.path / PAIRS, record)
        return True
