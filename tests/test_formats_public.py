"""Public suites as they are published, on the CPU path: small files written for these tests in
each published form (tests/fixtures/public/: KernelBench levels 1-3 idioms, a KernelBench-X tree
with its `utils/` helpers), loaded file by file, shrunk, flagged, and judged."""

import ast
import shutil
import time
from pathlib import Path

import pytest
import torch
from typer.testing import CliRunner

from agents.cli.main import app
from benchmarks.formats import suite_imports
from benchmarks.formats.shrink import sites, size_constants, with_sizes
from benchmarks.formats.tritonbench import CallSpec
from benchmarks.harness.judge import JudgeConfig, evaluate
from benchmarks.harness.static_check import check_source
from benchmarks.inputs import amplify_outliers, in_range_outliers, signed
from benchmarks.loading import get_task, load_folder
from benchmarks.verdict import ErrorClass

PUBLIC = Path(__file__).resolve().parent / "fixtures" / "public"
KB = PUBLIC / "kernelbench"
KBX = PUBLIC / "kernelbench_x"
CANDIDATES = PUBLIC / "candidates"
CPU = JudgeConfig(device="cpu", trials=1, timeout_s=240)


def flat(output: str) -> str:
    return " ".join(output.split())


def task(rel: str):
    return get_task(str(PUBLIC / rel))


# -- sizes: every idiom is a dim, rewritten in place ------------------------------------------

IDIOMS = """
import math
import torch
batch_size = 16
N = 2048 * 2
height = width = 128
d, h, w = 16, 32, 32
input_shape = (32768,)
derived = 4 * N
unrelated = 99999
computed = math.prod((4, 4))
def get_inputs():
    return [torch.randn(batch_size, N), torch.rand(d, h, w, height, width), torch.randn(*input_shape),
            torch.randn(16, 16384), torch.randint(0, 10, (derived,)), torch.zeros(computed)]
def get_init_inputs():
    return []
"""


def test_every_size_idiom_is_a_dim_and_is_rewritten_where_it_is_written():
    tree = ast.parse(IDIOMS)
    dims = size_constants(tree, ("get_inputs", "get_init_inputs"))
    assert dims == {
        "batch_size": 16,
        "N": 4096,
        "height": 128,
        "width": 128,
        "d": 16,
        "h": 32,
        "w": 32,
        "input_shape[0]": 32768,
        "get_inputs.randn2[0]": 16,
        "get_inputs.randn2[1]": 16384,
    }  # `derived` follows N; `unrelated` sizes nothing; `computed` is a call, not a literal
    kinds = {s.name: s.kind for s in sites(tree, ("get_inputs",), ("get_inputs",))}
    assert kinds["height"] == "chained" and kinds["d"] == "tuple"
    assert kinds["input_shape[0]"] == "tuple literal"
    assert kinds["get_inputs.randn2[1]"] == "get_inputs literal"
    small = dict(dims, N=64, height=8, width=4, h=2, **{"input_shape[0]": 64})
    small["get_inputs.randn2[1]"] = 32
    namespace: dict = {}
    exec(compile(with_sizes(tree, small), "<idioms>", "exec"), namespace)  # noqa: S102
    shapes = [tuple(t.shape) for t in namespace["get_inputs"]()]
    assert shapes == [(16, 64), (16, 2, 32, 8, 4), (64,), (16, 32), (256,), (16,)]
    assert (namespace["height"], namespace["width"], namespace["derived"]) == (8, 4, 256)


@pytest.mark.parametrize(
    ("rel", "cpu_dims", "note"),
    [
        ("level1/1_Square_matmul_expr.py", {"N": 64}, "N 4096→64"),
        ("level1/57_conv2d_chained.py", {"height": 16, "width": 16}, "height 128→16, width 128→16"),
        ("level1/60_conv3d_tuple.py", {"d": 8, "h": 8, "w": 8}, "d 16→8, h 32→8, w 32→8"),
        ("level1/47_sum_tuple_shape.py", {"input_shape[0]": 64}, "input_shape[0] 32768→64"),
        ("level1/23_softmax_literals.py", {"get_inputs.randn0[1]": 64}, "randn0[1] 16384→64"),
        (
            "level3/vit_patches.py",
            {"image_size": 48, "patch_size": 16},
            "image_size kept at 48 (published 224): shrunk to 3 the problem fails "
            "(Model(*get_init_inputs()) raised AssertionError: image dimensions must be divisible",
        ),
        (
            "level1/81_conv_transposed_stride5.py",
            {"stride": 5, "kernel_size": 3, "height_in": 4},
            "kept at the published values (constructor arguments that shape the operator, not "
            "its size): stride 5",
        ),
    ],
    ids=lambda v: v if isinstance(v, str) and v.endswith(".py") else "",
)
def test_kernelbench_idioms_are_shrunk_checked_and_noted(rel, cpu_dims, note):
    t = task(f"kernelbench/{rel}")
    dims = t.cpu_shapes[0].dims
    assert {k: dims[k] for k in cpu_dims} == cpu_dims
    assert any(note in n for n in t.notes_for("cpu")), t.notes_for("cpu")
    assert t.refusal("cpu") is None
    # the model builds and runs at the shrunk sizes, and its inputs fit the interpreter
    args = t.make_inputs(dims, "standard", torch.Generator().manual_seed(0))
    assert sum(a.numel() for a in args) <= 1 << 16
    out = t.reference_for(dims)(*args)
    assert out.numel() > 0


def test_constructor_arguments_are_kept_unless_the_problem_cannot_fit_with_them():
    """A constructor-only dim up to HYPER_MAX (a stride, a kernel size) keeps its published
    value; where the problem cannot fit the CPU budget with it kept, it is shrunk like the
    others, and the notes say which happened."""
    from benchmarks.formats import cpu_sizes

    def probe(power: int):
        return lambda d: cpu_sizes.Probe(None, elements=d["n"] ** 3 * d["k"] ** power)

    dims = {"n": 4096, "k": 12}
    kept = cpu_sizes.search(dims, probe(2), {"k"}, {"k"})
    assert kept.dims == {"n": 4, "k": 12} and kept.refusal is None
    assert any("kept at the published values" in n and "k 12" in n for n in kept.notes)
    assert cpu_sizes.search(dims, probe(2), {"k"}).dims == {"n": 8, "k": 6}  # a size: shrunk

    # with k kept, 4^3 x 12^4 is over the budget even at the smallest cap: k is shrunk too
    shrunk = cpu_sizes.search(dims, probe(4), {"k"}, {"k"})
    assert shrunk.refusal is None and shrunk.dims["k"] < 12
    assert any("constructor arguments shrunk too (k)" in n for n in shrunk.notes)


def test_two_dims_that_break_the_problem_only_together_are_repaired_together():
    """A kept 11x11 window over an image shrunk to 8x8: no dim alone repairs it (a 2048x8 image
    still has no output), the pair does, grown together to the smallest doubling that works."""
    from benchmarks.formats import cpu_sizes

    def probe(d: dict[str, int]) -> cpu_sizes.Probe:
        if min(d["h"], d["w"]) < d["k"]:
            return cpu_sizes.Probe("output size is too small")
        return cpu_sizes.Probe(None, elements=64 * d["b"] * d["h"] * d["w"])

    found = cpu_sizes.search({"b": 256, "h": 2048, "w": 2048, "k": 11}, probe, {"k"}, {"k"})
    assert found.refusal is None and found.dims == {"b": 4, "h": 16, "w": 16, "k": 11}
    assert any(n.startswith("h and w kept at 16 and 16 (published 2048") for n in found.notes)
    # the same problem with a window that is a size (not constructor-only) shrinks it instead
    assert cpu_sizes.search({"b": 256, "h": 2048, "w": 2048, "k": 11}, probe, {"k"}).dims == {
        "b": 8,
        "h": 8,
        "w": 8,
        "k": 5,
    }


def test_a_problem_too_large_for_the_cpu_is_refused_up_front_not_timed_out():
    t = task("kernelbench/level1/outer_prod_unshrinkable.py")
    refusal = t.refusal("cpu")
    assert refusal and "judged on the GPU only" in refusal and "4295098368 elements" in refusal
    assert t.refusal("cuda") is None
    started = time.monotonic()
    verdict = evaluate(t, CANDIDATES / "kb_relu_rand_good.py", CPU)
    assert time.monotonic() - started < 30  # no worker ran, nothing waited for a timeout
    assert not verdict.passed and "task_refused" in verdict.flags
    assert verdict.message.startswith("not judged: over the CPU interpreter's budget")
    assert verdict.error_class == ErrorClass.HARNESS_ERROR  # the task's limit, not the candidate's


# -- flags: tasks no kernel can pass ----------------------------------------------------------


@pytest.mark.parametrize(
    ("rel", "why"),
    [
        ("kernelbench/level1/dropout_train.py", "the reference is random"),
        ("kernelbench/level1/fft_complex.py", "complex tensors (torch.complex64)"),
        ("kernelbench/level1/mean_item.py", "returns float, not a tensor"),
        ("kernelbench_x/ops/allclose_bool.py", "returns bool, not a tensor"),
    ],
)
def test_tasks_no_kernel_can_pass_are_flagged_at_load_with_the_reason(rel, why):
    t = task(rel)
    assert len(t.cannot_pass()) == 1 and why in t.cannot_pass()[0]
    assert any(n.startswith("no kernel can pass this task: ") for n in t.notes_for("cuda"))


def test_passable_tasks_are_not_flagged():
    for rel in ("kernelbench/level1/19_ReLU_rand.py", "kernelbench_x/ops/softplus.py"):
        assert task(rel).cannot_pass() == ()


# -- input modes ------------------------------------------------------------------------------


def test_outlier_and_signed_modes_work_for_float64_and_complex():
    gen = torch.Generator().manual_seed(3)
    x64 = torch.randn(1000, dtype=torch.float64, generator=gen)
    o = amplify_outliers(x64, gen)
    assert o.dtype == torch.float64 and (o != x64).sum() >= 1 and o.abs().max() > 10
    z = torch.randn(1000, dtype=torch.complex64, generator=gen)
    oz = amplify_outliers(z, gen)
    assert oz.dtype == torch.complex64 and oz.abs().max() > 10 * z.abs().max() / 4
    r = torch.rand(1000, generator=gen)
    s = signed(r, gen)
    assert (s < 0).sum() > 300 and torch.equal(s.abs(), r)
    both = torch.randn(10, generator=gen)
    assert torch.equal(signed(both, gen), both)  # inputs of both signs are left as they are
    inside = in_range_outliers(r, gen)
    assert inside.min() >= r.min() and inside.max() <= r.max() and not torch.equal(inside, r)
    cumsum = task("kernelbench/level1/89_cumsum_float64.py")
    (x,) = cumsum.make_inputs(
        cumsum.cpu_shapes[0].dims, "outlier", torch.Generator().manual_seed(1)
    )
    assert x.dtype == torch.float64
    assert "torch.float64 inputs: compared with the fp32 tolerance" in cumsum.notes_for("cpu")


def test_a_reference_that_raises_on_outliers_gets_outliers_inside_its_domain():
    bce = task("kernelbench/level1/98_bce_loss.py")
    assert bce.outlier_kind == "in_range" and "outlier" in bce.modes
    assert any("raises on amplified outliers" in n for n in bce.notes_for("cpu"))
    dims = bce.cpu_shapes[0].dims
    for seed in range(3):
        p, y = bce.make_inputs(dims, "outlier", torch.Generator().manual_seed(seed))
        assert (
            0 <= float(p.min()) and float(p.max()) <= 1 and set(y.unique().tolist()) <= {0.0, 1.0}
        )
        bce.reference_for(dims)(p, y)  # no raise: the judge gets a verdict
    # signed inputs would break its domain: that mode is skipped, with the reason
    assert "signed" not in bce.modes
    assert any("mode 'signed' skipped" in n for n in bce.notes_for("cpu"))


def test_one_sided_published_inputs_get_a_signed_mode():
    relu = task("kernelbench/level1/19_ReLU_rand.py")
    assert relu.modes == ("standard", "outlier", "signed")
    dims = relu.cpu_shapes[0].dims
    (std,) = relu.make_inputs(dims, "standard", torch.Generator().manual_seed(0))
    (sgn,) = relu.make_inputs(dims, "signed", torch.Generator().manual_seed(0))
    assert float(std.min()) >= 0 and float(sgn.min()) < 0
    from benchmarks.harness.worker import load_module

    tb = task("kernelbench_x/ops/relu_positive.py")
    assert "signed" in tb.modes
    identity = load_module(CANDIDATES / "kbx_relu_identity.py", "kf_relu_identity").relu
    for mode, passes in (("standard", True), ("outlier", True), ("signed", False)):
        (x,) = tb.make_inputs({"call": 0}, mode, torch.Generator().manual_seed(4))
        want = tb.reference_for({"call": 0})(x)
        assert torch.allclose(tb.bind_candidate(identity, {"call": 0}, "cpu")(x), want) == passes
    assert "signed" not in task("kernelbench/level1/1_Square_matmul_expr.py").modes  # randn


def test_an_identity_cannot_pass_relu_on_torch_rand_inputs():
    bad = evaluate(
        task("kernelbench/level1/19_ReLU_rand.py"), CANDIDATES / "kb_relu_rand_identity.py", CPU
    )
    assert bad.error_class == ErrorClass.NUMERICAL_MISMATCH and "mode signed" in bad.message


# -- KernelBench-X: a tree with helpers, 'cuda' in its tests -----------------------------------


def test_kernelbench_x_tree_loads_file_by_file_with_its_helpers():
    suite = load_folder(KBX)
    ids = sorted(t.id for t in suite.tasks)
    assert ids == [
        "add_out_triton",
        "allclose_bool",
        "log_checked",
        "relu_positive",
        "scale_kwonly",
        "softplus",
    ]
    assert [h.name for h in suite.helpers] == ["data_utils.py"]  # a helper, not a task
    [bad] = suite.not_loaded
    assert bad.path.name == "broken_no_separator.py" and "separator" in bad.reason
    soft = next(t for t in suite.tasks if t.id == "softplus")
    # the tests put tensors on 'cuda' through the helper and call torch.cuda.synchronize()
    x, *_ = soft.make_inputs({"call": 0}, "standard", torch.Generator())
    assert x.device.type == "cpu" and tuple(x.shape) == (32, 64)
    assert [s.source for s in soft.shapes][2] == "test_softplus: softplus(float32[128], 0.5, 10.0)"


def test_calls_where_the_reference_raises_are_left_out_with_a_note():
    log = task("kernelbench_x/ops/log_checked.py")
    assert [s.name for s in log.shapes] == ["call0"]
    assert any(
        "1 call(s) of checked_log left out: the reference raises" in n
        for n in log.notes_for("cuda")
    )


def test_keyword_only_calls_are_recorded_and_passed_by_keyword():
    from benchmarks.harness.worker import load_module

    t = task("kernelbench_x/ops/scale_kwonly.py")
    assert [s.source.split(": ", 1)[1] for s in t.shapes] == [
        "scale_shift(float32[16, 32])",
        "scale_shift(float32[16, 32], factor=3.0)",
        "scale_shift(float32[16, 32], factor=0.5, shift=1.0)",
    ]
    ignoring = load_module(CANDIDATES / "kbx_scale_kwonly_ignores_keywords.py", "kf_kw_ignoring")
    good = load_module(CANDIDATES / "kbx_scale_kwonly_good.py", "kf_kw_good")
    with torch.no_grad():
        for dims, ok in (({"call": 0}, True), ({"call": 2}, False)):
            args = t.make_inputs(dims, "standard", torch.Generator())
            want = t.reference_for(dims)(*args)
            assert torch.allclose(t.bind_candidate(good.scale_shift, dims, "cpu")(*args), want)
            got = t.bind_candidate(ignoring.scale_shift, dims, "cpu")(*args)
            assert torch.allclose(got, want) == ok


def test_suite_helpers_resolve_in_the_sandboxed_worker_wherever_the_suite_is(tmp_path):
    tree = tmp_path / "somewhere" / "kbx"  # under /tmp: hidden from the sandbox, staged instead
    shutil.copytree(KBX, tree)
    staged = suite_imports.stage(tree / "ops" / "softplus.py", tmp_path / "inputs")
    assert staged == tmp_path / "inputs" / "ops" / "softplus.py"
    assert (tmp_path / "inputs" / "utils" / "data_utils.py").is_file()
    verdict = evaluate(
        get_task(str(tree / "ops" / "softplus.py")), CANDIDATES / "kbx_softplus_good.py", CPU
    )
    assert verdict.passed, verdict.message


def test_a_triton_reference_writing_into_out_is_judged_with_out_as_an_output():
    t = task("kernelbench_x/ops/add_out_triton.py")
    assert t.output_args({"call": 0}) == (2,)
    assert any("writes into argument(s) 2" in n for n in t.notes_for("cuda"))
    *_, out = t.make_inputs({"call": 0}, "standard", torch.Generator())
    assert bool(out.isnan().all())  # its torch.empty buffer, poisoned: the same in every process
    verdict = evaluate(t, CANDIDATES / "kbx_add_out_good.py", CPU)
    assert verdict.passed, verdict.message


def test_a_tuple_returned_beside_written_buffers_is_compared_item_by_item():
    """An optimizer step that updates its tensors in place and returns them as a tuple: the
    outputs are the tuple's items, then the buffers (not a tuple nested in the outputs, which
    the comparison cannot read)."""
    spec = CallSpec(positional=2, writes=(0,), returns=True)

    def step(p, g):
        p.sub_(g)
        return p, g * 2

    p, g = torch.ones(3), torch.ones(3)
    outs = spec.call(step, (p, g))
    assert len(outs) == 3 and all(isinstance(o, torch.Tensor) for o in outs)
    assert torch.equal(outs[0], torch.zeros(3)) and torch.equal(outs[1], torch.full((3,), 2.0))
    assert torch.equal(outs[2], torch.zeros(3)) and torch.equal(p, torch.ones(3))  # copied


# -- the static check: the problem's own layers are not tensor methods -------------------------


def test_a_layer_named_like_a_tensor_method_is_the_classes_own_attribute():
    t = task("kernelbench/level2/40_Matmul_Scaling_ResidualAdd.py")
    source = (CANDIDATES / "kb_40_matmul_layer_good.py").read_text()
    params = list(t.signature().parameters)
    assert check_source(source, entry_point="ModelNew", params=params, entry_kind="class").ok
    as_layer = source.replace("w, b = self.matmul.weight, self.matmul.bias", "y = self.matmul(x)")
    assert check_source(as_layer, entry_point="ModelNew", params=params, entry_kind="class").ok
    for compute in ("y = self.matmul.weight.matmul(x)", "y = x.matmul(self.matmul.weight)"):
        bad = check_source(
            source.replace("w, b = self.matmul.weight, self.matmul.bias", compute),
            entry_point="ModelNew",
            params=params,
            entry_kind="class",
        )
        assert not bad.ok and "Tensor.matmul is PyTorch compute" in bad.message


# -- the CLI on folder suites ------------------------------------------------------------------


def test_tasks_list_and_check_work_on_a_folder_suite(capsys):
    from benchmarks.selfcheck import main as selfcheck

    result = CliRunner().invoke(app, ["tasks", "list", "--suite", str(KBX)])
    assert result.exit_code == 0, result.output
    out = flat(result.output)
    assert "6 tasks (1 flagged), 1 file(s) not loaded" in out
    assert "broken_no_separator.py: field separator" in out and "cannot pass" in out
    code = selfcheck(["--suite", str(KBX), "--device", "cpu"])
    printed = capsys.readouterr().out
    assert code == 1  # the file that does not load fails the check, the others pass
    assert "6 passed, 1 failed" in printed
    assert "FAIL " in printed and "broken_no_separator.py: not loaded" in printed


def test_bench_plans_a_folder_suite_and_starts_each_run_on_its_file(tmp_path, monkeypatch):
    import agents.api
    from agents.bench import make_plan
    from agents.bench.cells import execute_cell

    plan = make_plan(tmp_path / "bench", suite=str(KBX), llm="offline", device="cpu")
    assert sorted(plan.tasks) == [
        "add_out_triton",
        "log_checked",
        "relu_positive",
        "scale_kwonly",
        "softplus",
    ]
    assert "no kernel can pass it" in plan.excluded["allclose_bool"]  # kept out of the bench
    assert any(k.endswith("broken_no_separator.py") for k in plan.excluded)
    started = []
    monkeypatch.setattr(agents.api, "run", lambda task, **kw: started.append(task))
    cell = next(c for c in plan.cells() if c.task == "softplus")
    execute_cell(plan, cell)
    assert started == [str((KBX / "ops" / "softplus.py").resolve())]
