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
from pathlib import Path

KERNELS_DIR = Path(__file__).resolve().parent / "kernels"

# tokens that carry no code: comments, the newlines of comment-only and blank lines, and the
# stream's encoding and end markers (indentation tokens stay: in Python they are code)
_LAYOUT_TOKENS = frozenset({tokenize.COMMENT, tokenize.NL, tokenize.ENCODING, tokenize.ENDMARKER})


def solution_path(task_name: str) -> Path:
    """Where task `task_name`'s reference Triton solution lives (it may not exist)."""
    return KERNELS_DIR / f"{task_name}.py"


def code_tokens(source: str) -> list[tuple[int, str]]:
    """(token type, text) of every token of `source` except comments and blank lines."""
    tokens = tokenize.generate_tokens(io.StringIO(source).readline)
    return [(tok.type, tok.string) for tok in tokens if tok.type not in _LAYOUT_TOKENS]


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
