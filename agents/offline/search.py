"""The offline policy's search over a kernel's tunables: which configurations to try, and in what
order (agents/offline/policy.py asks; nothing here imports or runs a kernel).

Two ways of searching, both over the `KB_META["tunables"]` space the incumbent's entry point
exposes (`policy.search_space`):

- a **sweep** (`enumerate_configs`, then `next_finalist`): many configurations at once, timed
  in one GPU worker for a ranking (`benchmarks.sweep`); the best few that beat the incumbent's
  own configuration there become finalists, each judged and re-measured like any candidate.
  The configurations are the whole product of the space when it is small enough, else the
  incumbent, all its coordinate neighbours and a seeded sample of the product; those the
  hardware cannot hold are pruned before anything compiles (`prune_reason`);
- a **coordinate search** (`next_config`): one neighbour of the incumbent per round, nearest
  value first; what the policy does when no sweep could be measured.
"""

from __future__ import annotations

import itertools
import math
import random
from dataclasses import dataclass, field
from typing import Any

from benchmarks import weighted_score

# Shared memory one thread block may use on Hopper (H100/H200: 227 KB of the SM's 228 KB;
# CUDA C++ Programming Guide, "Compute Capabilities", compute capability 9.0).
HOPPER_SMEM_PER_BLOCK = 227 * 1024
# fp32 accumulator registers per thread one output tile may take: a thread has at most 255
# registers, so a tile past 256 accumulators per thread spills whatever else it holds.
MAX_ACCUMULATOR_REGS = 256
THREADS_PER_WARP = 32
# bytes of one element of an operand, by task dtype (benchmarks.task.DTYPE_NAMES)
DTYPE_BYTES = {"fp32": 4, "fp16": 2, "bf16": 2, "int8": 1, "fp8_e4m3": 1}
# draws of the seeded sample per configuration wanted: enough to fill the budget even where
# most of a large space is pruned or already tried
SAMPLE_DRAWS_PER_CONFIG = 20


@dataclass(frozen=True)
class TileNames:
    """The tunables that size one tiled GEMM-like kernel: its tile (m x n, stepping k), its
    pipeline stages and its warps. A kernel exposes the tile names or it is not pruned."""

    m: str
    n: str
    k: str
    stages: str
    warps: str


# the names the knowledge base's GEMM kernels and the code generator's GEMM use: the prefill
# kernel's, and the decode kernel's (agents/offline/codegen/emit.py GEMM_TUNABLES)
TILE_GROUPS = (
    TileNames("BLOCK_M", "BLOCK_N", "BLOCK_K", "num_stages", "num_warps"),
    TileNames(
        "DECODE_BLOCK_M", "DECODE_BLOCK_N", "DECODE_BLOCK_K", "DECODE_STAGES", "DECODE_WARPS"
    ),
)


def prune_reason(config: dict[str, Any], dtype: str) -> str | None:
    """Why the hardware cannot run `config` well, or None. For each tile group whose three tile
    names `config` sets: its operand tiles in shared memory, stages x (BM x BK + BK x BN) x the
    dtype's bytes, must fit a Hopper block (without a stages tunable one stage is assumed: a
    lower bound, so nothing runnable is pruned); its fp32 accumulator, BM x BN / (32 x warps)
    registers per thread, must stay within MAX_ACCUMULATOR_REGS (checked only where warps are a
    tunable). Kernels whose tunables are named otherwise are never pruned."""
    elem = DTYPE_BYTES.get(dtype)
    for g in TILE_GROUPS:
        tile = [config.get(g.m), config.get(g.n), config.get(g.k)]
        if not all(isinstance(v, int) and v > 0 for v in tile):
            continue
        bm, bn, bk = tile
        stages = config.get(g.stages, 1)
        if elem is not None and isinstance(stages, int) and stages > 0:
            smem = stages * (bm * bk + bk * bn) * elem
            if smem > HOPPER_SMEM_PER_BLOCK:
                return (
                    f"{g.m}x{g.n}x{g.k} {bm}x{bn}x{bk} in {stages} stage(s) of {dtype} needs "
                    f"{smem / 1024:.0f} KB of shared memory (a Hopper block has "
                    f"{HOPPER_SMEM_PER_BLOCK // 1024} KB)"
                )
        warps = config.get(g.warps)
        if isinstance(warps, int) and warps > 0:
            regs = bm * bn / (THREADS_PER_WARP * warps)
            if regs > MAX_ACCUMULATOR_REGS:
                return (
                    f"a {bm}x{bn} fp32 accumulator over {warps} warps takes {regs:.0f} registers "
                    f"per thread (more than {MAX_ACCUMULATOR_REGS})"
                )
    return None


# -- coordinate search -----------------------------------------------------------------------


def distance(a: Any, b: Any) -> float:
    """How far apart two values of a tunable are: octaves for positive numbers, else 0 or 1."""
    if isinstance(a, int | float) and isinstance(b, int | float) and a > 0 and b > 0:
        return abs(math.log2(b / a))
    return 0.0 if a == b else 1.0


def neighbours(current: dict[str, Any], space: dict[str, list[Any]]) -> list[dict[str, Any]]:
    """Every configuration that changes one tunable of `current`, nearest value first (ties in
    `space` order)."""
    options = []
    for order, (name, values) in enumerate(space.items()):
        if name not in current:
            continue
        for value in values:
            if value != current[name]:
                options.append((distance(current[name], value), order, {**current, name: value}))
    options.sort(key=lambda item: (item[0], item[1]))
    return [config for _, _, config in options]


def next_config(
    current: dict[str, Any], space: dict[str, list[Any]], tried: list[dict[str, Any]]
) -> dict[str, Any] | None:
    """The next configuration of a coordinate search around `current`: change one tunable to
    its nearest untried value (tunables in `space` order); None when every neighbour was tried."""
    seen = [dict(t) for t in tried]
    return next((c for c in neighbours(current, space) if c not in seen), None)


# -- shape classes: tunables that only decode shapes use ------------------------------------

# A tunable named so is read only by the kernel's decode path (the generated GEMM's launcher
# takes its decode configuration from them for <= 64 rows, agents/offline/codegen/emit.py), and
# the others only by its prefill path: the two can be searched apart and composed.
DECODE_PREFIX = "DECODE_"
DECODE_NAMES = ("SPLIT_K",)
DECODE_PHASE = "decode"


def decode_tunables(names: list[str]) -> list[str]:
    """The tunables among `names` that only the kernel's decode path reads."""
    return [n for n in names if n.startswith(DECODE_PREFIX) or n in DECODE_NAMES]


# -- the sweep's configurations --------------------------------------------------------------


@dataclass
class Enumeration:
    """The configurations a sweep times (the incumbent's first), and what was left out."""

    configs: list[dict[str, Any]]
    product: int  # configurations in the whole space
    how: str  # "the full product" or "the incumbent, its neighbours and a seeded sample"
    pruned: list[tuple[dict[str, Any], str]] = field(default_factory=list)
    already_tried: int = 0  # left out: an attempt of the run already tried them


def enumerate_configs(
    current: dict[str, Any],
    space: dict[str, list[Any]],
    tried: list[dict[str, Any]],
    *,
    max_configs: int,
    dtype: str,
    seed: str,
) -> Enumeration:
    """At most `max_configs` configurations of the tunables `current` sets, the incumbent's own
    (`current`) first: every other one of the product of `space` when the product has at most
    `max_configs`, else all of `current`'s coordinate neighbours (nearest first) and then a
    sample of the product drawn with `seed` (the same configurations every run of a task).
    Configurations an attempt already tried (`tried`) are left out, and so are those
    `prune_reason` rejects for `dtype`; the incumbent's own is kept whatever either says."""
    names = [n for n in space if n in current]
    values = [list(dict.fromkeys([current[n], *space[n]])) for n in names]
    product = math.prod(len(v) for v in values)
    result = Enumeration(configs=[dict(current)], product=product, how="")
    seen = [dict(current)]
    done = [{k: t[k] for k in names if k in t} for t in tried]

    def consider(config: dict[str, Any]) -> None:
        if config in seen or len(result.configs) >= max_configs:
            return
        seen.append(config)
        if config in done:
            result.already_tried += 1
            return
        why = prune_reason(config, dtype)
        if why:
            result.pruned.append((config, why))
            return
        result.configs.append(config)

    if product <= max_configs:
        result.how = "the full product"
        for combo in itertools.product(*values):
            consider(dict(zip(names, combo, strict=True)))
        return result
    result.how = "the incumbent, its coordinate neighbours and a seeded sample of the product"
    for config in neighbours(current, {n: space[n] for n in names}):
        consider(config)
    rng = random.Random(seed)
    decode = decode_tunables(names)
    classes = [decode, [n for n in names if n not in decode]] if decode else [names]
    if decode and len(classes[1]):
        # the decode and the other tunables never meet in one path: sample each class with the
        # other at the incumbent's values, so every configuration informs its own shapes
        result.how = (
            "the incumbent, its coordinate neighbours and a seeded sample of the decode "
            "tunables and of the others, each with the other class at the incumbent's values"
        )
    for draw in range(SAMPLE_DRAWS_PER_CONFIG * max_configs):
        if len(result.configs) >= max_configs:
            break
        varied = classes[draw % len(classes)]
        consider(
            {
                n: (rng.choice(v) if n in varied else current[n])
                for n, v in zip(names, values, strict=True)
            }
        )
    return result


def compose_by_phase(
    entries: list[dict[str, Any]],
    shapes: list[str],
    weights: list[float],
    phases: dict[str, str],
) -> dict[str, Any] | None:
    """Where a kernel's decode tunables and its others are read by separate paths: the
    configuration made of the best measured values of each class, each class ranked on its own
    shapes (decode-phase shapes for the decode tunables, the rest for the others), with the
    score those times imply. None where the tunables do not split, a class has no shapes, or
    the composition is a configuration the sweep already measured. `entries`: measured
    configurations as {"config", "times_us"}."""
    if not entries:
        return None
    names = list(entries[0]["config"])
    decode = decode_tunables(names)
    others = [n for n in names if n not in decode]
    dec_shapes = [s for s in shapes if phases.get(s) == DECODE_PHASE]
    pre_shapes = [s for s in shapes if phases.get(s) != DECODE_PHASE]
    if not decode or not others or not dec_shapes or not pre_shapes:
        return None

    def best(on: list[str]) -> dict[str, Any]:
        w = [weights[shapes.index(s)] for s in on]
        usable = [e for e in entries if all(s in e["times_us"] for s in on)]
        return min(usable, key=lambda e: weighted_score(e["times_us"], on, w))

    pre, dec = best(pre_shapes), best(dec_shapes)
    config = {n: (dec if n in decode else pre)["config"][n] for n in names}
    if any(e["config"] == config for e in entries):
        return None
    times = {s: (dec if s in dec_shapes else pre)["times_us"][s] for s in shapes}
    return {
        "config": config,
        "score_us": weighted_score(times, shapes, weights),
        "composed": True,
        "times_us": times,
    }


# -- the sweep's finalists -------------------------------------------------------------------


def sweep_record(
    sweep: Any,
    enumeration: Enumeration,
    *,
    incumbent_id: int,
    finalists: int,
    phases: dict[str, str] | None = None,
    min_gain: float = 0.0,
) -> dict[str, Any]:
    """What the run keeps of a sweep (`benchmarks.Sweep`) in its state: plain JSON, so the
    checkpoint and `--resume` carry it. `ranked` holds the measured configurations, fastest
    first, with the one `compose_by_phase` makes from the best decode and the best other
    values (`phases`: shape name -> serving phase) where the tunables split so; `baseline_us` is
    the incumbent's own configuration's score in the sweep, the faster of its timings where the
    sweep timed it twice (first and last: `noise` is then how far apart they were), None when
    it failed there; `gate` is the gain a finalist must show over it, max(`min_gain`, noise);
    `proposed` grows as finalists are proposed."""
    incumbent = enumeration.configs[0]
    own = [e.score for e in sweep.entries if e.config == incumbent and e.measured]
    noise = max(own) / min(own) - 1.0 if len(own) > 1 else None
    ranked = [{"config": e.config, "score_us": e.score} for e in sweep.entries if e.measured]
    if len(own) > 1:  # the incumbent's repeat is a noise probe, not a second candidate
        first = next(i for i, e in enumerate(ranked) if e["config"] == incumbent)
        ranked = [e for i, e in enumerate(ranked) if i == first or e["config"] != incumbent]
    composed = compose_by_phase(
        [{"config": e.config, "times_us": e.times_us} for e in sweep.entries if e.measured],
        list(sweep.shapes),
        list(sweep.weights),
        phases or {},
    )
    if composed is not None:
        ranked.append(
            {"config": composed["config"], "score_us": composed["score_us"], "composed": True}
        )
        ranked.sort(key=lambda e: e["score_us"])
    return {
        "incumbent_id": incumbent_id,
        "incumbent_config": incumbent,
        "measured": bool(sweep.measured),
        "reason": sweep.reason,
        "scripted": bool(sweep.scripted),
        "configs": len(enumeration.configs),
        "failed": len(sweep.failed),
        "pruned": len(enumeration.pruned),
        "already_tried": enumeration.already_tried,
        "product": enumeration.product,
        "how": enumeration.how,
        "seconds": round(float(sweep.seconds), 3),
        # the worker's own account of its seconds (benchmarks.harness.sweep.Sweep; a scripted
        # sweep may have none)
        "per_config_s": getattr(sweep, "per_config_s", None),
        "recompiled": getattr(sweep, "recompiled", 0),
        "phases_s": dict(getattr(sweep, "phases_s", None) or {}),
        "baseline_us": min(own) if own else None,
        "noise": None if noise is None else round(noise, 4),
        "gate": round(max(min_gain, noise or 0.0), 4),
        "ranked": ranked,
        "finalists": finalists,
        "proposed": [],
    }


def next_finalist(
    record: dict[str, Any], tried: list[dict[str, Any]]
) -> tuple[dict[str, Any] | None, int, str]:
    """The next finalist of a measured sweep (`sweep_record`): the best-ranked configuration
    faster than the incumbent's own there, not yet proposed or tried, while fewer than
    `finalists` were proposed. Returns (configuration, its rank from 1, "") or (None, 0, why
    the sweep has no more to offer)."""
    proposed = record["proposed"]
    total = record["configs"]
    if len(proposed) >= record["finalists"]:
        return (
            None,
            0,
            (
                f"sweep: the best {len(proposed)} of {total} configurations were judged "
                f"(agent.sweep_finalists = {record['finalists']})"
            ),
        )
    baseline = record["baseline_us"]
    gate = float(record.get("gate") or 0.0)  # records written before the gate had none
    for rank, entry in enumerate(record["ranked"], start=1):
        config = entry["config"]
        if config == record["incumbent_config"] or config in proposed or config in tried:
            continue
        if baseline is not None and entry["score_us"] >= baseline * (1.0 - gate):
            break  # ranked: every later one is slower still
        return config, rank, ""
    margin = f" by more than {gate:.0%}" if gate > 0 else ""
    return (
        None,
        0,
        (
            f"sweep: the best {len(proposed)} of {total} configurations were judged; no other "
            f"configuration was faster than the incumbent's own{margin} in the sweep"
        ),
    )
