"""The graph's nodes: plain functions of the state (and the run context) that return partial
state updates. The wiring between them is in agents/core/graph.py, nowhere else.

A node that needs a decision asks the run's policy (`ctx.policy`, agents/core/policy.py: the
model's, or the rules' without one) and never which it is; a spent budget becomes a stop in one
place (budget.py)."""
