"""KernelBench- and TritonBench-style problem files through the same judge (benchmarks/formats):
our own fixture problems under tests/fixtures/, candidates for them under
tests/fixtures/candidates/ (each header names the verdict it must get), all on the CPU."""

from pathlib import Path

import pytest
import torch
from hostile_manifest import load_hostile
from typer.testing import CliRunner

from benchmarks.formats import detect_format
from benchmarks.formats.common import COST_NOTE
from benchmarks.harness.judge import JudgeConfig, evaluate
from benchmarks.harness.static_check import check_source
from benchmarks.loading import folder_tasks, get_task, load_task_file
from benchmarks.suites import suite_tasks
from benchmarks.task import TaskError
from benchmarks.verdict import ErrorClass

FIXTURES = Path(__file__).resolve().parent / "fixtures"
KB = FIXTURES / "kernelbench"
TB = FIXTURES / "tritonbench"
CANDIDATES = load_hostile(FIXTURES / "candidates")
CPU = JudgeConfig(device="cpu", trials=1, timeout_s=120)


def flat(output: str) -> str:
    """CLI output with rich's line wrapping undone."""
    return " ".join(output.split())


# -- the judge on imported tasks ------------------------------------------------------------


@pytest.fixture(scope="module")
def verdicts():
    """Each fixture candidate judged once (by name), shared by the tests that read its verdict."""
    cache = {}

    def judge(name):
        if name not in cache:
            case = next(c for c in CANDIDATES if c.name == name)
            cache[name] = evaluate(get_task(str(FIXTURES / case.task)), case.path, CPU)
        return cache[name]

    return judge


@pytest.mark.parametrize("case", CANDIDATES, ids=lambda c: c.name)
def test_imported_task_candidate_gets_its_verdict(case, verdicts):
    verdict = verdicts(case.name)
    assert verdict.error_class == case.expect, verdict.message
    assert verdict.passed == (case.expect == ErrorClass.NONE)
    assert COST_NOTE in verdict.notes  # imported costs are always marked as estimates
    if verdict.passed:
        assert verdict.shapes and all(s.flops is not None and s.bytes for s in verdict.shapes)
    if case.expect == ErrorClass.FALLBACK:
        assert "addmm" in verdict.fallback_ops  # the nn.Linear called inside ModelNew.forward
    if case.expect == ErrorClass.PARAMETER_MISMATCH:
        assert "size mismatch for linear.weight" in verdict.message
        assert verdict.stage_reached is not None and verdict.stage_reached.value == "static"


def test_linear_candidate_passes_with_estimated_matmul_flops(verdicts):
    verdict = verdicts("kb_linear_good")
    assert verdict.passed, verdict.message
    [shape] = verdict.shapes
    # the CPU shape is drawn from the shrunk sizes (batch_size 64, in 64, out 62) per evaluation
    assert shape.derived_from == "cpu" and shape.dims == verdict.shape_plan[shape.shape]
    b, i, o = (shape.dims[k] for k in ("batch_size", "in_features", "out_features"))
    assert shape.flops == 2 * b * i * o
    # inputs, output, weight and bias, fp32, each once
    assert shape.bytes == 4 * (b * i + b * o + o * i + o)
    assert (
        "sizes shrunk for the CPU interpreter: batch_size 128→64, in_features 4096→64, out_features 1000→62"
        in verdict.notes
    )


# -- KernelBench files --------------------------------------------------------------------------


def test_kernelbench_file_becomes_a_class_entry_task():
    task = get_task(str(KB / "relu.py"))
    assert (task.id, task.category, task.entry_point, task.entry_kind, task.dtype) == (
        "relu",
        "kernelbench",
        "ModelNew",
        "class",
        "fp32",
    )
    assert list(task.signature().parameters) == ["x"]
    assert task.shapes[0].dims == {"batch_size": 16, "dim": 16384}
    assert task.cpu_shapes[0].dims == {"batch_size": 16, "dim": 64}
    assert "sizes shrunk for the CPU interpreter: dim 16384→64" in task.notes_for("cpu")
    assert task.notes_for("cuda") == [COST_NOTE]


def test_shrinking_follows_derived_constants_and_init_inputs():
    softmax = get_task(str(KB / "row_softmax.py"))
    assert softmax.cpu_shapes[0].dims == {"rows": 8, "block": 64}  # cols = 4 * block follows
    (x,) = softmax.make_inputs(
        softmax.cpu_shapes[0].dims, "standard", torch.Generator().manual_seed(0)
    )
    assert tuple(x.shape) == (8, 256)
    linear = get_task(str(KB / "linear_bias.py"))
    model = linear.model(linear.cpu_shapes[0].dims, "cpu")
    assert tuple(model.linear.weight.shape) == (62, 64)  # get_init_inputs read the shrunk sizes


def test_kernelbench_inputs_are_seeded_outliers_amplify_and_global_rng_is_left_alone():
    task = get_task(str(KB / "relu.py"))
    dims = task.cpu_shapes[0].dims
    state = torch.get_rng_state()
    (a,) = task.make_inputs(dims, "standard", torch.Generator().manual_seed(5))
    (b,) = task.make_inputs(dims, "standard", torch.Generator().manual_seed(5))
    (c,) = task.make_inputs(dims, "standard", torch.Generator().manual_seed(6))
    (o,) = task.make_inputs(dims, "outlier", torch.Generator().manual_seed(5))
    assert torch.equal(torch.get_rng_state(), state)
    assert torch.equal(a, b) and not torch.equal(a, c)
    assert o.abs().max() > 10 * a.abs().max() and (o != a).sum() < a.numel() // 10


def test_modelnew_is_built_with_the_models_weights():
    from benchmarks.harness.worker import load_module

    task = get_task(str(KB / "linear_bias.py"))
    dims = task.cpu_shapes[0].dims
    module = load_module(FIXTURES / "candidates" / "kb_linear_good.py", "kf_test_linear_candidate")
    forward = task.bind_candidate(module.ModelNew, dims, "cpu")
    (x,) = task.make_inputs(dims, "standard", torch.Generator().manual_seed(1))
    reference = task.model(dims, "cpu")
    # the ModelNew instance the worker calls
    candidate = next(
        c.cell_contents for c in forward.__closure__ if isinstance(c.cell_contents, torch.nn.Module)
    )
    for name, value in reference.state_dict().items():
        assert torch.equal(candidate.state_dict()[name], value), name
    assert torch.allclose(forward(x), task.reference_for(dims)(x), atol=1e-4)


def test_estimated_costs_at_the_files_own_sizes():
    linear = get_task(str(KB / "linear_bias.py"))
    dims = linear.shapes[0].dims
    assert linear.estimated_costs
    assert linear.flops(dims) == 2 * 128 * 4096 * 1000
    assert linear.min_bytes(dims) == 4 * (128 * 4096 + 128 * 1000 + 1000 * 4096 + 1000)
    assert linear.peak_kind() == "matmul"
    relu = get_task(str(KB / "relu.py"))
    assert relu.flops(relu.shapes[0].dims) == 0  # FlopCounterMode counts no elementwise work
    assert relu.min_bytes(relu.shapes[0].dims) == 2 * 16 * 16384 * 4
    assert relu.peak_kind() == "vector"


# -- TritonBench files --------------------------------------------------------------------------


def test_tritonbench_file_records_each_call_of_its_test():
    task = get_task(str(TB / "scaled_add.py"))
    assert (task.entry_point, task.entry_kind, task.category) == (
        "scaled_add",
        "function",
        "tritonbench",
    )
    assert [s.name for s in task.shapes] == ["call0", "call1", "call2"]
    assert task.shapes[2].source == "test_scaled_add: scaled_add(float32[1000], float32[1000], 2.0)"
    assert list(task.signature().parameters) == ["x", "y", "alpha"]
    x, y, alpha = task.make_inputs({"call": 1}, "standard", torch.Generator().manual_seed(0))
    assert alpha == 0.5  # passed by keyword in the test, positionally here
    assert torch.allclose(task.reference_for({"call": 1})(x, y, alpha), x + 0.5 * y)


def test_tritonbench_keyword_arguments_become_positional_and_big_calls_skip_the_cpu():
    task = get_task(str(TB / "row_sum.py"))
    t, dim, keepdim = task.make_inputs({"call": 1}, "standard", torch.Generator().manual_seed(0))
    assert (tuple(t.shape), dim, keepdim) == ((16, 100), -1, True)  # row_sum(t, keepdim=True)
    assert [s.name for s in task.cpu_shapes] == ["call0", "call1"]
    assert any("call2 (262144 elements)" in n for n in task.notes_for("cpu"))


# -- malformed files ----------------------------------------------------------------------------

KB_OK = """
import torch
import torch.nn as nn

class Model(nn.Module):
    def forward(self, x):
        return x * 2

n = 8

def get_inputs():
    return [torch.randn(n)]

def get_init_inputs():
    return []
"""
TB_OK = """
import torch

def double(x):
    return x * 2

##########################################

def test_double():
    return {"a": double(torch.randn(4))}
"""


@pytest.mark.parametrize(
    ("source", "field", "says"),
    [
        (KB_OK.replace("def get_inputs", "def get_input"), "get_inputs", "missing"),
        (
            KB_OK.replace("return [torch.randn(n)]", "raise ValueError('no inputs today')"),
            "get_inputs",
            "raised ValueError: no inputs today",
        ),
        (
            KB_OK.replace("return [torch.randn(n)]", "return torch.randn(n)"),
            "get_inputs",
            "must return a list or tuple",
        ),
        (KB_OK.replace("class Model(nn.Module)", "class Modle(nn.Module)"), "Model", "missing"),
        (KB_OK.replace("class Model(nn.Module)", "class Model"), "Model", "torch.nn.Module"),
        (KB_OK.replace("return x * 2", "return x.view(3, 3)"), "Model.forward", "raised"),
        (KB_OK.replace("return x * 2", "return (x * 2"), "<file>", "syntax error at line 7"),
        (
            TB_OK.replace("##########################################", "# the tests"),
            "separator",
            "no line of '#'",
        ),
        (TB_OK.replace("def test_double", "def check_double"), "test function", "no `def test_"),
        (
            TB_OK.replace('{"a": double(torch.randn(4))}', "{}"),
            "test function",
            "calls none of the functions",
        ),
        (
            TB_OK.replace("double(torch.randn(4))", "double(torch.randn(4), 3)"),
            "test_double",
            "raised TypeError",
        ),
    ],
    ids=[
        "kb-no-get_inputs",
        "kb-get_inputs-raises",
        "kb-get_inputs-not-a-list",
        "kb-no-Model",
        "kb-Model-not-a-module",
        "kb-forward-raises",
        "kb-syntax",
        "tb-no-separator",
        "tb-no-test",
        "tb-test-never-calls",
        "tb-test-raises",
    ],
)
def test_malformed_file_raises_task_error_naming_file_and_field(tmp_path, source, field, says):
    path = tmp_path / "problem.py"
    path.write_text(source)
    with pytest.raises(TaskError) as info:
        load_task_file(path)
    assert info.value.field == field, str(info.value)
    assert str(path) in str(info.value) and says in str(info.value)


def test_tritonbench_calls_with_keyword_only_arguments_are_recorded_and_passed_by_keyword(tmp_path):
    path = tmp_path / "scaled.py"
    path.write_text(
        TB_OK.replace("def double(x):", "def double(x, *, by=2):")
        .replace("return x * 2", "return x * by")
        .replace(
            '{"a": double(torch.randn(4))}',
            '{"a": double(torch.randn(4)), "b": double(torch.randn(4), by=3)}',
        )
    )
    task = get_task(str(path))
    assert [s.name for s in task.shapes] == ["call0", "call1"]
    assert task.shapes[1].source == "test_double: double(float32[4], by=3)"
    x, by = task.make_inputs({"call": 1}, "standard", torch.Generator().manual_seed(0))
    assert by == 3
    assert torch.equal(task.reference_for({"call": 1})(x, by), x * 3)
    seen = []
    task.bind_candidate(lambda x, *, by=2: seen.append(by), {"call": 1}, "cpu")(x, by)
    assert seen == [3]  # the candidate gets the keyword by name, not dropped


def test_format_detection_keeps_native_tasks_native(tmp_path):
    native = Path(get_task("softmax_fp32").path)
    assert detect_format(native) == "native"
    assert detect_format(KB / "relu.py") == "kernelbench"
    assert detect_format(TB / "row_sum.py") == "tritonbench"
    assert [t.id for t in load_task_file(native)] == [
        "softmax_fp32",
        "softmax_fp16",
        "softmax_bf16",
    ]


# -- the static check for a class entry point ------------------------------------------------

KERNEL = """
import torch
import torch.nn as nn
import triton
import triton.language as tl

@triton.jit
def _copy(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)

def launch(x):
    y = torch.empty_like(x)
    _copy[(triton.cdiv(x.numel(), 256),)](x, y, x.numel(), BLOCK=256)
    return y
"""


def _class_check(body: str, params: tuple[str, ...] = ("x",)):
    return check_source(
        KERNEL + body, entry_point="ModelNew", params=list(params), entry_kind="class"
    )


@pytest.mark.parametrize(
    ("body", "expect"),
    [
        (
            "class ModelNew(nn.Module):\n    def __init__(self, n):\n        super().__init__()\n        self.lin = nn.Linear(n, n)\n        self.w = nn.Parameter(torch.randn(n))\n        nn.init.zeros_(self.w)\n    def forward(self, x):\n        return launch(x)\n",
            ErrorClass.NONE,
        ),
        (
            "class ModelNew(nn.Module):\n    def forward(self, x):\n        return launch(nn.Linear(4, 4).weight)\n",
            ErrorClass.FORBIDDEN_API,
        ),
        (
            "class ModelNew(nn.Module):\n    def forward(self, x):\n        return launch(torch.randn(4))\n",
            ErrorClass.FORBIDDEN_API,
        ),
        (
            "class ModelNew(nn.Linear):\n    def forward(self, x):\n        return launch(x)\n",
            ErrorClass.FORBIDDEN_API,
        ),
        (
            "class Other(nn.Module):\n    def forward(self, x):\n        return launch(x)\n",
            ErrorClass.MISSING_ENTRY_POINT,
        ),
        ("class ModelNew(nn.Module):\n    pass\n", ErrorClass.MISSING_ENTRY_POINT),
        (
            "class ModelNew(nn.Module):\n    def forward(self):\n        return launch(self)\n",
            ErrorClass.SIGNATURE_MISMATCH,
        ),
        (
            "class ModelNew(nn.Module):\n    def forward(self, x, y):\n        return launch(x)\n",
            ErrorClass.SIGNATURE_MISMATCH,
        ),
        (
            "class Base(nn.Module):\n    def forward(self, a, scale=1.0):\n        return launch(a)\nclass ModelNew(Base):\n    pass\n",
            ErrorClass.NONE,
        ),
        (
            "class ModelNew(nn.Module):\n    def forward(self, x):\n        return x\n",
            ErrorClass.NO_TRITON_KERNEL,
        ),
    ],
    ids=[
        "weights-in-init",
        "layer-in-forward",
        "randn-in-forward",
        "subclass-a-layer",
        "no-ModelNew",
        "no-forward",
        "forward-too-few",
        "forward-too-many",
        "forward-in-local-base",
        "never-launches",
    ],
)
def test_class_entry_static_rules(body, expect):
    result = _class_check(body)
    assert result.error_class == expect, result.message


def test_function_entry_still_refuses_torch_nn():
    source = KERNEL + "class Holder(nn.Module):\n    pass\n\ndef f(x):\n    return launch(x)\n"
    result = check_source(source, entry_point="f", params=["x"])
    assert result.error_class == ErrorClass.FORBIDDEN_API
    assert "import torch.nn" in result.message and "subclassing a torch type" in result.message


# -- folders as suites and the CLI ------------------------------------------------------------


def test_a_folder_is_a_suite():
    assert [t.id for t in suite_tasks(str(KB))] == ["linear_bias", "relu", "row_softmax"]
    assert [t.id for t in folder_tasks(TB)] == ["row_sum", "scaled_add"]
    with pytest.raises(KeyError, match="or give a folder"):
        suite_tasks("no_such_suite")


def test_cli_lists_a_folder_and_shows_an_imported_task():
    from agents.cli.main import app

    listed = CliRunner().invoke(app, ["tasks", "list", "--suite", str(KB)], env={"COLUMNS": "200"})
    assert listed.exit_code == 0, listed.output
    assert (
        "linear_bias" in listed.output
        and "kernelbench" in listed.output
        and "3 tasks" in listed.output
    )
    shown = CliRunner().invoke(
        app, ["tasks", "show", str(KB / "linear_bias.py")], env={"COLUMNS": "200"}
    )
    assert shown.exit_code == 0, shown.output
    assert "ModelNew(x)" in flat(shown.output)


def test_cli_reports_a_malformed_file_without_a_traceback(tmp_path):
    from agents.cli.main import app

    (tmp_path / "good.py").write_text(KB_OK)
    (tmp_path / "bad.py").write_text(KB_OK.replace("def get_init_inputs", "def get_init"))
    listed = CliRunner().invoke(
        app, ["tasks", "list", "--suite", str(tmp_path)], env={"COLUMNS": "200"}
    )
    # the folder loads file by file: the good file is listed, the bad one with its reason
    assert listed.exit_code == 0, listed.output
    assert "1 tasks, 1 file(s) not loaded" in flat(listed.output)
    assert "bad.py: field get_init_inputs: missing" in flat(listed.output)
    (tmp_path / "good.py").unlink()
    only_bad = CliRunner().invoke(app, ["tasks", "list", "--suite", str(tmp_path)])
    assert only_bad.exit_code == 2 and isinstance(only_bad.exception, SystemExit)
    evaluated = CliRunner().invoke(
        app,
        [
            "eval",
            "--task",
            str(tmp_path / "bad.py"),
            "--candidate",
            str(FIXTURES / "candidates" / "kb_relu_good.py"),
            "--device",
            "cpu",
        ],
    )
    assert evaluated.exit_code == 2 and isinstance(evaluated.exception, SystemExit)
    assert "get_init_inputs" in flat(evaluated.output)


def test_cli_eval_on_a_file_path_exits_by_the_verdict():
    from agents.cli.main import app

    good = CliRunner().invoke(
        app,
        [
            "eval",
            "--task",
            str(KB / "relu.py"),
            "--candidate",
            str(FIXTURES / "candidates" / "kb_relu_good.py"),
            "--device",
            "cpu",
            "--trials",
            "1",
        ],
        env={"COLUMNS": "250"},
    )
    assert good.exit_code == 0, good.output
    assert "PASS" in good.output and "sizes shrunk for the CPU interpreter: dim 16384→64" in flat(
        good.output
    )
    bad = CliRunner().invoke(
        app,
        [
            "eval",
            "--task",
            str(KB / "relu.py"),
            "--candidate",
            str(FIXTURES / "candidates" / "kb_relu_functional.py"),
            "--device",
            "cpu",
            "--json",
        ],
    )
    assert bad.exit_code == 1, bad.output
    assert '"error_class": "forbidden_api"' in bad.output
