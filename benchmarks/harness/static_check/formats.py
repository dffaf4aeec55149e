"""What a format string reads from its arguments: the attribute and index parts of every
replacement field (``"{0.shape[1]}"`` reads attribute ``shape`` and index ``1``), nested fields in
format specs included. ``str.format`` performs these reads itself, so the walker checks them with
the same rules as attributes written in code."""

from __future__ import annotations

import _string  # the parser str.format itself uses
import string


def format_fields(template: str) -> list[tuple[str, str]] | None:
    """Every ("attr", name) and ("index", key) that formatting `template` would read, in order;
    None when `template` is not a valid format string."""
    out: list[tuple[str, str]] = []
    try:
        _collect(template, out, depth=0)
    except (ValueError, TypeError):
        return None
    return out


def _collect(template: str, out: list[tuple[str, str]], depth: int) -> None:
    if depth > 2:  # Python refuses deeper nesting of specs too
        raise ValueError("format specs nested too deeply")
    for _literal, field, spec, _conversion in string.Formatter().parse(template):
        if field is None:
            continue
        _first, rest = _string.formatter_field_name_split(field)
        for is_attr, key in rest:
            out.append(("attr" if is_attr else "index", str(key)))
        if spec:
            _collect(spec, out, depth + 1)
