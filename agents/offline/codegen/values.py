"""What the builder holds for a graph node: a kernel expression and the reference's dtype for it,
with the small text helpers on such expressions."""

from __future__ import annotations

import re
from dataclasses import dataclass

import torch

from agents.offline.codegen import emit


@dataclass(frozen=True)
class Value:
    expr: str  # a kernel variable or a literal
    dtype: torch.dtype  # the reference's dtype for it


def is_var(expr: str) -> bool:
    return re.fullmatch(r"[A-Za-z_]\w*", expr) is not None and expr not in ("True", "False")


def constant_value(text: str) -> float:
    """The number a constant's kernel text stands for ('True', '(-1)', '0.5', 'float("inf")')."""
    if text in ("True", "False"):
        return float(text == "True")
    if text.startswith("float("):
        return float(text[7:-2])
    return float(text.strip("()"))


def rounded(expr: str, dtype: torch.dtype) -> str:
    """The kernel holds floats in fp32; a value the reference holds in a narrower float type
    (fp16, bf16, fp8) is rounded to it."""
    if dtype.is_floating_point and dtype.itemsize < 4:
        return f"({expr}).to({emit.TL_DTYPES[dtype]}).to(tl.float32)"
    return expr
