"""Keeping configured secrets out of what kernforge writes and sends.

A secret is the value of an environment variable whose name ends in _KEY, _TOKEN, _SECRET or
_PASSWORD (OPENAI_API_KEY, HF_TOKEN, ...), at least MIN_LENGTH characters long; callers may add
values of their own (the agent adds its model provider's configured key). `redact` replaces every
occurrence of a secret in a text with ``[redacted NAME]``, and also any run of FRAGMENT_LENGTH or
more of its consecutive characters (what is left of a key that a message was cut through).

The judge redacts its verdicts (`redact_verdict`); the agent redacts every file it writes into a
run directory with the same rule. Processes that need no secrets get an environment without them
(`without_secrets`): the trusted baseline workers here, which run unisolated (candidates' workers
get an allow-listed environment from `benchmarks.harness.sandbox`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any, TypeVar

SECRET_NAME_SUFFIXES = ("_KEY", "_TOKEN", "_SECRET", "_PASSWORD")
MIN_LENGTH = 8  # shorter values are too likely to occur in ordinary text
FRAGMENT_LENGTH = 12  # a cut-off piece of a secret at least this long is redacted too

V = TypeVar("V")


def is_secret_name(name: str) -> bool:
    """Whether an environment variable of this name holds a secret."""
    return name.upper().endswith(SECRET_NAME_SUFFIXES)


def secret_values(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """Name -> value of every secret in `env` (default: this process's environment)."""
    env = os.environ if env is None else env
    return {k: v for k, v in env.items() if is_secret_name(k) and len(v) >= MIN_LENGTH}


def without_secrets(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """A copy of `env` (default: this process's environment) without its secret variables."""
    env = os.environ if env is None else env
    return {k: v for k, v in env.items() if not is_secret_name(k)}


def _spans(text: str, secret: str) -> list[tuple[int, int]]:
    """(start, end) of every occurrence in `text` of `secret`, or of a run of at least
    FRAGMENT_LENGTH of its consecutive characters (only for secrets longer than that)."""
    spans: list[tuple[int, int]] = []
    start = text.find(secret)
    while start >= 0:
        spans.append((start, start + len(secret)))
        start = text.find(secret, start + len(secret))
    if len(secret) <= FRAGMENT_LENGTH:
        return spans
    for i in range(len(secret) - FRAGMENT_LENGTH + 1):
        seed = secret[i : i + FRAGMENT_LENGTH]
        at = text.find(seed)
        while at >= 0:
            lo, hi, j = at, at + FRAGMENT_LENGTH, i  # grow the match both ways along the secret
            while lo > 0 and j > 0 and text[lo - 1] == secret[j - 1]:
                lo, j = lo - 1, j - 1
            k = i + FRAGMENT_LENGTH
            while hi < len(text) and k < len(secret) and text[hi] == secret[k]:
                hi, k = hi + 1, k + 1
            spans.append((lo, hi))
            at = text.find(seed, at + 1)
    return spans


def redact(text: str, secrets: Mapping[str, str] | None = None) -> str:
    """`text` with every secret (default: `secret_values()`) and every long enough piece of one
    replaced by ``[redacted NAME]``."""
    secrets = secret_values() if secrets is None else secrets
    marks: list[tuple[int, int, str]] = []
    for name, value in secrets.items():
        if len(value) >= MIN_LENGTH:
            marks += [(lo, hi, name) for lo, hi in _spans(text, value)]
    if not marks:
        return text
    marks.sort()
    merged: list[list[Any]] = []
    for lo, hi, name in marks:
        if merged and lo <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], hi)
        else:
            merged.append([lo, hi, name])
    out, pos = [], 0
    for lo, hi, name in merged:
        out += [text[pos:lo], f"[redacted {name}]"]
        pos = hi
    out.append(text[pos:])
    return "".join(out)


def redact_data(data: V, secrets: Mapping[str, str] | None = None) -> V:
    """`data` (JSON-like: dicts, lists, tuples, strings) with every string redacted."""
    secrets = secret_values() if secrets is None else secrets
    if not secrets:
        return data
    if isinstance(data, str):
        return redact(data, secrets)  # type: ignore[return-value]
    if isinstance(data, dict):
        return {redact_data(k, secrets): redact_data(v, secrets) for k, v in data.items()}  # type: ignore[return-value]
    if isinstance(data, list | tuple):
        return type(data)(redact_data(v, secrets) for v in data)  # type: ignore[return-value]
    return data


def redact_verdict(verdict: Any, secrets: Mapping[str, str] | None = None) -> Any:
    """A `benchmarks.verdict.Verdict` with every secret redacted from its text (the same object
    when there is nothing to redact)."""
    secrets = secret_values() if secrets is None else secrets
    if not secrets:
        return verdict
    data = verdict.model_dump(mode="json")
    clean = redact_data(data, secrets)
    return verdict if clean == data else type(verdict).model_validate(clean)
