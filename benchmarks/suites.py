"""Named selections of tasks, usable wherever tasks are taken (`--suite NAME`).

- `full`: every task.
- `lite`: about 30 tasks, stratified by category: one dtype variant per task file (fp16 where it
  exists, so the set is cheap and GPU-typical), drawn round-robin across categories in name order.
- `quant`: the quantization category.
- `serving`: the tasks that carry a serving importance weight (`benchmarks/weights.py`); their
  suite score is S_agg = sum_i w_i * S_i with the weights normalised over the suite.
- a folder path: the task files in it, in name order, native or imported formats alike
  (`benchmarks.loading.folder_tasks`), e.g. a folder of KernelBench problems.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from benchmarks.loading import load_all
from benchmarks.suggest import unknown_name
from benchmarks.task import Task

SUITES = ("full", "lite", "quant", "serving")
LITE_SIZE = 30
LITE_DTYPE_ORDER = ("fp16", "bf16", "fp32", "int8", "fp8_e4m3")


def _one_variant_per_file(tasks: list[Task]) -> list[Task]:
    by_name: dict[str, list[Task]] = defaultdict(list)
    for t in tasks:
        by_name[t.name].append(t)
    chosen = []
    for name in sorted(by_name):
        variants = by_name[name]
        variants.sort(
            key=lambda t: LITE_DTYPE_ORDER.index(t.dtype) if t.dtype in LITE_DTYPE_ORDER else 99
        )
        chosen.append(variants[0])
    return chosen


def lite(tasks: dict[str, Task], size: int = LITE_SIZE) -> list[Task]:
    per_cat: dict[str, list[Task]] = defaultdict(list)
    for t in _one_variant_per_file(list(tasks.values())):
        per_cat[t.category].append(t)
    chosen: list[Task] = []
    depth = 0
    while len(chosen) < size and any(depth < len(v) for v in per_cat.values()):
        for cat in sorted(per_cat):
            if depth < len(per_cat[cat]) and len(chosen) < size:
                chosen.append(per_cat[cat][depth])
        depth += 1
    return chosen


def is_folder_suite(name: str) -> bool:
    return name not in SUITES and Path(name).is_dir()


def suite_tasks(name: str, tasks: dict[str, Task] | None = None) -> list[Task]:
    """The tasks of suite `name` (or of the folder `name`), in a stable order. `tasks` (the
    native tasks) is not needed for a folder."""
    if is_folder_suite(name):
        from benchmarks.loading import folder_tasks

        return folder_tasks(name)
    tasks = tasks if tasks is not None else load_all()
    if name == "full":
        return list(tasks.values())
    if name == "lite":
        return lite(tasks)
    if name == "quant":
        return [t for t in tasks.values() if t.category == "quantization"]
    if name == "serving":
        from benchmarks.weights import task_weights

        weights = task_weights(list(tasks.values()))
        return [t for t in tasks.values() if t.id in weights]
    raise KeyError(
        unknown_name(
            "suite",
            name,
            SUITES,
            f"choose one of {', '.join(SUITES)}, or give a folder of task files",
        )
    )
