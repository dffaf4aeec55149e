"""Comparing a candidate's outputs with the reference's, in the judging process.

Rules, in order, for each output:
1. it is a plain `torch.Tensor` (no subclass, no Python number standing in for one);
2. shape and dtype match exactly;
3. NaN and +/-Inf appear exactly where the reference has them;
4. finite values are close: |got - want| <= atol + rtol * |want| (+ terms * sum|terms| where
   the task gives its error terms: see benchmarks/task.py), or for a
   quantization contract cosine >= c, relative L1 <= r and RMSE <= e, all three.
The first failure is reported with its error class and where it happened.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from benchmarks.harness.transport import Digest, Opaque
from benchmarks.harness.worker import same_bits
from benchmarks.task import Tolerance
from benchmarks.verdict import ErrorClass, Mismatch


@dataclass
class Comparison:
    ok: bool
    error_class: ErrorClass = ErrorClass.NONE
    message: str = ""
    mismatch: Mismatch | None = None
    max_abs_err: float = 0.0
    max_rel_err: float = 0.0
    cosine: float | None = None
    rel_l1: float | None = None
    rmse: float | None = None


def as_outputs(value: object) -> list[object]:
    """The reference and candidate may return one tensor or a tuple/list of them."""
    if isinstance(value, tuple | list):
        return list(value)
    return [value]


def _index(flat_index: int, shape: torch.Size) -> list[int]:
    out = []
    for dim in reversed(shape):
        out.append(flat_index % dim if dim else 0)
        flat_index = flat_index // dim if dim else 0
    return list(reversed(out))


def _compare_one(
    i: int, got: object, want: torch.Tensor, tol: Tolerance, scale: torch.Tensor | None = None
) -> Comparison:
    if type(got) is not torch.Tensor:
        what = got.kind if isinstance(got, Opaque) else type(got).__name__
        return Comparison(
            False,
            ErrorClass.WRONG_OUTPUT_TYPE,
            f"output {i} is {what}, expected a torch.Tensor",
            Mismatch(output_index=i),
        )
    if tuple(got.shape) != tuple(want.shape):
        return Comparison(
            False,
            ErrorClass.SHAPE_MISMATCH,
            f"output {i} has shape {tuple(got.shape)}, expected {tuple(want.shape)}",
            Mismatch(output_index=i),
        )
    if got.dtype != want.dtype:
        return Comparison(
            False,
            ErrorClass.DTYPE_MISMATCH,
            f"output {i} has dtype {got.dtype}, expected {want.dtype}",
            Mismatch(output_index=i),
        )
    if got.numel() == 0:
        return Comparison(True)
    # fp32 arithmetic is exact enough for half-precision outputs and halves the memory; wider
    # types (and integers) are compared in fp64
    work = (
        torch.float32
        if want.dtype.is_floating_point and want.element_size() <= 2
        else torch.float64
    )
    g = got.detach().to(device=want.device, dtype=work)
    w = want.detach().to(work)

    # NaN / Inf must sit where the reference has them
    g_nan, w_nan = torch.isnan(g), torch.isnan(w)
    g_inf, w_inf = torch.isinf(g), torch.isinf(w)
    bad_special = (g_nan != w_nan) | (g_inf != w_inf) | (w_inf & (torch.sign(g) != torch.sign(w)))
    if bool(bad_special.any()):
        flat = int(torch.nonzero(bad_special.reshape(-1))[0].item())
        idx = _index(flat, got.shape)
        n_bad = int(bad_special.sum().item())
        e, gv = float(w.reshape(-1)[flat].item()), float(g.reshape(-1)[flat].item())
        return Comparison(
            False,
            ErrorClass.NAN_INF_MISMATCH,
            f"output {i}: {n_bad} element(s) differ in NaN/Inf from the reference; first at index {idx}: expected {e}, got {gv}",
            Mismatch(output_index=i, first_bad_index=idx, expected=e, got=gv),
        )
    finite = torch.isfinite(w)
    diff = torch.where(finite, (g - w).abs(), torch.zeros_like(g))
    max_abs = float(diff.max().item())
    rel = diff / w.abs().clamp_min(1e-12)
    rel = torch.where(finite, rel, torch.zeros_like(rel))
    max_rel = float(rel.max().item())

    if tol.is_quant:
        gf, wf = torch.where(finite, g, 0.0), torch.where(finite, w, 0.0)
        denom = float(gf.norm().item() * wf.norm().item())
        cosine = (
            float((gf * wf).sum().item() / denom)
            if denom > 0
            else (1.0 if float(gf.abs().max()) == 0 else 0.0)
        )
        l1_ref = float(wf.abs().sum().item())
        rel_l1 = float(diff.sum().item() / l1_ref) if l1_ref > 0 else float(diff.sum().item())
        rmse = float(torch.sqrt((diff**2).mean()).item())
        fails = []
        if not cosine >= tol.cosine:  # type: ignore[operator]
            fails.append(f"cosine {cosine:.6f} < {tol.cosine}")
        if not rel_l1 <= tol.rel_l1:  # type: ignore[operator]
            fails.append(f"relative L1 {rel_l1:.3g} > {tol.rel_l1}")
        if not rmse <= tol.rmse:  # type: ignore[operator]
            fails.append(f"RMSE {rmse:.3g} > {tol.rmse}")
        mm = Mismatch(
            output_index=i,
            max_abs_err=max_abs,
            max_rel_err=max_rel,
            cosine=cosine,
            rel_l1=rel_l1,
            rmse=rmse,
        )
        if fails:
            return Comparison(
                False,
                ErrorClass.NUMERICAL_MISMATCH,
                f"output {i}: quantization contract broken: {'; '.join(fails)}",
                mm,
                max_abs,
                max_rel,
                cosine,
                rel_l1,
                rmse,
            )
        return Comparison(
            True, max_abs_err=max_abs, max_rel_err=max_rel, cosine=cosine, rel_l1=rel_l1, rmse=rmse
        )

    bound = tol.atol + tol.rtol * w.abs()  # type: ignore[operator]
    if scale is not None and tol.terms:
        bound = bound + tol.terms * scale.detach().to(device=w.device, dtype=w.dtype).abs()
    bad = finite & (diff > bound)
    if bool(bad.any()):
        flat = int(torch.nonzero(bad.reshape(-1))[0].item())
        idx = _index(flat, got.shape)
        n_bad = int(bad.sum().item())
        e, gv = float(w.reshape(-1)[flat].item()), float(g.reshape(-1)[flat].item())
        return Comparison(
            False,
            ErrorClass.NUMERICAL_MISMATCH,
            f"output {i}: {n_bad} of {got.numel()} elements outside atol={tol.atol}, rtol={tol.rtol}; "
            f"max abs err {max_abs:.3g}, max rel err {max_rel:.3g}; first at index {idx}: expected {e:.6g}, got {gv:.6g}",
            Mismatch(
                output_index=i,
                max_abs_err=max_abs,
                max_rel_err=max_rel,
                first_bad_index=idx,
                expected=e,
                got=gv,
            ),
            max_abs,
            max_rel,
        )
    return Comparison(True, max_abs_err=max_abs, max_rel_err=max_rel)


def compare_outputs(got: object, want: object, tol: Tolerance, scale: object = None) -> Comparison:
    """Compare everything the candidate returned with everything the reference returned.
    `scale`: the task's error terms (sum of |terms| per element, one per output), or None."""
    got_list, want_list = as_outputs(got), as_outputs(want)
    scales = as_outputs(scale) if scale is not None else [None] * len(want_list)
    if len(got_list) != len(want_list):
        return Comparison(
            False,
            ErrorClass.WRONG_OUTPUT_TYPE,
            f"returned {len(got_list)} output(s), expected {len(want_list)}",
        )
    worst = Comparison(True)
    for i, (g, w) in enumerate(zip(got_list, want_list, strict=True)):
        if not isinstance(w, torch.Tensor):  # a task returning a Python number
            w = torch.as_tensor(w)
        sc = (
            scales[i]
            if i < len(scales)
            and isinstance(scales[i], torch.Tensor)
            and tuple(scales[i].shape) == tuple(w.shape)
            else None
        )
        result = _compare_one(i, g, w, tol, sc)
        if not result.ok:
            return result
        worst.max_abs_err = max(worst.max_abs_err, result.max_abs_err)
        worst.max_rel_err = max(worst.max_rel_err, result.max_rel_err)
        for attr in ("cosine", "rel_l1", "rmse"):
            val = getattr(result, attr)
            if val is not None:
                cur = getattr(worst, attr)
                better_is_low = attr != "cosine"
                if cur is None or (val > cur if better_is_low else val < cur):
                    setattr(worst, attr, val)
    return worst


def bitwise_equal(a: object, b: object) -> bool:
    """True when two results hold the same tensors bit for bit (NaN equal to NaN); a shipped
    digest in `a` equals a tensor in `b` with exactly its bytes."""
    la, lb = as_outputs(a), as_outputs(b)
    if len(la) != len(lb):
        return False
    return all(
        x.matches(y)
        if isinstance(x, Digest)
        else type(x) is torch.Tensor and type(y) is torch.Tensor and same_bits(x, y)
        for x, y in zip(la, lb, strict=True)
    )


def changed_inputs(after: list[object] | None, before: tuple | list) -> list[int] | None:
    """The positions of the arguments that the call changed: `after` (shipped back by the
    worker) against `before` (regenerated here from the seed), tensors bit for bit (NaN equal
    to NaN, dtype and shape included; a shipped digest against the bytes it names), other values
    by equality. None when nothing was shipped
    or the shipment does not have one entry per argument (the judge cannot tell)."""
    if after is None or len(after) != len(before):
        return None
    changed = []
    for i, (a, b) in enumerate(zip(after, before, strict=True)):
        if isinstance(b, torch.Tensor) and isinstance(a, Digest):
            same = a.matches(b)
        elif isinstance(b, torch.Tensor):
            same = type(a) is torch.Tensor and same_bits(b, a)
        elif isinstance(b, int | float | bool) or b is None:
            same = type(a) is type(b) and (a == b or (a != a and b != b))
        else:  # an argument the transport cannot carry (an object): nothing to compare
            same = True
        if not same:
            changed.append(i)
    return changed
