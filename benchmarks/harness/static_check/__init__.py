"""The static stage of the judge: read a candidate's source and reject it before it runs.

This is a lint, not the wall. It gives a candidate (and the model that wrote it) a clear, early
message naming the line and the API, before any process starts; what holds against a candidate
that gets past it is elsewhere: the OS isolation of its worker (``benchmarks.harness.sandbox``: no
network, its own pid namespace, a read-only filesystem, an environment without keys) and the
judge's own checks of what the worker did (outputs, launches, fallbacks). It closes the crossings
it knows of (below) and refuses conservatively where it cannot tell.

The candidate is never executed here; everything is decided from its syntax tree. The checks, in
the order they are reported:

1. it parses (SYNTAX_ERROR, with line and column);
2. it uses no forbidden API (FORBIDDEN_API, naming the API and the line; every use is listed);
3. it defines a top-level ``def <entry_point>`` (MISSING_ENTRY_POINT) whose positional parameters
   are the task's, in order; extra trailing parameters must have defaults (tunables)
   (SIGNATURE_MISMATCH);
4. it defines at least one ``@triton.jit`` kernel and the entry point launches one, directly
   (``kernel[grid](...)``) or through module-level helpers it reaches (NO_TRITON_KERNEL).

A task whose entry point is a class (``entry_kind="class"``: KernelBench's ``ModelNew``) is
checked the same way, except that 3. asks for a top-level ``class ModelNew`` with a ``forward``
taking the reference's inputs (counted, not named), 4. accepts a launch anywhere in the class,
and the class may hold the task's weights: see "Class entry points" below.

Forbidden APIs come first because a candidate that cheats should be told so, whatever else is
wrong with it.

The forbidden policy
--------------------
The design card's rule is "allocation, views and shape arithmetic in PyTorch are allowed; compute
in PyTorch is a fallback". Statically that becomes:

- **Imports**: only ``torch``, ``triton``, ``math``, ``typing``, ``functools``, ``itertools``,
  ``dataclasses`` and ``__future__`` (ALLOWED_IMPORT_ROOTS). Everything else is refused by name:
  ``numpy`` would be a CPU fallback, ``os``/``sys``/``subprocess``/``signal``/``ctypes`` leave the
  sandbox or kill the judge, ``threading``/``multiprocessing`` could keep working after the entry
  point returns (hiding work from the timer) or race the harness, ``inspect``/``gc``/``importlib``/
  ``builtins`` snoop on the judge's frames and objects, ``operator`` hides ``@`` as a function.
  Relative and star imports are refused too (a candidate is one file; star imports hide names).
- **The torch namespace is an allow-list** (TORCH_ALLOWED): dtypes, ``Tensor``/``Size``/
  ``device``, allocation (``empty``, ``zeros``, ``full``, ``arange``...), views (``reshape``,
  ``permute``, ``as_strided``...), metadata (``finfo``, ``promote_types``...), grad-mode context
  managers, ``torch.version`` and a few ``torch.cuda`` queries and stream/event types. Any other
  ``torch.*`` name is refused. GLOBAL_FORBIDDEN spells out the well-known compute namespaces and
  functions (``torch.nn``, ``torch.special``, ``torch.linalg``, ``torch.fft``, ``torch.ops``,
  ``torch.compile``, ``torch.jit``, ``torch.library``, ``torch.utils``, ``torch.matmul``,
  ``torch.softmax``, ``torch.exp``...) so their messages say *why*; the task's own FORBIDDEN
  entries are added to it. Private names (``torch._C``, ``torch._dynamo``, ``triton._C``...) are
  refused on every module.
- **Tensor methods**: the checker cannot know which objects are tensors, so it refuses, on any
  object, an attribute whose name is a public compute method of ``torch.Tensor``: every callable
  of ``dir(torch.Tensor)`` except TENSOR_METHODS_ALLOWED (views, layout, dtype/device conversion,
  allocation, metadata) and the two names Python containers share (``index``, ``values``). So
  ``x.softmax(-1)``, ``x.exp()``, ``x.sum()``, ``x.matmul(w)`` and ``getattr(x, "sum")`` are
  refused, as is the ``@`` operator (and ``@=``). Inside ``@triton.jit`` functions both are
  allowed: there ``x.sum(0)`` and ``a @ b`` are Triton's own tensor operations.
- **Aliases are seen through**: ``import torch.nn.functional as G``, ``from torch import softmax
  as s``, ``import torch as T``, ``f = torch.exp`` and chains of such assignments all resolve to
  the dotted name they stand for. Modules may not be passed around as values (``f(torch)``), and
  a name reached through an allowed module that is really another module (``typing.sys``,
  ``triton.testing.subprocess``, ``dataclasses.builtins``) is refused: the checker imports our
  own trusted libraries (never the candidate) to look.
- **Re-exports are resolved to what they are**: a dotted name is walked in those libraries
  (modules with getattr, other objects only through what they store, so no property runs), and
  the rules apply to its real name (``triton.testing.runtime.build`` is ``triton.runtime.build``,
  refused) and to every object on the way: one whose module (its ``__module__``, or its type's)
  is outside the allowed roots is refused (``pathlib.Path``, ``os.environ``, an importlib loader,
  ``tempfile`` functions kept by a torch or Triton module). ``triton.knobs`` (it reads and sets
  the environment and the compiler's configuration) is refused as a whole.
- **Chains the checker cannot name** (rooted at a subscript, a call, a local: ``[m][0].attr``,
  ``(lambda: m)().attr``, ``f().x``) are checked attribute by attribute: no dunder, frame or
  globals attribute (``get_capture_scope``), no name of a dangerous module (``os``, ``pathlib``,
  ``tempfile``...) or OS facility (``environ``, ``Path``, ``system``, ``popen``...), no private
  attribute except on ``self``/``cls``. A module may not be put into such a chain at all: a module
  used as a value, by name or as an attribute (``[torch.cuda][0]``), is refused.
- **Format strings**: ``str.format``/``format_map`` read attributes and items of their arguments
  as the string says (``"{0.__globals__[os]}"``), so they are allowed only on a constant string
  whose fields (nested ones in format specs included) pass the attribute rules above; a format
  string that is not a constant, or a format method used as a value, is refused. A dunder name
  written as a string (``d["__builtins__"]``) is refused too.
- **Dynamic access and snooping** are refused outright: ``eval``, ``exec``, ``compile``,
  ``__import__``, ``globals``, ``locals``, ``vars``, ``dir``, ``open``, ``breakpoint``, ``input``,
  ``exit``/``quit`` (a function parameter of the same name is not the builtin);
  ``getattr``/``setattr``/``delattr`` with a computed name, on a module, or used as a value;
  every dunder attribute except ``__name__``, ``__qualname__``, ``__doc__``, ``__init__``,
  ``__version__`` (so ``__dict__``, ``__class__``, ``__subclasses__``, ``__globals__``,
  ``__matmul__``... are out), dunder names such as ``__builtins__``, and the frame and code
  attributes (``gi_frame``, ``f_back``, ``f_locals``, ``tb_frame``...) through which a generator
  or traceback reaches the judge's frames without ``sys`` or ``inspect``.
- **Monkeypatching and hooks**: assigning to or deleting an attribute of anything reached from an
  import (``torch.cuda.synchronize = ...``, ``triton.testing.do_bench = ...``), subclassing a
  torch type, defining or naming ``__torch_function__``/``__torch_dispatch__``, and building
  classes with three-argument ``type(...)`` are refused.
- **Triton** is open except where it leaves Triton: ``triton.compile``/``compiler``/``tools``/
  ``backends``, ``triton.runtime.build`` (compiles C source), ``triton.runtime.cache``, loading
  prebuilt binaries, and ``triton.testing.set_gpu_clock``.

Class entry points
------------------
A ``ModelNew`` must hold the same parameters as the reference ``Model`` (the judge copies
Model's state into it), so for class entry points these are allowed anywhere: ``torch.nn`` as a
module (``import torch.nn as nn``, ``from torch import nn``), ``nn.Module`` (also as the one
torch base class a class may have), ``nn.Parameter``, ``nn.ParameterList``/``ParameterDict``,
``nn.ModuleList``/``ModuleDict`` (NN_HOLDERS). Inside a class's ``__init__`` only -- which runs
before Model's weights are copied in and outside every traced or timed call -- also the
``torch.nn`` layer classes that create parameters (``nn.Linear``, ``nn.Conv2d``...),
``torch.nn.init`` and torch's random constructors (INIT_ONLY_RANDOM). Calling a layer in
``forward`` is PyTorch compute; ``torch.nn.functional`` stays forbidden everywhere; the runtime
fallback detector sees what the static rules let through.

What is left to the dynamic stage
---------------------------------
Arithmetic operators on tensors (``+ - * / ** < ==``, indexing with masks...) and the builtins
that apply them (``abs(t)``, ``round(t)``, ``sum(t)``, ``max(t)``, ``sorted(t)``) cannot be told
apart from arithmetic on Python numbers without types, so they are allowed here; the dynamic
fallback detector (a TorchDispatchMode in the child process) sees the aten ops they dispatch to.
So is pure-Python compute over ``.item()`` values, and, under the CPU interpreter only, Python
run inside a ``@triton.jit`` body on objects smuggled in as non-tensor arguments. Raising
``SystemExit`` is an ordinary exception, left to the child runner, which reports EARLY_EXIT.

Modules
-------
``rules`` the allow and deny lists and why each API is refused; ``library`` what a dotted name is
in our trusted libraries (imported, never the candidate); ``facts`` what a candidate's names stand
for (imports, aliases, kernels); ``formats`` what a format string reads; ``walker`` the
forbidden-API walk; ``entry`` the entry point's signature and launches; ``check`` the public
functions and StaticResult, re-exported here.
"""

from benchmarks.harness.static_check.check import StaticResult, check_source, check_task_candidate
from benchmarks.harness.static_check.rules import (
    ALLOWED_IMPORT_ROOTS,
    GLOBAL_FORBIDDEN,
    INIT_ONLY_PREFIXES,
    INIT_ONLY_RANDOM,
    NN_HOLDERS,
    TENSOR_METHODS_ALLOWED,
    TORCH_ALLOWED,
    TORCH_MODULES_ALLOWED,
)

__all__ = [
    "ALLOWED_IMPORT_ROOTS",
    "GLOBAL_FORBIDDEN",
    "INIT_ONLY_PREFIXES",
    "INIT_ONLY_RANDOM",
    "NN_HOLDERS",
    "TENSOR_METHODS_ALLOWED",
    "TORCH_ALLOWED",
    "TORCH_MODULES_ALLOWED",
    "StaticResult",
    "check_source",
    "check_task_candidate",
]
