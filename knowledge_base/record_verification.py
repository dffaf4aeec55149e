"""Write GPU verification into the reference kernels' KB_META: where each kernel passed the judge
and the roofline attainment it reached there.

    python -m knowledge_base.record_verification \\
        --verdicts docs/results/solutions_sweep_h200_part1.json,docs/results/solutions_sweep_h200_part2.json,docs/results/solutions_resweep_h200.json,docs/results/solutions_resweep_h200_moe.json \\
        --times docs/results/solution_times_h200.jsonl --source docs/results/solution_times_h200.md \\
        [--templates docs/results/templates_h200.json] [--dry-run]

For each kernel file `knowledge_base/kernels/<name>.py` (the solution of every dtype variant of
task <name>): `verified_on` gets the device for which at least one variant passed the judge, and
`attainment` a dict {task id: S} for the variants that passed, S = the median over the task's GPU
shapes of roofline time / measured time, plus "source" naming the measurement. Variants that
failed or were not judged are listed under "not_verified" with their verdict. Only these two
entries of KB_META change; the rest of the file is left byte for byte. The knowledge base marks
a kernel with a device in `verified_on` as tier "proven".

Templates (`tpl_*.py`, no task of their own) take theirs from a `knowledge_base.verify_templates`
report: verified on its device when every checked shape was correct, attainment per shape
(against the datasheet's peaks, as that script says).
"""

from __future__ import annotations

import argparse
import ast
import json
import statistics
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

from benchmarks import parse_python

KERNELS = Path(__file__).resolve().parent / "kernels"


def task_scores(rows: list[dict[str, Any]]) -> dict[str, float]:
    """Median attainment over each task's timed shapes."""
    by_task: dict[str, list[float]] = defaultdict(list)
    for row in rows:
        if row.get("attainment") is not None:
            by_task[row["task"]].append(float(row["attainment"]))
    return {task: round(statistics.median(vals), 4) for task, vals in by_task.items()}


def replace_meta(source: str, verified_on: list[str], attainment: dict[str, Any]) -> str:
    """`source` with KB_META's "verified_on" and "attainment" values replaced."""
    tree = parse_python(source)
    meta = next(
        (
            n.value
            for n in tree.body
            if isinstance(n, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == "KB_META" for t in n.targets)
        ),
        None,
    )
    if not isinstance(meta, ast.Dict):
        raise ValueError("no KB_META dict literal")
    spans = {}
    for key, value in zip(meta.keys, meta.values, strict=True):
        if isinstance(key, ast.Constant) and key.value in ("verified_on", "attainment"):
            spans[key.value] = value
    if set(spans) != {"verified_on", "attainment"}:
        raise ValueError("KB_META lacks verified_on or attainment")
    lines = source.splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))

    def pos(lineno: int, col: int) -> int:
        return offsets[lineno - 1] + len(lines[lineno - 1].encode()[:col].decode())

    new = {
        "verified_on": json.dumps(verified_on),
        "attainment": json.dumps(attainment, sort_keys=True).replace("null", "None"),
    }
    out = source
    for name, node in sorted(
        spans.items(), key=lambda kv: (kv[1].lineno, kv[1].col_offset), reverse=True
    ):
        start, end = (
            pos(node.lineno, node.col_offset),
            pos(node.end_lineno or node.lineno, node.end_col_offset or 0),
        )
        out = out[:start] + new[name] + out[end:]
    parse_python(out)  # still valid Python
    return out


def plan(
    verdicts: dict[str, dict], scores: dict[str, float], source: str
) -> dict[str, tuple[list[str], dict[str, Any]]]:
    """kernel name -> (verified_on, attainment) for every kernel with a judged variant."""
    from benchmarks import load_all

    tasks = load_all()
    by_name: dict[str, list[dict]] = defaultdict(list)
    for v in verdicts.values():
        task = tasks.get(v["task_id"])
        if task is not None:
            by_name[task.name].append(v)
    out = {}
    for name, vs in by_name.items():
        passed = sorted(v["task_id"] for v in vs if v.get("passed"))
        devices = sorted(
            {str((v.get("fingerprint") or {}).get("gpu_name") or "") for v in vs if v.get("passed")}
            - {""}
        )
        attainment: dict[str, Any] = {t: scores.get(t) for t in passed}
        failed = {v["task_id"]: str(v.get("error_class")) for v in vs if not v.get("passed")}
        if failed:
            attainment["not_verified"] = failed
        attainment["source"] = source
        out[name] = (devices, attainment)
    return out


def template_plan(
    report: dict[str, Any], source: str
) -> dict[str, tuple[list[str], dict[str, Any]]]:
    """template name -> (verified_on, attainment) from a knowledge_base.verify_templates report:
    a template is verified on the report's device when every shape it was checked on is correct;
    attainment maps each checked shape to roofline / measured time (against the datasheet)."""
    by_name: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for result in report.get("results", []):
        by_name[str(result["template"])].append(result)
    out = {}
    for name, results in by_name.items():
        ok = all(r.get("ok") for r in results)
        attainment: dict[str, Any] = {
            str(r["shape"]): round(float(r["attainment"]), 4)
            for r in results
            if r.get("ok") and r.get("attainment") is not None
        }
        failed = {str(r["shape"]): str(r.get("detail", "")) for r in results if not r.get("ok")}
        if failed:
            attainment["not_verified"] = failed
        attainment["source"] = source
        out[name] = ([str(report["device"])] if ok and report.get("device") else [], attainment)
    return out


def main(argv: list[str] | None = None) -> int:
    from benchmarks import load_verdicts

    parser = argparse.ArgumentParser(prog="python -m knowledge_base.record_verification")
    parser.add_argument(
        "--verdicts",
        default=None,
        help="comma-separated verdict JSON files (solutions_table output)",
    )
    parser.add_argument("--times", default=None, help="solution_times JSONL")
    parser.add_argument(
        "--source", default=None, help="what to cite as the measurement (a results file)"
    )
    parser.add_argument(
        "--templates",
        default=None,
        help="a knowledge_base.verify_templates report (JSON): the templates' KB_META",
    )
    parser.add_argument("--dry-run", action="store_true")
    args = parser.parse_args(argv)
    plans: dict[str, tuple[list[str], dict[str, Any]]] = {}
    if args.verdicts or args.times:
        if not (args.verdicts and args.times and args.source):
            parser.error("--verdicts, --times and --source go together")
        verdicts = load_verdicts(args.verdicts)
        rows = [
            json.loads(line) for line in Path(args.times).read_text().splitlines() if line.strip()
        ]
        plans.update(plan(verdicts, task_scores(rows), args.source))
    if args.templates:
        report = json.loads(Path(args.templates).read_text())
        cited = f"{args.templates} ({report.get('device')}, torch {report.get('torch')}, triton {report.get('triton')}, {report.get('date')})"
        plans.update(template_plan(report, cited))
    if not plans:
        parser.error("nothing to record: give --verdicts/--times/--source and/or --templates")
    changed = 0
    for name, (devices, attainment) in sorted(plans.items()):
        path = KERNELS / f"{name}.py"
        if not path.exists():
            print(f"{name}: no kernel file, skipped", file=sys.stderr)
            continue
        text = path.read_text()
        new = replace_meta(text, devices, attainment)
        if new != text:
            changed += 1
            if not args.dry_run:
                path.write_text(new)
        print(
            f"{name}: verified_on {devices}; {sum(1 for k in attainment if k not in ('source', 'not_verified'))} variant(s) with attainment"
        )
    print(f"{changed} kernel file(s) {'would change' if args.dry_run else 'changed'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
