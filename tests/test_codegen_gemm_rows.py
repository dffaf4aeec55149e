"""The generated GEMM on an operand A whose leading dims merge into the product's rows: a 3-D
activation times a matrix (torch.matmul, nn.Linear with its bias and an activation after it),
as KernelBench-style modules write it. The launcher reshapes A ([..., K] -> [prod(...), K]) and
the output keeps A's leading dims; each kernel is judged by the real judge on the CPU (Triton
interpreter), a kernel that reads A's rows in the wrong order fails it, and a merged operand
the structure does not take is refused by name.

fp32 only, tiny shapes (tl.dot on the interpreter; bf16 is computed wrongly there).
"""

from pathlib import Path

import pytest

from agents.offline.codegen.translate import NotSupported, generate
from benchmarks.harness.judge import JudgeConfig, evaluate
from benchmarks.loading import load_task_file

CPU = JudgeConfig(device="cpu", trials=1, timeout_s=300)

MODEL = """
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self{init_params}):
        super(Model, self).__init__()
{init_body}

    def forward(self, {params}):
        {body}


batch, seq, K, L = 3, 5, 24, 20


def get_inputs():
    return [{inputs}]


def get_init_inputs():
    return [{init_args}]
"""

MATMUL = dict(
    init_params="",
    init_body="        pass",
    params="A, B",
    body="return torch.matmul(A, B)",
    inputs="torch.rand(batch, seq, K), torch.rand(K, L)",
    init_args="",
)
LINEAR = dict(
    init_params=", K, L",
    init_body="        self.proj = nn.Linear(K, L)",
    params="x",
    body="return F.gelu(self.proj(x))",
    inputs="torch.rand(batch, seq, K) * 2.0 - 1.0",
    init_args="K, L",
)


def _task(tmp_path: Path, fields: dict[str, str], name: str = "rows_gemm"):
    path = tmp_path / f"{name}.py"
    path.write_text(MODEL.format(**fields))
    return load_task_file(path)[0]


def _verdict(task, source: str, tmp_path: Path):
    path = tmp_path / "candidate.py"
    path.write_text(source)
    return evaluate(task, path, CPU)


@pytest.mark.parametrize("fields", [MATMUL, LINEAR], ids=["matmul_3d", "linear_3d_gelu"])
def test_a_3d_operand_merged_into_rows_passes_the_judge(tmp_path, fields):
    task = _task(tmp_path, fields)
    gen = generate(task)
    assert gen.structure == "gemm" and ".reshape(-1, _opa_k)" in gen.source
    verdict = _verdict(task, gen.source, tmp_path)
    assert verdict.passed, f"{verdict.error_class}: {verdict.message}"


def test_rows_read_in_the_wrong_order_fail_the_judge(tmp_path):
    task = _task(tmp_path, MATMUL)
    source = generate(task).source
    # the same elements as [K, rows] transposed: every row of A is read scrambled
    wrong = source.replace(".reshape(-1, _opa_k)", ".reshape(_opa_k, -1).t()")
    assert wrong != source
    verdict = _verdict(task, wrong, tmp_path)
    assert not verdict.passed and verdict.error_class.value == "numerical_mismatch"


def test_a_merged_batched_operand_is_refused_by_name(tmp_path):
    four_d = dict(MATMUL, inputs="torch.rand(2, batch, seq, K), torch.rand(K, L)")
    task = _task(tmp_path, dict(four_d, body="return torch.einsum('bijl,lk->bijk', A, B)"))
    with pytest.raises(NotSupported, match="is reshaped"):
        generate(task)
