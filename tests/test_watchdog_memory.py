"""What the watchdog's memory verdict says about what held the memory (procfs.memory_parts)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from benchmarks.harness import procfs
from benchmarks.harness.watchdog import GiB, MiB, Watchdog, WatchLimits

pytestmark = pytest.mark.skipif(
    not Path(f"/proc/{os.getpid()}/smaps_rollup").exists(), reason="needs Linux smaps_rollup"
)


def test_memory_parts_split_a_process_by_kind() -> None:
    hoard = bytearray(64 * MiB)  # written below, so resident and anonymous
    hoard[::4096] = b"x" * len(hoard[::4096])
    parts = procfs.memory_parts(os.getpid())
    assert set(parts) == {"anon", "file", "shmem"}
    assert parts["anon"] >= 64 * MiB and parts["file"] > 0  # the heap; python's own mappings
    assert procfs.memory_parts(2**22 + 12345) == {}  # a pid that does not exist
    del hoard


def test_a_memory_verdict_names_the_largest_process_and_its_kinds(tmp_path: Path) -> None:
    limits = WatchLimits(
        memory=1 * MiB, processes=64, folder_bytes=GiB, folder_files=100, poll_s=0.1
    )
    over = Watchdog(os.getpid(), tmp_path, limits, sandboxed=False).check()
    assert over is not None and over.what == "memory", over
    assert f"the largest, pid {os.getpid()}: anon " in over.message and "file " in over.message
