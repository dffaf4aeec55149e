"""The offline policy on the KernelBench- and TritonBench-style form files of the tests
(tests/fixtures/kernelbench_forms, tests/fixtures/tritonbench_forms), or on any folders of
problem files (`--folder`, e.g. the public suites), on the CPU interpreter.

For each file, what a `kernforge run --llm offline --benchmark` generator would try, in its
order: the policy's reference kernels under hidden provenance (the kernel generated from the
reference first, then the knowledge base's kernel hits for the task, the task hidden, adapted to
its entry point), each judged by the real judge until one passes or ATTEMPTS were judged (a
run's default three rounds of two candidates). The knowledge base is opened once for all files
(a run opens it per task), which is the only difference from a run's first rounds. An unsolved
file's row says why: the generator's refusal, or the judge's verdict on the generated kernel (or,
with no refusal note, on the first kernel judged); a file that does not load is counted as not solved, with its error.

    PYTHONPATH=<checkout> python scripts/offline_public_forms.py [ATTEMPTS] > table.md
    PYTHONPATH=<checkout> python scripts/offline_public_forms.py 6 --folder DIR [--folder DIR2]

The checkout on PYTHONPATH is the code measured; the form files are read from this script's
own checkout, so an older commit's tree measures "before" on the same files. A `--folder` is
read as a folder suite (`benchmarks.loading.suite_files`: recursive, helper modules left out).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from agents.offline.policy import reference_kernels, with_generated
from benchmarks import JudgeConfig, evaluate, load_task_file
from benchmarks.loading import suite_files
from knowledge_base import default_kb

HERE = Path(__file__).resolve().parents[1]
FOLDERS = ("kernelbench_forms", "tritonbench_forms")
KERNEL_HITS = 4  # as agents/core/nodes/retrieve.py asks for


def one_line(text: str, width: int = 200) -> str:
    """`text` on one line, at most `width` characters, safe in a Markdown table cell."""
    return " ".join(str(text).split()).replace("|", "\\|")[:width]


def main() -> None:
    parser = argparse.ArgumentParser(
        description="The offline policy's references on problem files, judged in order (CPU)."
    )
    parser.add_argument(
        "attempts",
        nargs="?",
        type=int,
        default=6,
        help="references judged per file at most (default 6: a run's 3 rounds of 2 candidates)",
    )
    parser.add_argument(
        "--folder",
        action="append",
        type=Path,
        default=[],
        help="measure the problem files under this folder (repeatable) instead of the form files",
    )
    parser.add_argument("--limit", type=int, default=0, help="first N files per folder (0: all)")
    parser.add_argument("--timeout", type=int, default=300, help="judge timeout per candidate, s")
    args = parser.parse_args()
    folders = [(f.name, f) for f in args.folder] or [
        (f, HERE / "tests" / "fixtures" / f) for f in FOLDERS
    ]
    judge = JudgeConfig(device="cpu", trials=1, timeout_s=args.timeout)
    kb = default_kb()
    solved: dict[str, int] = {}
    totals: dict[str, int] = {}
    broken: dict[str, int] = {}
    print("| form | solved by | references tried | seconds | why not |")
    print("|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for name, folder in folders:
            files = suite_files(folder)[0] if args.folder else sorted(folder.glob("*.py"))
            for path in files[: args.limit or None]:
                start = time.time()
                label = f"{name}/{path.relative_to(folder).with_suffix('')}"
                totals[name] = totals.get(name, 0) + 1
                try:
                    task = load_task_file(path)[0]
                except Exception as exc:  # noqa: BLE001 - a file that does not load is unsolved
                    broken[name] = broken.get(name, 0) + 1
                    why = f"not loaded: {type(exc).__name__}: {exc}"
                    print(f"| {label} | none | 0 | {time.time() - start:.0f} | {one_line(why)} |")
                    continue
                hits = kb.search(
                    "", k=KERNEL_HITS, task=task, hidden_task=task.id, kinds=("kernel",)
                )
                rows = [{"id": h.id, "path": h.path, "text": h.text} for h in hits]
                refs, note = with_generated(
                    task, reference_kernels(task, rows, benchmark=True), benchmark=True
                )
                generated = bool(refs) and refs[0].get("kind") == "generated"
                winner, tried, why = "", 0, "" if generated else note
                for ref in refs[: args.attempts]:
                    tried += 1
                    candidate = Path(tmp) / f"{task.id}_{tried}.py"
                    candidate.write_text(ref["source"])
                    verdict = evaluate(task, candidate, judge)
                    if verdict.passed:
                        winner = ref["id"]
                        break
                    if not why:  # the generated kernel's verdict, or the first one judged
                        why = f"{ref['id']}: {verdict.error_class}: {verdict.message}"
                solved[name] = solved.get(name, 0) + bool(winner)
                took = time.time() - start
                print(
                    f"| {label} | {winner or 'none'} | {tried} | {took:.0f} "
                    f"| {'' if winner else one_line(why or 'no reference kernel')} |",
                    flush=True,
                )
    print()
    for name, _ in folders:
        print(
            f"{name}: solved {solved.get(name, 0)} of {totals.get(name, 0)}"
            f" ({broken.get(name, 0)} not loaded)"
        )


if __name__ == "__main__":
    main()
