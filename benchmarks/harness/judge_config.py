"""The judge's settings and their defaults, in a module that imports nothing heavy.

`JudgeConfig` is the one place the judge's defaults live: `kernforge eval`, `agents.api.evaluate`,
`kernforge import` and the agent's settings table (agents/core/settings.py) read them from here,
so reading a default does not import torch.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from benchmarks.harness.watchdog import WatchLimits

# Rounds of incumbent/candidate/candidate/incumbent timing in benchmarks.harness.remeasure.interleaved.
REMEASURE_ROUNDS = 2

# A sweep (benchmarks.harness.sweep) times each configuration briefly, for a ranking only (its
# finalists go through the judge and the interleaved re-measurement): milliseconds of warm-up and
# of timed calls per shape (`profiling.time_cuda`), and at most this many timed calls.
SWEEP_WARMUP_MS = 5.0
SWEEP_REP_MS = 20.0
SWEEP_MAX_REPS = 100


@dataclass
class JudgeConfig:
    """How one candidate is judged (benchmarks.harness.judge.evaluate)."""

    device: str = "auto"  # "cpu" (Triton interpreter), "cuda", or "auto"
    trials: int = 5  # per mode, fresh seed each
    # the inputs' seed (every trial derives its own); None: a fresh one per evaluation, recorded
    # in the verdict (set it to that value to reproduce an evaluation). Inputs the candidate can
    # predict are inputs it can answer from a table made at import time
    seed: int | None = None
    # the seed CPU shapes are drawn with (benchmarks/harness/shapes.py); None: a fresh one per
    # evaluation, recorded in the verdict (set it to that value to reproduce an evaluation)
    shape_seed: int | None = None
    # for the whole candidate process, from when its worker starts the job (a worker still
    # starting up has judge.BOOT_ALLOWANCE_S more, which is not the candidate's time)
    timeout_s: float = 300.0
    perf: bool = True  # time it when a GPU is present
    modes: tuple[str, ...] | None = None  # default: the task's modes
    # declared shape names to check (on the GPU the derived ragged one by its name too);
    # default: all shapes for the device
    shapes: tuple[str, ...] | None = None
    keep_dir: bool = False  # keep the child's folder (for debugging)
    prewarm: bool = True  # start the next worker process while this one runs
    work_root: Path | None = None
    # who wrote the candidate: True for this project's own kernels (offline generator, knowledge
    # base, the test suite's files), which may run unisolated, with a warning, where no OS
    # isolation exists; False (model-written, imported, `kernforge eval`) refuses them there
    trusted: bool = False
    # where baseline times are cached (benchmarks/harness/baselines.py): "" for
    # $KERNFORGE_CACHE_DIR/baselines (default ~/.cache/kernforge/baselines), a folder, or "off"
    # (measured once per judging process)
    baseline_cache: str = ""
    # a folder of Triton cache files compiled ahead for this same candidate
    # (benchmarks/executor/precompile.py), copied into its worker's own cache before it runs;
    # "" for none. The verdict does not depend on it: the worker compiles what it lacks
    triton_cache_seed: str = ""
    # UNSAFE: run untrusted candidates with no OS isolation where none is available
    allow_unisolated: bool = False
    # what the candidate's processes may hold while they run (memory, processes, disk) and how
    # often the judge looks; default: `benchmarks.harness.watchdog.watch_limits(device)`
    watch: WatchLimits | None = None
