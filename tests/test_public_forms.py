"""The offline policy on public suites' formats, through our own importers: KernelBench-style
files (class Model + get_inputs + get_init_inputs; the candidate is `class ModelNew`) and
TritonBench-style files (a reference function with defaults and `out=None`, called by a test
with other ranks, dtypes, flags and scalars), all written for these tests
(tests/fixtures/kernelbench_forms, tests/fixtures/tritonbench_forms).

Each file goes through the offline policy's generator (`generated_kernel`, what a run's first
attempt is under hidden provenance) and the kernel it writes through the real judge on the CPU
interpreter. The operators it does not translate are refused with their reason (REFUSED): they
are in the fixtures because the public suites have them.
"""

import inspect
import re
from pathlib import Path

import pytest
import torch

from agents.offline.codegen import NotSupported, generate
from agents.offline.policy import (
    adapt,
    generated_kernel,
    kb_meta,
    reference_kernels,
    search_space,
    set_tunables,
    tunable_values,
)
from benchmarks.harness.judge import JudgeConfig, evaluate
from benchmarks.loading import load_task_file
from benchmarks.task import Task

FIXTURES = Path(__file__).resolve().parent / "fixtures"
KB = FIXTURES / "kernelbench_forms"
TB = FIXTURES / "tritonbench_forms"
CPU = JudgeConfig(device="cpu", trials=1, timeout_s=300)

# forms whose operators the generator does not translate, and the reason it gives
REFUSED = {
    "cumsum": r"aten\.cumsum.*only scans along the last dim",
}
# the slowest on the interpreter (tl.dot), marked so a quick run can leave them out
SLOW = {
    "l1_bmm",
    "l1_square_matmul",
    "l2_gemm_gelu_softmax",
    "l2_matmul_divide_sum_scaling",
    "matmul",
}


def _files() -> list[Path]:
    return sorted(KB.glob("*.py")) + sorted(TB.glob("*.py"))


def _params() -> list:
    return [
        pytest.param(
            p,
            id=f"{p.parent.name}/{p.stem}",
            marks=[pytest.mark.slow] * (p.stem in SLOW),
        )
        for p in _files()
    ]


def _task(path: Path) -> Task:
    return load_task_file(path)[0]


def test_the_forms_cover_both_suites_and_refusals_are_few():
    """The fixtures are the suites' forms, not a hand-picked few: both formats, level 1 and
    level 2, and what is refused stays a minority."""
    names = {p.stem for p in _files()}
    assert len(list(KB.glob("l1_*.py"))) >= 20 and len(list(KB.glob("l2_*.py"))) >= 6
    assert len(list(TB.glob("*.py"))) >= 10
    assert set(REFUSED) <= names and len(REFUSED) < len(names) / 4


@pytest.mark.parametrize("path", _params())
def test_generated_kernel_passes_the_judge_or_is_refused_with_its_reason(path, tmp_path):
    task = _task(path)
    entry, note = generated_kernel(task)
    if task.id in REFUSED:
        assert entry is None and re.search(REFUSED[task.id], note), note
        return
    assert entry is not None, note
    code = entry["source"]
    assert tunable_values(code, task.entry_point), "the offline search finds no tunables"
    out = tmp_path / f"{task.id}.py"
    out.write_text(code)
    verdict = evaluate(task, out, CPU)
    assert verdict.passed, f"{task.id}: {verdict.error_class}: {verdict.message}\n{code}"


# -- the forms, one at a time ------------------------------------------------------------------


def test_model_new_takes_models_init_and_holds_its_weights():
    task = _task(KB / "l2_gemm_bias_relu_scale.py")
    code = generate(task).source
    assert "class ModelNew(nn.Module):" in code
    assert "def __init__(self, in_features, out_features, bias_shape, scaling_factor):" in code
    assert "super().__init__()" in code and "super(Model" not in code
    for name in ("gemm.weight", "gemm.bias", "bias"):
        assert f"self.get_parameter({name!r})" in code


def test_an_attribute_named_like_a_tensor_method_is_registered_by_name():
    """`self.matmul = nn.Linear(...)` reads to the static check like Tensor.matmul; ModelNew
    registers the submodule under the same name, so the state_dict keys stay Model's."""
    code = generate(_task(KB / "l2_gemm_swish_scaling.py")).source
    assert "self.add_module('matmul', nn.Linear(in_features, out_features))" in code
    assert "self.get_parameter('matmul.weight')" in code


def test_defaults_are_kept_and_floats_are_kernel_arguments():
    """leaky_relu(input, negative_slope=0.01, inplace=False), called with four slopes at three
    ranks: one kernel per rank, the slope passed at run time (not baked per call)."""
    task = _task(TB / "leaky_relu.py")
    gen = generate(task)
    assert gen.classes == 3
    assert "def leaky_relu(input, negative_slope=0.01, inplace=False," in gen.source
    assert "negative_slope = float(negative_slope)" in gen.source


def test_a_call_of_an_untraced_class_raises_instead_of_computing_wrongly():
    task = _task(TB / "softmax.py")
    gen = generate(task)
    namespace: dict = {}
    exec(compile(gen.source, "<generated softmax>", "exec"), namespace)  # noqa: S102 - our own output
    with pytest.raises(NotImplementedError, match="no kernel was generated"):
        namespace["softmax"](torch.randn(2, 3, 4, 5), -1)  # a 4-D input: never traced
    with pytest.raises(NotImplementedError):
        namespace["softmax"](torch.randn(4, 8), 1, torch.float16)  # another dtype argument


def test_a_reference_that_branches_on_an_argument_gets_a_kernel_per_branch():
    """sum_dim(input, dim=None): the whole-tensor sum when dim is None, a row sum otherwise."""
    gen = generate(_task(TB / "sum_dim.py"))
    assert gen.structure == "total+row" and "if input.dim() == 2" in gen.source


def test_a_tritonbench_call_is_bound_as_the_judge_passes_it():
    """The loader's reference takes the recorded call's flat inputs; the generator binds them to
    the file's function's own parameters, defaults filling what a call leaves out."""
    task = _task(TB / "leaky_relu.py")
    assert list(inspect.signature(task.entry_reference()).parameters) == [
        "input",
        "negative_slope",
        "inplace",
    ]
    first = {"call": 0}  # leaky_relu(x)
    inputs = task.make_inputs(first, "standard", torch.Generator().manual_seed(0))
    positional, keywords = task.entry_call(first, inputs)
    assert len(positional) == 1 and keywords == {}


def test_keyword_only_arguments_are_taken_by_keyword(tmp_path):
    """scale_shift(input, *, factor, shift): the judge passes factor and shift by keyword; the
    generated entry point takes them after `*` and the kernel passes the judge."""
    task = _task(FIXTURES / "public" / "kernelbench_x" / "ops" / "scale_kwonly.py")
    _, keywords = task.entry_call({"call": 1}, task.calls[1])
    assert keywords == {"factor": 3.0}
    code = generate(task).source
    assert "def scale_shift(input, *, factor=2.0, shift=0.0," in code
    out = tmp_path / "scale_shift.py"
    out.write_text(code)
    verdict = evaluate(task, out, CPU)
    assert verdict.passed, f"{verdict.error_class}: {verdict.message}\n{code}"


def test_a_call_that_passes_an_out_buffer_gets_it_written(tmp_path):
    """add(a, b, out=o): the kernel stores into o (tests/test_codegen_buffers.py has more)."""
    path = tmp_path / "add_out.py"
    path.write_text(
        (TB / "add.py")
        .read_text()
        .replace(
            "    return results",
            "    results['out'] = add(a, b, out=torch.empty_like(a))\n    return results",
            1,
        )
    )
    task = _task(path)
    assert any(task.output_args(dict(s.dims)) for s in task.cpu_shapes)
    code = generate(task).source
    assert "out0 = out\n" in code
    out = tmp_path / "add_out_generated.py"
    out.write_text(code)
    verdict = evaluate(task, out, CPU)
    assert verdict.passed, f"{verdict.error_class}: {verdict.message}\n{code}"


def test_a_gemm_followed_by_a_reduction_runs_in_two_stages():
    gen = generate(_task(KB / "l2_matmul_divide_sum_scaling.py"))
    assert gen.structure == "gemm>row"
    assert "product = _model_new_s0(" in gen.source and "return _model_new_s1(" in gen.source


def test_a_reduction_over_a_middle_dim_reads_strided_rows():
    gen = generate(_task(KB / "l1_rmsnorm_dim1.py"))
    assert gen.structure == "row" and "cols * inner" in gen.source


def test_tunables_of_model_new_are_what_the_offline_search_rewrites():
    task = _task(KB / "l1_gelu.py")
    code = generate(task).source
    assert tunable_values(code, "ModelNew") == {"BLOCK": 1024, "num_warps": 4}
    faster = set_tunables(code, "ModelNew", {"BLOCK": 256})
    assert "def forward(self, x, BLOCK: int = 256, num_warps: int = 4):" in faster


def test_a_size_constant_read_by_init_directly_is_refused(tmp_path):
    """The judge shrinks size constants per shape; an __init__ that reads one itself (not
    through get_init_inputs) would build other weights in ModelNew's file."""
    text = (
        (KB / "l1_linear.py")
        .read_text()
        .replace(
            "self.fc = nn.Linear(in_features, out_features, bias=bias)",
            "self.fc = nn.Linear(in_features, out_features, bias=bias)\n        self.width = batch_size",
        )
    )
    path = tmp_path / "reads_constant.py"
    path.write_text(text)
    with pytest.raises(NotSupported, match="size constant batch_size"):
        generate(_task(path))


# -- retrieved neighbours, adapted to the entry points ------------------------------------------

KERNEL = """
import triton
import triton.language as tl


@triton.jit
def _k(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


def gelu_launch(x):
    y = x.new_empty(x.shape)
    _k[(1,)](x, y, x.numel(), BLOCK=1024)
    return y
"""


def test_a_retrieved_kernel_is_wrapped_in_model_new_for_a_model_without_weights():
    task = _task(KB / "l1_gelu.py")
    hits = [{"id": "kernel:gelu_launch", "path": "", "text": KERNEL}]
    (ref,) = reference_kernels(task, hits, benchmark=True)
    assert ref["how"] == "wrapped gelu_launch()"
    assert "class ModelNew(nn.Module):" in ref["source"]
    assert "    def forward(self, x):\n        return gelu_launch(x)" in ref["source"]


def test_no_wrapper_for_a_model_with_weights():
    task = _task(KB / "l1_linear.py")
    hits = [{"id": "kernel:gelu_launch", "path": "", "text": KERNEL}]
    assert reference_kernels(task, hits, benchmark=True) == []


def test_a_wrapped_function_keeps_the_references_defaults():
    """TritonBench calls leave defaulted arguments out; the wrapper must bind them too."""
    code, how = adapt(
        KERNEL.replace("def gelu_launch(x)", "def gelu_launch(x, approximate)"),
        "gelu",
        ["input", "approximate"],
        defaults={"approximate": "'none'"},
    )
    assert how == "wrapped gelu_launch()"
    assert "def gelu(input, approximate='none'):\n" in code


def test_classes_whose_tunable_defaults_differ_get_tunables_of_their_own():
    """An fp32 and an fp16 GEMM class: their tile defaults differ, so the fp16 class's are
    tunables of their own (BLOCK_M_c1, ...) that the dispatcher passes as its BLOCK_M; the
    search space lists them too."""
    task = _task(TB / "linear_two_dtypes.py")
    gen = generate(task)
    values = tunable_values(gen.source, task.entry_point)
    renamed = [k for k in values if k.endswith("_c1")]
    assert "BLOCK_M_c1" in renamed and values["BLOCK_M"] != values["BLOCK_M_c1"], values
    assert "BLOCK_M=BLOCK_M_c1" in gen.source
    assert set(renamed) <= set(search_space(kb_meta(gen.source), values))
