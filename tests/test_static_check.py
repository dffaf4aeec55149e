"""The static stage: what a candidate may and may not write, decided from its syntax tree."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
import torch

from benchmarks.harness.static_check import (
    GLOBAL_FORBIDDEN,
    TENSOR_METHODS_ALLOWED,
    TORCH_ALLOWED,
    StaticResult,
    check_source,
    check_task_candidate,
)
from benchmarks.harness.static_check.library import tensor_compute_methods
from benchmarks.loading import get_task
from benchmarks.verdict import ErrorClass

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = ROOT / "knowledge_base" / "kernels" / "softmax.py"

HEADER = """\
import torch
import triton
import triton.language as tl
"""

KERNEL = """\
@triton.jit
def _copy(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)
"""


def candidate(body: str = "", imports: str = "", extra: str = "") -> str:
    """A valid softmax candidate (copy kernel launched from the entry point) with `body`
    inserted before the return, `imports` after the usual ones and `extra` at module level."""
    body = textwrap.indent(textwrap.dedent(body).strip("\n"), "    ") + "\n" if body else ""
    return (
        HEADER
        + textwrap.dedent(imports)
        + "\n\n"
        + KERNEL
        + "\n\n"
        + textwrap.dedent(extra)
        + "\n\n"
        + "def softmax(x):\n"
        + "    y = torch.empty_like(x)\n"
        + "    n = x.numel()\n"
        + "    _copy[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024)\n"
        + body
        + "    return y\n"
    )


def check(
    source: str, params: list[str] | None = None, forbidden: tuple[str, ...] = ()
) -> StaticResult:
    return check_source(
        textwrap.dedent(source),
        entry_point="softmax",
        params=["x"] if params is None else params,
        forbidden=forbidden,
        filename="cand.py",
    )


def assert_forbidden(result: StaticResult, *fragments: str) -> None:
    assert result.error_class == ErrorClass.FORBIDDEN_API, result.message
    assert not result.ok
    assert result.line is not None
    assert f"line {result.line}" in result.message
    for fragment in fragments:
        assert fragment in result.message, result.message


# --------------------------------------------------------------------------------------------
# Valid candidates
# --------------------------------------------------------------------------------------------


def test_reference_softmax_passes() -> None:
    result = check_source(REFERENCE.read_text(), entry_point="softmax", params=["x"])
    assert result.ok, result.message
    assert result.error_class == ErrorClass.NONE
    assert result.kernels == ["_softmax_kernel"]
    assert result.launched == ["_softmax_kernel"]


def test_reference_softmax_passes_with_the_tasks_own_forbidden_list() -> None:
    task = get_task("softmax_fp32")
    result = check_task_candidate(REFERENCE.read_text(), task, filename=str(REFERENCE))
    assert result.ok, result.message


def test_template_candidate_passes() -> None:
    result = check(candidate())
    assert result.ok, result.message
    assert result.kernels == ["_copy"] and result.launched == ["_copy"]


@pytest.mark.parametrize(
    "body",
    [
        "s0, s1 = x.stride(0), x.stride(1)",
        "M, N = x.shape\nd = x.dim() + x.ndim + x.numel() + x.size(0) + x.size()[1]",
        "p = x.data_ptr() + x.element_size() + x.storage_offset()",
        "assert x.is_contiguous() and x.dtype == torch.float32 and x.device.type == 'cpu'",
        "v = x.view(-1).reshape(x.shape).contiguous().permute(1, 0).transpose(0, 1).t().T",
        "z = x.to(torch.float32).float().half().to(x.dtype).clone().detach()",
        "a = x.new_empty(3)\nb = x.new_zeros((2, 2))\nc = x.unsqueeze(0).squeeze(0).expand(2, -1, -1)",
        "t = torch.empty((4,), dtype=torch.float16, device=x.device)\nt.zero_()\nt.fill_(1.0)",
        "t = torch.zeros(4) , torch.ones(4), torch.full((2,), 3.0), torch.arange(8)",
        "t = torch.empty_strided((2, 2), (2, 1))\nu = torch.empty_like(x, dtype=torch.bfloat16)",
        "k = triton.next_power_of_2(x.shape[1]) + triton.cdiv(7, 2)",
        "f = torch.finfo(torch.float16).max + torch.iinfo(torch.int32).max",
        "info = torch.finfo(x.dtype)\nlo, hi = info.min, info.max",
        "ok = hasattr(torch, 'float8_e4m3fn')",
        "v = torch.__version__\nc = torch.version.cuda",
        "if torch.cuda.is_available():\n    n_sm = torch.cuda.get_device_properties(0).multi_processor_count",
        "s = torch.cuda.Stream() if torch.cuda.is_available() else None",
        "c = math.ceil(3.5) + math.log2(8)",
        "i = x.item() if x.numel() == 1 else 0",
        "with torch.no_grad():\n    pass",
        "xs = [1, 2]\nxs.append(3)\nxs.extend([4])\nd = {'a': 1}\nv = list(d.values()) + list(d.keys())\ni = xs.index(2)",
        "y = y * 1.0 + 0.0",  # operators: left to the dynamic fallback detector
        "raise SystemExit(0) if False else None",
    ],
)
def test_allocation_views_and_metadata_are_allowed(body: str) -> None:
    result = check(candidate(body, imports="import math\n"))
    assert result.ok, result.message


def test_future_typing_functools_itertools_dataclasses_are_importable() -> None:
    src = candidate(
        body="c = _Cfg()\nfor a, b in itertools.product([1], [2]):\n    pass",
        imports="""\
            from __future__ import annotations
            import functools
            import itertools
            import math
            from dataclasses import dataclass
            from typing import Optional
            """,
        extra="""\
            @dataclass
            class _Cfg:
                block: Optional[int] = None

            @functools.lru_cache(maxsize=None)
            def _pick(n: int) -> int:
                return max(16, 1 << math.ceil(math.log2(n)))
            """,
    )
    result = check(src)
    assert result.ok, result.message


def test_a_parameter_named_like_a_builtin_is_not_the_builtin() -> None:
    src = (
        HEADER
        + KERNEL
        + textwrap.dedent("""
        def softmax(input, compile=True):
            y = torch.empty_like(input)
            _copy[(1,)](input, y, input.numel(), BLOCK=1024)
            return y
        """)
    )
    result = check(src, params=["input"])
    assert result.ok, result.message


def test_triton_tensor_methods_and_at_operator_are_allowed_inside_kernels() -> None:
    src = HEADER + textwrap.dedent("""
        @triton.jit
        def _k(a_ptr, o_ptr, BLOCK: tl.constexpr):
            offs = tl.arange(0, BLOCK)
            a = tl.load(a_ptr + offs[:, None] * BLOCK + offs[None, :])
            s = a.sum(0) + a.max(0)
            c = (a @ a).to(tl.float32)
            tl.store(o_ptr + offs, s + tl.sum(c, axis=1))


        def softmax(x):
            y = torch.empty(x.shape[0], device=x.device)
            _k[(1,)](x, y, BLOCK=16)
            return y
        """)
    result = check(src)
    assert result.ok, result.message


# --------------------------------------------------------------------------------------------
# Syntax, entry point, signature
# --------------------------------------------------------------------------------------------


def test_syntax_error_names_line_and_column() -> None:
    result = check("import torch\n\ndef softmax(x:\n    return x\n")
    assert result.error_class == ErrorClass.SYNTAX_ERROR
    assert result.line == 3
    assert "line 3" in result.message and "column" in result.message


def test_null_bytes_are_a_syntax_error_not_a_crash() -> None:
    result = check("x = 1\0\n")
    assert result.error_class == ErrorClass.SYNTAX_ERROR


def test_deeply_nested_source_is_refused_not_a_crash() -> None:
    result = check("x = " + "(" * 5000 + "1" + ")" * 5000 + "\n")
    assert result.error_class == ErrorClass.SYNTAX_ERROR


def test_missing_entry_point() -> None:
    src = candidate().replace("def softmax(x):", "def soft_max(x):")
    result = check(src)
    assert result.error_class == ErrorClass.MISSING_ENTRY_POINT
    assert "softmax" in result.message and "soft_max" in result.message


def test_entry_point_bound_by_assignment_is_missing() -> None:
    src = candidate().replace("def softmax(x):", "def _impl(x):") + "softmax = _impl\n"
    result = check(src)
    assert result.error_class == ErrorClass.MISSING_ENTRY_POINT
    assert "assigned" in result.message


def test_entry_point_must_be_top_level() -> None:
    src = candidate().replace("def softmax(x):", "def _outer():\n  def softmax(x):")
    result = check(src)
    assert result.error_class in (ErrorClass.MISSING_ENTRY_POINT, ErrorClass.SYNTAX_ERROR)


@pytest.mark.parametrize(
    "signature, params",
    [
        ("def softmax(inp):", ["x"]),  # wrong name
        ("def softmax(x):", ["x", "dim"]),  # missing parameter
        ("def softmax(dim, x):", ["x", "dim"]),  # wrong order
        ("def softmax(x, BLOCK):", ["x"]),  # extra parameter without default
        ("def softmax(x, *, BLOCK):", ["x"]),  # required keyword-only parameter
        ("def softmax(*args):", ["x"]),
        ("async def softmax(x):", ["x"]),
    ],
)
def test_signature_mismatch(signature: str, params: list[str]) -> None:
    src = candidate().replace("def softmax(x):", signature)
    result = check(src, params=params)
    assert result.error_class == ErrorClass.SIGNATURE_MISMATCH, result.message
    assert result.line is not None


@pytest.mark.parametrize(
    "signature",
    [
        "def softmax(x, BLOCK=1024, num_warps=4):",
        "def softmax(x, BLOCK: int = 1024, *, num_warps: int = 8):",
        "def softmax(x, /, BLOCK=128):",
        "def softmax(x, **tunables):",
    ],
)
def test_tunable_parameters_with_defaults_are_allowed(signature: str) -> None:
    result = check(candidate().replace("def softmax(x):", signature))
    assert result.ok, result.message


# --------------------------------------------------------------------------------------------
# Kernels and launches
# --------------------------------------------------------------------------------------------


def test_no_kernel_at_all() -> None:
    result = check("import torch\n\ndef softmax(x):\n    return x * 1.0\n")
    assert result.error_class == ErrorClass.NO_TRITON_KERNEL
    assert result.kernels == []


def test_kernel_defined_but_never_launched() -> None:
    src = HEADER + KERNEL + "\n\ndef softmax(x):\n    return torch.empty_like(x)\n"
    result = check(src)
    assert result.error_class == ErrorClass.NO_TRITON_KERNEL
    assert result.kernels == ["_copy"] and result.launched == []
    assert "never launches" in result.message


def test_kernel_launched_only_at_module_level_does_not_count() -> None:
    src = (
        HEADER
        + KERNEL
        + textwrap.dedent("""
        _x = torch.zeros(4)
        _copy[(1,)](_x, _x, 4, BLOCK=4)

        def softmax(x):
            return torch.empty_like(x)
        """)
    )
    assert check(src).error_class == ErrorClass.NO_TRITON_KERNEL


def test_kernel_launched_through_helpers_transitively() -> None:
    src = (
        HEADER
        + KERNEL
        + textwrap.dedent("""
        def _grid(n):
            return (triton.cdiv(n, 1024),)

        def _inner(x, y):
            _copy[_grid(x.numel())](x, y, x.numel(), BLOCK=1024)

        def _outer(x):
            y = torch.empty_like(x)
            _inner(x, y)
            return y

        def softmax(x):
            return _outer(x)
        """)
    )
    result = check(src)
    assert result.ok, result.message
    assert result.launched == ["_copy"]


def test_kernel_passed_to_a_generic_launcher() -> None:
    src = (
        HEADER
        + KERNEL
        + textwrap.dedent("""
        def _run(kernel, x, y):
            kernel[(1,)](x, y, x.numel(), BLOCK=1024)

        def softmax(x):
            y = torch.empty_like(x)
            _run(_copy, x, y)
            return y
        """)
    )
    result = check(src)
    assert result.ok, result.message
    assert result.launched == ["_copy"]


def test_kernel_launched_through_an_alias_and_a_bound_launcher() -> None:
    src = (
        HEADER
        + KERNEL
        + textwrap.dedent("""
        _k = _copy

        def softmax(x):
            y = torch.empty_like(x)
            launch = _k[(1,)]
            launch(x, y, x.numel(), BLOCK=1024)
            return y
        """)
    )
    result = check(src)
    assert result.ok, result.message
    assert result.launched == ["_copy"]


def test_kernel_launched_from_a_class_method() -> None:
    src = (
        HEADER
        + KERNEL
        + textwrap.dedent("""
        class _Op:
            def __call__(self, x):
                y = torch.empty_like(x)
                _copy[(1,)](x, y, x.numel(), BLOCK=1024)
                return y

        def softmax(x):
            return _Op()(x)
        """)
    )
    assert check(src).ok


@pytest.mark.parametrize(
    "imports, decorators",
    [
        ("", "@triton.autotune(configs=[triton.Config({'BLOCK': 128})], key=['n'])\n@triton.jit"),
        ("", "@triton.heuristics({'EVEN': lambda a: a['n'] % 2 == 0})\n@triton.jit"),
        ("", "@triton.jit(do_not_specialize=['n'])"),
        ("from triton import jit\n", "@jit"),
        ("import triton as tr\n", "@tr.jit"),
        ("from triton.runtime.jit import jit as tjit\n", "@tjit"),
    ],
)
def test_kernel_decorator_spellings(imports: str, decorators: str) -> None:
    src = (
        HEADER
        + imports
        + "\n\n"
        + KERNEL.replace("@triton.jit", decorators)
        + textwrap.dedent("""

            def softmax(x):
                y = torch.empty_like(x)
                _copy[(1,)](x, y, x.numel())
                return y
            """)
    )
    result = check(src)
    assert result.ok, result.message
    assert result.kernels == ["_copy"]


def test_kernel_made_by_calling_triton_jit() -> None:
    src = HEADER + textwrap.dedent("""
        def _impl(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
            offs = tl.arange(0, BLOCK)
            tl.store(y_ptr + offs, tl.load(x_ptr + offs))

        _k = triton.autotune(configs=[triton.Config({'BLOCK': 16})], key=['n'])(triton.jit(_impl))

        def softmax(x):
            y = torch.empty_like(x)
            _k[(1,)](x, y, x.numel())
            return y
        """)
    result = check(src)
    assert result.ok, result.message
    assert result.launched == ["_k"]


def test_autotune_without_jit_is_not_a_kernel() -> None:
    src = candidate().replace("@triton.jit", "@triton.autotune(configs=[], key=[])")
    assert check(src).error_class == ErrorClass.NO_TRITON_KERNEL


# --------------------------------------------------------------------------------------------
# Forbidden PyTorch compute
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "body, api",
    [
        ("y = torch.softmax(y, -1)", "torch.softmax"),
        ("y = torch.exp(y)", "torch.exp"),
        ("y = torch.matmul(y, y)", "torch.matmul"),
        ("y = torch.einsum('ij,jk->ik', y, y)", "torch.einsum"),
        ("y = torch.where(y > 0, y, y)", "torch.where"),
        ("y = torch.add(y, 1)", "torch.add"),
        ("y = torch.cumsum(y, 0)", "torch.cumsum"),
        ("y = torch.cat([y, y])", "torch.cat"),
        ("y = torch.nn.functional.softmax(y, -1)", "torch.nn.functional.softmax"),
        ("y = torch.special.expit(y)", "torch.special.expit"),
        ("y = torch.linalg.vector_norm(y)", "torch.linalg.vector_norm"),
        ("y = torch.fft.fft(y)", "torch.fft.fft"),
        ("y = torch.ops.aten.softmax.default(y, -1)", "torch.ops.aten.softmax.default"),
        ("y = torch.ops.aten._softmax(y, -1, False)", "torch.ops.aten._softmax"),
        ("y = torch._C._nn.gelu(y)", "torch._C._nn.gelu"),
        ("y = torch.logsumexp(y, -1)", "torch.logsumexp"),
        ("y = torch.nan_to_num(y)", "torch.nan_to_num"),  # not listed: caught by the allow-list
        ("y = torch.xlogy(y, y)", "torch.xlogy"),
        ("y = torch.load('answer.pt')", "torch.load"),
        ("y = torch.Tensor.softmax(y, -1)", "torch.Tensor.softmax"),
        ("torch.cuda.jiterator._create_jit_fn('x')", "torch.cuda.jiterator"),
    ],
)
def test_torch_compute_functions_are_forbidden(body: str, api: str) -> None:
    assert_forbidden(check(candidate(body)), api)


@pytest.mark.parametrize(
    "imports, body, api",
    [
        ("import torch.nn.functional as G", "y = G.softmax(y, -1)", "torch.nn.functional"),
        ("from torch.nn import functional", "y = functional.softmax(y, -1)", "torch.nn.functional"),
        ("from torch.nn import functional as F", "y = F.relu(y)", "torch.nn.functional"),
        ("from torch import softmax as s", "y = s(y, -1)", "torch.softmax"),
        ("from torch import exp", "y = exp(y)", "torch.exp"),
        ("import torch as T", "y = T.exp(y)", "torch.exp"),
        ("import torch.special", "y = torch.special.expit(y)", "torch.special"),
        ("", "f = torch.exp\ny = f(y)", "torch.exp"),
        ("", "T = torch\ny = T.exp(y)", "torch.exp"),
        ("", "a = torch\nb = a\ny = b.exp(y)", "torch.exp"),
        ("", "ops = torch.ops\ny = ops.aten.softmax.default(y, -1)", "torch.ops"),
        ("", "f, g = torch.exp, torch.log\ny = f(y)", "torch.exp"),
        ("from torch import ops", "y = ops.aten.softmax(y, -1)", "torch.ops"),
        ("import torch._dynamo", "", "torch._dynamo"),
        ("import torch.utils._python_dispatch as pd", "", "torch.utils._python_dispatch"),
        ("from torch.library import custom_op", "", "torch.library"),
    ],
)
def test_aliases_are_seen_through(imports: str, body: str, api: str) -> None:
    assert_forbidden(check(candidate(body, imports=imports + "\n")), api)


def test_alias_use_site_is_also_reported() -> None:
    result = check(candidate("y = s(y, -1)", imports="from torch import softmax as s\n"))
    assert_forbidden(result, "torch.softmax")
    assert result.message.count("torch.softmax") >= 2  # the import and the call


@pytest.mark.parametrize(
    "body, api",
    [
        ("y = y.softmax(-1)", ".softmax"),
        ("y = y.exp()", ".exp"),
        ("y = y.sum(-1, keepdim=True)", ".sum"),
        ("y = y.amax(-1)", ".amax"),
        ("y = y.max(-1).values", ".max"),
        ("y = y.matmul(y)", ".matmul"),
        ("y = y.log_softmax(-1)", ".log_softmax"),
        ("y.exp_()", ".exp_"),
        ("y.add_(1)", ".add_"),
        ("y = y.clamp(0, 1)", ".clamp"),
        ("y = y.where(y > 0, 0.0)", ".where"),
        ("y = y.tolist()", ".tolist"),
        ("y = y.numpy()", ".numpy"),
        ("y = y.sort().values", ".sort"),
        ("y = y.topk(3).values", ".topk"),
        ("y = y.cumsum(0)", ".cumsum"),
        ("y = torch.empty_like(x).exp()", ".exp"),
        ("y = type(y).exp(y)", ".exp"),
        ("y = y.apply_(lambda v: v)", ".apply_"),
        ("y = y._values()", "._values"),
        ("f = y.exp\ny = f()", ".exp"),
        ("y = getattr(y, 'softmax')(-1)", "softmax"),
    ],
)
def test_tensor_compute_methods_are_forbidden(body: str, api: str) -> None:
    assert_forbidden(check(candidate(body)), api)


@pytest.mark.parametrize("body", ["y = y @ y", "y @= y", "y = y.__matmul__(y)"])
def test_matmul_operator_is_forbidden_outside_kernels(body: str) -> None:
    assert_forbidden(check(candidate(body)))


def test_every_tensor_method_is_either_allowed_or_compute() -> None:
    """The method policy covers the installed torch: a callable of torch.Tensor is on the
    allow-list, shared with Python containers, private, or refused as compute."""
    public, private = tensor_compute_methods()
    for name in dir(torch.Tensor):
        if name.startswith("__") or not callable(getattr(torch.Tensor, name)):
            continue
        assert (
            name in TENSOR_METHODS_ALLOWED
            or name in {"index", "values"}
            or name in public
            or name in private
        ), name
    for name in ("softmax", "exp", "sum", "matmul", "mean", "amax", "cumsum", "sort", "where"):
        assert name in public
    for name in ("view", "stride", "size", "contiguous", "to", "new_empty", "data_ptr"):
        assert name not in public


def test_global_forbidden_names_the_required_apis() -> None:
    for name in (
        "torch.nn",
        "torch.special",
        "torch.linalg",
        "torch.fft",
        "torch.ops",
        "torch.compile",
        "torch.jit",
        "torch.library",
        "torch.utils",
        "torch.matmul",
        "torch.mm",
        "torch.bmm",
        "torch.addmm",
        "torch.einsum",
        "torch.softmax",
        "torch.exp",
        "torch.log",
        "torch.sum",
        "torch.mean",
        "torch.max",
        "torch.amax",
        "torch.cumsum",
        "torch.sort",
        "torch.topk",
        "torch.where",
        "torch.add",
        "torch.mul",
    ):
        assert name in GLOBAL_FORBIDDEN, name


def test_task_forbidden_entries_extend_the_global_list() -> None:
    body = "n_rows = torch.empty_like(x)"
    assert check(candidate(body)).ok
    assert_forbidden(
        check(candidate(body), forbidden=("torch.empty_like",)), "forbidden by the task"
    )


def test_task_can_forbid_a_tensor_method() -> None:
    result = check(candidate("y = y.to(torch.float16)"), forbidden=("torch.Tensor.to",))
    assert_forbidden(result, ".to", "torch.Tensor.to")


def test_task_can_forbid_a_triton_library_function() -> None:
    src = candidate().replace(
        "tl.store(y_ptr + offs, tl.load(", "tl.store(y_ptr + offs, tl.softmax(tl.load("
    )
    src = src.replace("mask=mask), mask=mask)", "mask=mask)), mask=mask)")
    assert check(src).ok
    assert_forbidden(check(src, forbidden=("triton.language.softmax",)), "triton.language.softmax")


# --------------------------------------------------------------------------------------------
# Dynamic access, snooping, escapes, monkeypatching
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "body, api",
    [
        ("f = getattr(torch, 'soft' + 'max')", "getattr"),
        ("f = getattr(torch, 'softmax')", "getattr(torch, 'softmax')"),
        ("f = getattr(torch, 'float16')", "getattr(torch, 'float16')"),
        ("name = 'exp'\nf = getattr(y, name)", "getattr"),
        ("g = getattr\nf = g(torch, 'exp')", "getattr"),
        ("setattr(torch.cuda, 'synchronize', print)", "setattr(torch.cuda, 'synchronize'"),
        ("delattr(torch.cuda, 'synchronize')", "delattr"),
        ("setattr(y, '__class__', object)", "__class__"),
        ("f = eval('torch.softmax')", "eval"),
        ("exec('y = 1')", "exec"),
        ("c = compile('1', 'f', 'eval')", "compile"),
        ("m = __import__('torch')", "__import__"),
        ("g = globals()", "globals"),
        ("g = locals()", "locals"),
        ("g = vars(torch)", "vars"),
        ("g = dir(torch)", "dir"),
        ("fh = open('/etc/passwd')", "open"),
        ("breakpoint()", "breakpoint"),
        ("exit(0)", "exit"),
        ("quit()", "quit"),
        ("d = y.__dict__", "__dict__"),
        ("c = y.__class__", "__class__"),
        ("s = object.__subclasses__()", "__subclasses__"),
        ("g = softmax.__globals__", "__globals__"),
        ("b = __builtins__", "__builtins__"),
        ("c = _copy.__code__", "__code__"),
        ("m = torch.__dict__", "torch.__dict__"),
        ("m = torch._C", "torch._C"),
        ("m = triton._C", "triton._C"),
        ("m = typing.sys.modules", "typing.sys"),
        ("m = dataclasses.builtins", "dataclasses.builtins"),
        ("m = triton.testing.subprocess.run", "triton.testing.subprocess"),
        ("m = typing.operator.matmul", "typing.operator"),
        ("h = _helper(torch)", "module torch used as a value"),
        ("h = [tl][0]", "module triton.language used as a value"),
        ("m = y.os", ".os"),
        ("f = (lambda: (yield))().gi_frame.f_back", "gi_frame"),
        ("f = _helper(None).f_locals", "f_locals"),
        ("C = type('C', (torch.Tensor,), {})", "type(name, bases, namespace)"),
        ("h = {'__torch_function__': None}", "'__torch_function__'"),
        ("m = triton.runtime.build.compile_module_from_src('int x;', 'm')", "triton.runtime.build"),
        ("triton.testing.set_gpu_clock()", "triton.testing.set_gpu_clock"),
        ("f = \uff45\uff56\uff41\uff4c('1')", "eval"),  # fullwidth letters normalise to eval
    ],
)
def test_dynamic_access_and_snooping_are_forbidden(body: str, api: str) -> None:
    src = candidate(
        body,
        imports="import dataclasses\nimport typing\nimport triton.testing\n",
        extra="def _helper(m):\n    return m\n",
    )
    assert_forbidden(check(src), api)


@pytest.mark.parametrize(
    "imports",
    [
        "import importlib",
        "import inspect",
        "import sys",
        "from sys import _getframe",
        "import gc",
        "import ctypes",
        "import builtins",
        "import os",
        "from os import system",
        "import subprocess",
        "import signal",
        "import threading",
        "import multiprocessing",
        "import numpy as np",
        "import operator",
        "import time",
        "import random",
        "import pickle",
        "from . import helper",
        "from triton.language import *",
        "import triton.compiler",
        "from triton.tools import compile",
        "import triton._C.libtriton",
    ],
)
def test_imports_outside_the_allow_list_are_forbidden(imports: str) -> None:
    result = check(candidate(imports=imports + "\n"))
    assert_forbidden(result)
    assert result.line == 4  # the import line, right after the three standard imports


@pytest.mark.parametrize(
    "imports, body, api",
    [
        ("import sys", "f = sys._getframe(1).f_locals", "sys._getframe"),
        ("import sys", "m = sys.modules['__main__']", "sys.modules"),
        ("import os", "os.system('true')", "os.system"),
        ("import os", "pid = os.fork()", "os.fork"),
        ("import subprocess", "subprocess.run(['true'])", "subprocess.run"),
        ("import inspect", "f = inspect.currentframe()", "inspect.currentframe"),
        ("import gc", "objs = gc.get_objects()", "gc.get_objects"),
        ("import importlib", "m = importlib.import_module('torch.nn')", "importlib.import_module"),
    ],
)
def test_uses_of_forbidden_modules_are_reported_too(imports: str, body: str, api: str) -> None:
    assert_forbidden(check(candidate(body, imports=imports + "\n")), api)


@pytest.mark.parametrize(
    "imports, body, api",
    [
        ("", "torch.cuda.synchronize = lambda *a: None", "torch.cuda.synchronize"),
        (
            "import triton.testing",
            "triton.testing.do_bench = lambda *a, **k: 1e-9",
            "triton.testing.do_bench",
        ),
        ("import time", "time.perf_counter = lambda: 0.0", "time.perf_counter"),
        ("", "torch.Tensor.__eq__ = lambda a, b: True", "torch.Tensor.__eq__"),
        ("", "torch.allclose = lambda *a, **k: True", "torch.allclose"),
        ("", "del torch.cuda.synchronize", "torch.cuda.synchronize"),
        ("", "tl.exp = tl.exp2", "triton.language.exp"),
        ("from triton import testing", "testing.do_bench = None", "testing.do_bench"),
        ("", "C = torch.cuda\nC.synchronize = print", "C.synchronize"),
    ],
)
def test_monkeypatching_imported_modules_is_forbidden(imports: str, body: str, api: str) -> None:
    result = check(candidate(body, imports=imports + "\n"))
    assert_forbidden(result, api)


def test_monkeypatching_is_reported_as_such() -> None:
    result = check(candidate("torch.cuda.synchronize = lambda *a: None"))
    assert_forbidden(result, "monkeypatching")


def test_subclassing_torch_types_and_dispatch_hooks_are_forbidden() -> None:
    sub = check(candidate(extra="class T(torch.Tensor):\n    pass\n"))
    assert_forbidden(sub, "torch.Tensor")
    hook = check(
        candidate(
            extra="class Mode:\n    def __torch_dispatch__(self, func, types, args=(), kwargs=None):\n        return func(*args)\n"
        )
    )
    assert_forbidden(hook, "__torch_dispatch__")


def test_torch_compile_and_jit_decorators_are_forbidden() -> None:
    assert_forbidden(
        check(candidate(extra="@torch.compile\ndef _f(t):\n    return t\n")), "torch.compile"
    )
    assert_forbidden(
        check(candidate(extra="@torch.jit.script\ndef _f(t):\n    return t\n")), "torch.jit"
    )


def test_a_module_stored_as_a_class_attribute_is_a_module_used_as_a_value() -> None:
    src = candidate("m = _Holder.mod.einsum", extra="class _Holder:\n    mod = torch\n")
    assert_forbidden(check(src), "module torch used as a value")


def test_parameter_shadowing_does_not_hide_a_global_declaration() -> None:
    src = candidate(
        extra="def _f(input):\n    def g():\n        global input\n        return input()\n    return g\n"
    )
    assert_forbidden(check(src), "input")


def test_default_values_are_checked_in_the_enclosing_scope() -> None:
    assert_forbidden(check(candidate(extra="def _f(open=open):\n    return open\n")), "open")


def test_every_violation_is_listed_with_its_line() -> None:
    src = candidate("y = torch.exp(y)\ny = y.sum()\ny = eval('y')")
    result = check(src)
    assert_forbidden(result, "torch.exp", ".sum", "eval")
    lines = [ln for ln in result.message.splitlines() if "line " in ln]
    assert len(lines) == 3
    assert result.line == int(lines[0].split("line ")[1].split(":")[0])


def test_forbidden_api_is_reported_before_structural_problems() -> None:
    result = check("import torch\n\ndef softmax(x):\n    return torch.softmax(x, -1)\n")
    assert result.error_class == ErrorClass.FORBIDDEN_API
    assert result.line == 4
    assert "line 4" in result.message and "torch.softmax" in result.message


# --------------------------------------------------------------------------------------------
# The crossings: chains from subscripts and calls, re-exports, format strings
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "api"),
    [
        # a module held in a list or returned by a call, then walked
        ("t = [torch.cuda][0].torch", "torch.cuda"),
        ("t = (lambda: triton.language)().core", "triton.language"),
        ("t = {'m': torch.version}['m']", "torch.version"),
        # private attributes of objects the check cannot name (not self)
        ("h = torch.cuda.current_stream()._as_parameter_", "._as_parameter_"),
        ("s = torch.finfo(torch.float32)\nh = s._private", "._private"),
        # OS facilities and globals, whatever they hang off
        ("e = [1][0].environ", ".environ"),
        ("p = (lambda: 0)().Path", ".Path"),
        ("g = _copy.get_capture_scope()", ".get_capture_scope"),
        # dunder names as string keys
        ("b = {}['__builtins__']", "'__builtins__'"),
        ("b = {}.get('__globals__')", "'__globals__'"),
    ],
)
def test_chains_rooted_at_subscripts_and_calls_are_checked_attribute_by_attribute(
    body: str, api: str
) -> None:
    assert_forbidden(check(candidate(body)), api)


@pytest.mark.parametrize(
    ("imports", "body", "api"),
    [
        # triton.runtime reached as triton.testing.runtime: the rules apply to what it is
        ("", "p = triton.testing.runtime.build", "triton.runtime.build"),
        ("from triton.testing import runtime\n", "p = runtime.build.Path", "pathlib"),
        # objects of other modules kept by a library module: pathlib, importlib, os
        ("", "p = triton.runtime.build.Path", "triton.runtime.build"),
        ("", "s = triton.language.extra.spec.loader", "importlib"),
        # Triton's environment reader and configuration
        ("", "k = triton.knobs.getenv('OPENAI_API_KEY')", "triton.knobs"),
        ("", "k = triton.knobs.cache.dir", "triton.knobs"),
    ],
)
def test_names_a_library_re_exports_are_resolved_to_what_they_are(
    imports: str, body: str, api: str
) -> None:
    assert_forbidden(check(candidate(body, imports=imports)), api)


@pytest.mark.parametrize(
    ("body", "api"),
    [
        ("s = '{0.__globals__[torch]}'.format(softmax)", ".__globals__"),
        ("s = '{f.__globals__}'.format_map({'f': softmax})", ".__globals__"),
        ("s = str.format('{0.__class__}', x)", ".__class__"),
        ("s = '{0[__builtins__]}'.format({})", "[__builtins__]"),
        ("s = '{0:{1.__class__}}'.format(1, x)", ".__class__"),  # a field nested in a spec
        ("s = '{0.os}'.format(x)", ".os"),
        ("s = '{0._C}'.format(x)", "._C"),
        ("fmt = '{0.' + 'x}'\ns = fmt.format(x)", ".format"),
        ("f = '{}'.format", ".format"),
        ("f = str.format", ".format"),
        ("s = str.format_map(x, {})", ".format_map"),
        ("s = '{0.'.format(x)", "malformed"),
    ],
)
def test_format_strings_read_only_what_the_attribute_rules_allow(body: str, api: str) -> None:
    assert_forbidden(check(candidate(body)), api)


@pytest.mark.parametrize(
    ("extra", "body"),
    [
        ("", "s = '{}x{}'.format(x.shape[0], x.shape[1])"),
        ("", "s = '{0.shape} {0.dtype}'.format(x)"),
        ("", "s = '{n:>{w}}'.format(n=1, w=4) + str.format('{}', 2)"),
        ("", "s = '{a}'.format_map({'a': 1})"),
        ("", "s = f'{x.shape}'"),
        ("class Cache:\n    def __init__(self):\n        self._seen = {}\n", "c = Cache()"),
        ("if __name__ == '__main__':\n    pass\n", ""),
        ("", "s = torch.cuda.Stream if torch.cuda.is_available() else None"),
        ("", "ok = hasattr(torch.cuda, 'is_available')"),
        ("", "c = math.pi + math.inf if math.isfinite(1.0) else 0"),
        ("", "d = triton.language.float32"),
    ],
)
def test_honest_forms_near_the_crossings_pass(extra: str, body: str) -> None:
    result = check(candidate(body, imports="import math\n", extra=extra))
    assert result.ok, result.message


@pytest.mark.parametrize("name", sorted(n for n in TORCH_ALLOWED if "__" not in n))
def test_every_allowed_torch_name_passes_the_re_export_resolution(name: str) -> None:
    result = check(candidate(f"v = {name}"))
    assert result.ok, result.message


@pytest.mark.parametrize(
    "body",
    ["p = tl.PropagateNan.ALL", "triton.set_allocator(None)", "g = torch.Generator"],
)
def test_library_objects_kept_in_private_modules_pass(body: str) -> None:
    result = check(candidate(body))
    assert result.ok, result.message
