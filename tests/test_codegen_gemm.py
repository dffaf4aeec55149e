"""The code generator's gemm structure: a reference that is one matrix multiply (mm, bmm, addmm) of
its inputs, through transposes and casts, and an elementwise epilogue becomes a tiled tl.dot
kernel that passes the judge on the CPU (Triton interpreter, standard and outlier modes).

Which suite tasks are checked is computed: every fp32/fp16 task whose reference traces into a
matrix multiply either generates and passes, or is refused for the reason listed in REFUSED.
"""

import ast
import re

import pytest

from agents.offline.codegen import translate as codegen
from agents.offline.codegen.entry import entry_of
from agents.offline.codegen.translate import (
    NotSupported,
    check_same_ops,
    generate,
    trace_cases,
)
from agents.offline.policy import kb_meta, search_space, set_tunables, tunable_values
from benchmarks.harness.static_check import check_task_candidate
from benchmarks.loading import get_task
from benchmarks.results.rows import all_tasks
from tests.test_codegen import _judge, _probe

GEMM_OPS = ("mm", "bmm", "addmm")

# suite tasks (by name) whose reference has a matrix multiply but not the gemm pattern
REFUSED = {
    "attn_causal_prefill": "2 matrix multiplies",
    "attn_decode": "2 matrix multiplies",
    "attn_varlen_prefill": "4 matrix multiplies",
    "int8_dequant_gemm": r"computed by aten\.mul",  # the weight is dequantized in a prologue
    "w4a16_gemm": r"aten\.__rshift__",  # int4 unpacking in a prologue
    "linalg_tril_matmul": r"aten\.arange",  # the triangular mask of an operand, a prologue
}

# a cheap filter before tracing: a function of the task file mentions a matrix multiply
_MATMUL_TEXT = re.compile(r"matmul|\bmm\b|bmm|addmm|einsum|\.linear\b|\s@\s")


def _functions_text(path) -> str:
    """The source of the task file's functions (not its FORBIDDEN list or description)."""
    text = path.read_text()
    tree = ast.parse(text)
    return "\n".join(
        ast.get_source_segment(text, node) or ""
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef)
    )


def _candidates() -> list[str]:
    return sorted(
        tid
        for tid, task in all_tasks().items()
        if task.dtype in ("fp32", "fp16") and _MATMUL_TEXT.search(_functions_text(task.path))
    )


@pytest.mark.parametrize("task_id", _candidates())
def test_suite_gemm_tasks_generate_and_pass_the_judge(task_id, tmp_path, monkeypatch):
    task = get_task(task_id)
    try:
        cases = trace_cases(task, entry_of(task))
        ops = check_same_ops([c.graph for c in cases if not c.perturbed])
    except NotSupported:
        ops = []
    else:  # generate reuses these traces (tracing is most of a refusal's time)
        monkeypatch.setattr(
            codegen, "trace_cases", lambda t, e: cases if t is task else trace_cases(t, e)
        )
    if not any(op.split(".")[0] in GEMM_OPS for op in ops):
        pytest.skip("the reference does not trace into one op sequence with a matrix multiply")
    if task.name in REFUSED:
        with pytest.raises(NotSupported, match=REFUSED[task.name]):
            generate(task)
        return
    gen = generate(task)
    assert gen.structure == "gemm"
    _judge(task, gen.source, tmp_path)


def test_the_checked_tasks_include_the_known_gemms():
    """The computed list is not empty by accident: the matmul category and the fused linear."""
    found = set(_candidates())
    for tid in ("linear_fp32", "linear_fp16", "bmm_fp16", "linalg_gram_fp32"):
        assert tid in found
    assert "linear_bias_gelu_tanh_fp16" in found


def test_small_tiles_walk_k_and_mask_the_edges(tmp_path):
    """Tiles smaller than the tail shape (13 x 17, K = 50): several programs, a K loop, masks."""
    task = get_task("linear_bias_gelu_tanh_fp32")
    gen = generate(task)
    source = set_tunables(
        gen.source, task.entry_point, {"BLOCK_M": 16, "BLOCK_N": 16, "BLOCK_K": 16}
    )
    _judge(task, source, tmp_path)


def test_gemm_source_declares_tunables_and_passes_the_static_check():
    task = get_task("linear_fp16")
    gen = generate(task)
    defaults = tunable_values(gen.source, task.entry_point)
    # nn.Linear's weight is read K-contiguous: persistent descriptor reads, 128x128 tiles, 5
    # stages (docs/results/gemm_generated_persistent_h200.md)
    assert defaults == {
        "BLOCK_M": 128,
        "BLOCK_N": 128,
        "BLOCK_K": 64,
        "num_warps": 4,
        "num_stages": 5,
        "GROUP_M": 8,
        "WRAP": 1,
        "TMA": 1,
        "PERSIST": 1,
        "FLATTEN": 0,
        "DECODE_BLOCK_M": 64,
        "DECODE_BLOCK_N": 128,
        "DECODE_BLOCK_K": 64,
        "DECODE_WARPS": 4,
        "DECODE_STAGES": 4,
        "SPLIT_K": 0,
    }
    matmul = tunable_values(generate(get_task("matmul_fp16")).source, "matmul")
    assert (matmul["BLOCK_N"], matmul["num_warps"], matmul["GROUP_M"], matmul["WRAP"]) == (
        256,
        8,
        8,
        1,
    )  # b read N-contiguous: the wider tile
    assert (matmul["TMA"], matmul["PERSIST"], matmul["num_stages"]) == (1, 1, 4)
    fp32 = tunable_values(generate(get_task("matmul_fp32")).source, "matmul")
    assert (fp32["BLOCK_M"], fp32["BLOCK_N"], fp32["BLOCK_K"]) == (64, 64, 32)  # shared memory
    assert (fp32["TMA"], fp32["PERSIST"]) == (0, 0)  # not measured for fp32
    space = search_space(kb_meta(gen.source), defaults)
    assert set(space) == set(defaults)
    assert all(defaults[k] in v for k, v in space.items())
    assert check_task_candidate(gen.source, task).ok
    assert kb_meta(gen.source)["structure"] == "gemm"
    assert "tl.dot(" in gen.source and "input_precision" not in gen.source  # fp16: plain dot
    fp32 = generate(get_task("linear_fp32")).source
    assert 'input_precision="ieee"' in fp32  # fp32 tasks reject TF32 products


def test_two_matmuls_are_refused_by_name():
    with pytest.raises(NotSupported, match=r"2 matrix multiplies \(aten\.bmm"):
        generate(get_task("attn_decode_fp32"))


# -- probes: x is [M, K] (K = the probe's N), w [K, M + 3], so the product is [M, M + 3] ---------


def _gemm_probe(tmp_path, body, params="x, w", extra="", dtype="fp32"):
    inputs = "(x, randn((N, M + 3), dtype, gen, std=0.05)" + extra + ")"
    return _probe(tmp_path, body, params=params, inputs=inputs, dtype=dtype)


def test_addmm_with_alpha_and_beta(tmp_path):
    task = _gemm_probe(
        tmp_path,
        "return torch.addmm(c, x, w, beta=0.5, alpha=2.0)",
        params="x, w, c",
        extra=", randn((M + 3,), dtype, gen)",
    )
    gen = generate(task)
    assert gen.structure == "gemm"
    _judge(task, gen.source, tmp_path)


@pytest.mark.parametrize("dtype", ["fp32", "fp16"])
def test_per_row_and_per_column_epilogue(tmp_path, dtype):
    task = _gemm_probe(
        tmp_path,
        "return torch.relu((x @ w) * s[:, None] + c).to(x.dtype)",
        params="x, w, s, c",
        extra=", randn((M,), dtype, gen), randn((M + 3,), dtype, gen)",
        dtype=dtype,
    )
    gen = generate(task)
    assert gen.structure == "gemm"
    _judge(task, gen.source, tmp_path)


def test_transposed_and_cast_operands(tmp_path):
    """(w.T @ x.T).T in fp32 from fp16 inputs: strides from the launcher, casts at load."""
    task = _gemm_probe(
        tmp_path,
        "return (w.float().t() @ x.float().t()).t().contiguous().to(x.dtype)",
        dtype="fp16",
    )
    with pytest.raises(NotSupported, match="not the shape of the output|transpose"):
        generate(task)  # the transpose of the product is refused, not computed wrongly
    task = _gemm_probe(tmp_path, "return (x.float() @ w.t().float().t()).to(x.dtype)", dtype="fp16")
    gen = generate(task)
    assert 'input_precision="ieee"' in gen.source  # fp32 products of the fp16 inputs
    _judge(task, gen.source, tmp_path)


@pytest.mark.parametrize(
    "body, why",
    [
        ("return (x * 2.0) @ w", r"computed by aten\.mul"),
        ("return (x @ w) @ (w.t() @ w)", "3 matrix multiplies"),
        ("return x @ w + x[:, :1]", "feeds the matrix multiply and the epilogue"),
    ],
)
def test_outside_the_gemm_pattern_is_refused(tmp_path, body, why):
    with pytest.raises(NotSupported, match=why):
        generate(_gemm_probe(tmp_path, body))


def test_a_reduction_after_the_product_runs_in_a_second_kernel(tmp_path):
    """(x @ w) then a softmax over its rows: the gemm kernel writes the product, a row kernel
    reduces it (stages.py)."""
    task = _gemm_probe(tmp_path, "return torch.softmax((x @ w) * 0.5, dim=-1)")
    gen = generate(task)
    assert gen.structure == "gemm>row"
    _judge(task, gen.source, tmp_path)


def test_a_vector_on_a_square_product_is_refused(tmp_path):
    """x @ x.T is [M, M] at every shape: a [M] vector added to it is per-column by torch's
    broadcasting, but its shape fits per-row too; refused rather than guessed."""
    task = _probe(
        tmp_path, "return x @ x.t() + c", params="x, c", inputs="(x, randn((M,), dtype, gen))"
    )
    with pytest.raises(NotSupported, match="per-row or per-column"):
        generate(task)


@pytest.mark.parametrize("dtype", ["fp32", "fp16"])
def test_bmm_with_per_row_and_per_batch_epilogue(tmp_path, dtype):
    """bmm over 2 batches: the grid's third axis; s is one value per row, c one row per batch."""
    task = _probe(
        tmp_path,
        "return torch.bmm(a, b) * s + c",
        params="a, b, s, c",
        inputs=(
            "(randn((2, M, N), dtype, gen), randn((2, N, M + 3), dtype, gen, std=0.05), "
            "randn((2, M, 1), dtype, gen), randn((2, 1, M + 3), dtype, gen))"
        ),
        dtype=dtype,
    )
    gen = generate(task)
    assert gen.structure == "gemm" and "group_1" in gen.source
    _judge(task, gen.source, tmp_path)
