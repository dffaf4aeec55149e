"""Error -> fix transition pairs, recorded as they happen.

When an attempt passes and its parent failed, the chain of failing ancestors up to the last
passing one (or the root) is fixed by it: each (failing ancestor, fixing attempt) is one pair,
with both verdicts, the unified diff and a fix class found by rules over the diff and verdicts:

    numerical stability   nan/inf or overflow failures fixed by max-subtraction, guards, fp32
    mask/bounds           masks, `other=` values, bound comparisons
    dtype/cast            casts and dtypes
    indexing/stride       offsets, strides, program ids
    grid/launch           the launch grid, num_warps/stages, block sizes at launch
    API misuse            compile/import/runtime errors fixed by changing Triton or torch calls
    structural rewrite    more than half of the lines changed

The rules run in that order of evidence: the verdict's error class first, then what the diff
touches; the reasons that fired are kept in the record. The record is
`benchmarks.results.records.RunPair`, defined once beside the code that reads pairs.jsonl back.
"""

from __future__ import annotations

import difflib
import re
from typing import Any

from agents.core.state import Attempt
from benchmarks import PairSide, RunPair

FIX_CLASSES = (
    "mask/bounds",
    "dtype/cast",
    "indexing/stride",
    "grid/launch",
    "API misuse",
    "numerical stability",
    "structural rewrite",
)

_PATTERNS: dict[str, re.Pattern[str]] = {
    "numerical stability": re.compile(
        r"tl\.maximum|\bmax\b|-\s*\w*max|float\(\"-inf\"\)|-inf|log1p|expm1|fp32|float32|\beps\b|tl\.where"
    ),
    "mask/bounds": re.compile(
        r"\bmask\b|other\s*=|<\s*\w*\b(N|M|K|n|n_elements|numel)\b|boundary_check|padding_option"
    ),
    "dtype/cast": re.compile(
        r"\.to\(|dtype|element_ty|tl\.(float16|bfloat16|float32|int32|int64)|\.float\(\)|\.half\(\)"
    ),
    "indexing/stride": re.compile(
        r"stride|program_id|\boffs\w*\b|tl\.arange|\* *\w*stride|\.to\(tl\.int64\)"
    ),
    "grid/launch": re.compile(r"\bgrid\b|cdiv|num_warps|num_stages|\]\(|next_power_of_2"),
}
_API_ERRORS = {
    "compile_error",
    "import_error",
    "parameter_mismatch",
    "runtime_error",
    "syntax_error",
    "signature_mismatch",
    "missing_entry_point",
    "no_triton_kernel",
    "forbidden_api",
    "fallback",
}


def unified_diff(before: str, after: str, a: str = "failing.py", b: str = "fixing.py") -> str:
    return "".join(
        difflib.unified_diff(
            before.splitlines(keepends=True), after.splitlines(keepends=True), a, b
        )
    )


def _changed_lines(diff: str) -> list[str]:
    return [
        line[1:]
        for line in diff.splitlines()
        if line[:1] in "+-" and not line.startswith(("+++", "---"))
    ]


def classify_fix(
    before: str, after: str, failing_error: str, diff: str | None = None
) -> tuple[str, list[str]]:
    """(fix class, reasons) for the change `before` -> `after` that fixed `failing_error`."""
    diff = diff if diff is not None else unified_diff(before, after)
    changed = _changed_lines(diff)
    text = "\n".join(changed)
    reasons: list[str] = []
    total = max(len(before.splitlines()), len(after.splitlines()), 1)
    hits = {name: len(pattern.findall(text)) for name, pattern in _PATTERNS.items()}

    if len(changed) > total:  # removed + added lines exceed the file: most of it was rewritten
        reasons.append(f"{len(changed)} changed lines for a {total}-line file")
        return "structural rewrite", reasons
    if failing_error == "nan_inf_mismatch" or (
        failing_error == "numerical_mismatch" and hits["numerical stability"] > hits["mask/bounds"]
    ):
        if hits["numerical stability"]:
            reasons.append(f"{failing_error} fixed by a change touching max/exp/guards/precision")
            return "numerical stability", reasons
    if failing_error == "dtype_mismatch" and hits["dtype/cast"]:
        reasons.append("dtype_mismatch fixed by a change touching casts/dtypes")
        return "dtype/cast", reasons
    if failing_error in ("crash", "numerical_mismatch", "shape_mismatch") and hits["mask/bounds"]:
        reasons.append(f"{failing_error} fixed by a change touching masks/bounds")
        return "mask/bounds", reasons
    if failing_error in _API_ERRORS:
        reasons.append(f"{failing_error} is an API/usage failure")
        return "API misuse", reasons
    ranked = sorted(((n, name) for name, n in hits.items() if n), reverse=True)
    if ranked:
        reasons.append(f"the diff mostly touches {ranked[0][1]} ({ranked[0][0]} matches)")
        return ranked[0][1], reasons
    reasons.append("no specific pattern in the diff")
    return "structural rewrite", reasons


def _side(attempt: Attempt, code: str, verdict: dict[str, Any]) -> PairSide:
    return PairSide(
        id=attempt.id, node=attempt.node, code_path=attempt.code_path, code=code, verdict=verdict
    )


def failing_chain(attempts: dict[int, Attempt], fixed: Attempt) -> list[Attempt]:
    """The failing ancestors `fixed` repairs: parent, grandparent, ... while they failed."""
    chain = []
    parent_id = fixed.parent_id
    while parent_id is not None and parent_id in attempts and not attempts[parent_id].passed:
        chain.append(attempts[parent_id])
        parent_id = attempts[parent_id].parent_id
    return chain


def make_pair(
    failing: Attempt,
    failing_code: str,
    failing_verdict: dict[str, Any],
    fixing: Attempt,
    fixing_code: str,
    fixing_verdict: dict[str, Any],
    hops: int,
) -> RunPair:
    """The pair (failing attempt, the attempt that fixed it `hops` revisions later), classified;
    `RunPair.to_json()` is its pairs.jsonl line."""
    diff = unified_diff(
        failing_code, fixing_code, f"attempts/{failing.id}/code.py", f"attempts/{fixing.id}/code.py"
    )
    fix_class, reasons = classify_fix(failing_code, fixing_code, failing.verdict.error_class, diff)
    return RunPair(
        failing=_side(failing, failing_code, failing_verdict),
        fixing=_side(fixing, fixing_code, fixing_verdict),
        hops=hops,
        error_class=failing.verdict.error_class,
        fix_class=fix_class,
        fix_reasons=reasons,
        diff=diff,
    )
