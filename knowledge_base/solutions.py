"""The reference kernels as files: where a task's own solution is, and the hash of a kernel's code.

`knowledge_base/kernels/<NAME>.py` is the reference Triton solution of every dtype variant of task
NAME (the templates `tpl_*.py` belong to no task). The knowledge base owns that folder: the agent
asks `solution_path`, and harness tools that judge solutions take the folder as a parameter
(`--solutions DIR`), so nothing else reaches into it by path.

`code_sha256` identifies a kernel's code, not its text: comments and blank lines are left out
(docstrings stay in), so commenting a kernel keeps every hash recorded for it valid.
"""

from __future__ import annotations

import hashlib
import io
import tokenize
from pathlib import Path, PurePath

KERNELS_DIR = Path(__file__).resolve().parent / "kernels"
TEMPLATE_PREFIX = "tpl_"  # kernels/tpl_*.py are generic templates (KB_META.template), no task's


def is_template(path: str | PurePath) -> bool:
    """Whether a kernel file is a generic template (kernels/tpl_*.py): a kernel family written to
    be adapted, belonging to no task."""
    return PurePath(path).stem.startswith(TEMPLATE_PREFIX)


# tokens that carry no code: comments, the newlines of comment-only and blank lines, and the
# stream's encoding and end markers (indentation tokens stay: in Python they are code)
_LAYOUT_TOKENS = frozenset({tokenize.COMMENT, tokenize.NL, tokenize.ENCODING, tokenize.ENDMARKER})


def solution_path(task_name: str) -> Path:
    """Where task `task_name`'s reference Triton solution lives (it may not exist)."""
    return KERNELS_DIR / f"{task_name}.py"


# Python 3.12 splits an f-string into FSTRING_START/MIDDLE/END tokens (PEP 701) and renumbers
# the token types; 3.11 has one STRING token. The hash must not depend on the Python that runs it
# (the GPU machine has 3.12, this one 3.11), so tokens are named, not numbered, and an f-string's
# pieces are joined back into one STRING of its source text.
_FSTRING_START = getattr(tokenize, "FSTRING_START", None)
_FSTRING_END = getattr(tokenize, "FSTRING_END", None)


def code_tokens(source: str) -> list[tuple[str, str]]:
    """(token name, text) of every token of `source` except comments and blank lines, the same
    on every Python version (an f-string is one STRING token)."""
    lines = source.splitlines(keepends=True)
    out: list[tuple[str, str]] = []
    depth, start = 0, (0, 0)
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if _FSTRING_START is not None and tok.type == _FSTRING_START:
            depth += 1
            if depth == 1:
                start = tok.start
            continue
        if depth:
            if tok.type == _FSTRING_END:
                depth -= 1
                if depth == 0:
                    out.append(("STRING", _span(lines, start, tok.end)))
            continue
        if tok.type not in _LAYOUT_TOKENS:
            out.append((tokenize.tok_name[tok.type], tok.string))
    return out


def _span(lines: list[str], start: tuple[int, int], end: tuple[int, int]) -> str:
    """The source text from `start` to `end` ((row from 1, column) positions of tokenize)."""
    (r0, c0), (r1, c1) = start, end
    if r0 == r1:
        return lines[r0 - 1][c0:c1]
    return lines[r0 - 1][c0:] + "".join(lines[r0 : r1 - 1]) + lines[r1 - 1][:c1]


def code_sha256(source: str) -> str:
    """sha256 of `source`'s code tokens: unchanged by comments and blank lines, changed by any
    other edit (code, docstrings, strings, indentation). Source that does not tokenize is hashed
    as text."""
    h = hashlib.sha256()
    try:
        tokens = code_tokens(source)
    except (tokenize.TokenError, SyntaxError):
        h.update(b"text\x00" + source.encode("utf-8"))
        return h.hexdigest()
    for kind, text in tokens:
        h.update(f"{kind}\x00{text}\x01".encode())
    return h.hexdigest()
