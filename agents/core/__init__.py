"""The agent itself: a LangGraph state machine of generator, evaluator, reflector, profile,
optimizer and dropout nodes around one run's state.

`graph` wires the nodes (`nodes/`, one function each) and routes between them; `state` holds the
records a run's checkpoint stores; `settings` is the one table of settings that `config`,
the TOML and environment layers and the CLI options derive from; `context` is what nodes use
besides the state (the task, the run directory, the provider, the budget, the chosen policy, the
test seams); `policy` the decisions a node may ask for, `model_policy` and `agents.offline` the
two that make them; `llm/` the providers. See agents/README.md.
"""
