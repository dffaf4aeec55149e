"""The rule-based code generator: a task's PyTorch reference, translated into a Triton kernel
(see `agents.offline.codegen.translate` for how).

Modules, in the order a translation runs: `entry` (the candidate's entry point: a function, or
KernelBench's class ModelNew holding Model's weights; a call's arguments bound to it), `trace`
(the reference traced into aten graphs per call, the op checks), `classes` (argument classes:
one kernel each, and the launcher's test for them), `stages` (a GEMM followed by a reduction cut
in two), `shapes` (each tensor's kind against the problem's shape), `builder` with `sizes`,
`gemm`, `window` (index maps: pads, pools), `ramps` (index ramps: aranges as expressions of
each element's index), `broadcasts` (inputs broadcast in a pattern no kind names, loaded at an
index computed from each element's offset) and `nodes` (a graph walked into a program of
statements), `conv`
(convolutions: a kernel of their own, an epilogue built as a second stage), `ops` (one aten
op as a Triton expression), `emit` (kernels and launchers), `source` (the candidate module),
`translate` (the whole: `generate(task)`, with the static check).
"""

from agents.offline.codegen.entry import entry_defaults, wrapper_head
from agents.offline.codegen.translate import Generated, NotSupported, generate

__all__ = ["Generated", "NotSupported", "entry_defaults", "generate", "wrapper_head"]
