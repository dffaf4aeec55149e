"""The rule-based code generator: kernels translated from task references pass the judge (CPU,
through the Triton interpreter), and what it cannot translate is refused with a reason.

fp32 and fp16 variants only: the interpreter computes bf16 arithmetic wrongly.
"""

import textwrap
from pathlib import Path

import pytest

from agents.offline.codegen.shapes import Kind, Sizes, join, shape_kinds
from agents.offline.codegen.translate import Generated, NotSupported, generate
from agents.offline.policy import kb_meta, search_space, set_tunables, tunable_values
from benchmarks.harness.judge import JudgeConfig, evaluate
from benchmarks.loading import get_task, load_task_file
from benchmarks.task import Task

CPU = JudgeConfig(device="cpu", trials=1, timeout_s=120)


def _judge(task: Task, source: str, tmp_path: Path, config: JudgeConfig = CPU) -> None:
    path = tmp_path / f"{task.id}_generated.py"
    path.write_text(source)
    verdict = evaluate(task, path, config)
    assert verdict.passed, f"{task.id}: {verdict.error_class}: {verdict.message}\n{source}"


POINTWISE = [
    "silu_fp32",
    "gelu_erf_fp16",
    "gelu_tanh_fp32",
    "logit_softcap_fp16",
    "hardswish_fp32",
    "mish_fp16",
    "softplus_fp32",
    "adam_fp32",
]
ROW = [
    "softmax_fp32",
    "rmsnorm_fp16",
    "layernorm_fp32",
    "add_rmsnorm_fp16",  # fusion: residual add + norm
    "silu_and_mul_fp16",  # fusion: halves of one input (last-dim slices)
    "temperature_log_softmax_fp32",  # a per-row input
    "row_mean_var_fp32",  # var_mean, two per-row outputs
    "per_token_int8_quant_fp16",  # int8 output and a per-row scale
    "dit_adaln_modulate_fp16",  # layernorm, then per-batch shift/scale vectors
]


@pytest.mark.parametrize("task_id", POINTWISE)
def test_pointwise_tasks_pass_the_judge(task_id, tmp_path):
    task = get_task(task_id)
    gen = generate(task)
    assert gen.structure == "pointwise"
    _judge(task, gen.source, tmp_path)


@pytest.mark.parametrize("task_id", ROW)
def test_row_tasks_pass_the_judge(task_id, tmp_path):
    task = get_task(task_id)
    gen = generate(task)
    assert gen.structure == "row"
    _judge(task, gen.source, tmp_path)


@pytest.mark.parametrize("task_id", ["softmax_fp16", "layernorm_fp32", "silu_and_mul_fp32"])
def test_long_rows_take_the_looped_kernel(task_id, tmp_path):
    """A row longer than MAX_BLOCK_N is walked in tiles (one pass per reduction), and a row with
    independent columns (silu_and_mul) is split over programs of BLOCK_C columns: forced here by
    the tunable the offline search would rewrite, on rows of 128 and 1000 columns."""
    task = get_task(task_id)
    source = generate(task).source
    knob = "BLOCK_C" if "BLOCK_C" in tunable_values(source, task.entry_point) else "MAX_BLOCK_N"
    _judge(task, set_tunables(source, task.entry_point, {knob: 16}), tmp_path)


def test_tunables_are_what_the_offline_search_reads():
    task = get_task("silu_fp16")
    gen = generate(task)
    defaults = tunable_values(gen.source, task.entry_point)
    assert defaults == {"BLOCK": 1024, "num_warps": 4}
    space = search_space(kb_meta(gen.source), defaults)
    assert space == {"BLOCK": [256, 512, 1024, 2048, 4096], "num_warps": [2, 4, 8]}
    row = get_task("softmax_fp32")
    row_defaults = tunable_values(generate(row).source, row.entry_point)
    assert row_defaults == {
        "num_warps": 4, "MAX_BLOCK_N": 8192, "TILE": 2048, "DECODE_ROW_WARPS": 8,
        "DECODE_ROW_BLOCK_N": 8192, "DECODE_ROWS": 128, "MIN_PROGRAMS": 1024,
    }  # fmt: skip


def test_generated_record_lists_the_ops_and_says_where_it_came_from():
    gen = generate(get_task("silu_fp16"))
    assert isinstance(gen, Generated)
    assert gen.ops == [
        "_to_copy.default",
        "neg.default",
        "exp.default",
        "add.Tensor",
        "div.Tensor",
        "_to_copy.default",
    ]
    assert (
        "generated from the task's PyTorch reference by agents/offline/codegen/translate.py"
        in gen.source
    )
    assert "def silu(x, BLOCK: int = 1024, num_warps: int = 4):" in gen.source


@pytest.mark.parametrize(
    ("task_id", "op"),
    [
        ("attn_decode_fp32", "aten.bmm"),
        ("moe_combine_index_add_fp32", "aten.sort"),
        ("logcumsumexp_fp32", "aten.logcumsumexp"),
    ],
)
def test_unsupported_ops_are_refused_by_name(task_id, op):
    with pytest.raises(NotSupported, match=op):
        generate(get_task(task_id))


@pytest.mark.parametrize(
    "task_id", ["grad_global_sumsq_fp32", "mse_loss_fp16", "kl_div_logprobs_fp32"]
)
def test_whole_tensor_reductions_pass_the_judge(task_id, tmp_path):
    """Two kernels: partials per block, then one program reduces them in a fixed order."""
    task = get_task(task_id)
    gen = generate(task)
    assert gen.structure == "total"
    _judge(task, gen.source, tmp_path)


def test_a_whole_tensor_reduction_feeding_another_twice_is_refused(tmp_path):
    # one level is split in two kernels (tests/test_codegen_total_rest.py); two are not
    task = _probe(tmp_path, "d = x - x.mean()\nreturn ((d - d.mean()) ** 2).sum()")
    with pytest.raises(NotSupported, match="one level"):
        generate(task)


def test_reduction_over_another_dim_reads_strided_rows(tmp_path):
    """A column sum (dim 0 of [M, N]) is one program per column, its elements N apart."""
    task = get_task("bias_grad_colsum_fp32")
    gen = generate(task)
    assert (
        gen.structure == "row" and "base = (row // inner) * (N * inner) + row % inner" in gen.source
    )
    _judge(task, gen.source, tmp_path)


# -- references written here, for ops and patterns no shipped task has ------------------------------

TASK_FILE = """
import torch
from benchmarks.inputs import elem_size, maybe_outliers, randint, randn

NAME = "probe"
CATEGORY = "math"
DESCRIPTION = "A reference written by tests/test_codegen.py to probe the code generator."
ENTRY_POINT = "probe"
DTYPES = {dtypes!r}
SHAPES = [{{"name": "gpu", "dims": {{"M": 64, "N": 4096}}, "weight": 1.0, "source": "test"}}]
CPU_SHAPES = [{{"name": "tiny", "dims": {{"M": 4, "N": 128}}}}, {{"name": "tail", "dims": {{"M": 7, "N": 1000}}}}]
TOLERANCE = {{"fp32": {{"atol": 1e-5, "rtol": 1e-4}}, "fp16": {{"atol": 1e-3, "rtol": 2e-3}}}}
FORBIDDEN = ()


def probe({params}):
{body}


def make_inputs(dims, dtype, mode, gen):
    M, N = dims["M"], dims["N"]
    x = maybe_outliers(randn((M, N), dtype, gen, std=2.0), mode, gen)
    return {inputs}


def flops(dims, dtype):
    return 1.0 * dims["M"] * dims["N"]


def min_bytes(dims, dtype):
    return 2.0 * dims["M"] * dims["N"] * elem_size(dtype)
"""


def _probe(
    tmp_path: Path, body: str, params: str = "x", inputs: str = "(x,)", dtype: str = "fp32"
) -> Task:
    path = tmp_path / "probe.py"
    text = TASK_FILE.format(
        dtypes=(dtype,),
        params=params,
        body=textwrap.indent(textwrap.dedent(body).strip(), "    "),
        inputs=inputs,
    )
    path.write_text(text)
    return load_task_file(path)[0]


def test_transcendentals_saturate_on_outliers(tmp_path):
    """tanh, log1p, expm1 are written from exp/log; outlier inputs (10-1000x) must not overflow."""
    task = _probe(
        tmp_path,
        """
        xf = x.float()
        a = torch.tanh(xf) + torch.log1p(xf.abs()) + torch.expm1(-xf.abs())
        b = torch.sigmoid(xf) * torch.erf(xf * 0.5) - torch.special.expm1(xf.clamp(max=10.0))
        return (a + b).to(x.dtype)
        """,
        dtype="fp16",
    )
    _judge(task, generate(task).source, tmp_path)


def test_comparisons_where_pow_round_and_sign(tmp_path):
    task = _probe(
        tmp_path,
        """
        y = torch.where(x > 0.5, x ** 2, torch.relu(-x) ** 0.5)
        z = torch.round(x * 3.0) + torch.sign(x) * torch.minimum(x.abs(), torch.full_like(x, 2.0))
        m = x > 0
        w = m * x + m.float() * 2 + x * torch.full((), 3, dtype=torch.int64)
        return y + z + w + torch.maximum(x, torch.zeros_like(x)) + x.pow(3) - torch.floor(x) * torch.ceil(x)
        """,
    )
    _judge(task, generate(task).source, tmp_path)


def test_asin_signbit_and_rounding_an_integer_tensor(tmp_path):
    """asin (a helper: series below 0.5, a polynomial in sqrt(1 - |x|) above, NaN past 1),
    signbit (set for -0.0, which `x < 0` misses) and floor/round of an integer tensor (the
    value itself: torch keeps the dtype, Triton's float functions refuse integers)."""
    task = _probe(
        tmp_path,
        """
        y = torch.asin(torch.tanh(x) * 1.001) + torch.signbit(x * 0.0).float()
        k = (x * 4.0).to(torch.int64)
        return y + torch.floor(k).float() + torch.round(k).float()
        """,
    )
    gen = generate(task)
    assert "_asin" in gen.source and "bitcast=True" in gen.source
    _judge(task, gen.source, tmp_path)


def test_a_scalar_tensor_constant_and_a_whole_tensor_max(tmp_path):
    """`torch.tensor(2.0)` in the reference is traced as a graph constant (a number here), and
    `torch.max(x)` with no dim is the whole tensor's amax."""
    task = _probe(
        tmp_path,
        """
        return torch.max(x.abs() * torch.tensor(2.0, dtype=x.dtype) + torch.tensor(0.5))
        """,
    )
    gen = generate(task)
    assert gen.structure == "total" and "amax.default" in gen.ops, (gen.structure, gen.ops)
    _judge(task, gen.source, tmp_path)


def test_a_tensor_constant_of_several_elements_is_refused(tmp_path):
    task = _probe(tmp_path, "return x * torch.tensor([1.0, 2.0]).sum()")
    with pytest.raises(NotSupported, match=r"tensor constant of shape \(2,\)"):
        generate(task)


def test_sizes_in_the_reference_become_kernel_arguments(tmp_path):
    """`/ x.shape[-1]` traces to a number that changes with the shape: the kernel uses N; another
    dim of an input is passed by the launcher."""
    task = _probe(tmp_path, "return x - x.sum(dim=-1, keepdim=True) / x.shape[-1] + x.shape[0]")
    gen = generate(task)
    assert "/ N" in gen.source and "x_dim0 = x.shape[0]" in gen.source
    _judge(task, gen.source, tmp_path)


def test_a_number_that_follows_no_known_size_is_refused(tmp_path):
    task = _probe(tmp_path, "return x * (x.shape[0] + x.shape[1])")
    with pytest.raises(NotSupported, match="changes with the shape"):
        generate(task)


def test_a_float_argument_drawn_with_the_inputs_is_a_kernel_argument(tmp_path):
    task = _probe(
        tmp_path, "return x * s", params="x, s", inputs="(x, float(torch.rand((), generator=gen)))"
    )
    gen = generate(task)
    assert "s = float(s)" in gen.source
    _judge(task, gen.source, tmp_path)


def test_a_number_computed_from_a_drawn_float_is_not_baked_in(tmp_path):
    task = _probe(
        tmp_path,
        "return x * (s * s + 1.0)",
        params="x, s",
        inputs="(x, float(torch.rand((), generator=gen)))",
    )
    with pytest.raises(NotSupported, match="changes with the shape or the inputs"):
        generate(task)


def test_data_dependent_reference_is_refused(tmp_path):
    task = _probe(
        tmp_path,
        """
        if x.sum() > 0:
            return x * 2.0
        return x
        """,
    )
    with pytest.raises(NotSupported, match="data-dependent"):
        generate(task)


def test_host_read_is_refused(tmp_path):
    task = _probe(tmp_path, "return x * x.abs().sum().item()")
    with pytest.raises(NotSupported, match=r"\.item\(\)"):
        generate(task)


def test_per_column_and_per_row_inputs_broadcast(tmp_path):
    task = _probe(
        tmp_path,
        "return (x + b) * s[:, None] - x.amax(dim=-1, keepdim=True)",
        params="x, b, s",
        inputs="(x, randn((N,), dtype, gen), randn((M,), dtype, gen))",
    )
    gen = generate(task)
    assert gen.structure == "row"
    _judge(task, gen.source, tmp_path)


def test_transpose_is_refused(tmp_path):
    task = _probe(tmp_path, "return x.t().contiguous().t() * 2.0")
    with pytest.raises(NotSupported):
        generate(task)


# -- shapes ----------------------------------------------------------------------------------------


def test_kinds_of_shapes_in_a_batched_problem():
    d = (2, 8, 64)  # [B, S, N]: rank 2
    assert Kind(2, True, 2) in shape_kinds((16, 64), d)  # full, seen through a view
    assert shape_kinds((2, 8), d) == shape_kinds((2, 8, 1), d) == {Kind(2, False, 2)}  # row
    assert Kind(0, True, 2) in shape_kinds((64,), d)  # col
    assert Kind(1, True, 2) in shape_kinds((2, 1, 64), d)  # batch col: rows 0-7, 8-15 share it
    assert shape_kinds((8, 64), d) == set()  # per (s, n): no kind
    assert shape_kinds((2, 8, 128), d) == {Kind(2, True, 2, wide=True)}
    assert [k.name for k in (Kind(2, True, 2), Kind(1, False, 2), Kind(0, False, 2))] == [
        "full",
        "batch_row",
        "scalar",
    ]
    assert join([Kind(2, False, 2), Kind(0, True, 2)]) == Kind(2, True, 2)  # row x col = full


def test_sizes_are_solved_from_input_dims():
    shapes = [{"x": (4, 256)}, {"x": (7, 2000)}]
    sizes = Sizes(shapes, ["x"])
    assert sizes.dim([256, 2000]) == "x.shape[-1]"
    assert sizes.dim([128, 1000]) == "x.shape[-1] // 2"
    assert sizes.dim([64, 64]) == "64"
    assert sizes.shape([(4, 128), (7, 1000)], ("N", [128, 1000])) == "(*x.shape[:-1], N)"
    with pytest.raises(NotSupported):
        sizes.dim([3, 5])
