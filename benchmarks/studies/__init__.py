"""Scripts that write the measured results in docs/results/ (each: `python -m benchmarks.studies.X`).

`solutions_table` every reference solution through the judge; `solution_times` their times
against eager, torch.compile and the roofline; `harness_speed` the judge's own wall time;
`ncu_agreement` the harness clock against Nsight Compute. Each takes `--solutions DIR`.
"""
