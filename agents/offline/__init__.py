"""The offline policy: the agent's decisions without a model.

`policy` proposes reference kernels retrieved from the knowledge base (never the task's own in
benchmark mode), a kernel written by rules from the task's PyTorch reference (`codegen/`), and a
measured search over each kernel's tunables; failures get the rules' diagnosis.
"""
