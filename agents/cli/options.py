"""Option values that more than one command parses the same way."""

from __future__ import annotations

from collections.abc import Iterable

from agents.core.settings import BY_KEY, SettingsError
from benchmarks import unknown_name


def parse_set(items: Iterable[str] | None) -> dict[str, str]:
    """The `--set KEY=VALUE` items of a command as {dotted key: raw value} (a later item wins).
    An item without `=`, with an empty key or naming no known setting is a SettingsError that
    names the item and why, in one line (the value is converted where the command resolves it)."""
    settings: dict[str, str] = {}
    for item in items or []:
        key, eq, value = item.partition("=")
        key = key.strip()
        if not eq:
            raise SettingsError(f"--set {item!r}: expected KEY=VALUE")
        if not key:
            raise SettingsError(f"--set {item!r}: expected KEY=VALUE, the key is empty")
        if key not in BY_KEY:
            raise SettingsError(f"--set {item!r}: {unknown_name('setting', key, BY_KEY)}")
        settings[key] = value
    return settings
