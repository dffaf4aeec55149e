"""What loading an imported problem learns by running its reference (at the CPU sizes).

- **Flags**: tasks no kernel can pass, with the reason: a random reference (two calls on the
  same inputs differ: dropout in training mode, random draws), a result that is not a tensor
  (the judge compares tensors), complex tensors (Triton has no complex dtype). Flagged tasks load,
  are listed with their flag, and are kept out of what a bench or an import counts.
- **Input modes**: "outlier" mode is kept when the reference accepts amplified outliers; when it
  raises on them (a binary cross-entropy outside [0, 1]) the outliers stay inside the inputs'
  range instead (`benchmarks.inputs.in_range_outliers`); when it raises even then, the mode is
  skipped. Where a published input is one-sided (drawn with `torch.rand`), mode "signed"
  (`benchmarks.inputs.signed`) is added, unless the reference raises or turns finite results into
  NaN/Inf on it (a domain of its own: a square root, a logarithm). Each decision is a note.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch

from benchmarks.formats.common import SIGNED_MODE, error_text, map_tensors, seeded, tensors
from benchmarks.inputs import one_sided

SEED = 4321
# make(dims, mode, gen, outlier_kind) -> the inputs; reference(dims) -> the callable
MakeInputs = Callable[[dict[str, int], str, torch.Generator, str], tuple]
Reference = Callable[[dict[str, int]], Callable[..., Any]]


@dataclass
class ReferenceFacts:
    modes: tuple[str, ...]
    outlier_kind: str = "amplify"
    flagged: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def same(a: Any, b: Any) -> bool:
    """Bit for bit the same value (NaN equal to NaN), descending into tuples and lists."""
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        if a.shape != b.shape or a.dtype != b.dtype:
            return False
        if a.is_floating_point() or a.is_complex():
            return bool(((a == b) | (torch.isnan(a) & torch.isnan(b))).all())
        return torch.equal(a, b)
    if isinstance(a, tuple | list) and isinstance(b, tuple | list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


def _outputs(value: Any) -> list[Any]:
    return list(value) if isinstance(value, tuple | list) else [value]


def _all_finite(value: Any) -> bool:
    return all(
        bool(torch.isfinite(t).all())
        for t in tensors(value)
        if t.is_floating_point() or t.is_complex()
    )


def _call(fn: Callable[..., Any], args: tuple) -> Any:
    with torch.no_grad():
        return fn(*map_tensors(args, lambda t: t.clone()))


def examine(
    cases: list[dict[str, int]],
    make: MakeInputs,
    reference: Reference,
    modes: tuple[str, ...] = ("standard", "outlier"),
    device: str = "cpu",
) -> ReferenceFacts:
    """Flags and input modes for a task whose cases are `cases`, its inputs made on `device`
    (where the reference of those cases runs: see the module docstring). The reference is known
    to run on every case's standard inputs."""
    facts = ReferenceFacts(modes=modes)
    gen = torch.Generator(device=device)
    standard: list[tuple[tuple, Any]] = []
    for dims in cases:
        args = make(dims, "standard", gen.manual_seed(SEED), "amplify")
        with seeded(SEED):
            first = _call(reference(dims), args)
            second = _call(reference(dims), args)
        standard.append((args, first))
        if not same(first, second) and not any("random" in f for f in facts.flagged):
            facts.flagged.append(
                "the reference is random: two calls on the same inputs differ (dropout in "
                "training mode, random draws); no kernel can reproduce its draws"
            )
        others = [o for o in _outputs(first) if not isinstance(o, torch.Tensor)]
        if others and not any("not a tensor" in f for f in facts.flagged):
            kinds = ", ".join(sorted({type(o).__name__ for o in others}))
            facts.flagged.append(
                f"the reference returns {kinds}, not a tensor: the judge compares tensor outputs only"
            )
        complex_ = sorted({str(t.dtype) for t in tensors((args, first)) if t.is_complex()})
        if complex_ and not any("complex" in f for f in facts.flagged):
            facts.flagged.append(
                f"complex tensors ({', '.join(complex_)}): Triton has no complex dtype"
            )
    if "outlier" in facts.modes:
        _outlier_mode(facts, cases, make, reference, device)
    _signed_mode(facts, cases, make, reference, standard, device)
    return facts


def _raises(
    cases: list[dict[str, int]],
    make: MakeInputs,
    reference: Reference,
    mode: str,
    kind: str,
    device: str,
) -> tuple[str | None, list[Any]]:
    """(the first error of the reference in `mode`, or None; its outputs per case)."""
    gen = torch.Generator(device=device)
    outs = []
    for dims in cases:
        try:
            args = make(dims, mode, gen.manual_seed(SEED + 1), kind)
            with seeded(SEED):
                outs.append(_call(reference(dims), args))
        except Exception as exc:  # noqa: BLE001 - the reference refusing the mode is the answer
            return error_text(exc)[:300], outs
    return None, outs


def _outlier_mode(
    facts: ReferenceFacts,
    cases: list[dict[str, int]],
    make: MakeInputs,
    reference: Reference,
    device: str,
) -> None:
    error, _ = _raises(cases, make, reference, "outlier", "amplify", device)
    if error is None:
        return
    again, _ = _raises(cases, make, reference, "outlier", "in_range", device)
    if again is None:
        facts.outlier_kind = "in_range"
        facts.notes.append(
            f"the reference raises on amplified outliers ({error}): outlier mode moves picked "
            "elements to the ends of each input's own range instead"
        )
        return
    facts.modes = tuple(m for m in facts.modes if m != "outlier")
    facts.notes.append(
        f"outlier mode skipped: the reference raises on amplified outliers ({error}) and on "
        f"outliers inside its inputs' range ({again})"
    )


def _signed_mode(
    facts: ReferenceFacts,
    cases: list[dict[str, int]],
    make: MakeInputs,
    reference: Reference,
    standard: list[tuple[tuple, Any]],
    device: str,
) -> None:
    sided = sorted(
        {
            i
            for args, _ in standard
            for i, a in enumerate(args)
            if isinstance(a, torch.Tensor) and one_sided(a)
        }
    )
    if not sided:
        return
    which = ", ".join(f"input {i}" for i in sided)
    error, outs = _raises(cases, make, reference, SIGNED_MODE, facts.outlier_kind, device)
    if error is not None:
        facts.notes.append(
            f"{which} one-sided as published; mode {SIGNED_MODE!r} skipped: the reference raises on "
            f"inputs of both signs ({error})"
        )
        return
    if any(
        _all_finite(want) and not _all_finite(got)
        for (_, want), got in zip(standard, outs, strict=True)
    ):
        facts.notes.append(
            f"{which} one-sided as published; mode {SIGNED_MODE!r} skipped: the reference is not "
            "defined on inputs of the other sign (NaN/Inf where the published inputs give none)"
        )
        return
    facts.modes = (*facts.modes, SIGNED_MODE)
    facts.notes.append(
        f"{which} one-sided as published (e.g. torch.rand): mode {SIGNED_MODE!r} also judges "
        "them with half their signs flipped"
    )
