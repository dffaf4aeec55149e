"""Pulling the candidate module out of a model's reply."""

from __future__ import annotations

import pytest

from agents.core.llm import LLMError, NoCodeError, extract_code, require_code

KERNEL = """import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, n, BLOCK: tl.constexpr):
    pass


def add(x):
    return x
"""


def fenced(body: str, lang: str = "python") -> str:
    return f"```{lang}\n{body}```"


def test_single_python_block() -> None:
    reply = f"Here is the kernel:\n\n{fenced(KERNEL)}\n\nIt tiles by BLOCK."
    assert extract_code(reply) == KERNEL


def test_python_block_preferred_over_plain_and_other_languages() -> None:
    reply = "\n".join(
        [
            fenced("pip install triton\n", "bash"),
            fenced("def plain():\n    pass\n", ""),
            fenced(KERNEL),
        ]
    )
    assert extract_code(reply) == KERNEL


def test_py_tag_counts_as_python() -> None:
    assert extract_code(fenced(KERNEL, "py")) == KERNEL


def test_plain_fence_is_the_fallback() -> None:
    assert extract_code(f"Try this:\n{fenced(KERNEL, '')}") == KERNEL


def test_the_last_full_version_wins_over_an_earlier_one() -> None:
    fixed = KERNEL.replace("pass", "tl.store(x_ptr, 0)")
    reply = f"First try:\n{fenced(KERNEL)}\nWait, that is wrong. Fixed:\n{fenced(fixed)}"
    assert extract_code(reply) == fixed


def test_a_short_usage_example_after_the_module_does_not_displace_it() -> None:
    usage = fenced("import torch\nadd(torch.ones(4))\n")
    reply = f"{fenced(KERNEL)}\nUse it like this:\n{usage}"
    assert extract_code(reply) == KERNEL


def test_longer_fences_and_language_attributes() -> None:
    body = "def f():\n    return '```'\n"
    assert extract_code(f"````python\n{body}````") == body
    assert extract_code(f"```python title=kernel.py\n{KERNEL}```") == KERNEL


def test_non_module_block_is_taken_when_nothing_else() -> None:
    assert extract_code(fenced("x = 1\n")) == "x = 1\n"


@pytest.mark.parametrize(
    "reply",
    [
        "I cannot help with that.",
        "",
        fenced("   \n"),
        fenced('{"a": 1}\n', "json"),
        "```python\ndef f(x):\n    return x",  # never closed
    ],
)
def test_no_code_gives_none(reply: str) -> None:
    assert extract_code(reply) is None


def test_require_code_returns_the_code() -> None:
    assert require_code(fenced(KERNEL)) == KERNEL


def test_require_code_raises_a_recoverable_error_meant_for_the_model() -> None:
    with pytest.raises(NoCodeError, match=r"no ```python code block.*complete module") as caught:
        require_code("Sure! The trick is to fuse the loads.")
    assert isinstance(caught.value, LLMError)


def test_require_code_spots_a_reply_cut_off_mid_block() -> None:
    with pytest.raises(NoCodeError, match="never closes it"):
        require_code("```python\nimport triton\n@triton.jit\ndef k(")


def test_require_code_on_non_python_blocks() -> None:
    with pytest.raises(NoCodeError, match="empty or not tagged as Python"):
        require_code(fenced("echo hi\n", "bash"))
