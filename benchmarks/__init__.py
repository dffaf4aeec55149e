"""The harness and the tasks: what a kernel is judged against, the judge, results and studies.

Other packages use the names below (`from benchmarks import evaluate, JudgeConfig, get_task`),
never the modules behind them; a test (tests/test_layering.py) pins that. The rooms:

- `benchmarks/task.py`, `loading.py`, `formats/`, `inputs.py`, `tolerances.py`, `tasks/<category>/*.py`:
  the task record, its loading (kernforge files; KernelBench and TritonBench through formats/),
  input modes and tolerance helpers, the task files
- `benchmarks/verdict.py`, `suites.py`, `weights.py`: the verdict record, suites and their
  importance weights
- `benchmarks/executor/`: executors that judge many candidates at once (inline, local lanes per
  GPU, Ray), every one through the same judge
- `benchmarks/harness/`: the judge (static check, isolated worker, typed messages, comparison,
  fallback detection, timing, roofline fields, re-measurement, sweeps of many configurations)
- `benchmarks/results/`: result rows, run records, analysis (S_agg, fast_p), reports, pair export,
  importers of kernels made elsewhere
- `benchmarks/studies/`: the scripts that write docs/results/
- `benchmarks/selfcheck.py`: every task's reference solution through its own checks
- `benchmarks/suggest.py`: the one "did you mean" rule for a misspelt name (`unknown_name`)
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

# what other packages may use: name -> "module" (or "module:attribute" where the name differs)
_EXPORTS: dict[str, str] = {
    # benchmarks.executor
    "BaselineRequest": "benchmarks.executor.request",
    "EvalRequest": "benchmarks.executor.request",
    "EXECUTOR_KINDS": "benchmarks.executor:KINDS",
    "Executor": "benchmarks.executor.base",
    "ExecutorError": "benchmarks.executor.request",
    "ExecutorSpec": "benchmarks.executor.choose",
    "make_executor": "benchmarks.executor.choose",
    "RemeasureRequest": "benchmarks.executor.request",
    "SweepRequest": "benchmarks.executor.request",
    "visible_gpus": "benchmarks.executor.local",
    # benchmarks.harness.child
    "drain_spares": "benchmarks.harness.child",
    # benchmarks.harness.judge
    "evaluate": "benchmarks.harness.judge",
    "resolve_device": "benchmarks.harness.judge",
    # benchmarks.harness.judge_config
    "JudgeConfig": "benchmarks.harness.judge_config",
    "REMEASURE_ROUNDS": "benchmarks.harness.judge_config",
    # benchmarks.harness.perf
    "peak_flops_for": "benchmarks.harness.perf",
    # benchmarks.harness.remeasure
    "interleaved": "benchmarks.harness.remeasure",
    "Remeasure": "benchmarks.harness.remeasure",
    # benchmarks.harness.sweep
    "sweep": "benchmarks.harness.sweep",
    "Sweep": "benchmarks.harness.sweep",
    "SweepEntry": "benchmarks.harness.sweep",
    "weighted_score": "benchmarks.harness.sweep",
    # benchmarks.harness.sandbox
    "candidate_launch": "benchmarks.harness.sandbox",
    "describe_isolation": "benchmarks.harness.sandbox:describe",
    "describe_observation": "benchmarks.harness.observer:describe",
    "describe_cpu_workers": "benchmarks.harness.forkserver:describe",
    "isolation_refusal": "benchmarks.harness.sandbox:refusal",
    "isolation_level": "benchmarks.harness.sandbox:level",
    "sandbox_visible": "benchmarks.harness.sandbox:visible",
    "stage_file": "benchmarks.harness.sandbox",
    # benchmarks.harness.static_check
    "ALLOWED_IMPORT_ROOTS": "benchmarks.harness.static_check",
    "check_task_candidate": "benchmarks.harness.static_check",
    # benchmarks.loading
    "get_task": "benchmarks.loading",
    "load_all": "benchmarks.loading",
    "load_folder": "benchmarks.loading",
    "load_task_file": "benchmarks.loading",
    # benchmarks.pyparse
    "parse_python": "benchmarks.pyparse:parse",
    # benchmarks.redaction
    "redact": "benchmarks.redaction",
    "redact_data": "benchmarks.redaction",
    "redact_verdict": "benchmarks.redaction",
    "secret_values": "benchmarks.redaction",
    "without_secrets": "benchmarks.redaction",
    # benchmarks.results.analysis
    "final_rows": "benchmarks.results.analysis",
    "geomean_speedups": "benchmarks.results.analysis",
    "labels": "benchmarks.results.analysis",
    "PASS_STAGES": "benchmarks.results.analysis",
    "stage_pass_rates": "benchmarks.results.analysis",
    "STAGE_TITLES": "benchmarks.results.analysis",
    # benchmarks.results.importers
    "import_kernels": "benchmarks.results.importers",
    "read_source": "benchmarks.results.importers",
    # benchmarks.results.pairs_export
    "export_pairs": "benchmarks.results.pairs_export",
    # benchmarks.results.jsonl
    "append_line": "benchmarks.results.jsonl",
    "read_jsonl": "benchmarks.results.jsonl",
    # benchmarks.results.records
    "PairSide": "benchmarks.results.records",
    "read_json": "benchmarks.results.records",
    "RunFileError": "benchmarks.results.records",
    "RunPair": "benchmarks.results.records",
    # benchmarks.results.report
    "write_report": "benchmarks.results.report",
    # benchmarks.results.rows
    "all_tasks": "benchmarks.results.rows",
    "category_of": "benchmarks.results.rows",
    "collect_rows": "benchmarks.results.rows",
    "device_name": "benchmarks.results.rows",
    "is_scripted_llm": "benchmarks.results.rows",
    "no_kernel_row": "benchmarks.results.rows",
    "ResultStore": "benchmarks.results.rows",
    "rows_from_run_dir": "benchmarks.results.rows",
    # benchmarks.studies.solutions_table
    "load_verdicts": "benchmarks.studies.solutions_table",
    # benchmarks.suggest
    "close_names": "benchmarks.suggest",
    "unknown_name": "benchmarks.suggest",
    # benchmarks.suites
    "is_folder_suite": "benchmarks.suites",
    "suite_tasks": "benchmarks.suites",
    "SUITES": "benchmarks.suites",
    # benchmarks.task
    "Task": "benchmarks.task",
    "TaskError": "benchmarks.task",
    # benchmarks.verdict
    "Verdict": "benchmarks.verdict",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    """Import what `name` lives in on first use, so importing the package stays cheap."""
    where = _EXPORTS.get(name)
    if where is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module, _, attr = where.partition(":")
    loaded = import_module(module)
    return loaded if module == f"{__name__}.{name}" else getattr(loaded, attr or name)
