"""Baseline times measured once and reused: within a process, and across processes from disk.

A baseline is the task's own reference run eagerly and under `torch.compile` on one shape
(measured by a trusted worker, `benchmarks.harness.worker.run_baseline`). It depends on nothing
the candidate does, so one measurement serves every candidate judged on the same

    (task content, shape name and dims, dtype, input seed, device, software versions,
     the code that measures)

and that tuple, hashed, is the key of its cache entry. The task content is the sha256 of the task
file and of the files it imports from its folder (`benchmarks.harness.integrity`); the device is
the GPU's name and compute capability with the driver, CUDA, torch and Triton versions
(`profiling.device_fingerprint`); the measuring code is the sha256 of the files that time it
(MEASURING_CODE). Change any of them and the key changes, so the entry is measured afresh.

The device's peaks and launch floor, measured by the same job, are kept per device key beside
the shapes, so a fully cached evaluation needs no baseline job at all.

Two layers: a dictionary in this process, then one JSON file per entry under the cache folder
(`JudgeConfig.baseline_cache`: "" for `$KERNFORGE_CACHE_DIR/baselines`, default
`~/.cache/kernforge/baselines`; "off" for this process's memory only). Files are written
atomically; judges on several GPUs of one host take a lock per (task, device) before measuring,
so the second waits for the first's numbers instead of compiling the same reference again.

Baselines are timed on inputs of one fixed seed (`BASELINE_SEED`), so a cached entry serves
every evaluation; each candidate is timed on inputs of its own evaluation's fresh seed, drawn
from the same distribution (`benchmarks.harness.judge_config.JudgeConfig.seed`).

Every time handed out carries its origin (`benchmarks.verdict.BaselineOrigin`): measured for this
evaluation, or reused from this process's memory or from disk, and when it was measured.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import tempfile
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from benchmarks.harness import integrity
from benchmarks.task import Shape, Task
from benchmarks.verdict import BaselineOrigin

SCHEMA = 1
BASELINE_SEED = 0  # the seed of the inputs baselines are timed on (every evaluation's)
REPO_ROOT = Path(__file__).resolve().parents[2]
# the files whose code decides a baseline's number: a change to any of them re-measures
MEASURING_CODE = (
    "benchmarks/harness/worker.py",
    "benchmarks/harness/graph_timing.py",
    "benchmarks/harness/precision.py",
    "profiling/timing.py",
)
# the fingerprint fields that identify a device and its software (profiling.device_fingerprint)
DEVICE_FIELDS = (
    "gpu_name",
    "compute_capability",
    "driver_version",
    "cuda_version",
    "hip_version",
    "torch_version",
    "triton_version",
)
OFF = "off"

# entry key -> entry, for this process (every folder shares it: keys already say everything)
_MEMORY: dict[str, dict[str, Any]] = {}

# measure(shapes) -> a baseline job's result as a dict (messages.BaselineResult, to_dict)
Measure = Callable[[list[Shape]], dict[str, Any]]


def cache_folder(setting: str) -> Path | None:
    """The folder `JudgeConfig.baseline_cache` names: None for "off", the default for ""."""
    if setting == OFF:
        return None
    if setting:
        return Path(setting).expanduser()
    from profiling import cache_dir

    return cache_dir() / "baselines"


def _digest(data: Any) -> str:
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()


def code_digest() -> str:
    """The sha256 of the measuring code (MEASURING_CODE)."""
    parts = {}
    for rel in MEASURING_CODE:
        try:
            parts[rel] = hashlib.sha256((REPO_ROOT / rel).read_bytes()).hexdigest()
        except OSError:
            parts[rel] = "missing"
    return _digest(parts)


def task_digest(task: Task) -> str:
    """The sha256 of the task's content: its id and the hashes of its files, by file name (not
    by path, so the same task in another checkout has the same digest)."""
    files = sorted((Path(p).name, h) for p, h in integrity.seal(task).items())
    return _digest({"task": task.id, "files": files})


def device_identity(fingerprint: dict[str, Any]) -> dict[str, Any]:
    """The parts of a device fingerprint that identify the device and its software."""
    return {k: fingerprint.get(k) for k in DEVICE_FIELDS}


class Keys:
    """The cache keys of one task on one device: per shape and for the device itself."""

    def __init__(self, task: Task, seed: int, fingerprint: dict[str, Any]) -> None:
        self.device = device_identity(fingerprint)
        self.code = code_digest()
        self.task = task_digest(task)
        self.dtype = task.dtype
        self.seed = seed
        self.device_key = _digest({"schema": SCHEMA, "device": self.device, "code": self.code})[:32]

    def shape(self, shape: Shape) -> str:
        return _digest(
            {
                "schema": SCHEMA,
                "task": self.task,
                "shape": shape.name,
                "dims": dict(shape.dims),
                "dtype": self.dtype,
                "seed": self.seed,
                "device": self.device,
                "code": self.code,
            }
        )[:32]

    def lock_name(self) -> str:
        return _digest({"task": self.task, "device": self.device_key})[:32]


class BaselineStore:
    """Cache entries in this process's memory and, unless `folder` is None, on disk."""

    def __init__(self, folder: Path | None) -> None:
        self.folder = folder

    def _path(self, kind: str, key: str) -> Path | None:
        return None if self.folder is None else self.folder / kind / f"{key}.json"

    def get(self, kind: str, key: str) -> tuple[dict[str, Any], str] | None:
        """(entry, "memory" | "disk"), or None when neither holds it."""
        if key in _MEMORY:
            return _MEMORY[key], "memory"
        path = self._path(kind, key)
        if path is None or not path.is_file():
            return None
        try:
            entry = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None  # unreadable or half-written by a crashed process: measured again
        if not isinstance(entry, dict) or entry.get("schema") != SCHEMA or entry.get("key") != key:
            return None
        _MEMORY[key] = entry
        return entry, "disk"

    def put(self, kind: str, key: str, entry: dict[str, Any], *, disk: bool = True) -> None:
        """Keep `entry` in memory and (with `disk`, where there is a folder) on disk."""
        entry = {"schema": SCHEMA, "key": key, **entry}
        _MEMORY[key] = entry
        path = self._path(kind, key)
        if path is None or not disk:
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(entry, f, indent=1)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    @contextlib.contextmanager
    def lock(self, name: str) -> Iterator[None]:
        """Held while measuring one task on one device (a no-op without a folder)."""
        if self.folder is None:
            yield
            return
        path = self.folder / "locks" / f"{name}.lock"
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "a", encoding="utf-8") as f:
            fcntl.flock(f.fileno(), fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(f.fileno(), fcntl.LOCK_UN)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def baselines_for(
    task: Task,
    shapes: list[Shape],
    seed: int,
    fingerprint: dict[str, Any],
    store: BaselineStore,
    measure: Measure,
) -> dict[str, Any]:
    """The baseline of each shape and the device's peaks, from the cache where it holds them,
    measured (by `measure`, for the missing shapes only) where it does not.

    Returns the form `benchmarks.harness.perf.fill_perf` reads: status, message, peaks,
    launch_floor_us, shapes {name: times}, and origins {name: BaselineOrigin}. A failed
    measurement is returned as it came and cached nowhere; a shape whose torch.compile failed
    is kept in this process only (the failure may have been passing, such as memory
    held by another process)."""
    keys = Keys(task, seed, fingerprint)
    found = _lookup(store, keys, shapes)
    if found is None or found[1]:
        with store.lock(keys.lock_name()):
            found = _lookup(store, keys, shapes)  # another judge may have measured meanwhile
            if found is None or found[1]:
                missing = list(shapes) if found is None else found[1]
                result = measure(missing)
                if result.get("status") != "ok":
                    return result
                at = _store(store, keys, missing, result)
                found = _lookup(store, keys, shapes, fresh=(result, at), measured=missing)
    assert found is not None
    return found[0]


def _lookup(
    store: BaselineStore,
    keys: Keys,
    shapes: list[Shape],
    *,
    fresh: tuple[dict[str, Any], str] | None = None,
    measured: list[Shape] | None = None,
) -> tuple[dict[str, Any], list[Shape]] | None:
    """(the baselines the cache holds, the shapes it lacks); None when it lacks the device's
    peaks. With `fresh` (a measurement just made, and when), its shapes are given as measured."""
    just = {s.name for s in measured or []}
    out: dict[str, Any] = {"status": "ok", "message": "", "shapes": {}, "origins": {}}
    if fresh is not None:
        result, at = fresh
        out["peaks"], out["launch_floor_us"] = result.get("peaks"), result.get("launch_floor_us")
    else:
        got = store.get("devices", keys.device_key)
        if got is None:
            return None
        out["peaks"], out["launch_floor_us"] = got[0].get("peaks"), got[0].get("launch_floor_us")
    missing = []
    for shape in shapes:
        if fresh is not None and shape.name in just:
            out["shapes"][shape.name] = (result.get("shapes") or {}).get(shape.name) or {}
            out["origins"][shape.name] = BaselineOrigin(
                source="measured", measured_at=at, key=keys.shape(shape)
            )
            continue
        got = store.get("shapes", keys.shape(shape))
        if got is None:
            missing.append(shape)
            continue
        entry, where = got
        out["shapes"][shape.name] = dict(entry["times"])
        out["origins"][shape.name] = BaselineOrigin(
            source=where, measured_at=entry["measured_at"], key=entry["key"]
        )
    return out, missing


def _store(store: BaselineStore, keys: Keys, shapes: list[Shape], result: dict[str, Any]) -> str:
    """Keep a fresh measurement: the device's peaks and every shape's times (on disk only those
    whose torch.compile worked: a failure may have been passing); when it was made."""
    at = _now()
    store.put(
        "devices",
        keys.device_key,
        {
            "measured_at": at,
            "device": keys.device,
            "peaks": result.get("peaks"),
            "launch_floor_us": result.get("launch_floor_us"),
        },
    )
    for shape in shapes:
        times = (result.get("shapes") or {}).get(shape.name) or {}
        if times.get("eager_us") is None:
            continue
        store.put(
            "shapes",
            keys.shape(shape),
            {
                "measured_at": at,
                "task": keys.task,
                "shape": shape.name,
                "dims": dict(shape.dims),
                "dtype": keys.dtype,
                "seed": keys.seed,
                "device": keys.device,
                "times": dict(times),
            },
            disk=times.get("compile_us") is not None,
        )
    return at


def forget_memory() -> None:
    """Empty this process's layer (tests; the disk layer stays)."""
    _MEMORY.clear()
