"""Pulling the kernel source out of a model's reply.

Models answer in Markdown: prose, then one or more fenced code blocks. `extract_code` picks the
block that holds the candidate module:

1. Blocks tagged ```python (or py, python3) are preferred; untagged ``` blocks are the fallback;
   blocks tagged with another language (bash, json, text, ...) are never taken.
2. Among those, "reasonable" blocks are the ones that look like a module (they define a
   function, import something or carry a decorator). If none is reasonable, the longest
   non-empty block is taken.
3. Of the reasonable blocks, the LAST one at least half as long as the longest wins: a model
   that writes a kernel and then a corrected version gets the correction, while a short usage
   example after the full module does not displace it.

`require_code` is the strict form the agent uses: it raises `NoCodeError`, a recoverable error
whose message is fed back to the model.
"""

from __future__ import annotations

import re

from agents.core.llm.base import LLMError

_FENCE = re.compile(
    r"^(?P<fence>`{3,})[ \t]*(?P<lang>[\w+.-]*)[^\n]*\n(?P<body>.*?)^(?P=fence)[ \t]*$",
    re.MULTILINE | re.DOTALL,
)
_PYTHON_TAGS = {"python", "py", "python3"}
_ASK = (
    "answer with the complete module (imports, @triton.jit kernel(s) and the entry-point "
    "function) in a single ```python block, closed with ```"
)
_MODULE_HINT = re.compile(r"^\s*(def |class |import |from \S+ import |@)", re.MULTILINE)


class NoCodeError(LLMError):
    """The reply has no usable Python code block. Recoverable: tell the model and ask again."""


def _blocks(text: str) -> tuple[list[str], list[str]]:
    """(python-tagged bodies, untagged bodies), in reply order."""
    tagged, plain = [], []
    for m in _FENCE.finditer(text):
        lang, body = m.group("lang").lower(), m.group("body")
        if lang in _PYTHON_TAGS:
            tagged.append(body)
        elif lang == "":
            plain.append(body)
    return tagged, plain


def _choose(bodies: list[str]) -> str | None:
    bodies = [b for b in bodies if b.strip()]
    if not bodies:
        return None
    reasonable = [b for b in bodies if _MODULE_HINT.search(b)]
    if not reasonable:
        return max(bodies, key=len)
    longest = max(len(b) for b in reasonable)
    return [b for b in reasonable if len(b) * 2 >= longest][-1]


def extract_code(text: str) -> str | None:
    """The Python module in `text`'s fenced code blocks, or None if there is none."""
    tagged, plain = _blocks(text)
    chosen = _choose(tagged) or _choose(plain)
    return chosen.strip("\n") + "\n" if chosen is not None else None


def require_code(text: str) -> str:
    """Like `extract_code`, but raises NoCodeError with a message meant for the model."""
    code = extract_code(text)
    if code is not None:
        return code
    fences = re.findall(r"^`{3,}", text, re.MULTILINE)
    if len(fences) % 2 == 1:
        why = "the reply opens a code block but never closes it (cut off by the token limit?)"
    elif fences:
        why = "the reply's code blocks are empty or not tagged as Python"
    else:
        why = "the reply contains no ```python code block"
    raise NoCodeError(f"{why}; {_ASK}")
