"""Problem files written for CUDA, run on a machine without it (the CPU interpreter path).

The suites' files put tensors on `"cuda"`, synchronize, and ask Triton's driver for its device;
on a machine without CUDA the loaders run them rewritten (`to_cpu`), so the same file is judged
on the CPU without an edit. The rewrite is applied to the syntax tree before the file runs, and
keeps every line where it was (tracebacks and Triton's source lookups still match the file).
"""

from __future__ import annotations

import ast

from benchmarks import pyparse

_CUDA_NO_OPS = {"synchronize", "empty_cache", "manual_seed", "manual_seed_all", "set_device"}


def _dotted(node: ast.AST) -> str:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return ""


class _ToCPU(ast.NodeTransformer):
    """For a machine without CUDA: device strings "cuda" / "cuda:N" -> "cpu", `x.cuda()` ->
    `x.to("cpu")`, `torch.cuda.synchronize()` and the like -> nothing, `torch.cuda.current_device()`
    -> 0, Triton's `driver.active.get_active_torch_device()` -> the CPU, and an autotuner told not
    to time its configs (the interpreter cannot: it runs the first)."""

    def visit_Constant(self, node: ast.Constant) -> ast.AST:
        if isinstance(node.value, str) and (node.value == "cuda" or node.value.startswith("cuda:")):
            return ast.copy_location(ast.Constant("cpu"), node)
        return node

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        name = _dotted(node.func)
        if name.startswith("torch.cuda.") and name.rsplit(".", 1)[1] in _CUDA_NO_OPS:
            return ast.copy_location(ast.Constant(None), node)
        if name == "torch.cuda.current_device":
            return ast.copy_location(ast.Constant(0), node)
        if name.endswith("driver.active.get_active_torch_device"):
            return ast.copy_location(_cpu_device(), node)
        if name in ("triton.autotune", "autotune") and not any(
            k.arg == "do_bench" for k in node.keywords
        ):
            node.keywords.append(ast.keyword("do_bench", _no_timing()))
        if isinstance(node.func, ast.Attribute) and node.func.attr == "cuda" and not node.args:
            node.func.attr = "to"
            node.args = [ast.Constant("cpu")]
            node.keywords = []
        return node


def _cpu_device() -> ast.expr:
    return ast.Call(
        func=ast.Attribute(value=ast.Name("torch", ast.Load()), attr="device", ctx=ast.Load()),
        args=[ast.Constant("cpu")],
        keywords=[],
    )


def _no_timing() -> ast.expr:
    """`lambda kernel_call, quantiles: [0.0, 0.0, 0.0]`: every config "takes" no time."""
    args = ast.arguments(
        posonlyargs=[],
        args=[ast.arg("kernel_call"), ast.arg("quantiles")],
        kwonlyargs=[],
        kw_defaults=[],
        defaults=[],
    )
    return ast.Lambda(args=args, body=ast.List([ast.Constant(0.0)] * 3, ast.Load()))


def to_cpu(tree: ast.Module) -> ast.Module:
    """`tree` rewritten for a machine without CUDA (see `_ToCPU`)."""
    return ast.fix_missing_locations(_ToCPU().visit(tree))


def to_cpu_source(source: str) -> str:
    """Python source with the CPU rewrite above applied (for imported candidates)."""
    return ast.unparse(to_cpu(pyparse.parse(source)))
