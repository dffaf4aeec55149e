"""The hostile candidates under tests/hostile/, read from their header comments.

Each hostile file opens with a block of `# key: value` comment lines:

    # expect: <ErrorClass value>           required: the verdict's error class ("none" = passes)
    # task: softmax_fp32                   required: the task id it is a candidate for
    # why: <one line>                      required: what it tries and why it must fail
    # stage_reached: correct_standard      optional: the last stage it should pass
    # gpu: true                            optional: only meaningful on a CUDA device
    # flags: side_stream                   optional: verdict flags it must raise (comma separated)
    # unchecked: resource_limit            optional: the error class it must get when run past
                                           the static check (it uses what the check forbids)

The block ends at the first line that is not a comment. A malformed header raises ValueError
naming the file and the key.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from benchmarks.verdict import FAILS_STAGE, ErrorClass, Stage

HOSTILE_DIR = Path(__file__).resolve().parent / "hostile"

_KEYS = ("expect", "task", "why", "stage_reached", "gpu", "flags", "unchecked")
_REQUIRED = ("expect", "task", "why")


@dataclass(frozen=True)
class HostileCase:
    path: Path
    expect: ErrorClass
    task: str
    why: str
    gpu: bool = False
    stage_reached: Stage | None = None
    flags: tuple[str, ...] = ()
    unchecked: ErrorClass | None = None

    @property
    def name(self) -> str:
        return self.path.stem

    @property
    def is_static(self) -> bool:
        """Whether the static stage (benchmarks.harness.static_check) is expected to reject it."""
        return FAILS_STAGE.get(self.expect) == Stage.STATIC

    def source(self) -> str:
        return self.path.read_text()


def parse_header(path: Path) -> HostileCase:
    fields: dict[str, str] = {}
    for line in path.read_text().splitlines():
        if not line.startswith("#"):
            break
        key, sep, value = line.lstrip("#").partition(":")
        key = key.strip()
        if not sep or key not in _KEYS:
            continue  # free-form commentary inside the header block
        if key in fields:
            raise ValueError(f"{path}: header key {key!r} appears twice")
        fields[key] = value.strip()
    for key in _REQUIRED:
        if not fields.get(key):
            raise ValueError(f"{path}: header needs `# {key}: ...`")
    try:
        expect = ErrorClass(fields["expect"])
    except ValueError:
        known = ", ".join(e.value for e in ErrorClass)
        raise ValueError(f"{path}: expect {fields['expect']!r} is not one of {known}") from None
    stage = None
    if fields.get("stage_reached"):
        try:
            stage = Stage(fields["stage_reached"])
        except ValueError:
            known = ", ".join(s.value for s in Stage)
            raise ValueError(
                f"{path}: stage_reached {fields['stage_reached']!r} is not one of {known}"
            ) from None
    gpu_text = fields.get("gpu", "false").lower()
    if gpu_text not in ("true", "false"):
        raise ValueError(f"{path}: gpu must be true or false, got {fields['gpu']!r}")
    flags = tuple(f.strip() for f in fields.get("flags", "").split(",") if f.strip())
    unchecked = None
    if fields.get("unchecked"):
        try:
            unchecked = ErrorClass(fields["unchecked"])
        except ValueError:
            raise ValueError(
                f"{path}: unchecked {fields['unchecked']!r} is not an error class"
            ) from None
    return HostileCase(
        path=path,
        expect=expect,
        task=fields["task"],
        why=fields["why"],
        gpu=gpu_text == "true",
        stage_reached=stage,
        flags=flags,
        unchecked=unchecked,
    )


def load_hostile(root: Path = HOSTILE_DIR) -> list[HostileCase]:
    """Every hostile candidate under `root`, sorted by file name."""
    return [parse_header(p) for p in sorted(root.glob("*.py")) if not p.name.startswith("_")]
