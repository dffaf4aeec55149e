"""The aten ops `agents.offline.codegen.translate` translates, each as a Triton expression.

A translation is a function of a `Call` (the op's arguments, resolved by the builder) that
returns the Triton expression of the op's result. Elementwise ops read their tensor operands as
fp32 values (integers and booleans are converted when the result is floating); reductions and
compound ops (softmax) add statements of their own through the call.

Transcendentals use only what Triton 3.6 and 3.9 both have (tl.exp, tl.log, tl.sqrt, tl.rsqrt,
tl.sin, tl.cos, tl.erf, tl.sigmoid, tl.floor, tl.ceil, tl.exp2, tl.log2); tanh, expm1, log1p, asin and
round are small @triton.jit helpers (`emit.HELPERS`) written so that large inputs (the
judge's outlier mode scales rare values by 10-1000x) saturate instead of overflowing to inf/inf.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, Protocol

import torch


class NotSupported(Exception):
    """The reference cannot be translated by the rule-based generator; the message says why."""


class Call(Protocol):
    """What a translation sees of one aten call (implemented by `nodes._Call`)."""

    op: str  # e.g. "mul.Tensor"
    out_dtype: torch.dtype
    count: str  # kernel text for how many elements a reduction reduces ("N", or "n")

    def x(self, i: int) -> str:
        """Positional argument i as an operand: a kernel variable or a literal."""

    def is_tensor(self, i: int) -> bool: ...

    def dtype(self, i: int) -> torch.dtype | None:
        """The dtype of tensor argument i (None for a Python number)."""

    def lit(self, key: int | str, default: Any = None) -> Any:
        """A non-tensor argument (position or keyword) that is the same in every trace."""

    def num(self, key: int | str, default: Any = None) -> str:
        """A numeric non-tensor argument as kernel text (a literal or a size the launcher
        passes, when it changes with the shape)."""

    def helper(self, name: str) -> None: ...

    def let(self, expr: str) -> str:
        """A new tile statement (a value per element); returns its variable."""

    def reduce(self, how: str, expr: str) -> str:
        """A reduction over the last dim of a tile expression; returns its per-row variable."""

    def reduce_dims(self, key: int | str) -> None:
        """Check that the dims argument names the last dim only."""


def literal(value: Any) -> str:
    """A Python number as kernel text."""
    if isinstance(value, bool):
        return repr(value)
    if isinstance(value, int):
        return f"({value})" if value < 0 else str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return 'float("nan")'
        if math.isinf(value):
            return 'float("inf")' if value > 0 else 'float("-inf")'
        return f"({value!r})" if value < 0 else repr(value)
    raise NotSupported(f"argument {value!r} of type {type(value).__name__} is not a number")


# -- elementwise ---------------------------------------------------------------------------------


def _binary(symbol: str) -> Callable[[Call], str]:
    def translate(c: Call) -> str:
        b = c.x(1)
        alpha = c.num("alpha", 1)  # a literal, or a float argument of the reference
        if alpha != "1":
            b = f"{alpha} * {b}"
        return f"{c.x(0)} {symbol} {b}"

    return translate


def _rsub(c: Call) -> str:
    alpha = c.lit("alpha", 1)
    a = c.x(0) if alpha == 1 else f"{literal(alpha)} * {c.x(0)}"
    return f"{c.x(1)} - {a}"


def _div(c: Call) -> str:
    mode = c.lit("rounding_mode", None)
    if mode is None:
        return f"{c.x(0)} / {c.x(1)}"
    if mode == "floor":
        return f"tl.floor({c.x(0)} / {c.x(1)})"
    raise NotSupported(f"{c.op} with rounding_mode={mode!r}")


def _compare(symbol: str) -> Callable[[Call], str]:
    return lambda c: f"{c.x(0)} {symbol} {c.x(1)}"


def _func(name: str, helper: str | None = None) -> Callable[[Call], str]:
    def translate(c: Call) -> str:
        if helper:
            c.helper(helper)
        return f"{name}({c.x(0)})"

    return translate


def _maximum(c: Call) -> str:
    a, b = c.x(0), c.x(1)  # NaN in either operand wins, as in torch
    return f"tl.where(({a} > {b}) | ({a} != {a}), {a}, {b})"


def _minimum(c: Call) -> str:
    a, b = c.x(0), c.x(1)
    return f"tl.where(({a} < {b}) | ({a} != {a}), {a}, {b})"


def _clamp_bounds(c: Call, x: str, lo: str | None, hi: str | None) -> str:
    # where(x < lo, lo, x) keeps NaN, as torch.clamp does
    if lo is not None:
        x = f"tl.where({x} < {lo}, {lo}, {x})"
        if hi is not None:
            x = c.let(x)
    if hi is not None:
        x = f"tl.where({x} > {hi}, {hi}, {x})"
    return x


def _bound(c: Call, i: int, key: str) -> str | None:
    """Clamp bound i (a tensor, a number given by position or keyword), or None when absent."""
    if c.is_tensor(i):
        return c.x(i)
    if c.lit(i, None) is not None:
        return c.num(i)
    return None if c.lit(key, None) is None else c.num(key)


def _clamp(c: Call) -> str:
    return _clamp_bounds(c, c.x(0), _bound(c, 1, "min"), _bound(c, 2, "max"))


def _clamp_min(c: Call) -> str:
    return _clamp_bounds(c, c.x(0), c.x(1), None)


def _clamp_max(c: Call) -> str:
    return _clamp_bounds(c, c.x(0), None, c.x(1))


def _hardtanh(c: Call) -> str:
    lo, hi = c.lit(1, -1.0), c.lit(2, 1.0)
    return _clamp_bounds(c, c.x(0), literal(float(lo)), literal(float(hi)))


def _relu(c: Call) -> str:
    x = c.x(0)
    return f"tl.where({x} < 0, 0.0, {x})"


def _sign(c: Call) -> str:
    x = c.x(0)
    return f"tl.where({x} > 0, 1.0, tl.where({x} < 0, -1.0, {x}))"


def _trunc(c: Call) -> str:
    x = c.x(0)
    return f"tl.where({x} < 0, tl.ceil({x}), tl.floor({x}))"


def _rounding(name: str) -> Callable[[Call], str]:
    """floor/ceil/round/trunc: the value itself for an integer or boolean tensor (torch keeps
    its dtype; Triton's float functions refuse integers)."""
    translate = ELEMENTWISE_ROUNDING[name]

    def rounded(c: Call) -> str:
        dtype = c.dtype(0)
        if dtype is not None and not dtype.is_floating_point:
            return c.x(0)
        return translate(c)

    return rounded


def _signbit(c: Call) -> str:
    """The sign bit: set for -0.0 and a NaN with its sign, which `x < 0` misses."""
    x, dtype = c.x(0), c.dtype(0)
    if dtype is not None and not dtype.is_floating_point:
        return f"{x} < 0"
    return f"{x}.to(tl.float32).to(tl.int32, bitcast=True) < 0"


def _erfc(c: Call) -> str:
    return f"1.0 - tl.erf({c.x(0)})"


def _reciprocal(c: Call) -> str:
    return f"1.0 / {c.x(0)}"


def _gelu(c: Call) -> str:
    x = c.x(0)
    if c.lit("approximate", "none") == "tanh":
        c.helper("_tanh")
        inner = c.let(f"0.7978845608028654 * ({x} + 0.044715 * {x} * {x} * {x})")
        return f"0.5 * {x} * (1.0 + _tanh({inner}))"
    return f"0.5 * {x} * (1.0 + tl.erf({x} * 0.7071067811865476))"


def _pow_scalar_exponent(c: Call) -> str:
    x, e = c.x(0), c.lit(1)
    if isinstance(e, bool) or not isinstance(e, int | float):
        raise NotSupported(f"{c.op} with exponent {e!r}")
    if float(e) == 0.5:
        return f"tl.sqrt({x})"
    if float(e) == -0.5:
        return f"tl.rsqrt({x})"
    if float(e).is_integer() and abs(e) <= 4:
        n = int(e)
        if n == 0:
            return f"tl.where({x} == {x}, 1.0, 1.0)"
        product = " * ".join([x] * abs(n))
        return product if n > 0 else f"1.0 / ({product})"
    if float(e).is_integer():  # a negative base keeps the sign of an odd power
        r = c.let(f"tl.exp2({literal(float(e))} * tl.log2(tl.abs({x})))")
        return f"tl.where({x} < 0, -{r}, {r})" if int(e) % 2 else r
    return f"tl.exp2({literal(float(e))} * tl.log2({x}))"


def _pow_scalar_base(c: Call) -> str:
    base = c.lit(0)
    if isinstance(base, bool) or not isinstance(base, int | float) or base <= 0:
        raise NotSupported(f"{c.op} with base {base!r}")
    return f"tl.exp2({c.x(1)} * {literal(math.log2(base))})"


def _where(c: Call) -> str:
    cond = c.x(0)
    if c.dtype(0) not in (torch.bool, None):
        cond = f"({cond} != 0)"
    return f"tl.where({cond}, {c.x(1)}, {c.x(2)})"


def _logical(symbol: str) -> Callable[[Call], str]:
    return lambda c: f"{_as_bool(c, 0)} {symbol} {_as_bool(c, 1)}"


def _as_bool(c: Call, i: int) -> str:
    return c.x(i) if c.dtype(i) == torch.bool else f"({c.x(i)} != 0)"


def _logical_not(c: Call) -> str:
    return f"{_as_bool(c, 0)} == 0"


def _bitwise_not(c: Call) -> str:
    return f"{c.x(0)} == 0" if c.dtype(0) == torch.bool else f"~{c.x(0)}"


def _bitwise(symbol: str) -> Callable[[Call], str]:
    return lambda c: f"{c.x(0)} {symbol} {c.x(1)}"


# -- reductions over the last dim -----------------------------------------------------------------


def _sum(c: Call) -> str:
    c.reduce_dims(1)
    return c.reduce("sum", c.x(0))


def _mean(c: Call) -> str:
    c.reduce_dims(1)
    return f"{c.reduce('sum', c.x(0))} / {c.count}"


def _amax(c: Call) -> str:
    c.reduce_dims(1)
    return c.reduce("max", c.x(0))


def _amin(c: Call) -> str:
    c.reduce_dims(1)
    return c.reduce("min", c.x(0))


def _correction(c: Call) -> str:
    corr = c.lit("correction", None)
    if corr is None:
        corr = 0 if c.lit("unbiased", True) is False else 1
    return c.count if corr == 0 else f"({c.count} - {literal(corr)})"


def var_and_mean(c: Call) -> tuple[str, str]:
    """(variance, mean) of a var/var_mean call: two passes, the second over x - mean."""
    c.reduce_dims(1)
    x = c.x(0)
    mean = c.let(f"{c.reduce('sum', x)} / {c.count}")
    d = c.let(f"{x} - {mean}")
    var = f"{c.reduce('sum', f'{d} * {d}')} / {_correction(c)}"
    return var, mean


def _var(c: Call) -> str:
    return var_and_mean(c)[0]


def _softmax(c: Call) -> str:
    c.reduce_dims(1)
    x = c.x(0)
    m = c.reduce("max", x)
    e = c.let(f"tl.exp({x} - {m})")
    return f"{e} / {c.reduce('sum', e)}"


def _log_softmax(c: Call) -> str:
    c.reduce_dims(1)
    x = c.x(0)
    m = c.reduce("max", x)
    s = c.reduce("sum", f"tl.exp({x} - {m})")
    return f"{x} - {m} - tl.log({s})"


ELEMENTWISE_ROUNDING: dict[str, Callable[[Call], str]] = {
    "floor": _func("tl.floor"),
    "ceil": _func("tl.ceil"),
    "round": _func("_round_half_even", "_round_half_even"),
    "trunc": _trunc,
}
# op (overload packet name) -> translation; the builder handles views, conversions, constants
ELEMENTWISE: dict[str, Callable[[Call], str]] = {
    "add": _binary("+"),
    "sub": _binary("-"),
    "mul": _binary("*"),
    "div": _div,
    "rsub": _rsub,
    "true_divide": _div,
    "neg": lambda c: f"-{c.x(0)}",
    "exp": _func("tl.exp"),
    "exp2": _func("tl.exp2"),
    "log": _func("tl.log"),
    "log2": _func("tl.log2"),
    "log1p": _func("_log1p", "_log1p"),
    "expm1": _func("_expm1", "_expm1"),
    "tanh": _func("_tanh", "_tanh"),
    "sigmoid": _func("tl.sigmoid"),
    "erf": _func("tl.erf"),
    "erfc": _erfc,
    "sqrt": _func("tl.sqrt"),
    "rsqrt": _func("tl.rsqrt"),
    "reciprocal": _reciprocal,
    "abs": _func("tl.abs"),
    "sin": _func("tl.sin"),
    "cos": _func("tl.cos"),
    "floor": _rounding("floor"),
    "ceil": _rounding("ceil"),
    "round": _rounding("round"),
    "trunc": _rounding("trunc"),
    "signbit": _signbit,
    "asin": _func("_asin", "_asin"),
    "sign": _sign,
    "relu": _relu,
    "gelu": _gelu,
    "hardtanh": _hardtanh,
    "pow": lambda c: _pow_scalar_exponent(c) if c.is_tensor(0) else _pow_scalar_base(c),
    "maximum": _maximum,
    "minimum": _minimum,
    "clamp": _clamp,
    "clamp_min": _clamp_min,
    "clamp_max": _clamp_max,
    "where": _where,
    "isnan": lambda c: f"{c.x(0)} != {c.x(0)}",
    "isinf": lambda c: f'tl.abs({c.x(0)}) == float("inf")',
    "eq": _compare("=="),
    "ne": _compare("!="),
    "lt": _compare("<"),
    "le": _compare("<="),
    "gt": _compare(">"),
    "ge": _compare(">="),
    "logical_and": _logical("&"),
    "logical_or": _logical("|"),
    "logical_xor": _logical("^"),
    "logical_not": _logical_not,
    "bitwise_not": _bitwise_not,
    "bitwise_and": _bitwise("&"),
    "bitwise_or": _bitwise("|"),
    "bitwise_xor": _bitwise("^"),
}
REDUCTIONS: dict[str, Callable[[Call], str]] = {
    "sum": _sum,
    "mean": _mean,
    "amax": _amax,
    "amin": _amin,
    "var": _var,
    "_softmax": _softmax,
    "_log_softmax": _log_softmax,
}
# arg-reductions over one dim (the row): the op -> the Stmt reduction that gives its index
# (`emit`: a (value, index) reduce, torch's first index among equals, a NaN beyond every number)
ARG_REDUCTIONS = {"argmax": "argmax", "argmin": "argmin"}
