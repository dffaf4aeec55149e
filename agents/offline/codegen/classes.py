"""Argument classes: which calls one traced kernel serves, and the launcher's test for them.

A call's class is, per parameter, what the trace depends on: a tensor's rank and dtype (a 2-D
and a 1-D call of one function trace into different graphs), and the value of every other
argument (a flag, a dim, None) except floats, which are kernel arguments (`("float",)`) unless
the trace turns out to depend on them (then they are part of the class: `("float", 0.5)`).

Calls of one class share a kernel; the generated entry point tests the classes in order and calls
the first that matches, and raises for a call of no traced class (it has no kernel).
"""

from __future__ import annotations

from typing import Any

import torch

from agents.offline.codegen.ops import NotSupported

Key = tuple[tuple[Any, ...], ...]


def value_key(name: str, value: Any) -> tuple[Any, ...]:
    """What a traced kernel assumes about argument `name`."""
    if isinstance(value, torch.Tensor):
        return ("tensor", value.dim(), value.dtype)
    if value is None:
        return ("none",)
    if isinstance(value, bool):
        return ("bool", value)
    if isinstance(value, int):
        return ("int", value)
    if isinstance(value, float):
        return ("float",)
    if isinstance(value, str):
        return ("str", value)
    if isinstance(value, torch.dtype):
        return ("dtype", value)
    if isinstance(value, tuple | list) and all(
        isinstance(v, int) and not isinstance(v, bool) for v in value
    ):
        return ("ints", tuple(value))
    raise NotSupported(
        f"argument {name} is a {type(value).__name__}; the generator takes tensors, numbers, "
        "flags, strings, dtypes, None and tuples of ints"
    )


def is_tensor(key: tuple[Any, ...]) -> bool:
    return key[0] == "tensor"


def runtime_floats(key: Key) -> list[int]:
    """The positions of the float arguments a kernel of this class takes at run time."""
    return [i for i, k in enumerate(key) if k == ("float",)]


def with_values(key: Key, values: list[Any]) -> Key:
    """The class with its float arguments fixed to the call's values."""
    return tuple(("float", values[i]) if k == ("float",) else k for i, k in enumerate(key))


def condition(name: str, key: tuple[Any, ...], guard_tensor: bool) -> str:
    """Python text that is True for an argument `name` of this class."""
    kind = key[0]
    if kind == "tensor":
        test = f"{name}.dim() == {key[1]} and {name}.dtype == {key[2]}"
        return f"isinstance({name}, torch.Tensor) and {test}" if guard_tensor else test
    if kind == "none":
        return f"{name} is None"
    if kind == "bool":
        return f"{name} is {key[1]}"
    if kind == "int":
        return f"type({name}) is int and {name} == {key[1]}"
    if kind == "float":
        test = f"isinstance({name}, float)"
        return test if len(key) == 1 else f"{test} and {name} == {key[1]!r}"
    if kind == "str":
        return f"{name} == {key[1]!r}"
    if kind == "dtype":
        return f"{name} == {key[1]}"
    return f"isinstance({name}, (tuple, list)) and tuple({name}) == {key[1]!r}"


def class_test(names: list[str], key: Key, keys: list[Key]) -> str:
    """The test that a call (parameters `names`) is of class `key`, among the classes `keys`."""
    parts = []
    for i, (name, k) in enumerate(zip(names, key, strict=True)):
        guard = any(not is_tensor(other[i]) for other in keys)
        parts.append(condition(name, k, guard))
    return " and ".join(parts) if parts else "True"


def describe(names: list[str], key: Key) -> str:
    """A class in words, for docstrings: 'x: 2-D float32, dim = -1'."""
    parts = []
    for name, k in zip(names, key, strict=True):
        if k[0] == "tensor":
            parts.append(f"{name}: {k[1]}-D {str(k[2]).removeprefix('torch.')}")
        elif k == ("float",):
            parts.append(f"{name}: a float")
        elif k[0] == "none":
            parts.append(f"{name} = None")
        else:
            parts.append(f"{name} = {k[1]!r}")
    return ", ".join(parts)
