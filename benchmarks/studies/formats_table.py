"""What loads and what is flagged, per published form: the table in docs/formats.md.

    python -m benchmarks.studies.formats_table FOLDER [FOLDER ...] [--out FILE]

Each folder is loaded as a folder suite (`benchmarks.loading.load_folder`, file by file, on this
machine's device path) and each file becomes one row: the form, whether it loaded, the sizes the
CPU interpreter runs (what was shrunk, and what was kept larger), the input modes, and what the
judge says about it up front (no kernel can pass it, or the CPU refuses it), or why it did not
load. Then one summary line per folder: files, loaded, run on the CPU, flagged, refused.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from benchmarks.loading import load_folder
from benchmarks.task import Task


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _cpu_sizes(task: Task) -> str:
    changed = [
        f"{k} {v}→{task.cpu_shapes[0].dims.get(k, v)}"
        for k, v in task.shapes[0].dims.items()
        if task.cpu_shapes[0].dims.get(k, v) != v
    ]
    kept = [n.split(" (published")[0] for n in task.notes_for("cpu") if " kept at " in n]
    if not task.shape_dims_vary:
        return f"{len(task.cpu_shapes)} of {len(task.shapes)} recorded calls"
    return "; ".join(filter(None, [", ".join(changed) or "as published", *kept]))


def _verdict_up_front(task: Task) -> str:
    parts = [f"cannot pass: {why}" for why in task.cannot_pass()]
    refused = task.refusal("cpu")
    if refused:
        parts.append(f"CPU refused: {refused}")
    notes = task.notes_for("cpu")
    for marker, say in (
        ("raises on amplified outliers", "outliers kept in range"),
        ("outlier mode skipped", "outlier mode skipped"),
        ("mode 'signed' skipped", "signed mode skipped"),
        ("left out: the reference raises", "error-path calls left out"),
        ("writes into argument", "out= buffers are outputs"),
        ("inputs: compared with the fp32 tolerance", "float64 inputs"),
    ):
        if any(marker in n for n in notes):
            parts.append(say)
    return "; ".join(parts) or "—"


def table(folders: list[Path]) -> str:
    lines = [
        "| form | file | loads | CPU sizes | modes | up front |",
        "|---|---|---|---|---|---|",
    ]
    summary = []
    for folder in folders:
        suite = load_folder(folder)
        rows: list[tuple[str, str]] = []
        for task in suite.tasks:
            rows.append(
                (
                    str(Path(task.path).relative_to(folder.resolve())),
                    f"| {task.fmt} | `{{file}}` | yes | {_cell(_cpu_sizes(task))} | "
                    f"{', '.join(task.modes)} | {_cell(_verdict_up_front(task))} |",
                )
            )
        for item in suite.not_loaded:
            rows.append(
                (
                    str(item.path.relative_to(folder)),
                    f"| — | `{{file}}` | **no** | — | — | {_cell(item.reason)} |",
                )
            )
        for rel, line in sorted(rows):
            lines.append(line.replace("{file}", f"{folder.name}/{rel}"))
        flagged = sum(bool(t.cannot_pass()) for t in suite.tasks)
        refused = sum(bool(t.refusal("cpu")) for t in suite.tasks)
        files = len(suite.tasks) + len(suite.not_loaded)
        summary.append(
            f"- `{folder.name}`: {files} files, {len(suite.tasks)} load "
            f"({len(suite.tasks) - refused} run on the CPU, {refused} GPU only), "
            f"{flagged} flagged as passable by no kernel, {len(suite.not_loaded)} not loaded"
            + (
                f"; helper modules, not tasks: {', '.join(h.name for h in suite.helpers)}"
                if suite.helpers
                else ""
            )
        )
    return "\n".join(lines + [""] + summary) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.studies.formats_table")
    parser.add_argument("folders", nargs="+", type=Path)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    text = table(args.folders)
    if args.out:
        args.out.write_text(text, encoding="utf-8")
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
