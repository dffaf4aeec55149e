"""Reference solutions as the harness sees them: a folder of `<NAME>.py` files, given by its owner.

The knowledge base owns the reference kernels (`knowledge_base.solution_path`); the harness never
finds them by a path of its own. A tool that judges or times the solutions (`benchmarks.selfcheck`
and the studies) takes the folder as `--solutions DIR`; without it, `knowledge_base/kernels`
under the current working directory (the repository root, where these tools are run from).
"""

from __future__ import annotations

import argparse
from pathlib import Path

DEFAULT_SOLUTIONS = Path("knowledge_base") / "kernels"  # relative to the working directory
SOLUTIONS_HELP = (
    "folder of reference solutions, one <NAME>.py per task name "
    "(default: knowledge_base/kernels under the current directory)"
)


def add_solutions_option(parser: argparse.ArgumentParser) -> None:
    """Add `--solutions DIR` to a tool's parser."""
    parser.add_argument("--solutions", default=None, metavar="DIR", help=SOLUTIONS_HELP)


def solutions_dir(parser: argparse.ArgumentParser, value: str | Path | None) -> Path:
    """The folder `--solutions` named (or the default), absolute; a missing folder is a usage
    error that names it (argparse's one line and exit status 2)."""
    path = Path(value) if value else Path.cwd() / DEFAULT_SOLUTIONS
    if not path.is_dir():
        given = f"--solutions {value}" if value else f"default {DEFAULT_SOLUTIONS} (no --solutions)"
        parser.error(f"{given}: no folder {path.resolve()} (give --solutions DIR)")
    return path.resolve()


def solution_file(solutions: Path, task_name: str) -> Path:
    """Task `task_name`'s reference solution in `solutions` (it may not exist)."""
    return Path(solutions) / f"{task_name}.py"
