"""Test helpers for the fork server (`benchmarks.harness.forkserver`): what evaluations left
behind, and which processes are the servers' own."""

from __future__ import annotations

from pathlib import Path

from benchmarks.harness import forkserver


def evaluation_folders(root: Path) -> list[Path]:
    """What evaluations left under `root`: every entry but the folders of live servers, and the
    evaluation folders inside those (an evaluation's folder is removed when it ends)."""
    live = {s.folder for s in forkserver.live_servers()}
    left = []
    for entry in sorted(Path(root).iterdir()):
        if entry in live:
            left += sorted(p for p in entry.iterdir() if p.name.startswith("e-"))
        else:
            left.append(entry)
    return left


def server_processes() -> set[int]:
    """Host pids of the live servers and their bubblewrap processes (between evaluations the only
    processes working in a server's folder)."""
    return {pid for s in forkserver.live_servers() for pid in (s.proc.pid, s.pid) if pid}
