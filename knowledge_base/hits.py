"""What a knowledge-base search returns, and the task names it hides by. Nothing here needs
chromadb or the embedding model, so a recorded search (`knowledge_base.snapshot`) can be served
on a machine that has neither; `knowledge_base.retrieve` re-exports these names.
"""

from __future__ import annotations

import ast
import functools
import re
from dataclasses import dataclass
from typing import Any

from benchmarks import parse_python, unknown_name

_DTYPE_SUFFIX = re.compile(r"_(fp32|fp16|bf16|int8|fp8_e4m3)$")


@dataclass
class Hit:
    """One retrieved document or kernel (its best-matching chunk)."""

    id: str
    kind: str
    title: str
    path: str
    text: str  # the chunk's text; for a kernel, its whole source file
    snippet: str  # a short excerpt to show or to put in a prompt
    metadata: dict[str, Any]
    score: float
    tier: str
    similarity: float = 0.0
    section: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "kind": self.kind,
            "title": self.title,
            "path": self.path,
            "tier": self.tier,
            "score": round(self.score, 4),
            "similarity": round(self.similarity, 4),
            "section": self.section,
            "snippet": self.snippet,
            "metadata": self.metadata,
        }


# ------------------------------------------------------------------------------------------
# Tasks, names and hardware keys
# ------------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=1)
def _tasks() -> dict[str, Any]:
    from benchmarks import load_all

    return load_all()


def resolve_task(task: Any) -> Any:
    """A `benchmarks.task.Task` from a Task, a task id ("softmax_fp16") or a task name."""
    if task is None or not isinstance(task, str):
        return task
    tasks = _tasks()
    if task in tasks:
        return tasks[task]
    for t in tasks.values():
        if t.name == task:
            return t
    names = [*tasks, *sorted({t.name for t in tasks.values()})]
    raise KeyError(unknown_name("task", task, names, "`kernforge tasks list` shows them"))


def task_name(ref: Any) -> str:
    """The task NAME for a Task, a task id or a name: what `derived_from_task` holds."""
    if ref is None:
        return ""
    if not isinstance(ref, str):
        return str(ref.name)
    try:
        tasks = _tasks()
    except Exception:  # the task suite failing to load must not disable hiding
        tasks = {}
    if ref in tasks:
        return tasks[ref].name
    return _DTYPE_SUFFIX.sub("", ref)


def _snippet(kind: str, text: str, limit: int = 600) -> str:
    if kind == "kernel":  # a kernel's text is its source; its header docstring is the summary
        try:
            text = ast.get_docstring(parse_python(text)) or text
        except SyntaxError:
            pass
    text = text.strip()
    return text if len(text) <= limit else text[: limit - 1].rsplit(" ", 1)[0] + " …"
