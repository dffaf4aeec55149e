"""The offline policy: what each node does when there is no model (`--llm offline`).

- generator: the best-matching reference kernel. In normal mode the task's own solution
  (`benchmarks.task.solution_path`) comes first, then knowledge-base kernels; in benchmark mode
  (hidden provenance) only what the knowledge base returns with the task hidden. A kernel whose
  public function has another name but the same arity gets a thin wrapper named after the
  task's entry point. A "repair" takes the next reference not yet tried.
- optimizer: a measured search over the entry point's tunables. A reference kernel lists them
  in its `KB_META["tunables"]` (e.g. {"BLOCK_N": [1024, 2048], "num_warps": [4, 8]}); they are
  trailing keyword arguments of the entry point, and a candidate is the incumbent with one
  default rewritten (coordinate search, nearest values first).
- reflector: diagnosis by rules, from the verdict's error class and message.

Everything here reads source text with `ast`; nothing imports or runs a kernel.
"""

from __future__ import annotations

import ast
import math
from pathlib import Path
from typing import Any

from agents.state import VerdictSummary

REPO_ROOT = Path(__file__).resolve().parents[1]

# -- reading kernels ----------------------------------------------------------------------------


def kb_meta(source: str) -> dict[str, Any] | None:
    """The literal `KB_META = {...}` of a reference kernel, or None."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "KB_META" for t in node.targets
        ):
            try:
                value = ast.literal_eval(node.value)
            except ValueError:
                return None
            return value if isinstance(value, dict) else None
    return None


def _function(tree: ast.Module, name: str) -> ast.FunctionDef | None:
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            return node
    return None


def _defaults(fn: ast.FunctionDef) -> list[tuple[ast.arg, ast.expr]]:
    """(argument, default expression) for every argument of `fn` that has a default."""
    positional = [*fn.args.posonlyargs, *fn.args.args]
    pairs = list(
        zip(positional[len(positional) - len(fn.args.defaults) :], fn.args.defaults, strict=True)
    )
    pairs += [
        (a, d)
        for a, d in zip(fn.args.kwonlyargs, fn.args.kw_defaults, strict=True)
        if d is not None
    ]
    return pairs


def tunable_values(source: str, entry_point: str) -> dict[str, Any]:
    """The entry point's keyword arguments whose defaults are literals: {name: default}."""
    try:
        fn = _function(ast.parse(source), entry_point)
    except SyntaxError:
        return {}
    if fn is None:
        return {}
    out = {}
    for arg, default in _defaults(fn):
        try:
            out[arg.arg] = ast.literal_eval(default)
        except ValueError:
            continue
    return out


def set_tunables(source: str, entry_point: str, values: dict[str, Any]) -> str:
    """`source` with the entry point's defaults for `values`' names rewritten, and nothing else
    touched (comments and layout stay). Unknown names raise ValueError."""
    tree = ast.parse(source)
    fn = _function(tree, entry_point)
    if fn is None:
        raise ValueError(f"the source defines no function {entry_point!r}")
    spans = {}
    for arg, default in _defaults(fn):
        if arg.arg in values:
            spans[arg.arg] = default
    missing = sorted(set(values) - set(spans))
    if missing:
        raise ValueError(f"{entry_point} has no keyword argument(s) {missing} with a default")
    lines = source.splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line.encode("utf-8")))
    data = source.encode("utf-8")
    # Replace from the end so earlier offsets stay valid.
    edits = sorted(
        (
            (
                offsets[d.lineno - 1] + d.col_offset,
                offsets[d.end_lineno - 1] + d.end_col_offset,
                repr(values[name]),
            )
            for name, d in spans.items()
        ),
        reverse=True,
    )
    for start, end, text in edits:
        data = data[:start] + text.encode("utf-8") + data[end:]
    return data.decode("utf-8")


def _distance(a: Any, b: Any) -> float:
    if isinstance(a, int | float) and isinstance(b, int | float) and a > 0 and b > 0:
        return abs(math.log2(b / a))
    return 0.0 if a == b else 1.0


def next_config(
    current: dict[str, Any], space: dict[str, list[Any]], tried: list[dict[str, Any]]
) -> dict[str, Any] | None:
    """The next configuration of a coordinate search around `current`: change one tunable to
    its nearest untried value (tunables in `space` order); None when every neighbour was tried."""
    seen = [dict(t) for t in tried]
    options = []
    for order, (name, values) in enumerate(space.items()):
        if name not in current:
            continue
        for value in values:
            if value == current[name]:
                continue
            config = {**current, name: value}
            if config not in seen:
                options.append((_distance(current[name], value), order, config))
    if not options:
        return None
    options.sort(key=lambda item: (item[0], item[1]))
    return options[0][2]


def search_space(
    meta: dict[str, Any] | None, entry_defaults: dict[str, Any]
) -> dict[str, list[Any]]:
    """The tunables the search may change: listed in KB_META and exposed by the entry point."""
    if not meta or not isinstance(meta.get("tunables"), dict):
        return {}
    return {
        k: list(v)
        for k, v in meta["tunables"].items()
        if k in entry_defaults and isinstance(v, list | tuple)
    }


# -- choosing references ------------------------------------------------------------------------


def _required_arity(fn: ast.FunctionDef) -> int:
    positional = [*fn.args.posonlyargs, *fn.args.args]
    return len(positional) - len(fn.args.defaults)


def adapt(source: str, entry_point: str, params: list[str]) -> tuple[str, str] | None:
    """Make `source` define `entry_point(params)`. Returns (source, how) or None.

    A kernel that already defines it is taken as is; one whose public launcher has another name
    and the same number of required arguments gets a wrapper."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    fn = _function(tree, entry_point)
    if fn is not None:
        names = [a.arg for a in [*fn.args.posonlyargs, *fn.args.args]][: len(params)]
        if names == params:
            return source, "defines the entry point"
        return None
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef) or node.name.startswith("_"):
            continue
        if any(
            _decorator_name(d) in ("jit", "autotune", "heuristics") for d in node.decorator_list
        ):
            continue
        if _required_arity(node) == len(params):
            args = ", ".join(params)
            wrapper = (
                f"\n\ndef {entry_point}({args}):\n"
                f'    """The task\'s entry point, delegating to the reference launcher {node.name}."""\n'
                f"    return {node.name}({args})\n"
            )
            return source.rstrip("\n") + "\n" + wrapper, f"wrapped {node.name}()"
    return None


def _decorator_name(node: ast.expr) -> str:
    target = node.func if isinstance(node, ast.Call) else node
    if isinstance(target, ast.Attribute):
        return target.attr
    if isinstance(target, ast.Name):
        return target.id
    return ""


def reference_kernels(
    task: Any, kernel_hits: list[dict[str, Any]], *, benchmark: bool
) -> list[dict[str, Any]]:
    """Kernels the offline generator may start from, best first.

    `kernel_hits` are knowledge-base hits of kind "kernel" ({"id", "path", "text"}), already
    retrieved with the task hidden in benchmark mode. In normal mode the task's own solution
    comes first. Each result: {"id", "path", "source", "how", "tunables"}."""
    from benchmarks.task import solution_path

    params = list(task.signature().parameters)
    found: list[dict[str, Any]] = []
    seen_paths: set[str] = set()

    def consider(ref_id: str, path: str, source: str) -> None:
        where = str(_repo_path(path)) if path else ref_id
        if where in seen_paths or any(r["id"] == ref_id for r in found):
            return
        seen_paths.add(where)
        adapted = adapt(source, task.entry_point, params)
        if adapted is None:
            return
        code, how = adapted
        meta = kb_meta(source)
        space = search_space(meta, tunable_values(code, task.entry_point))
        found.append({"id": ref_id, "path": path, "source": code, "how": how, "tunables": space})

    if not benchmark:
        own = solution_path(task.name)
        if own.is_file():
            consider(f"kernel:{task.name}", str(own), own.read_text(encoding="utf-8"))
    for hit in kernel_hits:
        path = hit.get("path") or ""
        source = hit.get("text") or ""
        if not source and path and _repo_path(path).is_file():
            source = _repo_path(path).read_text(encoding="utf-8")
        if benchmark and Path(path).stem == task.name:
            continue  # belt and braces: hidden provenance never shows the task's own solution
        consider(hit.get("id", path), path, source)
    return found


def _repo_path(path: str) -> Path:
    """A knowledge-base path (relative to the repository root, or absolute), resolved."""
    p = Path(path)
    return (p if p.is_absolute() else REPO_ROOT / p).resolve()


# -- rule-based diagnosis -----------------------------------------------------------------------

ADVICE: dict[str, str] = {
    "syntax_error": "The module does not parse. Fix the syntax at the line the message names; return the whole module.",
    "missing_entry_point": "Define the task's entry point at module level, with exactly the task's name and parameters.",
    "signature_mismatch": "The entry point's parameters must be the task's, in order and by name; extra tunables need defaults.",
    "no_triton_kernel": "Compute inside at least one @triton.jit kernel launched from the entry point.",
    "forbidden_api": "Remove the forbidden API the message names and compute that part inside the Triton kernel.",
    "import_error": "Import only torch, triton, triton.language and the standard math/typing helpers; check the names imported.",
    "parameter_mismatch": "ModelNew must hold exactly Model's parameters and buffers (same names and shapes): the judge copies Model's weights into it. Register them as Model does.",
    "compile_error": "Triton refused to compile: block sizes must be tl.constexpr powers of two, tl.arange bounds constexpr, and operand shapes and dtypes must agree. Read the compiler message for the line.",
    "runtime_error": "The launch failed at run time: check the grid, the argument count and order against the kernel signature, and tensor dtypes/contiguity.",
    "timeout": "The candidate ran past the time limit: check loop bounds and the grid size (an infinite or huge loop).",
    "crash": "The process crashed (illegal memory access?): mask every load and store at the tails and compute offsets in int64 for large tensors.",
    "early_exit": "Never exit the process; return the result.",
    "wrong_output_type": "Return what the reference returns (a tensor, or the same tuple of tensors).",
    "shape_mismatch": "The output shape differs from the reference: allocate the output with the reference's shape.",
    "dtype_mismatch": "The output dtype differs: allocate it like the input and cast before the store (`.to(out_ptr.dtype.element_ty)`).",
    "numerical_mismatch": "Values are off: accumulate in fp32, mask tails with a neutral `other=` value, and check offsets and strides for each program.",
    "nan_inf_mismatch": "NaN/inf where the reference is finite: the computation is numerically unstable; subtract the running max before exp, guard rows of -inf, accumulate in fp32.",
    "input_mutated": "The kernel wrote into an input; write into a freshly allocated output instead.",
    "nondeterministic": "Repeated calls differ: avoid atomics and races; make each output element written by one program in a fixed order.",
    "fallback": "The computation ran in PyTorch operators, not in Triton: move the compute the message lists into the kernel.",
    "impossible_time": "Timed faster than the hardware allows: do not cache or skip work across calls.",
    "harness_error": "The judge itself failed (not the candidate's fault): try the same kernel again.",
}


def diagnose(verdict: VerdictSummary) -> dict[str, str]:
    """{"error_class", "diagnosis", "advice"} for a failed verdict, by rule."""
    error = verdict.error_class
    advice = ADVICE.get(error, "Read the judge's message and fix what it names.")
    message = verdict.message.strip()
    hints = []
    lowered = message.lower()
    if error in ("numerical_mismatch", "nan_inf_mismatch") and "tail" in lowered:
        hints.append(
            "the failing shape has a tail (a size that is not a multiple of the block): check the masks"
        )
    if error in ("numerical_mismatch", "nan_inf_mismatch") and "outlier" in lowered:
        hints.append("it fails on outlier inputs: the arithmetic overflows for large magnitudes")
    if "out of resource" in lowered or "shared memory" in lowered:
        hints.append(
            "the block is too large for the SM's shared memory or registers: use smaller BLOCK sizes"
        )
    diagnosis = f"{error} at stage after {verdict.stage_reached or 'nothing'}: {message[:400]}"
    if hints:
        diagnosis += " (" + "; ".join(hints) + ")"
    return {"error_class": error, "diagnosis": diagnosis, "advice": advice}
