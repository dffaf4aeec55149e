"""Settings: every knob of a run, where its value came from, and how the layers merge.

Layers, lowest first (a later layer overrides an earlier one):

    1. built-in default                 (the `default` column of SETTINGS)
    2. method preset                    (agents/core/presets.py, chosen by `method`)
    3. user file                        $XDG_CONFIG_HOME/kernforge/kernforge.toml
                                        (default ~/.config/kernforge/kernforge.toml)
    4. project file                     ./kernforge.toml
    5. environment                      KERNFORGE_<KEY>, dots as underscores:
                                        budget.iterations -> KERNFORGE_BUDGET_ITERATIONS
    6. command-line flags

A kernforge.toml uses tables for dotted keys:

    llm = "openai:gpt-5.5"
    method = "aka"
    [budget]
    iterations = 12
    cost = 2.0
    [dropout]
    after = 3

`kernforge run --show-config` prints the merged result with each value's source. Unknown keys and
values of the wrong type are errors that name the file (or variable) and the key.

SETTINGS below is the only declaration of a setting: the AgentConfig fields (agents/core/config.py),
the TOML keys, the environment variables, `--show-config` and the `kernforge run` options
(agents/cli/main.py) are all derived from its rows. `kernforge run --resume ID` accepts the
settings whose row says `on_resume` (the budget, runs_dir) and writes them into the run's manifest;
any other setting given with it is refused (`resume_change`).
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agents.core.llm.base import MAX_BODY_BYTES, REQUEST_TIMEOUT_S
from agents.core.llm.budget import MIN_REPLY_TOKENS
from agents.core.llm.retry import RetryPolicy
from agents.core.presets import PRESETS, preset
from benchmarks import EXECUTOR_KINDS, REMEASURE_ROUNDS, JudgeConfig, unknown_name
from knowledge_base import KB_REQUEST_TIMEOUT_S
from profiling import NCU_TIMEOUT_S

ENV_PREFIX = "KERNFORGE_"
# Triton's compiles are CPU work, the sweep's dozens of them most of all (48 configurations of
# the generated GEMM took 31-76 s on 8 of the H200 machine's 16 cores, 2026-12-03, while the GPU
# waited for them): all cores but two, which the lane and the judge keep, 2 to 16
DEFAULT_COMPILE_WORKERS = max(2, min(16, (os.cpu_count() or 2) - 2))
SEE_SETTINGS = "`kernforge run --show-config` lists the settings"


class SettingsError(ValueError):
    """A setting that cannot be used, naming where it came from."""


@dataclass(frozen=True)
class Setting:
    """One knob of a run, declared once. Everything else is derived from this row: the field of
    `agents.core.config.AgentConfig` (named `attr`, with `default`), the key in kernforge.toml,
    the environment variable (`env`), the line of `--show-config`, the `kernforge run` option
    (`flag`, when it has one; every key is also reachable with `--set KEY=VALUE`), and whether
    `--resume` may change it (`on_resume`)."""

    key: str
    kind: str  # "str", "int", "float", "bool"; "int?" / "float?" accept none
    default: Any
    help: str
    choices: tuple[str, ...] = ()
    attr: str = ""  # AgentConfig attribute; "" means the key without "agent.", dots as underscores
    flag: str = ""  # `kernforge run` option name, e.g. "--candidates"; "" means --set only
    on_resume: bool = False  # `kernforge run --resume ID` may change it (written to the manifest)
    minimum: int | None = None  # smallest value AgentConfig accepts

    def __post_init__(self) -> None:
        if not self.attr:
            object.__setattr__(self, "attr", self.key.removeprefix("agent.").replace(".", "_"))

    @property
    def env(self) -> str:
        return ENV_PREFIX + self.key.upper().replace(".", "_")

    @property
    def type(self) -> type:
        """The Python type of the value (None is also allowed for the "?" kinds)."""
        return {"str": str, "int": int, "float": float, "bool": bool}[self.kind.rstrip("?")]


SETTINGS: tuple[Setting, ...] = (
    Setting(
        "llm",
        "str",
        None,
        "offline | openai:MODEL | anthropic:MODEL | openai-compatible:URL#MODEL | replay:FILE (default: a provider whose key is set, else offline)",
        flag="--llm",
    ),
    Setting(
        "method",
        "str",
        "aka",
        "method preset (docs/methods.md): " + ", ".join(PRESETS),
        tuple(PRESETS),
        flag="--method",
    ),
    Setting(
        "device",
        "str",
        "auto",
        "where candidates run: cuda, cpu (Triton interpreter) or auto",
        ("auto", "cuda", "cpu"),
        flag="--device",
    ),
    Setting(
        "runs_dir",
        "str",
        "runs",
        "where run directories are created (and, with --resume, looked for)",
        flag="--runs-dir",
        on_resume=True,
    ),
    Setting(
        "seed",
        "int",
        0,
        "seed for the agent's random choices (the judge draws fresh inputs per evaluation; "
        "each verdict records its seed)",
        flag="--seed",
    ),
    Setting(
        "benchmark",
        "bool",
        False,
        "hidden provenance: never show the agent the task's own solution or anything derived from it",
        flag="--benchmark",
    ),
    Setting(
        "kb",
        "str",
        "auto",
        "knowledge base: auto (use it, build it if empty, carry on without it if it fails), on (required), off",
        ("auto", "on", "off"),
        flag="--kb",
    ),
    Setting(
        "budget.iterations",
        "int",
        8,
        "evaluator rounds (each judges one batch of candidates)",
        attr="max_iterations",
        flag="--iterations",
        on_resume=True,
        minimum=1,
    ),
    Setting(
        "budget.tokens",
        "int?",
        None,
        "LLM tokens, input plus output",
        attr="max_tokens",
        flag="--tokens",
        on_resume=True,
        minimum=0,
    ),
    Setting(
        "budget.cost",
        "float?",
        None,
        "estimated LLM cost in USD",
        attr="max_cost_usd",
        flag="--cost",
        on_resume=True,
        minimum=0,
    ),
    Setting(
        "budget.wall",
        "float?",
        None,
        "wall-clock seconds for the whole run (resumes included)",
        attr="max_wall_s",
        flag="--wall",
        on_resume=True,
        minimum=0,
    ),
    Setting(
        "budget.gpu",
        "float?",
        None,
        "GPU seconds (judge, re-measurement and profiling on a GPU)",
        attr="max_gpu_s",
        flag="--gpu-seconds",
        on_resume=True,
        minimum=0,
    ),
    Setting(
        "agent.candidates",
        "int",
        2,
        "kernels proposed in parallel per generator round",
        flag="--candidates",
        minimum=1,
    ),
    Setting("agent.reflect", "bool", True, "diagnose failures with the reflector before repairing"),
    Setting(
        "agent.lineage",
        "str",
        "shared",
        "whose failure each parallel slot repairs: shared (the round's first failure) or "
        "per_slot (its own previous kernel: independent parallel chains)",
        ("shared", "per_slot"),
    ),
    Setting(
        "agent.max_repairs",
        "int",
        3,
        "repairs of one approach (a fresh kernel or an optimizer proposal) before it is abandoned; "
        "without a correct kernel the run then gives up (or restarts, see agent.restart)",
        minimum=0,
    ),
    Setting(
        "agent.restart",
        "bool",
        False,
        "without a correct kernel, follow an abandoned approach with a fresh one instead of "
        "giving up (the budget bounds the run)",
    ),
    Setting(
        "offline.codegen",
        "bool",
        True,
        "the offline policy also writes a kernel by rules from the task's PyTorch reference "
        "(agents/offline/codegen/translate.py: pointwise, row, whole-tensor, pads and pools, one GEMM; "
        "see its docstring) and tries it first "
        "in benchmark mode",
        attr="codegen",
    ),
    Setting(
        "agent.first_success",
        "bool",
        False,
        "the first correct kernel ends the run: later candidates of its round are not judged",
    ),
    Setting(
        "agent.optimize",
        "bool",
        True,
        "optimise correct kernels (profile -> optimizer -> measure-revise)",
    ),
    Setting(
        "agent.sweep",
        "bool",
        True,
        "the optimizer first times many configurations of the incumbent's declared tunables "
        "at once in one GPU worker (a ranking only) and judges just the best few, with or "
        "without a model; off: the offline policy tries one configuration per round "
        "(coordinate search) and a model is asked for every change",
    ),
    Setting(
        "agent.sweep_max_configs",
        "int",
        48,
        "configurations one sweep times at most (the whole space when it is no larger, else the "
        "incumbent's neighbours and a seeded sample; those the hardware cannot hold are pruned)",
        minimum=1,
    ),
    Setting(
        "agent.sweep_finalists",
        "int",
        3,
        "the sweep's best configurations (faster there than the incumbent's own) that go "
        "through the full judge and the re-measurement; then the offline run ends, and a "
        "model is asked",
        minimum=1,
    ),
    Setting(
        "agent.sweep_min_gain",
        "float",
        0.05,
        "a configuration goes on from the sweep to the judge only when the sweep ranks it this "
        "much faster than the incumbent (weighted), or by more than the incumbent's own two "
        "timings in the sweep differ, whichever is larger: the re-measure cannot accept smaller "
        "gains (its per-shape noise was 5-31 % on the H200 GEMMs, 2026-12-03), and each finalist "
        "costs a full judge",
    ),
    Setting(
        "agent.ancestors",
        "int",
        1,
        "best correct kernels (fastest first) shown to the optimizer; the incumbent is one of them",
        minimum=0,
    ),
    Setting(
        "agent.llm_tests",
        "bool",
        False,
        "the model writes a test script once; every candidate runs it and its output is "
        "feedback for repairs (the judge alone decides correctness)",
    ),
    Setting(
        "agent.nocode_retries",
        "int",
        2,
        "times a reply without usable code is fed back before giving up on that call",
        minimum=0,
    ),
    Setting(
        "agent.history_window",
        "int",
        6,
        "attempts shown in prompts (the incumbent always is)",
        minimum=0,
    ),
    Setting(
        "agent.target_attainment",
        "float",
        0.9,
        "finish once the incumbent's median roofline attainment reaches this",
    ),
    Setting(
        "dropout.enabled",
        "bool",
        True,
        "mask a random half of the visible history on stagnation",
        attr="dropout",
    ),
    Setting(
        "dropout.after",
        "int",
        3,
        "rounds without an accepted improvement before dropout (k)",
        minimum=0,
    ),
    Setting(
        "dropout.every",
        "int",
        0,
        "also drop out every m rounds once optimising (0: never)",
        minimum=0,
    ),
    # The agent judges each candidate with fewer trials than a standalone `kernforge eval`
    # (JudgeConfig.trials); the timeout and the re-measurement rounds are the judge's own defaults.
    Setting("judge.trials", "int", 3, "correctness trials per input mode"),
    Setting(
        "judge.timeout",
        "float",
        JudgeConfig.timeout_s,
        "seconds a candidate process may run (from its start) before it is killed",
        attr="judge_timeout_s",
    ),
    Setting(
        "judge.remeasure_rounds",
        "int",
        REMEASURE_ROUNDS,
        "rounds of incumbent/candidate/candidate/incumbent timing",
        attr="remeasure_rounds",
    ),
    # Where candidates are judged (benchmarks/executor, docs/throughput.md); none of these
    # changes a verdict, so each may change on --resume.
    Setting(
        "judge.executor",
        "str",
        "auto",
        "where candidates are judged: inline (this process, one at a time), local (CPU workers "
        "for the CPU stage, one lane per GPU, judge.lanes on the CPU), ray (Ray tasks; "
        "judge.ray_address), auto (local on a GPU, inline on the CPU)",
        ("auto", *EXECUTOR_KINDS),
        attr="executor",
        on_resume=True,
    ),
    Setting(
        "judge.lanes",
        "int",
        1,
        "candidates the local executor judges at once on the CPU (on a GPU: one per visible GPU)",
        attr="judge_lanes",
        on_resume=True,
        minimum=1,
    ),
    Setting(
        "judge.compile_workers",
        "int",
        DEFAULT_COMPILE_WORKERS,
        "CPU processes of the local executor's CPU stage, ahead of the lanes: the static check "
        "and, on a GPU machine, Triton's compile of each candidate's kernels and of a sweep's "
        "configurations (0: none; default: this machine's cores but two, 2 to 16)",
        attr="compile_workers",
        on_resume=True,
        minimum=0,
    ),
    Setting(
        "judge.ray_address",
        "str?",
        None,
        "the Ray cluster of the ray executor (ray://host:10001, auto); none: a local Ray",
        attr="ray_address",
        on_resume=True,
    ),
    Setting(
        "judge.baseline_cache",
        "str",
        JudgeConfig.baseline_cache,
        "folder of cached baseline times; empty: $KERNFORGE_CACHE_DIR/baselines "
        "(~/.cache/kernforge/baselines); off: measured once per judging process",
        attr="baseline_cache",
        on_resume=True,
    ),
    Setting(
        "profile.ncu",
        "bool",
        True,
        "profile the incumbent with Nsight Compute when ncu is present (GPU only)",
        attr="ncu",
    ),
    Setting(
        "profile.ncu_timeout",
        "float",
        NCU_TIMEOUT_S,
        "seconds one Nsight Compute profile may take in total before ncu and the kernel under "
        "it are killed (the profile is then timing-only)",
        attr="ncu_timeout_s",
        on_resume=True,
    ),
    # Waits on services: each a total deadline per request, not a per-byte timeout.
    Setting(
        "llm.timeout",
        "float",
        REQUEST_TIMEOUT_S,
        "seconds one model request may take in total (connecting, waiting and every byte of the "
        "reply: a server that drips bytes is cut too); a request past it is retried",
        attr="llm_timeout_s",
        on_resume=True,
    ),
    Setting(
        "llm.attempts",
        "int",
        RetryPolicy.attempts,
        "requests per model call before it fails (429, 5xx, connection errors, a passed "
        "deadline and malformed replies are retried, with backoff)",
        attr="llm_attempts",
        on_resume=True,
        minimum=1,
    ),
    # Per-provider limits: every run of one process calling the same provider shares them
    # (agents/core/llm/concurrency.py); a bench with --workers N gives each worker 1/N.
    Setting(
        "llm.concurrency",
        "int",
        4,
        "model requests in flight at once per provider (the generator's parallel candidates, "
        "and every run of a bench process, share them)",
        attr="llm_concurrency",
        on_resume=True,
        minimum=1,
    ),
    Setting(
        "llm.rpm",
        "int?",
        None,
        "model requests started per minute per provider (none: no limit); set it to the "
        "account's limit so that 429s are avoided rather than retried",
        attr="llm_rpm",
        on_resume=True,
        minimum=1,
    ),
    Setting(
        "llm.tpm",
        "int?",
        None,
        "model tokens per minute per provider, counting each request's worst case (prompt "
        "estimate plus max_tokens) until the server's count replaces it (none: no limit)",
        attr="llm_tpm",
        on_resume=True,
        minimum=1,
    ),
    Setting(
        "llm.min_reply_tokens",
        "int",
        MIN_REPLY_TOKENS,
        "a model call is not made when the token or cost budget leaves room for fewer reply "
        "tokens than this",
        attr="min_reply_tokens",
        minimum=1,
    ),
    Setting(
        "llm.reply_chars",
        "int",
        100_000,
        "characters of a model reply kept (run directory, checkpoint, next prompt); the rest is "
        "cut, and the kept text says so",
        attr="reply_chars",
        minimum=1000,
    ),
    Setting(
        "llm.body_bytes",
        "int",
        MAX_BODY_BYTES,
        "longest reply body read from a model server; a longer one is refused as malformed "
        "(and retried)",
        attr="body_bytes",
        minimum=1024,
    ),
    Setting(
        "agent.feedback_chars",
        "int",
        12_000,
        "characters of a reply without code, a diagnosis or a judge's message quoted back to "
        "the model; the rest is cut, and the prompt says so",
        minimum=200,
    ),
    Setting(
        "kb.timeout",
        "float",
        KB_REQUEST_TIMEOUT_S,
        "seconds one request to a chroma knowledge-base server (KERNFORGE_KB_URL) may take in "
        "total; past it the search is tried once more, then skipped (kb = auto) or the run "
        "stops (kb = on)",
        attr="kb_timeout_s",
        on_resume=True,
    ),
)
BY_KEY: dict[str, Setting] = {s.key: s for s in SETTINGS}

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


def convert(setting: Setting, value: Any, where: str) -> Any:
    """`value` (from TOML, the environment or a flag) as the setting's type."""
    kind = setting.kind.rstrip("?")
    optional = setting.kind.endswith("?")
    if optional and (
        value is None or (isinstance(value, str) and value.strip().lower() in ("", "none"))
    ):
        return None
    try:
        if kind == "bool":
            if isinstance(value, bool):
                return value
            text = str(value).strip().lower()
            if text in _TRUE:
                return True
            if text in _FALSE:
                return False
            raise ValueError("expected true or false")
        if kind == "int":
            if isinstance(value, bool) or (isinstance(value, float) and not value.is_integer()):
                raise ValueError("expected an integer")
            return int(value)
        if kind == "float":
            if isinstance(value, bool):
                raise ValueError("expected a number")
            return float(value)
        if not isinstance(value, str):
            raise ValueError("expected a string")
        value = value.strip()
    except ValueError as exc:
        raise SettingsError(f"{where}: {setting.key} = {value!r}: {exc}") from None
    if setting.choices and value not in setting.choices:
        raise SettingsError(f"{where}: {unknown_name(setting.key, value, setting.choices)}")
    return value


def _flatten(table: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in table.items():
        dotted = f"{prefix}{key}"
        if isinstance(value, Mapping):
            out.update(_flatten(value, dotted + "."))
        else:
            out[dotted] = value
    return out


def read_toml(path: Path) -> dict[str, Any]:
    """A kernforge.toml as {dotted key: typed value}; errors name the file and the key."""
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise SettingsError(f"{path}: not valid TOML: {exc}") from exc
    out = {}
    for key, value in _flatten(raw).items():
        if key not in BY_KEY:
            raise SettingsError(f"{path}: {unknown_name('setting', key, BY_KEY, SEE_SETTINGS)}")
        out[key] = convert(BY_KEY[key], value, str(path))
    return out


def user_config_path(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    base = env.get("XDG_CONFIG_HOME") or str(Path(env.get("HOME", "~")).expanduser() / ".config")
    return Path(base).expanduser() / "kernforge" / "kernforge.toml"


def project_config_path(cwd: Path | None = None) -> Path:
    return (cwd or Path.cwd()) / "kernforge.toml"


@dataclass
class Settings:
    """Merged values and, for each, the layer it came from."""

    values: dict[str, Any]
    sources: dict[str, str]

    def __getitem__(self, key: str) -> Any:
        return self.values[key]

    def rows(self) -> list[tuple[str, str, str]]:
        """(key, value, source) in SETTINGS order, for printing."""
        return [(s.key, _show(self.values[s.key]), self.sources[s.key]) for s in SETTINGS]

    def to_json(self) -> dict[str, Any]:
        return {"values": dict(self.values), "sources": dict(self.sources)}


def _show(value: Any) -> str:
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def resolve(
    flags: Mapping[str, Any] | None = None,
    *,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    user_file: Path | None = None,
    project_file: Path | None = None,
) -> Settings:
    """Merge every layer. `flags` maps dotted keys to values; None means "not given"."""
    from agents.core.llm.factory import default_spec

    env = os.environ if env is None else env
    flags = {k: v for k, v in (flags or {}).items() if v is not None}
    for key in flags:
        if key not in BY_KEY:
            raise SettingsError(unknown_name("setting", key, BY_KEY, SEE_SETTINGS))
    user_file = user_file or user_config_path(env)
    project_file = project_file or project_config_path(cwd)

    layers: list[tuple[str, dict[str, Any]]] = []
    if user_file.is_file():
        layers.append((f"user file {user_file}", read_toml(user_file)))
    if project_file.is_file() and project_file.resolve() != user_file.resolve():
        layers.append((f"project file {project_file}", read_toml(project_file)))
    env_layer = {}
    for setting in SETTINGS:
        if setting.env in env:
            env_layer[setting.key] = convert(
                setting, env[setting.env], f"environment {setting.env}"
            )
    typed_flags = {k: convert(BY_KEY[k], v, f"flag --{k}") for k, v in flags.items()}

    values: dict[str, Any] = {s.key: s.default for s in SETTINGS}
    sources: dict[str, str] = {s.key: "default" for s in SETTINGS}
    # The method decides the preset, so find it first across the user's layers.
    method = values["method"]
    for _, layer in [*layers, ("env", env_layer), ("flags", typed_flags)]:
        method = layer.get("method", method)
    try:
        chosen = preset(method)
    except ValueError as exc:
        raise SettingsError(str(exc)) from None
    ordered = [
        (f"preset {method}", chosen),
        *layers,
        ("environment", env_layer),
        ("flag", typed_flags),
    ]
    for label, layer in ordered:
        for key, value in layer.items():
            values[key] = value
            sources[key] = _label(label, key)
    if values["llm"] is None:
        values["llm"] = default_spec(env)
        sources["llm"] = (
            "default (no OPENAI_API_KEY or ANTHROPIC_API_KEY set: offline policy)"
            if values["llm"] == "offline"
            else "default (an API key is set)"
        )
    return Settings(values, sources)


def _label(layer: str, key: str) -> str:
    if layer == "environment":
        return f"environment {BY_KEY[key].env}"
    if layer == "flag":
        return f"flag --{key}"
    return layer


def resume_change(key: str, value: Any, flag: str) -> Any:
    """`value` typed for `key` when `kernforge run --resume` may change that setting; otherwise
    a SettingsError naming `flag` (how the user gave it) and why it cannot change."""
    setting = BY_KEY.get(key)
    if setting is None:
        raise SettingsError(f"{flag}: {unknown_name('setting', key, BY_KEY, SEE_SETTINGS)}")
    if not setting.on_resume:
        resumable = ", ".join(s.key for s in SETTINGS if s.on_resume)
        raise SettingsError(
            f"{flag} cannot change on --resume: {key} is fixed when a run starts (its attempts "
            f"and checkpoint were made with it); only {resumable} may change; start a new run instead"
        )
    return convert(setting, value, flag)


# `--budget NAME=VALUE` names: budget.iterations -> iterations, ...
BUDGET_KEYS: dict[str, str] = {
    s.key.removeprefix("budget."): s.key for s in SETTINGS if s.key.startswith("budget.")
}


def parse_budget(text: str) -> dict[str, str]:
    """`iterations=8,tokens=200000,cost=2,wall=1800,gpu=600` -> {dotted key: value text}."""
    out: dict[str, str] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        name, eq, value = part.partition("=")
        name = name.strip()
        if not eq or name not in BUDGET_KEYS or not value.strip():
            raise SettingsError(
                f"--budget {text!r}: bad item {part!r}; expected NAME=VALUE with NAME one of {', '.join(BUDGET_KEYS)}"
            )
        out[BUDGET_KEYS[name]] = value.strip()
    return out
