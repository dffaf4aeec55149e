"""The offline search's configurations (agents/offline/search.py): the whole product when it is
small, else the incumbent, its neighbours and a seeded sample; configurations an attempt
already tried left out; those the hardware cannot hold pruned, by hand-computed shared memory and
accumulator registers; and the sweep's finalists, in rank order, only while faster than the
incumbent's own configuration."""

from __future__ import annotations

from types import SimpleNamespace

from agents.offline.search import (
    HOPPER_SMEM_PER_BLOCK,
    compose_by_phase,
    decode_tunables,
    enumerate_configs,
    neighbours,
    next_finalist,
    prune_reason,
    sweep_record,
)

SOFTMAX = {"BLOCK_N": [1024, 2048, 4096, 8192], "num_warps": [4, 8, 16]}
GEMM = {
    "BLOCK_M": [64, 128, 256],
    "BLOCK_N": [64, 128, 256],
    "BLOCK_K": [32, 64, 128],
    "num_warps": [4, 8],
    "num_stages": [2, 3, 4, 5],
}
GEMM_NOW = {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "num_warps": 4, "num_stages": 3}


def test_a_small_space_is_swept_whole_with_the_incumbent_first() -> None:
    current = {"BLOCK_N": 4096, "num_warps": 8}
    found = enumerate_configs(current, SOFTMAX, [], max_configs=48, dtype="fp32", seed="t")
    assert found.product == 12 and found.how == "the full product"
    assert found.configs[0] == current and len(found.configs) == 12
    assert len({tuple(sorted(c.items())) for c in found.configs}) == 12  # no repeats
    assert not found.pruned  # softmax's tunables are not tile names: never pruned


def test_configurations_already_tried_are_left_out_but_the_incumbent_stays() -> None:
    current = {"BLOCK_N": 4096, "num_warps": 8}
    tried = [current, {"BLOCK_N": 2048, "num_warps": 8}, {"BLOCK_N": 2048, "num_warps": 4}]
    found = enumerate_configs(current, SOFTMAX, tried, max_configs=48, dtype="fp32", seed="t")
    assert found.already_tried == 2 and len(found.configs) == 10
    assert found.configs[0] == current
    assert {"BLOCK_N": 2048, "num_warps": 8} not in found.configs


def test_a_large_space_gives_neighbours_first_then_a_sample_the_same_every_time() -> None:
    # product 3*3*3*2*4 = 216 > 48
    found = enumerate_configs(GEMM_NOW, GEMM, [], max_configs=30, dtype="bf16", seed="gemm_bf16")
    assert found.product == 216 and found.how.startswith("the incumbent, its coordinate")
    assert len(found.configs) == 30 and found.configs[0] == GEMM_NOW
    near = [c for c in neighbours(GEMM_NOW, GEMM) if prune_reason(c, "bf16") is None]
    assert found.configs[1 : 1 + len(near)] == near  # every neighbour, nearest first
    again = enumerate_configs(GEMM_NOW, GEMM, [], max_configs=30, dtype="bf16", seed="gemm_bf16")
    assert again.configs == found.configs  # seeded from the task id: reproducible
    other = enumerate_configs(GEMM_NOW, GEMM, [], max_configs=30, dtype="bf16", seed="other")
    assert other.configs[: 1 + len(near)] == found.configs[: 1 + len(near)]
    assert other.configs != found.configs
    assert all(prune_reason(c, "bf16") is None for c in found.configs)


def test_shared_memory_is_pruned_by_hand_computed_sizes() -> None:
    # 3 stages x (128x64 + 64x256) x 2 bytes = 147456 B = 144 KB: fits 227 KB
    assert prune_reason({**GEMM_NOW, "BLOCK_N": 256, "num_warps": 8}, "bf16") is None
    # the same tile in fp32: 294912 B = 288 KB > 227 KB (the codegen's comment: fp32 keeps smaller tiles)
    why = prune_reason({**GEMM_NOW, "BLOCK_N": 256, "num_warps": 8}, "fp32")
    assert why is not None and "288 KB of shared memory" in why and "227 KB" in why
    # 5 stages x (128x128 + 128x128) x 2 = 327680 B > 232448 B; 3 stages: 196608 B fits
    big_k = {**GEMM_NOW, "BLOCK_K": 128, "num_stages": 5}
    assert 5 * (128 * 128 + 128 * 128) * 2 > HOPPER_SMEM_PER_BLOCK
    assert "320 KB" in (prune_reason(big_k, "fp16") or "")
    assert prune_reason({**big_k, "num_stages": 3}, "fp16") is None
    # without a stages tunable one stage is assumed (a lower bound): 1 x (256x128 + 128x256) x 4
    # = 262144 B > 227 KB, so even that is pruned; 2 bytes: 131072 B fits
    no_stages = {"BLOCK_M": 256, "BLOCK_N": 256, "BLOCK_K": 128}
    assert "256 KB" in (prune_reason(no_stages, "fp32") or "")
    assert prune_reason(no_stages, "bf16") is None


def test_accumulator_registers_are_pruned_by_hand_computed_counts() -> None:
    # 256x256 / (32 x 4) = 512 registers per thread > 256; 8 warps: 256, the limit itself
    small_k = {**GEMM_NOW, "BLOCK_M": 256, "BLOCK_N": 256, "BLOCK_K": 32, "num_stages": 2}
    why = prune_reason({**small_k, "num_warps": 4}, "bf16")
    assert why is not None and "512 registers per thread" in why
    assert prune_reason({**small_k, "num_warps": 8}, "bf16") is None
    # the decode kernel's names: 64x256 / (32 x 2) = 256 fits, 2 warps for 128x256 = 512 does not
    decode = {"DECODE_BLOCK_M": 64, "DECODE_BLOCK_N": 256, "DECODE_BLOCK_K": 64}
    assert prune_reason({**decode, "DECODE_WARPS": 2, "DECODE_STAGES": 4}, "bf16") is None
    assert "512 registers" in (
        prune_reason({**decode, "DECODE_BLOCK_M": 128, "DECODE_WARPS": 2}, "bf16") or ""
    )
    # decode shared memory: 5 x (64x256 + 256x256) x 2 = 819200 B
    assert "800 KB" in (
        prune_reason({**decode, "DECODE_BLOCK_K": 256, "DECODE_STAGES": 5}, "bf16") or ""
    )


def test_kernels_without_tile_names_are_never_pruned() -> None:
    assert prune_reason({"BLOCK_M": 4096, "BLOCK_N": 4096, "num_warps": 1}, "fp32") is None
    assert prune_reason({"BLOCK": 1 << 20, "num_warps": 1}, "fp32") is None


def test_the_pruned_are_counted_and_never_swept() -> None:
    space = {"BLOCK_M": [128, 256], "BLOCK_N": [128, 256], "BLOCK_K": [64], "num_warps": [4, 8]}
    now = {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "num_warps": 4}
    found = enumerate_configs(now, space, [], max_configs=48, dtype="bf16", seed="t")
    # only 256x256 over 4 warps (512 registers) is pruned: 8 - 1 = 7 configurations
    assert len(found.configs) == 7 and len(found.pruned) == 1
    assert found.pruned[0][0] == {"BLOCK_M": 256, "BLOCK_N": 256, "BLOCK_K": 64, "num_warps": 4}


def _record(
    scores: list[tuple[dict, float | None]], finalists: int = 2, min_gain: float = 0.0
) -> dict:
    entries = [
        SimpleNamespace(
            config=c, score=s, times_us={}, measured=s is not None, error="" if s else "boom"
        )
        for c, s in scores
    ]
    ranked = sorted(entries, key=lambda e: (not e.measured, e.score or 0.0))
    sweep = SimpleNamespace(
        measured=True,
        reason="",
        scripted=True,
        seconds=1.0,
        entries=ranked,
        failed=[e for e in ranked if not e.measured],
        entry_for=lambda c: next((e for e in entries if e.config == c), None),
        shapes=[],
        weights=[],
    )
    configs = [c for i, (c, _) in enumerate(scores) if c not in [d for d, _ in scores[:i]]]
    found = SimpleNamespace(configs=configs, pruned=[], already_tried=0, product=9, how="x")
    return sweep_record(sweep, found, incumbent_id=1, finalists=finalists, min_gain=min_gain)


def test_finalists_come_in_rank_order_while_faster_than_the_incumbents_own() -> None:
    a, b, c, d, e = ({"B": n} for n in (1, 2, 3, 4, 5))
    record = _record([(a, 10.0), (b, 8.0), (c, 9.0), (d, 12.0), (e, None)], finalists=3)
    assert record["baseline_us"] == 10.0 and record["failed"] == 1
    assert [r["config"] for r in record["ranked"]] == [b, c, a, d]
    assert next_finalist(record, []) == (b, 1, "")
    record["proposed"].append(b)
    assert next_finalist(record, []) == (c, 2, "")
    record["proposed"].append(c)
    config, _, why = next_finalist(record, [])  # a is the incumbent, d is slower than it
    assert config is None and why.startswith("sweep: the best 2 of 5 configurations were judged")
    assert "faster than the incumbent's own" in why


def test_the_finalists_end_at_the_setting_and_skip_what_was_tried() -> None:
    a, b, c, d = ({"B": n} for n in (1, 2, 3, 4))
    record = _record([(a, 10.0), (b, 8.0), (c, 9.0), (d, 9.5)], finalists=2)
    assert next_finalist(record, [b]) == (c, 2, "")  # b was judged already
    record["proposed"] += [c, d]
    config, _, why = next_finalist(record, [])
    assert config is None
    assert why == "sweep: the best 2 of 4 configurations were judged (agent.sweep_finalists = 2)"
    # the incumbent's own configuration failed in the sweep: every measured one may go
    record = _record([(a, None), (b, 8.0)], finalists=2)
    assert record["baseline_us"] is None and next_finalist(record, []) == (b, 1, "")


def test_a_finalist_must_beat_the_incumbent_by_the_gate() -> None:
    a, b, c, d = ({"B": n} for n in (1, 2, 3, 4))
    # the incumbent timed first (10.0) and last (10.4): 4 % apart, above the 2 % minimum
    record = _record([(a, 10.0), (b, 9.0), (c, 9.7), (d, 9.5), (a, 10.4)], 3, min_gain=0.02)
    assert record["configs"] == 4 and record["baseline_us"] == 10.0
    assert record["noise"] == 0.04 and record["gate"] == 0.04
    # the repeat is a probe, not a configuration of its own
    assert [r["config"] for r in record["ranked"]] == [b, d, c, a]
    assert next_finalist(record, []) == (b, 1, "")  # 10 % faster
    record["proposed"].append(b)
    assert next_finalist(record, []) == (d, 2, "")  # 5 % faster
    record["proposed"].append(d)
    config, _, why = next_finalist(record, [])  # c is 3 % faster: inside the gate
    assert config is None and "faster than the incumbent's own by more than 4% in" in why
    # without a repeat the gate is the minimum alone
    record = _record([(a, 10.0), (b, 9.9), (c, 9.7)], 3, min_gain=0.02)
    assert record["noise"] is None and record["gate"] == 0.02
    assert next_finalist(record, []) == (c, 1, "")
    record["proposed"].append(c)
    assert next_finalist(record, [])[0] is None  # b is 1 % faster


# -- decode tunables searched apart from the others, then composed --------------------------

SPLIT = {"BLOCK_M": [64, 128], "BLOCK_N": [64, 128], "DECODE_BLOCK_N": [32, 64], "SPLIT_K": [0, 4]}
SPLIT_NOW = {"BLOCK_M": 128, "BLOCK_N": 128, "DECODE_BLOCK_N": 64, "SPLIT_K": 0}


def test_decode_tunables_are_named_so() -> None:
    assert decode_tunables(list(SPLIT)) == ["DECODE_BLOCK_N", "SPLIT_K"]
    assert decode_tunables(list(GEMM)) == []


def test_a_large_split_space_samples_one_class_at_a_time() -> None:
    space = {
        **{f"P{i}": [1, 2, 3, 4] for i in range(4)},
        **{f"DECODE_{i}": [1, 2, 3, 4] for i in range(4)},
    }
    now = {n: 1 for n in space}
    found = enumerate_configs(now, space, [], max_configs=40, dtype="bf16", seed="t")
    assert len(found.configs) == 40 and "each with the other class" in found.how
    for config in found.configs:
        changed = {n for n in config if config[n] != now[n]}
        decode = {n for n in changed if n.startswith("DECODE_")}
        assert not (decode and changed - decode), config  # never both classes at once


def test_the_best_decode_and_the_best_other_values_are_composed() -> None:
    shapes, weights = ["pre", "dec"], [0.6, 0.4]
    phases = {"pre": "prefill", "dec": "decode"}
    fast_prefill = {**SPLIT_NOW, "BLOCK_M": 64}  # prefill 80 (from 100), decode unchanged 10
    fast_decode = {**SPLIT_NOW, "SPLIT_K": 4}  # decode 5 (from 10), prefill unchanged 100
    entries = [
        {"config": SPLIT_NOW, "times_us": {"pre": 100.0, "dec": 10.0}},
        {"config": fast_prefill, "times_us": {"pre": 80.0, "dec": 10.0}},
        {"config": fast_decode, "times_us": {"pre": 100.0, "dec": 5.0}},
    ]
    composed = compose_by_phase(entries, shapes, weights, phases)
    assert composed is not None and composed["composed"]
    assert composed["config"] == {**SPLIT_NOW, "BLOCK_M": 64, "SPLIT_K": 4}
    assert composed["times_us"] == {"pre": 80.0, "dec": 5.0}
    # the weighted geometric mean of 80 and 5 with weights 0.6 and 0.4, by hand
    assert abs(composed["score_us"] - (80.0**0.6) * (5.0**0.4)) < 1e-9
    # nothing to compose: no decode shape, or tunables that do not split
    assert compose_by_phase(entries, ["pre"], [1.0], {"pre": "prefill"}) is None
    plain = [{"config": {"BLOCK_M": 64}, "times_us": {"pre": 1.0, "dec": 1.0}}]
    assert compose_by_phase(plain, shapes, weights, phases) is None


def test_the_composed_configuration_is_ranked_by_the_score_its_times_imply() -> None:
    fast_prefill = {**SPLIT_NOW, "BLOCK_M": 64}
    fast_decode = {**SPLIT_NOW, "SPLIT_K": 4}
    times = [(SPLIT_NOW, 100.0, 10.0), (fast_prefill, 80.0, 10.0), (fast_decode, 100.0, 5.0)]
    entries = [
        SimpleNamespace(
            config=c,
            times_us={"pre": p, "dec": d},
            score=(p**0.5) * (d**0.5),
            measured=True,
            error="",
        )
        for c, p, d in times
    ]
    sweep = SimpleNamespace(
        measured=True,
        reason="",
        scripted=True,
        seconds=1.0,
        entries=entries,
        failed=[],
        entry_for=lambda c: next((e for e in entries if e.config == c), None),
        shapes=["pre", "dec"],
        weights=[1.0, 1.0],
    )
    found = SimpleNamespace(
        configs=[c for c, _, _ in times], pruned=[], already_tried=0, product=16, how="x"
    )
    phases = {"pre": "prefill", "dec": "decode"}
    record = sweep_record(sweep, found, incumbent_id=1, finalists=2, phases=phases)
    first = record["ranked"][0]
    assert first["composed"] and first["config"] == {**SPLIT_NOW, "BLOCK_M": 64, "SPLIT_K": 4}
    assert next_finalist(record, []) == (first["config"], 1, "")
