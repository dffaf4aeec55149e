"""Python source turned into `ast` trees under one process-wide lock.

CPython 3.11 counts the AST constructor's recursion depth in interpreter-wide state, not per
thread. When two threads build trees at once (a garbage collection during one parse runs a
finaliser, which lets the other thread in), one of them can end in `SystemError: AST constructor
recursion depth mismatch` (the agent's generator slots run as threads and both parse kernels).
Every parse and every compile of a tree in this project goes through `parse` and `compile_tree`,
which hold one lock while CPython converts between its tree and Python objects. The lock is
re-entrant: a finaliser that parses during a parse on the same thread does not deadlock.
`tests/test_parse_threads.py` runs the real parsing paths on many threads at once.
"""

from __future__ import annotations

import ast
import threading
from types import CodeType

_LOCK = threading.RLock()


def parse(source: str | bytes, filename: str = "<unknown>") -> ast.Module:
    """`ast.parse(source, filename)` (mode "exec"), serialised with every other parse here.
    Raises SyntaxError like `ast.parse`."""
    with _LOCK:
        return ast.parse(source, filename=filename)


def compile_tree(tree: ast.Module, filename: str) -> CodeType:
    """`compile(tree, filename, "exec")`, under the same lock as `parse`."""
    with _LOCK:
        return compile(tree, filename, "exec")
