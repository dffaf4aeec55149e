"""The offline policy on the KernelBench- and TritonBench-style form files of the tests
(tests/fixtures/kernelbench_forms, tests/fixtures/tritonbench_forms), on the CPU interpreter.

For each file, what a `kernforge run --llm offline --benchmark` generator would try, in its
order: the policy's reference kernels under hidden provenance (the kernel generated from the
reference first, then the knowledge base's kernel hits for the task, the task hidden, adapted to
its entry point), each judged by the real judge until one passes or ATTEMPTS were judged (a
run's default three rounds of two candidates). The knowledge base is opened once for all files
(a run opens it per task), which is the only difference from a run's first rounds.

    PYTHONPATH=<checkout> python scripts/offline_public_forms.py [ATTEMPTS] > table.md

The checkout on PYTHONPATH is the code measured; the form files are read from this script's
own checkout, so an older commit's tree measures "before" on the same files.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from agents.offline.policy import reference_kernels, with_generated
from benchmarks import JudgeConfig, evaluate, load_task_file
from knowledge_base import default_kb

HERE = Path(__file__).resolve().parents[1]
FOLDERS = ("kernelbench_forms", "tritonbench_forms")
KERNEL_HITS = 4  # as agents/core/nodes/retrieve.py asks for


def main() -> None:
    parser = argparse.ArgumentParser(
        description="The offline policy's references on the form files, judged in order (CPU)."
    )
    parser.add_argument(
        "attempts",
        nargs="?",
        type=int,
        default=6,
        help="references judged per file at most (default 6: a run's 3 rounds of 2 candidates)",
    )
    attempts = parser.parse_args().attempts
    judge = JudgeConfig(device="cpu", trials=1, timeout_s=300)
    kb = default_kb()
    solved: dict[str, int] = {}
    totals: dict[str, int] = {}
    print("| form | solved by | references tried | seconds |")
    print("|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for folder in FOLDERS:
            for path in sorted((HERE / "tests" / "fixtures" / folder).glob("*.py")):
                start = time.time()
                task = load_task_file(path)[0]
                hits = kb.search(
                    "", k=KERNEL_HITS, task=task, hidden_task=task.id, kinds=("kernel",)
                )
                rows = [{"id": h.id, "path": h.path, "text": h.text} for h in hits]
                refs, _ = with_generated(
                    task, reference_kernels(task, rows, benchmark=True), benchmark=True
                )
                winner, tried = "", 0
                for ref in refs[:attempts]:
                    tried += 1
                    candidate = Path(tmp) / f"{task.id}_{tried}.py"
                    candidate.write_text(ref["source"])
                    if evaluate(task, candidate, judge).passed:
                        winner = ref["id"]
                        break
                totals[folder] = totals.get(folder, 0) + 1
                solved[folder] = solved.get(folder, 0) + bool(winner)
                took = time.time() - start
                print(
                    f"| {folder}/{path.stem} | {winner or 'none'} | {tried} | {took:.0f} |",
                    flush=True,
                )
    print()
    for folder in FOLDERS:
        print(f"{folder}: solved {solved.get(folder, 0)} of {totals.get(folder, 0)}")


if __name__ == "__main__":
    main()
