"""Shapes the candidate cannot guess (benchmarks/harness/shapes.py): CPU shapes drawn per
evaluation from a seed, ties between dims kept, dims the reference refuses kept as declared and
said so, and a ragged correctness-only GPU shape for every task."""

import math
from pathlib import Path

import pytest

from benchmarks.harness import shapes
from benchmarks.harness.judge import JudgeConfig, evaluate
from benchmarks.loading import get_task, load_all, load_task_file
from benchmarks.verdict import ShapeResult, Verdict

TESTS = Path(__file__).resolve().parent
SOFTMAX = TESTS.parent / "benchmarks" / "tasks" / "normalization" / "softmax.py"


def _cpu(task_id: str, seed: int) -> shapes.ShapePlan:
    return shapes.plan_shapes(get_task(task_id), "cpu", None, seed)


def test_the_same_seed_draws_the_same_shapes_and_another_seed_others():
    a, b = _cpu("softmax_fp32", 7), _cpu("softmax_fp32", 7)
    assert [s.dims for s in a.shapes] == [s.dims for s in b.shapes]
    assert a.seed == 7
    others = {
        tuple(tuple(s.dims.items()) for s in _cpu("softmax_fp32", k).shapes) for k in range(8)
    }
    assert len(others) > 4


@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5])
def test_drawn_softmax_shapes_are_ragged_unlike_the_declared_and_one_is_wide(seed):
    task = get_task("softmax_fp32")
    plan = shapes.plan_shapes(task, "cpu", None, seed)
    declared = {s.name: s.dims for s in task.cpu_shapes}
    assert [s.derived_from for s in plan.shapes] == list(declared)
    for s in plan.shapes:
        assert s.dims != declared[s.derived_from]
        assert s.dims["N"] % shapes.UNALIGNED, s.dims  # never a multiple of 8 (nor 16, 128)
        assert task.min_bytes(s.dims) <= shapes.WIDE_BUDGET_FACTOR * max(
            task.min_bytes(d) for d in declared.values()
        )
    assert any(s.dims["N"] > shapes.WIDE_ABOVE for s in plan.shapes)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_ties_the_declared_shapes_keep_are_kept(seed):
    for s in _cpu("attn_causal_prefill_fp32", seed).shapes:
        assert s.dims["H"] % s.dims["HKV"] == 0 and math.log2(s.dims["D"]).is_integer(), s.dims
    for s in _cpu("groupnorm_silu_fp32", seed).shapes:
        assert s.dims["C"] % s.dims["G"] == 0, s.dims
    for s in _cpu("fp8_act_block_quant_fp32", seed).shapes:
        assert s.dims["K"] % 128 == 0, s.dims
    for s in _cpu("attn_paged_decode_fp32", seed).shapes:
        assert s.dims["PAGE"] == 16


def test_a_dim_the_reference_refuses_to_vary_is_kept_and_recorded(tmp_path):
    src = SOFTMAX.read_text().replace(
        "def make_inputs(dims, dtype, mode, gen):\n",
        "def make_inputs(dims, dtype, mode, gen):\n"
        '    assert dims["N"] in (128, 1000, 128256, 4096, 152064), "N is fixed by the model"\n',
    )
    path = tmp_path / "softmax_fixed_n.py"
    path.write_text(src)
    task = load_task_file(path)[0]
    plan = shapes.plan_shapes(task, "cpu", None, 3)
    declared = {s.name: s.dims for s in task.cpu_shapes}
    for s in plan.shapes:
        assert s.dims["N"] == declared[s.derived_from]["N"]
        assert s.dims["M"] != declared[s.derived_from]["M"]  # M still moves
    reasons = [u.reason for u in plan.unchecked]
    assert any("dim N kept at 1000: could not be varied" in r for r in reasons), reasons
    assert any(f"no dim drawn above {shapes.WIDE_ABOVE}" in r for r in reasons), reasons


def test_unvaried_parameters_and_gpu_shapes_are_listed_as_unchecked():
    plan = _cpu("pad_constant2d_fp32", 1)
    reasons = [u.reason for u in plan.unchecked]
    assert any("dim GREY kept" in r and "small parameter" in r for r in reasons), reasons
    gpu = {s.name for s in get_task("pad_constant2d_fp32").shapes}
    assert gpu <= {u.shape for u in plan.unchecked if "GPU shape" in u.reason}


def test_selection_by_declared_name_draws_only_that_shape():
    plan = shapes.plan_shapes(get_task("softmax_fp32"), "cpu", ("tail",), 1)
    assert [s.derived_from for s in plan.shapes] == ["tail"]
    assert "tiny" in {u.shape for u in plan.unchecked if "not selected" in u.reason}


def test_every_task_has_a_ragged_gpu_shape():
    """Derived from the smallest GPU shape (checked against the reference on the GPU: see
    tests/test_shapes_gpu.py): some size is no longer a multiple of 16."""
    missing = {}
    for task in load_all().values():
        dims, why = shapes.ragged_dims(task)
        if dims is None:
            missing[task.id] = why
            continue
        base = shapes.smallest_shape(task).dims
        moved = [d for d in dims if dims[d] != base[d]]
        assert moved and any(dims[d] % shapes.RAGGED for d in moved), (task.id, base, dims)
    assert not missing, missing


def test_the_ragged_shape_is_correctness_only_and_never_scored():
    shape, why = shapes.ragged_shape(get_task("softmax_fp16"), device=None)
    assert shape is not None, why
    assert shape.correctness_only and shape.weight == 0 and shape.name.endswith(".ragged")
    assert shape.dims == {"M": 13, "N": 152063}
    declared = list(get_task("softmax_fp16").shapes)
    assert shapes.scored([*declared, shape]) == declared


def test_a_fresh_shape_seed_is_drawn_once_per_evaluation_and_a_given_one_kept():
    assert shapes.with_shape_seed(JudgeConfig(shape_seed=42)).shape_seed == 42
    seeds = {shapes.with_shape_seed(JudgeConfig()).shape_seed for _ in range(5)}
    assert None not in seeds and len(seeds) > 1


def test_old_verdicts_without_shape_fields_still_load():
    old = Verdict(task_id="softmax_fp32").model_dump(mode="json")
    for key in ("shape_seed", "shape_plan", "unchecked_shapes"):
        old.pop(key)
    v = Verdict.model_validate(old)
    assert v.shape_seed is None and v.shape_plan == {} and v.unchecked_shapes == []
    sr = ShapeResult.model_validate({"shape": "x", "dims": {"M": 1}, "dtype": "fp32"})
    assert sr.derived_from == "" and not sr.correctness_only


def test_the_verdict_records_the_seed_the_shapes_judged_and_what_went_unchecked():
    config = JudgeConfig(device="cpu", trials=1, timeout_s=120, shape_seed=5, trusted=True)
    v = evaluate(get_task("softmax_fp32"), TESTS / "hostile" / "good_softmax.py", config)
    assert v.passed, v.message
    plan = shapes.plan_shapes(get_task("softmax_fp32"), "cpu", None, 5)
    assert v.shape_seed == 5
    assert v.shape_plan == {s.name: s.dims for s in plan.shapes}
    assert {s.shape: s.derived_from for s in v.shapes} == {
        "tiny.drawn": "tiny",
        "tail.drawn": "tail",
    }
    assert {s.shape: s.dims for s in v.shapes} == v.shape_plan
    assert any("GPU shape" in u.reason for u in v.unchecked_shapes)
    again = Verdict.model_validate_json(v.model_dump_json())
    assert again.shape_seed == 5 and again.unchecked_shapes == v.unchecked_shapes


def test_the_gpu_plan_adds_the_ragged_shape_and_perf_scores_only_the_declared(monkeypatch):
    """The GPU side with the reference check stubbed (it runs on the device in
    tests/test_shapes_gpu.py): the ragged shape joins the declared ones, the perf stage gets only
    the declared ones, and the score is theirs alone."""
    from test_perf_stage import _peaks as peaks_dict  # recorded H200 peaks
    from test_perf_stage import recorded_baselines

    from benchmarks.harness import perf

    monkeypatch.setattr(shapes, "reference_error", lambda task, dims, device="cpu": None)
    task = get_task("softmax_fp16")
    plan = shapes.plan_shapes(task, "cuda", None, None)
    assert [s.name for s in plan.shapes] == [s.name for s in task.shapes] + [
        "qwen2_7b_logits_tail.ragged"
    ]
    assert plan.seed is None
    timed = shapes.scored(plan.shapes)
    assert [s.name for s in timed] == [s.name for s in task.shapes]
    base = {
        "status": "ok",
        "peaks": peaks_dict(),
        "shapes": {s.name: {"eager_us": 100.0, "compile_us": 50.0} for s in timed},
    }
    recorded_baselines(monkeypatch, base)
    cand = {s.name: {"candidate_us": 1000.0, "method": "events"} for s in timed}
    v = Verdict(task_id=task.id, device="cuda", passed=True)
    v.shapes = [ShapeResult(shape=s.name, dims=s.dims, dtype=task.dtype) for s in plan.shapes]
    shapes.mark_results(v, plan.shapes)
    perf.fill_perf(v, task, timed, cand, JudgeConfig(device="cuda", baseline_cache="off"))
    ragged = v.shapes[-1]
    assert ragged.correctness_only and ragged.derived_from == "qwen2_7b_logits_tail"
    assert ragged.candidate_us is None and ragged.attainment is None
    assert v.score is not None and all(s.attainment for s in v.shapes[:-1])


def test_drawn_cpu_shapes_keep_the_contracts_a_reference_states():
    """Two contracts the dims' ties do not carry, stated by the task and now checked by its
    reference: causal softmax's queries are the last SQ of SK positions (SQ <= SK), and Swin's
    shift is less than the map (0 < S < min(H, W)). A CPU sweep of every solution over drawn
    shapes (2026-12-03) found draws breaking both, failing honest solutions."""
    from benchmarks.harness.shapes import plan_shapes
    from benchmarks.loading import get_task

    for seed in range(40):
        plan = plan_shapes(get_task("causal_scaled_softmax_fp32"), "cpu", None, seed)
        assert all(s.dims["SQ"] <= s.dims["SK"] for s in plan.shapes), seed
        plan = plan_shapes(get_task("swin_cyclic_roll_fp16"), "cpu", None, seed)
        assert all(0 < s.dims["S"] < min(s.dims["H"], s.dims["W"]) for s in plan.shapes), seed
