"""`kernforge tasks check`: is every task well-formed, solvable and impossible to pass by accident?

For each task (on the CPU shapes with the Triton interpreter, or the GPU shapes on a GPU):
1. the reference runs on every shape and mode;
2. inputs are deterministic per seed (same seed -> same tensors; another seed -> others);
3. the FLOP and byte formulas are sane: positive, and the bytes cover every output written once
   and, unless the task declares SPARSE_READS (it reads a subset of an input, e.g. a gather),
   every input read once; on a GPU the eager time is not below the roofline;
4. "outlier" mode changes the (floating-point) inputs;
5. the reference Triton solution (`<NAME>.py` in the solutions folder) passes;
6. a perturbed copy of that solution (every `tl.store` value shifted by one) fails.

A folder suite (`--suite FOLDER`, KernelBench / TritonBench files) is loaded file by file: a file
that does not load is a failed line with its reason. Its tasks have no reference solution (5 and
6 are skipped) and measured costs (3 checks the bytes cover inputs and outputs); the reference
runs the way the judge calls it, at the judged shapes; a task the CPU refuses (too large) is
skipped with that reason, and a task no kernel can pass says so.

The solutions are ours and trusted, so this runs them in-process (fast enough for CI over the
whole suite); candidates from anywhere else go through the judge's child process instead.

    python -m benchmarks.selfcheck [--suite NAME] [--device cpu|cuda] [--tasks id,id] [--json]
                                   [--solutions DIR]

The solutions folder is the knowledge base's (`kernforge tasks check` passes
`knowledge_base.KERNELS_DIR`); run directly, `--solutions` defaults to `knowledge_base/kernels`
under the current directory.
"""

from __future__ import annotations

import argparse
import ast
import atexit
import json
import os
import shutil
import sys
import tempfile
import time
import traceback
import warnings
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from benchmarks import pyparse
from benchmarks.solutions import add_solutions_option, solution_file, solutions_dir

CHECKS = ("reference", "deterministic", "formulas", "outlier", "solution", "perturbed")


@dataclass
class TaskCheck:
    task_id: str
    ok: bool = True
    checks: dict[str, str] = field(
        default_factory=dict
    )  # name -> "ok" | "skipped: ..." | "FAIL: ..."
    seconds: float = 0.0

    def record(self, name: str, outcome: str) -> None:
        self.checks[name] = outcome
        if outcome.startswith("FAIL"):
            self.ok = False


def perturb_source(source: str) -> str:
    """The solution with every `tl.store(ptr, value, ...)` storing `value + 1` instead."""
    tree = pyparse.parse(source)

    class Shift(ast.NodeTransformer):
        def visit_Call(self, node: ast.Call) -> ast.AST:
            self.generic_visit(node)
            func = node.func
            if isinstance(func, ast.Attribute) and func.attr == "store" and len(node.args) >= 2:
                node.args[1] = ast.BinOp(left=node.args[1], op=ast.Add(), right=ast.Constant(1))
            return node

    return ast.unparse(ast.fix_missing_locations(Shift().visit(tree)))


def _load(path: Path, name: str, source: str | None = None) -> Any:
    """Import a solution file; with `source`, import that text instead (from a file of its own,
    since Triton reads a kernel's source back through `inspect`)."""
    if source is not None:
        folder = Path(tempfile.mkdtemp(prefix="kf-selfcheck-"))
        atexit.register(shutil.rmtree, folder, True)
        path = folder / f"{name}.py"
        path.write_text(source)
    from benchmarks.harness.worker import load_module

    return load_module(path, name)


def _run_solution(task: Any, fn: Any, device: str, shapes: tuple, trials: int = 1) -> str | None:
    """None when fn matches the reference on every shape/mode/trial, else the first failure."""
    import torch

    from benchmarks.harness.compare import compare_outputs
    from benchmarks.harness.messages import ShapeSpec
    from benchmarks.harness.worker import trial_plan

    gen = torch.Generator(device=device)
    plan = trial_plan(
        [ShapeSpec(s.name, dict(s.dims)) for s in shapes], list(task.modes), trials, 0
    )
    for item in plan:
        gen.manual_seed(item.seed)
        args = task.make_inputs(item.dims, item.mode, gen)
        want = task.reference(*args)
        gen.manual_seed(item.seed)
        got = fn(*task.make_inputs(item.dims, item.mode, gen))
        cmp = compare_outputs(got, want, task.tolerance)
        if not cmp.ok:
            return f"{cmp.error_class.value} on {item.shape}/{item.mode}: {cmp.message}"
    return None


def check_task(task: Any, device: str, solutions: Path) -> TaskCheck:
    """Run the six checks on `task`, with its reference solution taken from `solutions`."""
    import torch

    from benchmarks.formats.checks import same as same_bits  # NaN equals NaN (poisoned buffers)
    from benchmarks.inputs import elem_size

    t0 = time.perf_counter()
    out = TaskCheck(task.id)
    shapes = task.shapes_for(device)
    gen = torch.Generator(device=device)
    imported = task.estimated_costs  # a KernelBench / TritonBench file: no solution, measured costs
    refused = task.refusal(device)
    if refused:
        for name in CHECKS:
            out.record(name, f"skipped: {refused}")
        out.seconds = time.perf_counter() - t0
        return out
    for why in task.cannot_pass():
        out.record("passable", f"skipped: no kernel can pass it ({why})")

    # 1. reference runs (as the judge calls it, at the judged shapes); 2. determinism;
    # 4. outlier changes inputs; 3. formulas
    try:
        for shape in shapes:
            for mode in task.modes:
                gen.manual_seed(1)
                a = task.make_inputs(shape.dims, mode, gen)
                task.reference_for(shape.dims)(*a)
        out.record("reference", "ok")
    except Exception as exc:  # noqa: BLE001
        out.record("reference", f"FAIL: {type(exc).__name__}: {exc}")
        out.seconds = time.perf_counter() - t0
        return out

    def tensors(args: tuple) -> list:
        return [x for x in args if isinstance(x, torch.Tensor)]

    shape = shapes[0]
    gen.manual_seed(7)
    a1 = tensors(task.make_inputs(shape.dims, "standard", gen))
    gen.manual_seed(7)
    a2 = tensors(task.make_inputs(shape.dims, "standard", gen))
    gen.manual_seed(8)
    a3 = tensors(task.make_inputs(shape.dims, "standard", gen))
    same = all(same_bits(x, y) for x, y in zip(a1, a2, strict=True))
    differs = any(not same_bits(x, y) for x, y in zip(a1, a3, strict=True) if x.numel() > 1)
    recorded = not task.shape_dims_vary  # a TritonBench call: its recorded tensors every time
    if not same:
        out.record("deterministic", "FAIL: the same seed gave different inputs")
    elif recorded:
        out.record("deterministic", "ok (the recorded inputs of the file's tests, for every seed)")
    elif not differs:
        out.record("deterministic", "FAIL: a different seed gave identical inputs")
    else:
        out.record("deterministic", "ok")

    gen.manual_seed(7)
    o1 = tensors(task.make_inputs(shape.dims, "outlier", gen))
    floats = [(x, y) for x, y in zip(a1, o1, strict=True) if x.is_floating_point()]
    if not floats:
        out.record("outlier", "skipped: no floating-point inputs")
    elif any(not torch.equal(x, y) for x, y in floats):
        out.record("outlier", "ok")
    else:
        out.record("outlier", "FAIL: outlier mode left every floating-point input unchanged")

    problems = []
    sparse = bool(getattr(task.module, "SPARSE_READS", False))
    for s in shapes:
        flops, nbytes = task.flops(s.dims), task.min_bytes(s.dims)
        gen.manual_seed(3)
        args = tensors(task.make_inputs(s.dims, "standard", gen))
        res = task.reference_for(s.dims)(*task.make_inputs(s.dims, "standard", gen))
        outs = [
            r
            for r in (res if isinstance(res, tuple | list) else (res,))
            if isinstance(r, torch.Tensor)
        ]
        out_bytes = sum(r.numel() * elem_size(r.dtype) for r in outs)
        in_bytes = sum(x.numel() * elem_size(x.dtype) for x in args)
        need = out_bytes + (0 if sparse else in_bytes)
        if flops < 0 or nbytes <= 0:
            problems.append(f"{s.name}: flops {flops}, bytes {nbytes}")
        elif nbytes < 0.99 * need:
            problems.append(f"{s.name}: min_bytes {nbytes:.0f} < inputs+outputs once {need:.0f}")
        elif nbytes > 4 * (in_bytes + out_bytes) + 4096 and not imported:  # weights count there
            problems.append(
                f"{s.name}: min_bytes {nbytes:.0f} is over 4x inputs+outputs {in_bytes + out_bytes:.0f}"
            )
    out.record("formulas", "FAIL: " + "; ".join(problems) if problems else "ok")

    # 5. the reference solution passes; 6. a perturbed copy fails
    path = solution_file(solutions, task.name)
    if imported:
        why = "an imported problem has no reference solution (judge kernels with `kernforge eval`)"
        out.record("solution", f"skipped: {why}")
        out.record("perturbed", f"skipped: {why}")
    elif not path.is_file():
        out.record("solution", f"FAIL: no reference solution at {path}")
        out.record("perturbed", "skipped: no solution")
    else:
        source = path.read_text()
        try:
            sol = _load(path, f"kf_solution_{task.name}")
            err = _run_solution(task, getattr(sol, task.entry_point), device, shapes)
            out.record("solution", "ok" if err is None else f"FAIL: {err}")
        except Exception as exc:  # noqa: BLE001
            out.record(
                "solution",
                f"FAIL: {type(exc).__name__}: {exc} {traceback.format_exc(limit=2)[-300:]}",
            )
        try:
            bad = _load(path, f"kf_perturbed_{task.name}", perturb_source(source))
            err = _run_solution(task, getattr(bad, task.entry_point), device, shapes)
            out.record("perturbed", "FAIL: the perturbed solution passed" if err is None else "ok")
        except Exception as exc:  # noqa: BLE001 - a crash also counts as failing
            out.record("perturbed", f"ok (raised {type(exc).__name__})")
    out.seconds = time.perf_counter() - t0
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="kernforge tasks check")
    parser.add_argument("--device", default="cpu", choices=("cpu", "cuda"))
    parser.add_argument("--tasks", default="", help="comma-separated task ids (default: all)")
    parser.add_argument("--suite", default=None)
    parser.add_argument("--json", action="store_true")
    add_solutions_option(parser)
    args = parser.parse_args(argv)
    solutions = solutions_dir(parser, args.solutions)
    if args.device == "cpu" and os.environ.get("TRITON_INTERPRET") != "1":
        os.environ["TRITON_INTERPRET"] = "1"  # must be set before triton is imported
    if os.environ.get("TRITON_INTERPRET") == "1":
        from benchmarks.harness.interp_rounding import patch

        patch()  # fp32 -> bf16 rounds to nearest even, as on the GPU
    # the interpreter runs kernels in numpy, which warns on the overflows outlier inputs provoke
    warnings.filterwarnings("ignore", category=RuntimeWarning)
    from benchmarks.loading import load_all, load_folder
    from benchmarks.suites import is_folder_suite
    from benchmarks.task import TaskError

    not_loaded = []
    if args.suite and is_folder_suite(args.suite):
        try:
            folder = load_folder(args.suite)
        except TaskError as exc:
            print(str(exc), file=sys.stderr)
            return 2
        tasks = {t.id: t for t in folder.tasks}
        not_loaded = [
            TaskCheck(str(n.path), ok=False, checks={"load": f"FAIL: {n.reason}"})
            for n in folder.not_loaded
        ]
    else:
        tasks = load_all()
    if args.suite and not is_folder_suite(args.suite):
        from benchmarks.suites import suite_tasks

        tasks = {t.id: t for t in suite_tasks(args.suite, tasks)}
    if args.tasks:
        wanted = [t.strip() for t in args.tasks.split(",") if t.strip()]
        missing = [t for t in wanted if t not in tasks]
        if missing:
            print(f"unknown task(s): {', '.join(missing)}", file=sys.stderr)
            return 2
        tasks = {t: tasks[t] for t in wanted}
    results = list(not_loaded)
    if not args.json:
        for res in not_loaded:
            print(f"FAIL {res.task_id}: not loaded: {res.checks['load'][6:]}", flush=True)
    for task in tasks.values():
        res = check_task(task, args.device, solutions)
        results.append(res)
        if not args.json:
            status = "ok  " if res.ok else "FAIL"
            bad = "; ".join(
                f"{k}: {v}" for k, v in res.checks.items() if not v.startswith(("ok", "skipped"))
            )
            skipped = [k for k, v in res.checks.items() if v.startswith("skipped")]
            extra = f"  (skipped: {', '.join(skipped)})" if skipped else ""
            print(
                f"{status} {res.task_id:40s} {res.seconds:6.2f}s{extra}{'  ' + bad if bad else ''}",
                flush=True,
            )
    failed = [r for r in results if not r.ok]
    if args.json:
        print(json.dumps([asdict(r) for r in results], indent=2))
    else:
        print(f"{len(results) - len(failed)} passed, {len(failed)} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
