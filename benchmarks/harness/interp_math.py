"""bf16 arithmetic in the Triton CPU interpreter, computed as the GPU computes it.

The interpreter keeps a bf16 value as its raw 16 bits in a numpy uint16 array (numpy has no
bf16) and hands those arrays straight to numpy: `a + b`, `tl.exp(a)`, `tl.max(a)`, `tl.dot(a, b)`
on bf16 operands are integer operations on bit patterns, not arithmetic. A correct bf16 kernel
that computes without upcasting first therefore got wrong numbers on the CPU, and the judge
could not check such kernels there at all.

`patch()` routes every bf16 operand of the builder's element-wise operations (binary, unary,
ternary, fma), of `tl.dot` and of the numpy fast paths of reductions and scans through float32:
the bits become the float32 values they stand for, the operation runs in float32, and a float
result is rounded back to bf16 to nearest even. That is what the GPU does for bf16 element-wise
math and transcendental functions (computed in fp32, rounded once), and for `tl.dot` on bf16 (fp32
accumulation). Comparisons and index results keep their own types.

Float -> fp8 casts are rounded as the GPU rounds them in `interp_rounding.patch` (which calls
this one), with fp32 -> bf16. With both, the judge checks the numbers of every bf16 and fp8
kernel on the CPU, whatever its source says (it used to skip them, on words in the source a
candidate controls). Nothing changes on the GPU.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from benchmarks.harness.interp_bits import bf16_bits_to_fp32, fp32_to_bf16_bits

_PATCHED = "_kernforge_bf16_math"


def patch() -> bool:
    """Make the interpreter compute bf16 operations in float32, rounding float results back to
    bf16. True when this Triton's interpreter has the hooks this expects (now patched)."""
    try:
        import triton.language as tl
        from triton.runtime import interpreter
    except ImportError:
        return False
    builder = getattr(interpreter, "InterpreterBuilder", None)
    handle = getattr(interpreter, "TensorHandle", None)
    needed = ("binary_op", "unary_op", "ternary_op", "create_dot")
    if builder is None or handle is None or not all(hasattr(builder, n) for n in needed):
        return False
    if getattr(builder, _PATCHED, False):
        return True
    bf16, fp32 = tl.bfloat16, tl.float32

    def is_bf16(h: Any) -> bool:
        return getattr(getattr(h, "dtype", None), "scalar", None) == bf16

    def widen(h: Any) -> Any:
        return handle(bf16_bits_to_fp32(h.data), fp32) if is_bf16(h) else h

    def narrow(out: Any) -> Any:
        if out.dtype.scalar == fp32 and out.data.dtype == np.float32:
            return handle(fp32_to_bf16_bits(out.data), bf16)
        return out

    def through_fp32(method: Callable[..., Any], count: int) -> Callable[..., Any]:
        def wrapped(self: Any, *args: Any) -> Any:
            handles, rest = args[:count], args[count:]
            if not any(is_bf16(h) for h in handles):
                return method(self, *args)
            return narrow(method(self, *(widen(h) for h in handles), *rest))

        return wrapped

    builder.binary_op = through_fp32(builder.binary_op, 2)
    builder.unary_op = through_fp32(builder.unary_op, 1)
    builder.ternary_op = _ternary(builder.ternary_op, is_bf16, widen, narrow)
    if hasattr(builder, "create_fma"):
        builder.create_fma = through_fp32(builder.create_fma, 3)
    dot = builder.create_dot

    def bf16_dot(self: Any, a: Any, b: Any, d: Any, *rest: Any) -> Any:
        if not (is_bf16(a) or is_bf16(b)):
            return dot(self, a, b, d, *rest)
        out = dot(self, widen(a), widen(b), widen(d), *rest)
        return narrow(out) if is_bf16(d) else out

    builder.create_dot = bf16_dot
    _reductions(interpreter, tl, handle, bf16, fp32)
    setattr(builder, _PATCHED, True)
    return True


def _ternary(method: Callable[..., Any], is_bf16: Any, widen: Any, narrow: Any) -> Any:
    """`select(cond, a, b)` and `clamp(x, lo, hi)`: the condition of a select is not a value."""

    def wrapped(self: Any, lhs: Any, rhs: Any, other: Any, op: Any) -> Any:
        if not any(is_bf16(h) for h in (lhs, rhs, other)):
            return method(self, lhs, rhs, other, op)
        if op is np.where:  # a select moves bits: no arithmetic, nothing to round
            return method(self, lhs, rhs, other, op)
        return narrow(method(self, widen(lhs), widen(rhs), widen(other), op))

    return wrapped


def _reductions(interpreter: Any, tl: Any, handle: Any, bf16: Any, fp32: Any) -> None:
    """The numpy fast paths of `tl.max/min/argmax/sum` and `tl.cumsum/cumprod` see bf16 values
    as float32 and give bf16 back (the slow paths call the builder's patched operations)."""

    def retyped(t: Any, scalar: Any, data: Any) -> Any:
        shape = list(t.shape) if getattr(t, "shape", None) else None
        return tl.core.tensor(
            handle(data, scalar), tl.block_type(scalar, shape) if shape else scalar
        )

    def as_fp32(t: Any) -> Any:
        return retyped(t, fp32, bf16_bits_to_fp32(t.handle.data))

    def as_bf16(t: Any) -> Any:
        if not isinstance(t, tl.core.tensor) or t.dtype.scalar != fp32:
            return t
        return retyped(t, bf16, fp32_to_bf16_bits(t.handle.data))

    def through_fp32(method: Callable[..., Any]) -> Callable[..., Any]:
        def wrapped(self: Any, input: Any, *args: Any, **kwargs: Any) -> Any:
            first = input[0] if isinstance(input, tuple) else input
            if first.dtype.scalar != bf16:
                return method(self, input, *args, **kwargs)
            wide = (as_fp32(first), *input[1:]) if isinstance(input, tuple) else as_fp32(first)
            out = method(self, wide, *args, **kwargs)
            if isinstance(out, list | tuple):
                return type(out)(as_bf16(o) for o in out)
            return as_bf16(out)

        return wrapped

    for cls, names in (
        (getattr(interpreter, "ReduceOps", None), ("min_max", "sum")),
        (getattr(interpreter, "ScanOps", None), ("cumsum", "cumprod")),
    ):
        for name in names:
            if cls is not None and hasattr(cls, name):
                setattr(cls, name, through_fp32(getattr(cls, name)))
