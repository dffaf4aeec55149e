"""The code generator's total>rest split: a reduction of the whole tensor read again over the
tensor (a Frobenius norm dividing its input, a mean subtracted before a second reduction), as
two kernels: the one value written, then the rest of the reference reading it. Each generated
kernel is judged by the real judge on the CPU (Triton interpreter); a kernel that reads the value
wrongly fails it, and a third level is refused by name.

fp32 and fp16 only: the interpreter computes bf16 arithmetic wrongly.
"""

import pytest

from agents.offline.codegen.translate import NotSupported, generate
from benchmarks.harness.judge import evaluate
from tests.test_codegen import CPU, _judge, _probe


@pytest.mark.parametrize(
    ("body", "dtype", "structure"),
    [
        ("return x / torch.norm(x, p='fro')", "fp32", "total>pointwise"),
        ("return x / x.float().norm().to(x.dtype)", "fp16", "total>pointwise"),
        ("return x - x.mean()", "fp16", "total>pointwise"),
        ("d = x - x.mean()\nreturn (d * d).mean()", "fp32", "total>total"),
        ("return (x - x.amax()).exp().sum(dim=-1)", "fp32", "total>row"),
    ],
)
def test_a_whole_tensor_value_read_again_passes_the_judge(tmp_path, body, dtype, structure):
    task = _probe(tmp_path, body, dtype=dtype)
    gen = generate(task)
    assert gen.structure == structure, gen.structure
    assert "Stage 1 reduces the whole tensor to one value" in gen.source
    _judge(task, gen.source, tmp_path)


def test_the_value_read_wrongly_fails_the_judge(tmp_path):
    task = _probe(tmp_path, "return x / torch.norm(x, p='fro')")
    source = generate(task).source
    wrong = source.replace("tl.sqrt(total)", "total", 1)  # the squared norm, not the norm
    assert wrong != source
    path = tmp_path / "wrong.py"
    path.write_text(wrong)
    verdict = evaluate(task, path, CPU)
    assert not verdict.passed and verdict.error_class.value == "numerical_mismatch"


def test_a_third_level_is_refused_by_name(tmp_path):
    task = _probe(tmp_path, "d = x - x.mean()\nreturn d / d.abs().amax()")
    with pytest.raises(NotSupported, match="only one level of whole-tensor reductions"):
        generate(task)
