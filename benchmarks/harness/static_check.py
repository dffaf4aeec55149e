"""The static stage of the judge: read a candidate's source and reject it before it runs.

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
"""

from __future__ import annotations

import ast
import functools
import importlib
import types
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from benchmarks.task import Task
from benchmarks.verdict import ErrorClass

# --------------------------------------------------------------------------------------------
# Policy tables
# --------------------------------------------------------------------------------------------


def _words(text: str) -> tuple[str, ...]:
    """The whitespace-separated words of a table literal (keeps long tables readable)."""
    return tuple(text.split())


ALLOWED_IMPORT_ROOTS: frozenset[str] = frozenset(
    _words("torch triton math typing functools itertools dataclasses __future__")
)

# Why a well-known API is forbidden, by group. GLOBAL_FORBIDDEN is their union; an entry forbids
# the dotted name itself and everything under it.
_FORBIDDEN_GROUPS: dict[str, tuple[str, ...]] = {
    "a PyTorch compute namespace": _words(
        """
        torch.nn torch.special torch.linalg torch.fft torch.sparse torch.masked torch.nested
        torch.signal torch.distributions torch.ao torch.quantization torch.autograd torch.func
        torch.vmap torch.amp torch.autocast torch.random
        """
    ),
    "PyTorch dispatcher operators (aten and registered custom ops)": _words("torch.ops"),
    "a PyTorch compiler, tracer or dispatcher hook (work done outside the candidate's kernels)": (
        _words(
            """
            torch.compile torch.jit torch.fx torch.export torch.library torch.overrides
            torch.utils torch.backends torch.cuda.jiterator torch.cuda.graph torch.cuda.graphs
            torch.cuda.CUDAGraph torch.cuda.make_graphed_callables torch.testing torch.profiler
            torch.distributed torch.multiprocessing torch.hub torch.package torch.onnx
            """
        )
    ),
    "a way to load precomputed data": _words(
        "torch.load torch.save torch.from_numpy torch.frombuffer torch.from_file"
    ),
    "a PyTorch compute function": _words(
        """
        torch.matmul torch.mm torch.bmm torch.addmm torch.addbmm torch.baddbmm torch.addmv
        torch.mv torch.dot torch.vdot torch.inner torch.outer torch.ger torch.einsum
        torch.tensordot torch.kron torch.chain_matmul

        torch.softmax torch.log_softmax torch.layer_norm torch.group_norm torch.batch_norm
        torch.rms_norm torch.relu torch.sigmoid torch.tanh torch.dropout torch.embedding
        torch.conv1d torch.conv2d torch.conv3d torch.conv_transpose1d torch.conv_transpose2d
        torch.conv_transpose3d

        torch.exp torch.exp2 torch.expm1 torch.log torch.log2 torch.log10 torch.log1p
        torch.sqrt torch.rsqrt torch.pow torch.abs torch.neg torch.reciprocal torch.sin
        torch.cos torch.erf torch.clamp torch.clip torch.add torch.sub torch.subtract
        torch.mul torch.multiply torch.div torch.divide torch.true_divide torch.floor_divide
        torch.fmod torch.remainder torch.maximum torch.minimum torch.lerp torch.addcmul
        torch.addcdiv torch.nan_to_num torch.where

        torch.sum torch.mean torch.prod torch.max torch.min torch.amax torch.amin
        torch.argmax torch.argmin torch.var torch.std torch.norm torch.logsumexp torch.cumsum
        torch.cumprod torch.cummax torch.cummin torch.logcumsumexp

        torch.sort torch.argsort torch.topk torch.kthvalue torch.median torch.gather
        torch.scatter torch.scatter_add torch.scatter_reduce torch.index_select
        torch.index_add torch.masked_select torch.take torch.cat torch.concat torch.stack
        torch.flip torch.roll torch.tril torch.triu torch.cdist torch.histc torch.bincount
        torch.unique torch.searchsorted torch.bucketize

        torch.allclose torch.isclose torch.equal torch.rand torch.randn torch.randint
        torch.randperm torch.multinomial torch.normal torch.bernoulli
        """
    ),
    "evaluates strings as code": _words(
        "typing.get_type_hints typing.ForwardRef typing.evaluate_forward_ref"
    ),
    "bypasses the Triton compiler (compiler internals or prebuilt binaries)": _words(
        """
        triton.compile triton.compiler triton.tools triton.backends triton.runtime.build
        triton.runtime.cache triton.runtime.driver.active.utils.load_binary
        """
    ),
    "changes the machine's state (GPU clocks)": _words("triton.testing.set_gpu_clock"),
}

GLOBAL_FORBIDDEN: tuple[str, ...] = tuple(
    name for names in _FORBIDDEN_GROUPS.values() for name in names
)

# The torch namespace is allow-listed: a dotted name under torch is allowed only when it is one
# of these (or an attribute of one, e.g. torch.float16.itemsize, torch.version.cuda).
TORCH_ALLOWED: frozenset[str] = frozenset(
    "torch." + name
    for name in _words(
        """
        float16 half float32 float float64 double bfloat16 complex32 complex64 complex128
        cfloat cdouble chalf int8 int16 short int32 int int64 long uint8 uint16 uint32 uint64
        bool float8_e4m3fn float8_e4m3fnuz float8_e5m2 float8_e5m2fnuz float8_e8m0fnu
        float4_e2m1fn_x2

        Tensor Size dtype device Generator layout strided memory_format contiguous_format
        channels_last channels_last_3d preserve_format finfo iinfo is_tensor
        is_floating_point is_complex numel get_default_dtype promote_types result_type
        can_cast broadcast_shapes version types __version__

        no_grad inference_mode enable_grad set_grad_enabled is_grad_enabled
        is_inference_mode_enabled

        empty empty_like empty_strided zeros zeros_like ones ones_like full full_like arange
        tensor as_tensor scalar_tensor

        as_strided reshape flatten unflatten squeeze unsqueeze permute transpose t narrow
        select chunk split tensor_split unbind movedim moveaxis swapaxes swapdims broadcast_to
        view_as_real view_as_complex clone detach

        cuda.is_available cuda.is_initialized cuda.current_device cuda.device_count
        cuda.get_device_properties cuda.get_device_capability cuda.get_device_name
        cuda.get_arch_list cuda.device cuda.device_of cuda.set_device cuda.current_stream
        cuda.default_stream cuda.Stream cuda.stream cuda.Event cuda.synchronize
        cuda.mem_get_info cuda.memory_allocated cuda.max_memory_allocated
        cuda.memory_reserved cuda.empty_cache
        """
    )
)

# Torch modules a candidate may import or alias as a whole.
TORCH_MODULES_ALLOWED: frozenset[str] = frozenset(
    _words("torch torch.cuda torch.version torch.types")
)

# Class entry points (KernelBench's ModelNew) may hold weights with these, anywhere in the file.
NN_HOLDERS: frozenset[str] = frozenset(
    {"torch.nn"}
    | {
        "torch.nn." + name
        for name in _words("Module Parameter ParameterList ParameterDict ModuleList ModuleDict")
    }
)
# ... and inside a class's __init__ only: torch.nn.init, torch's random constructors, and the
# torch.nn layer classes (found by issubclass(obj, torch.nn.Module), see _is_nn_layer).
INIT_ONLY_PREFIXES: tuple[str, ...] = ("torch.nn.init",)
INIT_ONLY_RANDOM: frozenset[str] = frozenset(
    "torch." + name
    for name in _words("randn rand randint randn_like rand_like randint_like normal randperm")
)

# Tensor methods that allocate, view, convert or describe. Every other callable of torch.Tensor
# is compute (properties such as shape, dtype, device, T are metadata and always allowed).
TENSOR_METHODS_ALLOWED: frozenset[str] = frozenset(
    _words(
        """
        size stride dim ndimension numel nelement element_size data_ptr const_data_ptr
        storage_offset is_contiguous is_floating_point is_complex is_signed is_pinned is_shared
        is_inference is_conj is_neg is_same_size get_device dim_order item

        view view_as reshape reshape_as contiguous permute transpose transpose_ t t_ unsqueeze
        unsqueeze_ squeeze squeeze_ flatten unflatten ravel expand expand_as broadcast_to
        narrow select unbind split split_with_sizes chunk tensor_split as_strided movedim
        moveaxis swapaxes swapaxes_ swapdims swapdims_ unfold diagonal detach detach_
        resolve_conj resolve_neg

        to type type_as float half bfloat16 double int long short char byte bool cfloat
        cdouble chalf cuda cpu clone copy_ pin_memory record_stream

        new new_empty new_empty_strided new_zeros new_ones new_full new_tensor zero_ fill_
        requires_grad_
        """
    )
)

# Tensor method names that Python's own containers also use: not flagged on unknown objects.
_CONTAINER_METHOD_NAMES: frozenset[str] = frozenset(_words("index values"))

_FORBIDDEN_BUILTINS: dict[str, str] = {
    "eval": "evaluates a string as code",
    "exec": "executes a string as code",
    "compile": "compiles a string to code",
    "__import__": "imports a module by a computed name",
    "globals": "snoops on module globals",
    "locals": "snoops on frame locals",
    "vars": "snoops on an object's namespace",
    "dir": "enumerates names to reach them dynamically",
    "open": "reads or writes files (e.g. the task's reference or cached outputs)",
    "breakpoint": "enters a debugger",
    "input": "reads stdin",
    "help": "interactive help",
    "exit": "exits the process",
    "quit": "exits the process",
}
_DYNAMIC_ATTR_BUILTINS: frozenset[str] = frozenset(_words("getattr setattr delattr"))

_DUNDER_ATTRS_ALLOWED: frozenset[str] = frozenset(
    _words("__name__ __qualname__ __doc__ __init__ __version__")
)
_DUNDER_NAMES_ALLOWED: frozenset[str] = frozenset(
    _words("__name__ __qualname__ __doc__ __file__ __debug__ __module__")
)
_FORBIDDEN_METHOD_DEFS: frozenset[str] = frozenset(_words("__torch_function__ __torch_dispatch__"))

# Attributes that reach interpreter frames and code objects without sys or inspect
# (a generator's gi_frame.f_back is its caller's frame, the judge's included).
_FRAME_ATTRS: frozenset[str] = frozenset(
    _words(
        """
        gi_frame gi_code gi_yieldfrom cr_frame cr_code cr_await ag_frame ag_code f_back f_locals
        f_globals f_builtins f_code f_trace tb_frame tb_next co_code co_consts co_names
        """
    )
)

# Modules that must never be reached, whatever object they hang off (typing.sys, x.os, ...).
_DANGEROUS_MODULE_NAMES: frozenset[str] = frozenset(
    _words(
        """
        os sys subprocess ctypes cffi signal builtins importlib inspect gc threading _thread
        multiprocessing concurrent asyncio posix nt shutil socket pickle marshal runpy code
        codeop pty faulthandler resource mmap atexit operator numpy
        """
    )
)

_JIT_DECORATORS: frozenset[str] = frozenset({"triton.jit", "triton.runtime.jit.jit"})

# Calls whose result is never a tensor: `torch.finfo(dt).max` is a number, not Tensor.max.
_NON_TENSOR_RESULTS: frozenset[str] = frozenset(
    _words(
        """
        torch.finfo torch.iinfo torch.device torch.Size torch.cuda.get_device_properties
        torch.cuda.Stream torch.cuda.Event torch.cuda.current_stream torch.cuda.default_stream
        triton.Config
        """
    )
)


# --------------------------------------------------------------------------------------------
# Result
# --------------------------------------------------------------------------------------------


@dataclass
class StaticResult:
    """What the static stage decided about one candidate source."""

    ok: bool
    error_class: ErrorClass
    message: str
    line: int | None = None
    kernels: list[str] = field(default_factory=list)  # names of @triton.jit functions
    launched: list[str] = field(default_factory=list)  # kernels the entry point launches


@dataclass(frozen=True)
class _Violation:
    line: int
    col: int
    api: str
    why: str

    def render(self) -> str:
        return f"line {self.line}: `{self.api}` -- {self.why}"


# --------------------------------------------------------------------------------------------
# Policy helpers
# --------------------------------------------------------------------------------------------


@functools.cache
def _tensor_compute_methods() -> tuple[frozenset[str], frozenset[str]]:
    """(public, private) callable names of torch.Tensor that compute. Derived from the installed
    torch so a new compute method is refused without editing this file."""
    import torch

    public: set[str] = set()
    private: set[str] = {"_cdata"}
    for name in dir(torch.Tensor):
        if name.startswith("__"):
            continue
        if not callable(getattr(torch.Tensor, name, None)):
            continue  # properties: shape, dtype, device, T, data... are metadata
        if name.startswith("_"):
            private.add(name)
        elif name not in TENSOR_METHODS_ALLOWED and name not in _CONTAINER_METHOD_NAMES:
            public.add(name)
    return frozenset(public), frozenset(private)


def _is_dunder(name: str) -> bool:
    return len(name) > 4 and name.startswith("__") and name.endswith("__")


_UNRESOLVED = object()


@functools.cache
def _library_object(dotted: str) -> Any:
    """The object a dotted name denotes in one of our trusted libraries, walking modules only
    (attributes of non-module objects are never touched, so no property runs and no device is
    initialised). Returns the deepest object reached, or _UNRESOLVED."""
    parts = dotted.split(".")
    if parts[0] not in ALLOWED_IMPORT_ROOTS or parts[0] == "__future__":
        return _UNRESOLVED
    try:
        obj: Any = importlib.import_module(parts[0])
    except ImportError:
        return _UNRESOLVED
    for i, part in enumerate(parts[1:], start=1):
        if not isinstance(obj, types.ModuleType) or part.startswith("_"):
            return _UNRESOLVED
        if hasattr(obj, part):
            obj = getattr(obj, part)
            continue
        try:
            obj = importlib.import_module(".".join(parts[: i + 1]))
        except Exception:  # a library submodule that does not import here: nothing to learn
            return _UNRESOLVED
    return obj


def _escaped_module(dotted: str) -> str | None:
    """If walking `dotted` through modules lands on a module outside the allowed roots
    (typing.sys, dataclasses.builtins, triton.testing.subprocess), the prefix that does."""
    parts = dotted.split(".")
    for i in range(2, len(parts) + 1):
        prefix = ".".join(parts[:i])
        obj = _library_object(prefix)
        if obj is _UNRESOLVED:
            return None
        if isinstance(obj, types.ModuleType):
            if obj.__name__.split(".")[0] not in ALLOWED_IMPORT_ROOTS:
                return f"{prefix} (module {obj.__name__})"
        else:
            module = getattr(obj, "__module__", None)
            if (
                isinstance(module, str)
                and module.split(".")[0].lstrip("_") in _DANGEROUS_MODULE_NAMES
            ):
                return f"{prefix} (from module {module})"
            return None
    return None


def _is_nn_layer(dotted: str) -> bool:
    """torch.nn.Linear and the like: a class of torch.nn that is an nn.Module."""
    if not dotted.startswith("torch.nn."):
        return False
    import torch

    obj = _library_object(dotted)
    return isinstance(obj, type) and issubclass(obj, torch.nn.Module)


def _allowed_in_class_entry(dotted: str, in_init: bool) -> bool:
    """Whether a class entry point may use `dotted` (see "Class entry points" above)."""
    if dotted in NN_HOLDERS:
        return True
    if not in_init:
        return False
    if dotted in INIT_ONLY_RANDOM or _is_nn_layer(dotted):
        return True
    return any(dotted == p or dotted.startswith(p + ".") for p in INIT_ONLY_PREFIXES)


def _is_module_name(dotted: str) -> bool:
    if dotted in TORCH_MODULES_ALLOWED or dotted in ALLOWED_IMPORT_ROOTS:
        return True
    return isinstance(_library_object(dotted), types.ModuleType)


# --------------------------------------------------------------------------------------------
# Module facts: bindings, aliases, functions, kernels
# --------------------------------------------------------------------------------------------


def _chain(node: ast.AST) -> list[str] | None:
    """['a', 'b', 'c'] for the expression a.b.c; None if it is not a pure name chain."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return parts[::-1]


def _spelled(node: ast.AST, dotteds: set[str]) -> str:
    """How the source wrote a name, with what it resolves to when that differs."""
    written = ".".join(_chain(node) or [])
    meant = "/".join(sorted(d for d in dotteds if d != written))
    return f"{written} ({meant})" if meant else written


def _strip_call(node: ast.expr) -> ast.expr:
    return node.func if isinstance(node, ast.Call) else node


class _ModuleFacts:
    """Flow-insensitive facts about the module: what each name may stand for."""

    def __init__(self, tree: ast.Module) -> None:
        self.tree = tree
        self.imports: dict[str, set[str]] = {}  # name -> dotted names bound by import
        self.import_modules: set[str] = set()  # names bound by `import a.b [as c]`
        self.aliases: dict[str, list[ast.expr]] = {}  # name -> Name/Attribute right-hand sides
        self.alias_rhs_ids: set[int] = set()  # nodes that are such right-hand sides
        self.functions: dict[str, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda] = {}
        self.classes: dict[str, ast.ClassDef] = {}
        self.module_names: set[str] = set()  # every name bound at module level
        self.kernels: dict[str, int] = {}  # kernel name -> line
        self.kernel_nodes: set[int] = set()  # ids of @triton.jit FunctionDefs
        self._collect()
        self.non_tensor_names = self._collect_non_tensor_names()

    # -- collection -------------------------------------------------------------------------
    def _collect(self) -> None:
        for stmt in self.tree.body:
            if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
                self.functions[stmt.name] = stmt
                self.module_names.add(stmt.name)
            elif isinstance(stmt, ast.ClassDef):
                self.classes[stmt.name] = stmt
                self.module_names.add(stmt.name)
            elif isinstance(stmt, ast.Assign | ast.AnnAssign):
                targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                for t in targets:
                    for n in ast.walk(t):
                        if isinstance(n, ast.Name):
                            self.module_names.add(n.id)
                    if isinstance(t, ast.Name) and isinstance(stmt.value, ast.Lambda):
                        self.functions[t.id] = stmt.value
        # `m = torch` in a class body makes an attribute (C.m, self.m), not a name the alias
        # table can follow, so it is not an alias: `torch` there is a module used as a value.
        class_body = {
            id(stmt)
            for node in ast.walk(self.tree)
            if isinstance(node, ast.ClassDef)
            for stmt in node.body
        }
        for node in ast.walk(self.tree):
            if id(node) in class_body and isinstance(node, ast.Assign | ast.AnnAssign):
                continue
            if isinstance(node, ast.Import):
                for a in node.names:
                    if a.asname:
                        self._bind(a.asname, a.name, module=True)
                    else:
                        root = a.name.split(".")[0]
                        self._bind(root, root, module=True)
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                for a in node.names:
                    if a.name != "*":
                        self._bind(a.asname or a.name, f"{node.module}.{a.name}", module=False)
            elif isinstance(node, ast.Assign):
                self._alias_pairs(node.targets, node.value)
            elif isinstance(node, ast.AnnAssign | ast.NamedExpr) and node.value is not None:
                self._alias_pairs([node.target], node.value)
        for node in ast.walk(self.tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                if any(self._is_jit(d) for d in node.decorator_list):
                    self.kernels[node.name] = node.lineno
                    self.kernel_nodes.add(id(node))
        # kernel = triton.jit(fn) / triton.autotune(...)(triton.jit(fn)); plain aliases of a kernel
        # (k = kernel) are followed by kernel_alias instead
        changed = True
        while changed:
            changed = False
            for node in ast.walk(self.tree):
                if isinstance(node, ast.Assign) and self._makes_kernel(node.value):
                    for t in node.targets:
                        if isinstance(t, ast.Name) and t.id not in self.kernels:
                            self.kernels[t.id] = node.lineno
                            changed = True

    def _collect_non_tensor_names(self) -> set[str]:
        """Names bound only ever by `name = <call of a _NON_TENSOR_RESULTS API>`
        (e.g. `info = torch.finfo(x.dtype)`), never as a parameter or any other way."""
        bindings: dict[str, int] = {}
        non_tensor: dict[str, int] = {}
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
                bindings[node.id] = bindings.get(node.id, 0) + 1
            elif isinstance(node, ast.arg):
                bindings[node.arg] = bindings.get(node.arg, 0) + 1
            elif isinstance(node, ast.alias):
                name = node.asname or node.name.split(".")[0]
                bindings[name] = bindings.get(name, 0) + 1
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                bindings[node.name] = bindings.get(node.name, 0) + 1
            if (
                isinstance(node, ast.Assign)
                and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)
                and self.is_non_tensor_call(node.value)
            ):
                name = node.targets[0].id
                non_tensor[name] = non_tensor.get(name, 0) + 1
        return {n for n, count in non_tensor.items() if bindings.get(n) == count}

    def is_non_tensor_call(self, node: ast.AST) -> bool:
        return isinstance(node, ast.Call) and bool(self.resolve(node.func) & _NON_TENSOR_RESULTS)

    def _bind(self, name: str, dotted: str, *, module: bool) -> None:
        self.imports.setdefault(name, set()).add(dotted)
        if module:
            self.import_modules.add(name)
        if name not in self.module_names:
            self.module_names.add(name)

    def _alias_pairs(self, targets: list[ast.expr], value: ast.expr) -> None:
        for t in targets:
            if isinstance(t, ast.Name) and _chain(value) is not None:
                self.aliases.setdefault(t.id, []).append(value)
                self.alias_rhs_ids.add(id(value))
            elif isinstance(t, ast.Tuple | ast.List) and isinstance(value, ast.Tuple | ast.List):
                if len(t.elts) == len(value.elts):
                    self._alias_pairs_zip(t.elts, value.elts)

    def _alias_pairs_zip(self, targets: list[ast.expr], values: list[ast.expr]) -> None:
        for t, v in zip(targets, values, strict=True):
            self._alias_pairs([t], v)

    def _is_jit(self, decorator: ast.expr) -> bool:
        return bool(self.resolve(_strip_call(decorator)) & _JIT_DECORATORS)

    def _makes_kernel(self, value: ast.expr) -> bool:
        for n in ast.walk(value):
            if isinstance(n, ast.Call) and self.resolve(n.func) & _JIT_DECORATORS:
                return True
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Call):
            # triton.autotune(...)(kernel) / triton.heuristics(...)(kernel)
            wrapper = self.resolve(value.func.func)
            if any(w.startswith("triton.") for w in wrapper):
                return any(isinstance(a, ast.Name) and a.id in self.kernels for a in value.args)
        return False

    # -- resolution -------------------------------------------------------------------------
    def resolve_name(self, name: str, seen: frozenset[str] = frozenset()) -> set[str]:
        if name in seen:
            return set()
        out = set(self.imports.get(name, ()))
        for rhs in self.aliases.get(name, ()):
            out |= self.resolve(rhs, seen | {name})
        return out

    def resolve(self, node: ast.AST, seen: frozenset[str] = frozenset()) -> set[str]:
        """Dotted names an expression may stand for (empty when it is not rooted at an import)."""
        parts = _chain(node)
        if parts is None:
            return set()
        heads = self.resolve_name(parts[0], seen)
        return {".".join([h, *parts[1:]]) for h in heads}

    def binds_module(self, name: str) -> bool:
        if name in self.import_modules:
            return True
        return any(_is_module_name(d) for d in self.resolve_name(name))

    def kernel_names_in(self, node: ast.AST) -> set[str]:
        """Kernel names an expression refers to, directly or through simple aliases."""
        found: set[str] = set()
        for n in ast.walk(node):
            if isinstance(n, ast.Name):
                found |= self.kernel_alias(n.id, frozenset())
        return found

    def kernel_alias(self, name: str, seen: frozenset[str]) -> set[str]:
        if name in self.kernels:
            return {name}
        if name in seen:
            return set()
        out: set[str] = set()
        for rhs in self.aliases.get(name, ()):
            if isinstance(rhs, ast.Name):
                out |= self.kernel_alias(rhs.id, seen | {name})
        return out


# --------------------------------------------------------------------------------------------
# The forbidden-API walk
# --------------------------------------------------------------------------------------------


class _ForbiddenApiWalker(ast.NodeVisitor):
    def __init__(
        self, facts: _ModuleFacts, forbidden: tuple[str, ...], class_entry: bool = False
    ) -> None:
        self.facts = facts
        self.class_entry = class_entry  # the entry point is an nn.Module class (ModelNew)
        self.init_ids: set[int] = set()  # __init__ methods of classes
        self.init_depth = 0
        self.forbidden = tuple(dict.fromkeys((*GLOBAL_FORBIDDEN, *forbidden)))
        self.task_methods = frozenset(
            f.split(".")[2]
            for f in forbidden
            if f.startswith("torch.Tensor.") and f.count(".") == 2
        )
        self.violations: list[_Violation] = []
        self.jit_depth = 0
        self.call_funcs: set[int] = set()  # Name nodes in call position (getattr(...))
        self.module_values_ok: set[int] = set()  # hasattr(torch, "x"): a module as a value
        # Parameter names in scope: a parameter called `input` or `compile` is not the builtin.
        # Python decides scope statically, so a parameter can never name the builtin (unless a
        # nested function declares it global, which _enter removes again).
        self.scopes: list[frozenset[str]] = [frozenset()]

    # -- reporting --------------------------------------------------------------------------
    def _flag(self, node: ast.AST, api: str, why: str) -> None:
        line = getattr(node, "lineno", 0)
        col = getattr(node, "col_offset", 0) + 1
        self.violations.append(_Violation(line, col, api, why))

    # -- dotted names (rooted at an import) -------------------------------------------------
    def _why_forbidden_dotted(self, dotted: str) -> str | None:
        if self.class_entry and _allowed_in_class_entry(dotted, self.init_depth > 0):
            return None
        for f in self.forbidden:
            if dotted == f or dotted.startswith(f + "."):
                for why, names in _FORBIDDEN_GROUPS.items():
                    if f in names:
                        return f"{why} ({f})" if f != dotted else why
                return f"forbidden by the task ({f})"
        parts = dotted.split(".")
        if parts[0] not in ALLOWED_IMPORT_ROOTS:
            return f"module {parts[0]} is not importable by a candidate"
        for p in parts[1:]:
            if _is_dunder(p):
                if p not in _DUNDER_ATTRS_ALLOWED:
                    return f"dunder attribute {p} reaches interpreter internals"
            elif p.startswith("_"):
                return "private API"
            elif p in _DANGEROUS_MODULE_NAMES:
                return f"reaches module {p}, which a candidate may not use"
        if parts[0] == "torch":
            why = self._why_torch(dotted)
            if why:
                return why
        escaped = _escaped_module(dotted)
        if escaped:
            return f"reaches a module a candidate may not use: {escaped}"
        return None

    def _why_torch(self, dotted: str) -> str | None:
        if dotted in TORCH_MODULES_ALLOWED:
            return None
        if dotted.startswith("torch.Tensor."):
            return self._why_method(dotted.split(".")[2])
        for allowed in TORCH_ALLOWED:
            if dotted == allowed or dotted.startswith(allowed + "."):
                return None
        return (
            "not a PyTorch allocation/view/metadata API (TORCH_ALLOWED); "
            "PyTorch compute in a candidate is a fallback"
        )

    def _why_method(self, name: str) -> str | None:
        public, private = _tensor_compute_methods()
        if name in self.task_methods:
            return f"tensor method forbidden by the task (torch.Tensor.{name})"
        if name in public:
            return (
                f"Tensor.{name} is PyTorch compute; only allocation, view and metadata methods "
                "are allowed on tensors"
            )
        if name in private:
            return f"Tensor.{name} is a private PyTorch internal"
        return None

    def _check_dotted(self, node: ast.AST, dotteds: Iterable[str], written: str = "") -> None:
        for dotted in sorted(dotteds):
            why = self._why_forbidden_dotted(dotted)
            if why:
                shown = f"{written} ({dotted})" if written and written != dotted else dotted
                self._flag(node, shown, why)
                return

    # -- attributes on objects that are not modules -----------------------------------------
    def _check_attr_name(self, node: ast.AST, name: str, shown: str, tensor: bool = True) -> None:
        if name in _FRAME_ATTRS:
            self._flag(node, shown, "reaches interpreter frames or code objects")
            return
        if _is_dunder(name):
            if name not in _DUNDER_ATTRS_ALLOWED:
                self._flag(node, shown, f"dunder attribute {name} reaches interpreter internals")
            return
        if name in _DANGEROUS_MODULE_NAMES:
            self._flag(node, shown, f"reaches module {name}, which a candidate may not use")
            return
        if self.jit_depth or not tensor:
            return  # inside @triton.jit, x.sum(0) / x.to(...) are Triton tensor operations
        why = self._why_method(name)
        if why:
            self._flag(node, shown, why)

    # -- visitors ---------------------------------------------------------------------------
    def visit_Import(self, node: ast.Import) -> None:
        for a in node.names:
            root = a.name.split(".")[0]
            if root not in ALLOWED_IMPORT_ROOTS:
                self._flag(node, f"import {a.name}", _why_import(root))
                continue
            if (
                a.name.startswith("torch.")
                and a.name not in TORCH_MODULES_ALLOWED
                and not (self.class_entry and a.name in NN_HOLDERS)
            ):
                why = self._why_forbidden_dotted(a.name) or "not an importable torch module"
                self._flag(node, f"import {a.name}", why)
                continue
            self._check_dotted(node, [a.name])

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.level:
            self._flag(
                node,
                "from " + "." * node.level + (node.module or "") + " import ...",
                "relative imports are not allowed; a candidate is a single file",
            )
            return
        module = node.module or ""
        root = module.split(".")[0]
        if root not in ALLOWED_IMPORT_ROOTS:
            self._flag(node, f"from {module} import ...", _why_import(root))
            return
        for a in node.names:
            if a.name == "*":
                self._flag(node, f"from {module} import *", "star imports hide what is used")
                continue
            dotted = f"{module}.{a.name}"
            why = self._why_forbidden_dotted(dotted)
            if why:
                self._flag(node, dotted, why)

    def _enter(self, args: ast.arguments, body: list[ast.stmt] | ast.expr) -> None:
        params = {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)}
        params |= {a.arg for a in (args.vararg, args.kwarg) if a is not None}
        declared_global: set[str] = set()
        for stmt in body if isinstance(body, list) else [body]:
            for n in ast.walk(stmt):
                if isinstance(n, ast.Global | ast.Nonlocal):
                    declared_global.update(n.names)
        self.scopes.append(frozenset((self.scopes[-1] | params) - declared_global))

    def _shadowed(self, name: str) -> bool:
        return name in self.scopes[-1]

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        if node.name in _FORBIDDEN_METHOD_DEFS:
            self._flag(node, f"def {node.name}", "hooks PyTorch's dispatcher")
        for d in node.decorator_list:
            self.visit(d)
        self.visit(node.args)  # defaults and annotations belong to the enclosing scope
        if node.returns:
            self.visit(node.returns)
        is_kernel = id(node) in self.facts.kernel_nodes
        in_init = id(node) in self.init_ids
        self.jit_depth += is_kernel
        self.init_depth += in_init
        self._enter(node.args, node.body)
        for stmt in node.body:
            self.visit(stmt)
        self.scopes.pop()
        self.jit_depth -= is_kernel
        self.init_depth -= in_init

    def visit_Lambda(self, node: ast.Lambda) -> None:
        self.visit(node.args)
        self._enter(node.args, node.body)
        self.visit(node.body)
        self.scopes.pop()

    visit_AsyncFunctionDef = visit_FunctionDef  # noqa: N815

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self.init_ids |= {
            id(s) for s in node.body if isinstance(s, ast.FunctionDef) and s.name == "__init__"
        }
        for base in node.bases:
            dotteds = self.facts.resolve(base)
            if self.class_entry and dotteds == {"torch.nn.Module"}:
                continue  # a class entry point is an nn.Module
            if any(d == "torch" or d.startswith("torch.") for d in dotteds):
                self._flag(
                    base,
                    f"class {node.name}({'/'.join(sorted(dotteds))})",
                    "subclassing a torch type can hook the dispatcher or fake results",
                )
        self.generic_visit(node)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        dotteds = self.facts.resolve(node)
        if dotteds:
            if isinstance(node.ctx, ast.Store | ast.Del):
                self._flag(
                    node,
                    _spelled(node, dotteds),
                    "monkeypatching: assigning to or deleting an attribute of an imported "
                    "module or object changes the judge's view",
                )
                return
            self._check_dotted(node, dotteds, ".".join(_chain(node) or []))
            return
        base = node.value
        if self.facts.is_non_tensor_call(base) or (
            isinstance(base, ast.Name) and base.id in self.facts.non_tensor_names
        ):
            self._check_attr_name(node, node.attr, f".{node.attr}", tensor=False)
        else:
            self._check_attr_name(node, node.attr, f".{node.attr}")
        self.visit(base)

    def visit_Name(self, node: ast.Name) -> None:
        name = node.id
        if not isinstance(node.ctx, ast.Load):
            return
        local = self._shadowed(name)
        if name in _FORBIDDEN_BUILTINS and not local:
            self._flag(node, name, _FORBIDDEN_BUILTINS[name])
            return
        if name in _DYNAMIC_ATTR_BUILTINS and not local and id(node) not in self.call_funcs:
            self._flag(node, name, f"{name} used as a value hides which attribute is reached")
            return
        if _is_dunder(name) and name not in _DUNDER_NAMES_ALLOWED:
            self._flag(node, name, "dunder name reaches interpreter internals")
            return
        dotteds = self.facts.resolve_name(name)
        if not dotteds:
            return
        value_ok = id(node) in self.facts.alias_rhs_ids or id(node) in self.module_values_ok
        if not value_ok and self.facts.binds_module(name):
            self._flag(
                node,
                name,
                f"module {'/'.join(sorted(dotteds))} used as a value; use its attributes directly",
            )
            return
        self._check_dotted(node, dotteds, name)

    def visit_Constant(self, node: ast.Constant) -> None:
        if isinstance(node.value, str) and node.value in _FORBIDDEN_METHOD_DEFS:
            self._flag(node, repr(node.value), "names a PyTorch dispatcher hook")

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        if isinstance(func, ast.Name) and func.id == "type" and len(node.args) == 3:
            self._flag(
                node,
                "type(name, bases, namespace)",
                "creates a class dynamically (around the subclass and dispatch-hook checks)",
            )
        if isinstance(func, ast.Name) and not self._shadowed(func.id):
            if func.id in _DYNAMIC_ATTR_BUILTINS:
                self.call_funcs.add(id(func))
                self._check_dynamic_attr(node, func.id)
            elif func.id == "hasattr" and node.args and isinstance(node.args[0], ast.Name):
                self.module_values_ok.add(id(node.args[0]))  # a bool cannot leak the attribute
        self.generic_visit(node)

    def _check_dynamic_attr(self, node: ast.Call, fn: str) -> None:
        if len(node.args) < 2 or not (
            isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str)
        ):
            self._flag(node, fn, f"{fn} with a computed attribute name")
            return
        target, attr = node.args[0], node.args[1].value
        dotteds = self.facts.resolve(target)
        if dotteds:
            if fn == "getattr":
                self._flag(
                    node,
                    f"getattr({'/'.join(sorted(dotteds))}, {attr!r})",
                    "getattr on a module; write the attribute directly",
                )
            else:
                self._flag(
                    node,
                    f"{fn}({'/'.join(sorted(dotteds))}, {attr!r}, ...)",
                    "monkeypatching an imported module or object",
                )
            return
        self._check_attr_name(node, attr, f"{fn}(..., {attr!r})")

    def visit_BinOp(self, node: ast.BinOp) -> None:
        if isinstance(node.op, ast.MatMult) and not self.jit_depth:
            self._flag(
                node,
                "@",
                "the @ operator is a PyTorch matmul outside @triton.jit "
                "(inside a kernel use tl.dot)",
            )
        self.generic_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        if isinstance(node.op, ast.MatMult) and not self.jit_depth:
            self._flag(node, "@=", "the @ operator is a PyTorch matmul outside @triton.jit")
        self.generic_visit(node)


def _why_import(root: str) -> str:
    reasons = {
        "numpy": "NumPy compute would be a CPU fallback",
        "os": "leaves the sandbox (processes, files, exit)",
        "sys": "reaches the interpreter (exit, frames, sys.modules)",
        "subprocess": "starts processes",
        "signal": "can defeat the judge's timeout",
        "ctypes": "calls native code directly (and can crash the judge)",
        "threading": "work on another thread can outlive the call and hide from the timer",
        "multiprocessing": "work in another process hides from the judge",
        "inspect": "snoops on the judge's frames",
        "gc": "snoops on every live object (the judge's reference outputs included)",
        "importlib": "imports by computed name",
        "builtins": "reaches eval/exec/__import__",
        "operator": "hides operators (matmul) behind functions",
        "time": "timing is the judge's job; monkeypatching clocks fakes it",
    }
    allowed = ", ".join(sorted(ALLOWED_IMPORT_ROOTS))
    why = reasons.get(root, "not on the import allow-list")
    return f"{why}; a candidate may import only {allowed}"


# --------------------------------------------------------------------------------------------
# Entry point, signature, launches
# --------------------------------------------------------------------------------------------


def _check_signature(fn: ast.FunctionDef | ast.AsyncFunctionDef, params: list[str]) -> str | None:
    if isinstance(fn, ast.AsyncFunctionDef):
        return f"`{fn.name}` is `async def`; it must be a plain function"
    args = fn.args
    positional = [a.arg for a in (*args.posonlyargs, *args.args)]
    n_defaults = len(args.defaults)
    first_default = len(positional) - n_defaults
    want = ", ".join(params)
    got = ", ".join(positional)
    if positional[: len(params)] != list(params):
        return (
            f"`{fn.name}` must take the positional parameters ({want}) in this order, got ({got})"
        )
    extra = positional[len(params) :]
    for i, name in enumerate(extra, start=len(params)):
        if i < first_default:
            return (
                f"extra parameter `{name}` of `{fn.name}` has no default; parameters beyond "
                f"({want}) are tunables and need defaults"
            )
    for kw, default in zip(args.kwonlyargs, args.kw_defaults, strict=True):
        if default is None:
            return f"keyword-only parameter `{kw.arg}` of `{fn.name}` needs a default"
    return None


def _find_method(
    facts: _ModuleFacts, cls: ast.ClassDef, name: str, seen: frozenset[str] = frozenset()
) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """`cls.name`, looked up in the class and then in its bases defined in the same file."""
    for stmt in reversed(cls.body):
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef) and stmt.name == name:
            return stmt
    for base in cls.bases:
        if isinstance(base, ast.Name) and base.id in facts.classes and base.id not in seen:
            found = _find_method(facts, facts.classes[base.id], name, seen | {cls.name})
            if found is not None:
                return found
    return None


def _check_forward(fn: ast.FunctionDef | ast.AsyncFunctionDef, params: list[str]) -> str | None:
    """A class entry's forward(self, ...) takes the reference's inputs positionally (counted, not
    named: the judge calls it positionally); extra parameters need defaults."""
    if isinstance(fn, ast.AsyncFunctionDef):
        return "forward is `async def`; it must be a plain method"
    args = fn.args
    positional = [a.arg for a in (*args.posonlyargs, *args.args)][1:]  # after self
    want = f"{len(params)} input(s), like Model.forward({', '.join(params)})"
    if len(positional) < len(params) and args.vararg is None:
        return f"forward must take {want}; it takes ({', '.join(positional)})"
    required = len(positional) - len(args.defaults)
    if required > len(params):
        extra = ", ".join(positional[len(params) : required])
        return f"forward must take {want}; extra parameter(s) {extra} need defaults"
    for kw, default in zip(args.kwonlyargs, args.kw_defaults, strict=True):
        if default is None:
            return f"forward: keyword-only parameter `{kw.arg}` needs a default"
    return None


def _reachable_launches(facts: _ModuleFacts, entry: ast.AST) -> list[str]:
    """Kernels launched from `entry`, following calls and references to module-level functions
    and classes, transitively."""
    launched: set[str] = set()
    referenced_kernels: set[str] = set()
    generic_launch = False
    seen: set[int] = set()
    todo: list[ast.AST] = [entry]
    while todo:
        fn = todo.pop()
        if id(fn) in seen:
            continue
        seen.add(id(fn))
        body = fn.body if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef) else [fn]
        for stmt in body:
            for node in ast.walk(stmt):
                if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
                    names = facts.kernel_names_in(node.value)
                    launched |= names
                    if not names and isinstance(node.value, ast.Name) and _is_call_func(stmt, node):
                        generic_launch = True  # p[grid](...) with p a parameter
                elif (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "run"
                ):
                    launched |= facts.kernel_names_in(node.func.value)
                elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                    referenced_kernels |= facts.kernel_alias(node.id, frozenset())
                    for target in _local_targets(facts, node.id):
                        todo.append(target)
    if generic_launch:
        launched |= referenced_kernels
    return sorted(launched)


def _is_call_func(root: ast.AST, sub: ast.Subscript) -> bool:
    return any(isinstance(n, ast.Call) and n.func is sub for n in ast.walk(root))


def _local_targets(facts: _ModuleFacts, name: str) -> Iterator[ast.AST]:
    names = {name} | {r.id for r in facts.aliases.get(name, ()) if isinstance(r, ast.Name)}
    for n in names:
        if n in facts.functions:
            yield facts.functions[n]
        if n in facts.classes:
            for item in facts.classes[n].body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                    yield item


# --------------------------------------------------------------------------------------------
# Public API
# --------------------------------------------------------------------------------------------

_MAX_LISTED = 8


def check_source(
    source: str,
    *,
    entry_point: str,
    params: list[str],
    forbidden: tuple[str, ...] = (),
    filename: str = "<candidate>",
    entry_kind: str = "function",
) -> StaticResult:
    """Statically check one candidate source against a task's entry point, parameters and
    forbidden APIs (added to GLOBAL_FORBIDDEN). Never executes the candidate.

    `entry_kind` "class": the entry point is an nn.Module class whose forward takes `params`."""
    try:
        tree = ast.parse(source, filename=filename)
    except SyntaxError as exc:
        col = f", column {exc.offset}" if exc.offset else ""
        return StaticResult(
            False,
            ErrorClass.SYNTAX_ERROR,
            f"{filename}: syntax error at line {exc.lineno}{col}: {exc.msg}",
            exc.lineno,
        )
    except (ValueError, RecursionError, MemoryError) as exc:
        return StaticResult(
            False,
            ErrorClass.SYNTAX_ERROR,
            f"{filename}: cannot be parsed: {type(exc).__name__}: {exc}",
        )
    try:
        return _check_tree(
            tree, entry_point, list(params), tuple(forbidden), filename, entry_kind == "class"
        )
    except RecursionError:
        return StaticResult(
            False,
            ErrorClass.SYNTAX_ERROR,
            f"{filename}: nested too deeply to be analysed; simplify the source",
        )


def check_task_candidate(source: str, task: Task, filename: str = "<candidate>") -> StaticResult:
    """check_source with the entry point, parameters and forbidden list of a loaded Task."""
    params = [
        name
        for name, p in task.signature().parameters.items()
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]
    return check_source(
        source,
        entry_point=task.entry_point,
        params=params,
        forbidden=tuple(task.forbidden),
        filename=filename,
        entry_kind=task.entry_kind,
    )


def _check_tree(
    tree: ast.Module,
    entry_point: str,
    params: list[str],
    forbidden: tuple[str, ...],
    filename: str,
    class_entry: bool = False,
) -> StaticResult:
    facts = _ModuleFacts(tree)
    kernels = sorted(facts.kernels, key=lambda k: (facts.kernels[k], k))

    walker = _ForbiddenApiWalker(facts, forbidden, class_entry)
    walker.visit(tree)
    violations = sorted(set(walker.violations), key=lambda v: (v.line, v.col, v.api))

    kind = ast.ClassDef if class_entry else (ast.FunctionDef, ast.AsyncFunctionDef)
    entry = None
    for stmt in tree.body:
        if isinstance(stmt, kind) and stmt.name == entry_point:
            entry = stmt  # the last definition wins, as in Python
    # a class entry launches from forward or any method it holds
    launched = _reachable_launches(facts, entry) if entry is not None else []

    def result(error: ErrorClass, message: str, line: int | None) -> StaticResult:
        ok = error == ErrorClass.NONE
        return StaticResult(ok, error, message, line, kernels, launched)

    if violations:
        first = violations[0]
        lines = [f"{filename}: forbidden API at {first.render()}"]
        lines += [f"  also {v.render()}" for v in violations[1:_MAX_LISTED]]
        if len(violations) > _MAX_LISTED:
            lines.append(f"  ... and {len(violations) - _MAX_LISTED} more")
        lines.append(
            "A candidate computes with @triton.jit kernels; PyTorch may only allocate, "
            "view and describe tensors."
        )
        return result(ErrorClass.FORBIDDEN_API, "\n".join(lines), first.line)

    if class_entry:
        return _check_class_entry(facts, entry, entry_point, params, filename, result)

    if entry is None:
        defined = sorted(n for n in facts.functions if n not in facts.kernels)
        hint = f" It defines: {', '.join(defined)}." if defined else ""
        assigned = entry_point in facts.module_names
        how = f" `{entry_point}` is assigned, not defined with def." if assigned else ""
        return result(
            ErrorClass.MISSING_ENTRY_POINT,
            f"{filename}: no top-level `def {entry_point}({', '.join(params)})`.{how}{hint}",
            None,
        )

    problem = _check_signature(entry, params)
    if problem:
        return result(
            ErrorClass.SIGNATURE_MISMATCH,
            f"{filename}: line {entry.lineno}: {problem}",
            entry.lineno,
        )

    if not kernels:
        return result(
            ErrorClass.NO_TRITON_KERNEL,
            f"{filename}: defines no @triton.jit kernel; the computation must be a "
            "Triton kernel launched from the entry point",
            entry.lineno,
        )
    if not launched:
        return result(
            ErrorClass.NO_TRITON_KERNEL,
            f"{filename}: line {entry.lineno}: `{entry_point}` never launches a "
            f"kernel (defined: {', '.join(kernels)}); launch one with "
            "kernel[grid](...) from the entry point or a helper it calls",
            entry.lineno,
        )

    return result(
        ErrorClass.NONE,
        f"static check passed: kernels {', '.join(kernels)}; launched {', '.join(launched)}",
        None,
    )


def _check_class_entry(
    facts: _ModuleFacts,
    entry: ast.AST | None,
    entry_point: str,
    params: list[str],
    filename: str,
    result: Callable[[ErrorClass, str, int | None], StaticResult],
) -> StaticResult:
    """Steps 3 and 4 for a class entry point (KernelBench's ModelNew)."""
    if not isinstance(entry, ast.ClassDef):
        defined = sorted(facts.classes)
        hint = f" It defines the classes: {', '.join(defined)}." if defined else ""
        return result(
            ErrorClass.MISSING_ENTRY_POINT,
            f"{filename}: no top-level `class {entry_point}(nn.Module)` with a "
            f"`forward(self, {', '.join(params)})`.{hint}",
            None,
        )
    forward = _find_method(facts, entry, "forward")
    if forward is None:
        return result(
            ErrorClass.MISSING_ENTRY_POINT,
            f"{filename}: line {entry.lineno}: class `{entry_point}` has no `forward` method",
            entry.lineno,
        )
    problem = _check_forward(forward, params)
    if problem:
        return result(
            ErrorClass.SIGNATURE_MISMATCH,
            f"{filename}: line {forward.lineno}: {entry_point}.{problem}",
            forward.lineno,
        )
    kernels = sorted(facts.kernels, key=lambda k: (facts.kernels[k], k))
    launched = _reachable_launches(facts, entry)
    if not kernels:
        return result(
            ErrorClass.NO_TRITON_KERNEL,
            f"{filename}: defines no @triton.jit kernel; {entry_point}.forward must compute "
            "with Triton kernels",
            entry.lineno,
        )
    if not launched:
        return result(
            ErrorClass.NO_TRITON_KERNEL,
            f"{filename}: line {entry.lineno}: `{entry_point}` never launches a kernel "
            f"(defined: {', '.join(kernels)}); launch one with kernel[grid](...) from forward "
            "or a helper it calls",
            entry.lineno,
        )
    return result(
        ErrorClass.NONE,
        f"static check passed: kernels {', '.join(kernels)}; launched {', '.join(launched)}",
        None,
    )
