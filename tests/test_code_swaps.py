"""A protected function kept in place with what it runs swapped is tampering
(`benchmarks.harness.probes.fingerprint`): tests/hostile/calls_code_swap_inputs_numpy.py swapped
the `__code__` of the task module's make_inputs and passed past the static check before. The
hostile files run the whole worker; here each way of swapping is checked on its own."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from benchmarks.harness.probes import fingerprint, same_print


def _made() -> Callable[..., Any]:
    kept = [1]

    def f(a: int, b: int = 2, *, c: int = 3) -> list[int]:
        return kept

    return f


def _other() -> Callable[..., Any]:
    other = [2]

    def g(a: int, b: int = 2, *, c: int = 3) -> list[int]:
        return other * a

    return g


def _code(f: Any) -> None:
    f.__code__ = _other().__code__


def _defaults(f: Any) -> None:
    f.__defaults__ = (5,)


def _kwdefaults_item(f: Any) -> None:
    f.__kwdefaults__["c"] = 4


def _kwdefaults(f: Any) -> None:
    f.__kwdefaults__ = {"c": 3}


def _cell(f: Any) -> None:
    f.__closure__[0].cell_contents = [9]


@pytest.mark.parametrize("swap", [_code, _defaults, _kwdefaults_item, _kwdefaults, _cell])
def test_a_function_with_what_it_runs_swapped_no_longer_matches(swap: Callable) -> None:
    f = _made()
    held = fingerprint(f)
    assert same_print(f, held)
    swap(f)
    assert not same_print(f, held)


def test_a_function_left_alone_matches_after_it_ran() -> None:
    f = _made()
    held = fingerprint(f)
    f(1)
    f(2, 3, c=4)
    assert same_print(f, held)
