"""Scripts that write the measured results in docs/results/ (each: `python -m benchmarks.studies.X`).

`solutions_table` every reference solution through the judge; `solution_times` their times
against eager, torch.compile and the roofline; `harness_speed` the judge's own wall time;
`ncu_agreement` the harness clock against Nsight Compute; `throughput` candidates judged per
minute on the executors against a naive loop of `kernforge eval`. Each takes `--solutions DIR`.
"""
