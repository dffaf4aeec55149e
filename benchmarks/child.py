"""A worker process (`benchmarks.worker`) in its own process group, and its progress lines.

Used by the judge for untrusted candidates and by the perf stage for trusted baselines."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent


class Child:
    """A worker process in its own process group, with its progress lines."""

    def __init__(self, folder: Path, request: dict, device: str) -> None:
        self.folder = folder
        (folder / "request.json").write_text(json.dumps(request))
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join([str(REPO_ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
        env["PYTHONUNBUFFERED"] = "1"
        if device == "cpu":
            env["TRITON_INTERPRET"] = "1"
        else:
            env.pop("TRITON_INTERPRET", None)
        self._out = open(folder / "stdout.txt", "wb")  # noqa: SIM115
        self._err = open(folder / "stderr.txt", "wb")  # noqa: SIM115
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "benchmarks.worker", str(folder / "request.json")],
            cwd=folder,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=self._out,
            stderr=self._err,
            start_new_session=True,
        )
        self._pos = 0
        self.events: list[dict] = []

    def poll_events(self) -> list[dict]:
        path = self.folder / "progress.jsonl"
        if not path.exists():
            return []
        with open(path, "rb") as f:
            f.seek(self._pos)
            chunk = f.read()
        end = chunk.rfind(b"\n")
        if end < 0:
            return []
        self._pos += end + 1
        new = []
        for line in chunk[: end + 1].splitlines():
            try:
                new.append(json.loads(line))
            except json.JSONDecodeError:
                new.append({"event": "garbled", "raw": line[:200].decode(errors="replace")})
        self.events.extend(new)
        return new

    def kill(self) -> None:
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.proc.wait()
        self._close()

    def wait(self, timeout: float) -> int | None:
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return None

    def _close(self) -> None:
        for f in (self._out, self._err):
            if not f.closed:
                f.close()

    def result(self) -> dict | None:
        path = self.folder / "result.json"
        if not path.exists():
            return None
        try:
            return json.loads(path.read_text())
        except json.JSONDecodeError:
            return None

    def stderr_tail(self, n: int = 1500) -> str:
        self._close()
        try:
            return (self.folder / "stderr.txt").read_bytes()[-n:].decode(errors="replace")
        except OSError:
            return ""

    def last_step(self) -> str:
        for evt in reversed(self.events):
            if evt.get("event") in ("call", "perf", "import"):
                if evt["event"] == "call":
                    return f"during the call on shape {evt['shape']}, mode {evt['mode']}, trial {evt['trial']}"
                if evt["event"] == "perf":
                    return f"while timing shape {evt['shape']}"
                return "while importing the candidate"
        return "before the candidate was imported"


def _signal_name(code: int) -> str:
    try:
        return signal.Signals(-code).name
    except ValueError:
        return f"signal {-code}"


def signal_name(code: int) -> str:
    """'SIGSEGV' for a return code of -11."""
    try:
        return signal.Signals(-code).name
    except ValueError:
        return f"signal {-code}"
