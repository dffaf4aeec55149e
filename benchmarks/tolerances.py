"""Error terms for tolerances that scale with the terms a result is summed from.

A task whose outputs are sums (a GEMM, a convolution, attention's P @ V) can give the judge, per
output element, a bound on the rounding a correct kernel may differ by: with outlier inputs, a
small output made of large terms carries an error proportional to those terms, not to itself.
See "terms" in benchmarks/task.py. These helpers compute the usual bounds; task files call them
from their `error_terms` function.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

# Relative error of one rounding of attention probabilities to the input precision (half an ulp,
# doubled), and for fp32 of accumulating up to 65536 terms in another order: sqrt(K) * eps32.
PROB_ROUNDING = {torch.float32: 2.0**-16, torch.float16: 2.0**-10, torch.bfloat16: 2.0**-8}
# An fp32 score s carries an absolute rounding error of about |s| * 2^-23 (per summation order up
# to sqrt(D) times that); exp turns it into a relative error of the probability.
SCORE_ROUNDING = 2.0**-16


def sum_abs_terms(fn: Callable[..., Any], args: tuple[Any, ...]) -> Any:
    """`fn` on the absolute values of its floating-point tensor arguments, in fp32: for a
    bilinear op (GEMM, convolution) this is sum |a_k| |b_k| per output element."""
    absolute = tuple(
        a.float().abs() if isinstance(a, torch.Tensor) and a.is_floating_point() else a
        for a in args
    )
    return fn(*absolute)


def softmax_terms(scores: torch.Tensor, v_abs: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """sum_j p_ij |v_j| (r + 2^-16 |s_ij|) for fp32 scores [..., n, m] (masked entries -inf) and
    |V| [..., m, d]: the rounding of P to `dtype` (r) and of the scores themselves."""
    p = torch.softmax(scores, dim=-1)
    weight = torch.where(
        p > 0,
        p * (PROB_ROUNDING.get(dtype, 2.0**-8) + SCORE_ROUNDING * scores.abs()),
        torch.zeros_like(p),
    )
    return torch.matmul(weight, v_abs)
