"""Executors: where and how many candidates are judged at once, never how they are judged.

`base` the interface (`Executor`: submit / map / close) and the inline executor; `choose` which
one (`ExecutorSpec`, `make_executor`); `request` the record handed over (`EvalRequest`) and how any process judges it;
`precompile` the CPU stage run ahead of the GPU (static check, Triton compiled ahead by
`warm_compile` in a CPU sandbox); `local` CPU workers plus one lane per GPU;
`ray_exec` the same stages as Ray tasks. Other packages use them through `benchmarks`
(`from benchmarks import make_executor, EvalRequest`). docs/throughput.md says how to run them.
"""

# the executor kinds (a setting's choices read this without importing the executors)
KINDS = ("inline", "local", "ray")
