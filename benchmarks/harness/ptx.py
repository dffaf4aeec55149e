"""Which hardware features a compiled kernel uses, read from its PTX.

Triton writes one `.ptx` file per compiled kernel into its cache (`$TRITON_CACHE_DIR`, by default
~/.triton/cache/<hash>/<kernel>.ptx). The scanner looks for the instructions that mark the
features a kernel engineer asks about on Hopper-class GPUs:

    wgmma         wgmma.mma_async       warpgroup tensor-core MMA (sm_90)
    tma           cp.async.bulk.tensor  TMA tensor copies between global and shared memory (sm_90)
    bulk_copy     cp.async.bulk         any bulk async copy (TMA tensor copies included)
    mma           mma.sync              warp-level tensor-core MMA (sm_80 style)
    cp_async      cp.async.(ca|cg)      Ampere asynchronous global -> shared copies
    vector_loads  ld.global...v4        128-bit vectorised global loads

Comments are stripped first, and an instruction only counts at the start of a statement
(after an optional predicate such as `@%p1`), so a name in a string or comment does not.
"""

from __future__ import annotations

import re
from pathlib import Path

_PRED = r"^\s*(?:@!?%\w+\s+)?"
FEATURES: dict[str, re.Pattern[str]] = {
    "wgmma": re.compile(_PRED + r"wgmma\.mma_async\b", re.M),
    "tma": re.compile(_PRED + r"cp\.async\.bulk\.tensor\b", re.M),
    "bulk_copy": re.compile(_PRED + r"cp\.async\.bulk\b", re.M),
    "mma": re.compile(_PRED + r"mma\.sync\b", re.M),
    "cp_async": re.compile(_PRED + r"cp\.async\.(?:ca|cg)\b", re.M),
    "vector_loads": re.compile(_PRED + r"ld\.global(?:\.[\w:]+)*?\.v4\.", re.M),
}
_BLOCK_COMMENT = re.compile(r"/\*.*?\*/", re.S)
_LINE_COMMENT = re.compile(r"//[^\n]*")


def _strip_comments(ptx_text: str) -> str:
    return _LINE_COMMENT.sub("", _BLOCK_COMMENT.sub("", ptx_text))


def ptx_feature_counts(ptx_text: str) -> dict[str, int]:
    """How many instructions of each feature the PTX contains."""
    text = _strip_comments(ptx_text)
    # several statements may share a line ("a; b;"): give each its own line
    text = text.replace(";", ";\n")
    return {name: len(pattern.findall(text)) for name, pattern in FEATURES.items()}


def ptx_features(ptx_text: str) -> dict[str, bool]:
    """{feature: used?} for one PTX module (see the module docstring for the features)."""
    return {name: count > 0 for name, count in ptx_feature_counts(ptx_text).items()}


def merge_features(feature_sets: list[dict[str, bool]]) -> dict[str, bool]:
    """A feature is used by a candidate when any of its kernels uses it."""
    return {name: any(fs.get(name, False) for fs in feature_sets) for name in FEATURES}


def ptx_features_of_dir(folder: str | Path) -> dict[str, bool] | None:
    """Features of every `.ptx` file under `folder` (e.g. an attempt's folder or a Triton cache
    directory), merged; None when there is no PTX there ("not measured")."""
    folder = Path(folder)
    if not folder.is_dir():
        return None
    files = sorted(folder.rglob("*.ptx"))
    if not files:
        return None
    return merge_features(
        [ptx_features(p.read_text(encoding="utf-8", errors="replace")) for p in files]
    )
