"""The graph's nodes: plain functions of the state (and the run context) that return partial
state updates. The wiring between them is in agents/core/graph.py, nowhere else."""
