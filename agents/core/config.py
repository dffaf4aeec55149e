"""The configuration of one run: the merged settings as typed fields the nodes read.

Built from `agents.core.settings.resolve(...)` (kernforge.toml < environment < flags) by
`AgentConfig.from_settings`, saved in the run's manifest, and rebuilt from there on `--resume`.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from agents.core.llm.budget import Budget
from agents.core.settings import Settings


@dataclass
class AgentConfig:
    task: str  # task id or task file
    llm: str = "offline"
    method: str = "aka"
    device: str = "auto"
    runs_dir: str = "runs"
    seed: int = 0
    benchmark: bool = False
    kb: str = "auto"
    max_iterations: int = 8
    max_tokens: int | None = None
    max_cost_usd: float | None = None
    max_wall_s: float | None = None
    max_gpu_s: float | None = None
    candidates: int = 2
    reflect: bool = True
    lineage: str = "shared"  # "shared" or "per_slot"
    max_repairs: int = 3
    restart: bool = False
    first_success: bool = False
    codegen: bool = True  # offline policy: a kernel generated from the reference (agents/offline/codegen/generate.py)
    optimize: bool = True
    ancestors: int = 1
    llm_tests: bool = False
    nocode_retries: int = 2
    history_window: int = 6
    target_attainment: float = 0.9
    dropout: bool = True
    dropout_after: int = 3
    dropout_every: int = 0
    judge_trials: int = 3
    judge_timeout_s: float = 300.0
    remeasure_rounds: int = 2
    ncu: bool = True
    run_id: str | None = None
    # the test seams are not config: they travel as agents.core.seams.Seams on the RunContext

    def __post_init__(self) -> None:
        if self.candidates < 1:
            raise ValueError(f"agent.candidates must be >= 1, got {self.candidates}")
        if self.max_iterations < 1:
            raise ValueError(f"budget.iterations must be >= 1, got {self.max_iterations}")
        if self.lineage not in ("shared", "per_slot"):
            raise ValueError(f"agent.lineage must be shared or per_slot, got {self.lineage!r}")
        for name in (
            "max_repairs",
            "ancestors",
            "nocode_retries",
            "history_window",
            "dropout_after",
            "dropout_every",
        ):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be >= 0, got {getattr(self, name)}")

    @classmethod
    def from_settings(cls, task: str, settings: Settings, **extra: Any) -> AgentConfig:
        v = settings.values
        return cls(
            task=task,
            llm=v["llm"],
            method=v["method"],
            device=v["device"],
            runs_dir=v["runs_dir"],
            seed=v["seed"],
            benchmark=v["benchmark"],
            kb=v["kb"],
            max_iterations=v["budget.iterations"],
            max_tokens=v["budget.tokens"],
            max_cost_usd=v["budget.cost"],
            max_wall_s=v["budget.wall"],
            max_gpu_s=v["budget.gpu"],
            candidates=v["agent.candidates"],
            reflect=v["agent.reflect"],
            lineage=v["agent.lineage"],
            max_repairs=v["agent.max_repairs"],
            restart=v["agent.restart"],
            first_success=v["agent.first_success"],
            codegen=v["offline.codegen"],
            optimize=v["agent.optimize"],
            ancestors=v["agent.ancestors"],
            llm_tests=v["agent.llm_tests"],
            nocode_retries=v["agent.nocode_retries"],
            history_window=v["agent.history_window"],
            target_attainment=v["agent.target_attainment"],
            dropout=v["dropout.enabled"],
            dropout_after=v["dropout.after"],
            dropout_every=v["dropout.every"],
            judge_trials=v["judge.trials"],
            judge_timeout_s=v["judge.timeout"],
            remeasure_rounds=v["judge.remeasure_rounds"],
            ncu=v["profile.ncu"],
            **extra,
        )

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
        known = set(cls.__dataclass_fields__)
        return cls(**{k: v for k, v in data.items() if k in known})
