"""The judge and what it is built from.

`judge` walks a candidate through static check -> compile -> call -> correct (standard, outlier) ->
deterministic -> no fallback -> perf and writes one Verdict; `judge_config` its settings
(torch-free); `static_check/` the early lint; `child` and `sandbox` the isolated worker process
(`worker`) each candidate runs in; `messages` every message between the two, typed;
`transport` the trial files; `compare` the parent-side comparison against the reference;
`fallback` PyTorch-fallback detection; `ptx` what the compiled kernels use; `perf` the timings,
baselines and roofline fields; `baselines` the baseline cache (memory and disk); `remeasure` the interleaved incumbent-vs-candidate timing;
`graph_timing` decode shapes timed as served, inside CUDA graphs; `sweep` many configurations of
one kernel timed in one worker, for a ranking;
`precision` the numeric settings references run under.
"""
