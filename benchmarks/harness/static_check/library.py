"""What a dotted name denotes in our own trusted libraries (torch, triton, the allowed
standard modules), looked up by importing them -- never the candidate: the tensor methods that
compute, whether a name is a module, whether it escapes to a module outside the allowed roots, and
what a class entry point may use."""

from __future__ import annotations

import functools
import importlib
import types
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


def escaped_module(dotted: str) -> str | None:
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
                and module.split(".")[0].lstrip("_") in DANGEROUS_MODULE_NAMES
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
