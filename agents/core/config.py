"""The configuration of one run: the merged settings as typed fields the nodes read.

`AgentConfig` has one field per row of `agents.core.settings.SETTINGS` (named by the row's `attr`,
with its default), generated from the table, plus two fields that are not settings: `task` and
`run_id` (the test seams travel apart, as `agents.core.seams.Seams`). It is built from `resolve(...)` by
`AgentConfig.from_settings`, saved in the run's manifest, and rebuilt from there on `--resume`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, field, fields, make_dataclass
from typing import Any

from agents.core.llm.budget import Budget
from agents.core.settings import BY_KEY, SETTINGS, Setting, Settings, resume_change


class _ConfigMethods:
    """What AgentConfig does besides holding its fields (the fields come from SETTINGS)."""

    def __post_init__(self) -> None:
        # A config built without settings (tests, scripts) never picks a provider from the
        # environment: no llm means the offline policy.
        if self.llm is None:
            self.llm = "offline"
        for s in SETTINGS:
            value = getattr(self, s.attr)
            if s.minimum is not None and value is not None and value < s.minimum:
                raise ValueError(f"{s.key} must be >= {s.minimum}, got {value}")
        if self.lineage not in BY_KEY["agent.lineage"].choices:
            raise ValueError(f"agent.lineage must be shared or per_slot, got {self.lineage!r}")

    @classmethod
    def from_settings(cls, task: str, settings: Settings, **extra: Any) -> AgentConfig:
        """The config of a new run on `task` from merged settings; `extra`: run_id, seams."""
        return cls(task=task, **{s.attr: settings.values[s.key] for s in SETTINGS}, **extra)

    def resume_changes(self, changes: Mapping[str, Any]) -> dict[str, tuple[Any, Any]]:
        """Apply settings that may change on `--resume` ({dotted key: value}) and return
        {key: (old, new)} for those that changed. A key that may not change is a SettingsError."""
        changed: dict[str, tuple[Any, Any]] = {}
        for key, value in changes.items():
            new = resume_change(key, value, f"--set {key}")
            attr = BY_KEY[key].attr
            old = getattr(self, attr)
            if new != old:
                setattr(self, attr, new)
                changed[key] = (old, new)
        self.__post_init__()
        return changed

    @property
    def budget(self) -> Budget:
        return Budget(
            max_tokens=self.max_tokens,
            max_cost_usd=self.max_cost_usd,
            max_wall_s=self.max_wall_s,
            max_gpu_s=self.max_gpu_s,
        )

    @property
    def offline(self) -> bool:
        return self.llm.strip() == "offline"

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> AgentConfig:
        # keys that are not fields (the manifest's `scripted_measure` label) are left out
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})


def _setting_field(s: Setting) -> tuple[str, Any, Any]:
    """(name, type, field) of the AgentConfig field for one setting; None allowed where it may be."""
    kind = s.type | None if s.kind.endswith("?") or s.default is None else s.type
    return (s.attr, kind, field(default=s.default))


AgentConfig = make_dataclass(
    "AgentConfig",
    [
        ("task", str),  # task id or task file
        *(_setting_field(s) for s in SETTINGS),
        ("run_id", str | None, field(default=None)),
        # the test seams are not config: they travel as agents.core.seams.Seams
    ],
    bases=(_ConfigMethods,),
    namespace={
        "__module__": __name__,
        "__doc__": "The typed settings of one run: one field per SETTINGS row (`Setting.attr`), "
        "plus `task` and `run_id`.",
    },
)
