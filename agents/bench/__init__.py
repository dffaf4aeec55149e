"""The bench: methods compared on a suite, each (task, method, seed) an ordinary agent run.

    kernforge bench --suite lite --methods aka,geak,kernelagent,single-shot --llm SPEC \\
                    --seeds 3 --budget iterations=8,cost=2 --out runs/bench-lite

Every method gets the same model (--llm), the same budget and the same --set settings; only its
preset differs (presets sit below flags, so a --set key overrides every method's preset alike).
The offline policy is a method of its own: it always runs without a model, and with
`--llm offline` the methods that need one are skipped, with a message saying so. Runs use hidden
provenance (benchmark mode) unless --no-benchmark: no method sees the task's own solution.

    <out>/bench.json                  the plan: tasks, methods, seeds, model, budget, settings
    <out>/events.jsonl                one line per (task, method, seed) as it starts and ends
    <out>/runs/<task>.<method>.s<seed>/   the agent run (`kernforge run --resume` works on it)
    <out>/results.jsonl, results.parquet  one row per (task, method, seed, attempt)
                                      (benchmarks.results.rows.ResultStore; rows of a run that
                                      judged nothing: one "no_kernel" row with attempt 0)

Resumable: a (task, method, seed) whose run finished is skipped (its rows are added if missing);
one whose run started but did not finish is resumed from its checkpoint; one not started starts.
So a killed bench continues when the same command runs again (or `--resume --out DIR`, which
reads the plan from bench.json). A re-run must use the same model, budget, settings and device
as the rows already there; more tasks, methods or seeds may be added. Rows from the replay
provider are labelled scripted (ResultRow.scripted), everywhere they appear.

Rooms, imports pointing one way (plan <- cells <- parallel <- run; this file re-exports):

    plan.py       the plan (BenchPlan, Cell, make_plan, bench.json, the fairness check)
    cells.py      one cell: run / resume / skip its agent run, read its rows (CellOutcome)
    parallel.py   cells on several workers, one per GPU (`--workers N`)
    run.py        the loop over a plan's cells, and the summary by method (run_bench)
    worked_example.py, worked_example_readme.py, scripted_replies.py   the worked example
"""

from agents.bench.cells import (
    CellOutcome,
    cell_rows,
    collect_cell,
    execute_cell,
    run_cell,
    run_finished,
    stored_outcomes,
)
from agents.bench.plan import (
    BenchError,
    BenchPlan,
    Cell,
    make_plan,
    merge_with_stored,
    plan_bench,
    skipped_methods,
    stored_plan,
)
from agents.bench.run import BenchResult, MethodSummary, executor_spec, run_bench, summarize

__all__ = [
    "BenchError",
    "BenchPlan",
    "BenchResult",
    "Cell",
    "CellOutcome",
    "MethodSummary",
    "cell_rows",
    "collect_cell",
    "execute_cell",
    "executor_spec",
    "make_plan",
    "merge_with_stored",
    "plan_bench",
    "run_bench",
    "run_cell",
    "run_finished",
    "skipped_methods",
    "stored_outcomes",
    "stored_plan",
    "summarize",
]
