"""The starter task set: enough tasks over enough categories, each with its reference solution
and a known-bad kernel beside it; and, for every task, sane cost formulas and input factories
that are seeded and honour the outlier mode. CPU only and fast: nothing here runs a kernel
(tests/test_judge_cpu.py runs the known-bad kernels and the reference solutions)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
import torch

from benchmarks.loading import load_all
from benchmarks.task import CATEGORIES, Task
from benchmarks.verdict import ErrorClass
from knowledge_base import solution_path
from knowledge_base.corpus import KERNEL_META_KEYS

TESTS = Path(__file__).resolve().parent
KNOWN_BAD_DIR = TESTS / "known_bad"

# The starter set: each of these ships with knowledge_base/kernels/<name>.py (its reference
# solution) and tests/known_bad/<name>.py (a plausible kernel with a real bug the judge must catch).
STARTER = (
    "softmax",
    "gelu_tanh",
    "silu",
    "softplus",
    "row_argmax",
    "layernorm",
    "rmsnorm",
    "cross_entropy",
    "embedding",
    "matmul",
    "cumsum",
    "silu_and_mul",
    "add_rmsnorm",
    "w8a8_gemm",
    "adamw",
)

TASKS: dict[str, Task] = load_all()
# one Task per task file (its first dtype), for checks about the file rather than a dtype
BY_NAME: dict[str, Task] = {}
for _task in TASKS.values():
    BY_NAME.setdefault(_task.name, _task)
# tasks added later must bring the same pair; where one of the files exists it is checked too
WITH_SOLUTION = sorted(set(STARTER) | {n for n in BY_NAME if solution_path(n).is_file()})
WITH_KNOWN_BAD = sorted(
    set(STARTER) | {n for n in BY_NAME if (KNOWN_BAD_DIR / f"{n}.py").is_file()}
)


def _tensors(args: tuple) -> list[torch.Tensor]:
    return [a for a in args if isinstance(a, torch.Tensor)]


def _same(a: tuple, b: tuple) -> bool:
    ta, tb = _tensors(a), _tensors(b)
    return len(ta) == len(tb) and all(
        x.dtype == y.dtype and x.shape == y.shape and torch.equal(x, y)
        for x, y in zip(ta, tb, strict=True)
    )


def test_starter_set_covers_enough_tasks_and_categories():
    missing = [n for n in STARTER if n not in BY_NAME]
    assert not missing, f"starter tasks not found under benchmarks/tasks/: {missing}"
    categories = {BY_NAME[n].category for n in STARTER}
    assert len(STARTER) >= 12
    assert len(categories) >= 8, f"only {len(categories)} categories: {sorted(categories)}"
    assert {t.category for t in BY_NAME.values()} <= set(CATEGORIES)


@pytest.mark.parametrize("name", WITH_SOLUTION)
def test_task_has_reference_solution_with_kb_meta(name):
    assert name in BY_NAME, f"no task named {name}"
    task = BY_NAME[name]
    path = solution_path(name)
    assert path.is_file(), f"task {name} ({task.path}) has no reference solution at {path}"
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    assert ast.get_docstring(tree), (
        f"{path}: needs a header docstring (op, traffic, tiling, tunables)"
    )
    meta = None
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "KB_META" for t in node.targets
        ):
            meta = ast.literal_eval(node.value)
    assert isinstance(meta, dict), f"{path}: needs a literal KB_META dict"
    missing = [k for k in KERNEL_META_KEYS if k not in meta]
    assert not missing, f"{path}: KB_META lacks {missing}"
    assert meta["category"] == task.category, (
        f"{path}: KB_META category {meta['category']!r} != task's {task.category!r}"
    )
    assert set(meta["dtypes"]) == set(task.dtypes), (
        f"{path}: KB_META dtypes {meta['dtypes']} != task's {list(task.dtypes)}"
    )
    entry = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == task.entry_point]
    assert entry, f"{path}: does not define the entry point {task.entry_point}()"


@pytest.mark.parametrize("name", WITH_KNOWN_BAD)
def test_task_has_known_bad_kernel_with_header(name):
    assert name in BY_NAME, f"no task named {name}"
    path = KNOWN_BAD_DIR / f"{name}.py"
    assert path.is_file(), f"task {name} has no known-bad kernel at {path}"
    header = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.startswith("#"):
            break
        key, _, value = line.lstrip("#").partition(":")
        header[key.strip()] = value.strip()
    assert "expect" in header and "bug" in header, (
        f"{path}: needs '# expect: <error class>' and '# bug: <one line>'"
    )
    expect = ErrorClass(header["expect"])
    assert expect not in (ErrorClass.NONE, ErrorClass.HARNESS_ERROR)
    assert header["bug"], f"{path}: '# bug:' must say what is wrong"
    tree = ast.parse(path.read_text(encoding="utf-8"))
    assert any(
        isinstance(n, ast.FunctionDef) and n.name == BY_NAME[name].entry_point for n in tree.body
    )


@pytest.mark.parametrize("task_id", sorted(TASKS))
def test_flops_and_bytes_are_positive_on_every_shape(task_id):
    task = TASKS[task_id]
    for shape in task.shapes + task.cpu_shapes:
        flops = task.flops(shape.dims)
        # a pure gather, pad or permutation does no arithmetic; everything else does some
        assert flops > 0 or (task.category in ("index", "spatial") and flops == 0), (
            f"{task_id} {shape.name}: flops {flops}"
        )
        assert task.min_bytes(shape.dims) > 0, f"{task_id} {shape.name}: min_bytes must be positive"


@pytest.mark.parametrize("task_id", sorted(TASKS))
def test_make_inputs_is_seeded(task_id):
    task = TASKS[task_id]
    dims = task.cpu_shapes[0].dims
    for mode in task.modes:
        first = task.make_inputs(dims, mode, torch.Generator().manual_seed(0))
        again = task.make_inputs(dims, mode, torch.Generator().manual_seed(0))
        other = task.make_inputs(dims, mode, torch.Generator().manual_seed(1))
        assert _tensors(first), f"{task_id}: make_inputs returned no tensors"
        assert _same(first, again), f"{task_id} ({mode}): the same seed must give the same inputs"
        assert not _same(first, other), f"{task_id} ({mode}): another seed must give other inputs"


@pytest.mark.parametrize("task_id", sorted(TASKS))
def test_outlier_mode_changes_float_inputs(task_id):
    task = TASKS[task_id]
    for shape in task.cpu_shapes:
        standard = task.make_inputs(shape.dims, "standard", torch.Generator().manual_seed(0))
        outlier = task.make_inputs(shape.dims, "outlier", torch.Generator().manual_seed(0))
        pairs = [
            (s, o)
            for s, o in zip(_tensors(standard), _tensors(outlier), strict=True)
            if s.is_floating_point()
        ]
        if not pairs:
            pytest.skip(f"{task_id}: no floating-point input to put outliers in")
        changed = [s.shape != o.shape or not torch.equal(s, o) for s, o in pairs]
        assert any(changed), (
            f"{task_id} {shape.name}: outlier mode left every float input unchanged"
        )
        for _, o in pairs:
            assert torch.isfinite(o.float()).all(), (
                f"{task_id} {shape.name}: outlier inputs must stay finite"
            )
