"""What a dotted name denotes in our own trusted libraries (torch, triton, the allowed
standard modules), looked up by importing them -- never the candidate: the tensor methods that
compute, whether a name is a module, whether it escapes to a module outside the allowed roots, and
what a class entry point may use."""

from __future__ import annotations

import functools
import importlib
import inspect
import types
from dataclasses import dataclass
from typing import Any

from benchmarks.harness.static_check.rules import (
    ALLOWED_IMPORT_ROOTS,
    CONTAINER_METHOD_NAMES,
    DANGEROUS_MODULE_NAMES,
    INIT_ONLY_PREFIXES,
    INIT_ONLY_RANDOM,
    NN_HOLDERS,
    TENSOR_METHODS_ALLOWED,
    TORCH_MODULES_ALLOWED,
)


@functools.cache
def tensor_compute_methods() -> tuple[frozenset[str], frozenset[str]]:
    """(public, private) callable names of torch.Tensor that compute. Derived from the installed
    torch so a new compute method is refused without editing the rules."""
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
        elif name not in TENSOR_METHODS_ALLOWED and name not in CONTAINER_METHOD_NAMES:
            public.add(name)
    return frozenset(public), frozenset(private)


_UNRESOLVED = object()

# Values of these builtin types carry no reference to anything else: a re-export of one is data.
_PLAIN_DATA = (int, float, complex, str, bytes, bool, type(None))


def _static_attr(obj: Any, name: str) -> Any:
    """`obj.name` as stored, looked up without running any code of the object (no property,
    descriptor or __getattr__ runs); _UNRESOLVED where the value exists only at run time."""
    try:
        value = inspect.getattr_static(obj, name)
    except Exception:  # noqa: BLE001 - anything odd: the value is not known statically
        return _UNRESOLVED
    if isinstance(value, staticmethod | classmethod):
        return value.__func__
    if isinstance(value, property | types.GetSetDescriptorType | types.MemberDescriptorType):
        return _UNRESOLVED  # computed on access
    return value


@functools.cache
def _library_object(dotted: str) -> Any:
    """The object a dotted name denotes in one of our trusted libraries. Modules are walked with
    getattr (importing submodules where needed); other objects only through what they store
    (`_static_attr`: no property runs and no device is initialised). Returns _UNRESOLVED where
    the name cannot be followed."""
    parts = dotted.split(".")
    if parts[0] not in ALLOWED_IMPORT_ROOTS or parts[0] == "__future__":
        return _UNRESOLVED
    try:
        obj: Any = importlib.import_module(parts[0])
    except ImportError:
        return _UNRESOLVED
    for i, part in enumerate(parts[1:], start=1):
        if part.startswith("_"):
            return _UNRESOLVED
        if not isinstance(obj, types.ModuleType):
            obj = _static_attr(obj, part)
            if obj is _UNRESOLVED:
                return _UNRESOLVED
            continue
        if hasattr(obj, part):
            obj = getattr(obj, part)
            continue
        try:
            obj = importlib.import_module(".".join(parts[: i + 1]))
        except Exception:  # a library submodule that does not import here: nothing to learn
            return _UNRESOLVED
    return obj


def _home(obj: Any) -> str | None:
    """The module an object comes from: a class's or function's own __module__ (a method
    descriptor's: its class's), else its type's."""
    module = getattr(obj, "__module__", None) if isinstance(obj, type) or callable(obj) else None
    owner = getattr(obj, "__objclass__", None)  # a method descriptor: its class's module
    if not isinstance(module, str) and isinstance(owner, type):
        module = owner.__module__
    if not isinstance(module, str):
        module = getattr(type(obj), "__module__", None)
    return module if isinstance(module, str) else None


def _home_problem(obj: Any) -> str | None:
    """Why an object reached through our libraries is not one a candidate may hold: it comes
    from a module outside the allowed roots (pathlib.Path, os.environ, tempfile.mkdtemp,
    subprocess.run re-exported by a torch or Triton module)."""
    if isinstance(obj, _PLAIN_DATA):
        return None
    home = _home(obj)
    if home is None:
        return "an object of unknown origin"
    # a private module of an allowed library is fine (torch.Generator lives in torch._C,
    # triton.set_allocator in triton.runtime._allocation): names are refused by how they are
    # written, and what the library keeps there is the library's own
    if home.split(".")[0].lstrip("_") not in ALLOWED_IMPORT_ROOTS - {"__future__"}:
        return f"an object of module {home}"
    return None


@dataclass(frozen=True)
class LibraryName:
    """What a dotted name written by a candidate is in our libraries.

    `canonical`: the name with its deepest module prefix replaced by that module's real name,
    where they differ (triton.testing.runtime.build.Path is triton.runtime.build.Path,
    triton.testing.torch.exp is torch.exp), so that the rules apply to what it really is.
    `object_name`: for a class or function reached under another library than its own (a torch
    function re-exported by a Triton module), its home name (module and qualified name).
    `problem`: set when the name lands outside what a candidate may hold (a module or object of
    another module, e.g. typing.sys, triton.knobs.pathlib, a pathlib or os object)."""

    canonical: str | None = None
    object_name: str | None = None
    problem: str | None = None


@functools.cache
def library_name(dotted: str) -> LibraryName:
    """Resolve `dotted` in our libraries (see LibraryName); a name that cannot be followed
    yields an empty LibraryName (the walker's rules on the written name still apply)."""
    parts = dotted.split(".")
    canonical: str | None = None
    object_name: str | None = None
    for i in range(2, len(parts) + 1):
        prefix = ".".join(parts[:i])
        obj = _library_object(prefix)
        if obj is _UNRESOLVED:
            break
        if isinstance(obj, types.ModuleType):
            if obj.__name__.split(".")[0] not in ALLOWED_IMPORT_ROOTS:
                return LibraryName(canonical, object_name, f"{prefix} (module {obj.__name__})")
            real = ".".join([obj.__name__, *parts[i:]])
            canonical = real if real != dotted else canonical
            continue
        if isinstance(obj, _PLAIN_DATA):
            continue
        module = _home(obj)
        if module and module.split(".")[0].lstrip("_") in DANGEROUS_MODULE_NAMES:
            return LibraryName(canonical, object_name, f"{prefix} (from module {module})")
        problem = _home_problem(obj)
        if problem:
            return LibraryName(canonical, object_name, f"{prefix} ({problem})")
        qualname = getattr(obj, "__qualname__", None)
        if object_name is None and module and isinstance(qualname, str):
            if (isinstance(obj, type) or callable(obj)) and module.split(".")[0] != parts[0]:
                object_name = f"{module}.{qualname}"
    return LibraryName(canonical, object_name)


def escaped_module(dotted: str) -> str | None:
    """If `dotted` lands on a module or object outside what a candidate may hold (typing.sys,
    dataclasses.builtins, triton.testing.subprocess, a pathlib object re-exported by Triton),
    the prefix that does, and what it is."""
    return library_name(dotted).problem


def _is_nn_layer(dotted: str) -> bool:
    """torch.nn.Linear and the like: a class of torch.nn that is an nn.Module."""
    if not dotted.startswith("torch.nn."):
        return False
    import torch

    obj = _library_object(dotted)
    return isinstance(obj, type) and issubclass(obj, torch.nn.Module)


def allowed_in_class_entry(dotted: str, in_init: bool) -> bool:
    """Whether a class entry point may use `dotted` (see "Class entry points" in the package
    docstring)."""
    if dotted in NN_HOLDERS:
        return True
    if not in_init:
        return False
    if dotted in INIT_ONLY_RANDOM or _is_nn_layer(dotted):
        return True
    return any(dotted == p or dotted.startswith(p + ".") for p in INIT_ONLY_PREFIXES)


def is_module_name(dotted: str) -> bool:
    if dotted in TORCH_MODULES_ALLOWED or dotted in ALLOWED_IMPORT_ROOTS:
        return True
    return isinstance(_library_object(dotted), types.ModuleType)
