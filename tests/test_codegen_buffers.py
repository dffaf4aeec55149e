"""The code generator on calls that pass keyword-only arguments by keyword and that write into
their arguments (TritonBench/KernelBench-X forms, tests/fixtures/tritonbench_buffers): the entry
point takes the keyword-only parameters after `*`, its kernels store the written values into the
caller's buffers with Triton, it returns what the reference returns, and each kernel passes the
real judge on the CPU interpreter. Buffers the kernels cannot store into are refused.
"""

import re
import textwrap
from pathlib import Path

import pytest
import torch

from agents.offline.codegen import NotSupported, generate
from benchmarks.harness.judge import JudgeConfig, evaluate
from benchmarks.loading import load_task_file
from benchmarks.task import Task

FORMS = Path(__file__).resolve().parent / "fixtures" / "tritonbench_buffers"
CPU = JudgeConfig(device="cpu", trials=1, timeout_s=300)


def _task(name: str) -> Task:
    return load_task_file(FORMS / f"{name}.py")[0]


def _module(source: str) -> dict:
    namespace: dict = {}
    exec(compile(source, "<generated>", "exec"), namespace)  # noqa: S102 - our own output
    return namespace


def _entry_point(source: str, name: str) -> str:
    """The text of the generated entry point `def name(...)` (the dispatcher)."""
    start = source.index(f"\ndef {name}(")
    end = source.find("\n\n\n", start + 1)
    return source[start : end if end > 0 else None]


@pytest.mark.parametrize(
    "name, writes",
    [
        ("sub_alpha", False),  # alpha, keyword-only, passed by keyword
        ("exp_out", True),  # out= by keyword, returned
        ("leaky_relu_inplace", True),  # inplace=True on the input, returned
        ("sgd_momentum_step", True),  # param and momentum_buffer updated, None returned
        ("batch_norm_train", True),  # running statistics, one value per channel (row structure)
        ("adam_step_returns_state", True),  # three updated in place, returned as a tuple
    ],
)
def test_generated_kernel_passes_the_judge(name, writes, tmp_path):
    task = _task(name)
    assert any(task.output_args(dict(s.dims)) for s in task.cpu_shapes) == writes
    gen = generate(task)
    path = tmp_path / f"{name}.py"
    path.write_text(gen.source)
    verdict = evaluate(task, path, CPU)
    assert verdict.passed, f"{task.id}: {verdict.error_class}: {verdict.message}\n{gen.source}"


def test_keyword_only_parameters_stay_keyword_only_and_floats_are_kernel_arguments():
    """sub(input, other, *, alpha=1, out=None): called with alpha=0.5 and alpha=2.25, one
    kernel takes alpha at run time; the default (an int) is its own class."""
    gen = generate(_task("sub_alpha"))
    assert "def sub(input, other, *, alpha=1, out=None," in gen.source
    assert gen.classes == 2 and "alpha = float(alpha)" in gen.source
    sub = _module(gen.source)["sub"]
    with pytest.raises(TypeError):
        sub(torch.ones(2, 3), torch.ones(2, 3), 0.5)  # alpha is keyword-only, as in the reference


def test_the_written_values_are_stored_into_the_callers_buffers_with_triton():
    """Each written argument is a kernel's output pointer; no `.copy_(` in the module."""
    written = {
        "exp_out": ["out"],
        "leaky_relu_inplace": ["input"],
        "sgd_momentum_step": ["param", "momentum_buffer"],
        "batch_norm_train": ["running_mean", "running_var"],
    }
    for name, buffers in written.items():
        source = generate(_task(name)).source
        assert ".copy_(" not in source, name
        for buffer in buffers:
            assert re.search(rf"\n    out\d+ = {buffer}\n", source), (name, buffer)


def test_the_entry_point_returns_what_the_reference_returns():
    """exp(x, out=o) returns o itself, written; leaky_relu(x, inplace=True) returns x,
    overwritten; the optimizer step writes param and momentum_buffer and returns None."""
    exp = _module(generate(_task("exp_out")).source)["exp"]
    x = torch.randn(16, 48)
    o = torch.full((16, 48), float("nan"))
    assert exp(x, out=o) is o
    torch.testing.assert_close(o, torch.exp(x))

    leaky_relu = _module(generate(_task("leaky_relu_inplace")).source)["leaky_relu"]
    y = torch.randn(24, 40)
    want = torch.nn.functional.leaky_relu(y, 0.2)
    assert leaky_relu(y, 0.2, inplace=True) is y
    torch.testing.assert_close(y, want)

    step = _module(generate(_task("sgd_momentum_step")).source)["sgd_momentum_step"]
    p, g, m = torch.randn(32, 32), torch.randn(32, 32), torch.randn(32, 32)
    p_want, m_want = p.clone(), m.clone()
    m_want.mul_(0.9).add_(g)
    p_want.add_(m_want, alpha=-0.01)
    assert step(p, g, m) is None
    torch.testing.assert_close(m, m_want)
    torch.testing.assert_close(p, p_want)


def test_a_tuple_of_written_arguments_is_returned_as_the_buffers_themselves():
    source = generate(_task("adam_step_returns_state")).source
    assert "return (param, exp_avg, exp_avg_sq)" in source


def test_a_non_contiguous_buffer_passed_later_is_refused_at_the_call():
    exp = _module(generate(_task("exp_out")).source)["exp"]
    out = torch.empty(48, 16).t()
    with pytest.raises(ValueError, match="out is not contiguous"):
        exp(torch.randn(16, 48), out=out)


def _variant(tmp_path: Path, name: str, replace: tuple[str, str]) -> Task:
    path = tmp_path / f"{name}.py"
    path.write_text((FORMS / f"{name}.py").read_text().replace(*replace, 1))
    return load_task_file(path)[0]


def test_a_recorded_call_with_a_non_contiguous_buffer_is_refused(tmp_path):
    task = _variant(
        tmp_path,
        "exp_out",
        (
            'out = torch.empty(16, 48, device="cuda")',
            'out = torch.empty(48, 16, device="cuda").t()',
        ),
    )
    with pytest.raises(
        NotSupported, match=r"out, a buffer the reference writes into, that is not a contiguous"
    ):
        generate(task)


def test_a_buffer_of_another_shape_than_its_value_is_refused(tmp_path):
    """torch.exp(x, out=o) with o of another shape resizes o; the kernels store in place."""
    task = _variant(
        tmp_path,
        "exp_out",
        ('out = torch.empty(16, 48, device="cuda")', 'out = torch.empty(0, device="cuda")'),
    )
    with pytest.raises(NotSupported, match=r"into out, a \(0,\) torch.float32 buffer"):
        generate(task)


REVERSE_ROWS = (
    textwrap.dedent(
        """
        import torch


        def reverse_rows_(x, idx):
            return x.copy_(torch.gather(x, -1, idx))
        """
    )
    + "#" * 100
    + textwrap.dedent(
        """


        def test_reverse_rows_():
            x = torch.randn(8, 16, device="cuda")
            idx = torch.arange(15, -1, -1, device="cuda").expand(8, 16).contiguous()
            return {"test_case_1": reverse_rows_(x, idx)}


        test_results = test_reverse_rows_()
        """
    )
)


def test_a_buffer_read_at_other_positions_than_it_is_written_is_refused(tmp_path):
    """torch.gather(x, -1, idx, out=x)-style: a program could read an element another program
    (or itself, earlier) has already overwritten."""
    path = tmp_path / "reverse_rows_.py"
    path.write_text(REVERSE_ROWS)
    task = load_task_file(path)[0]
    with pytest.raises(NotSupported, match=r"reads x, which it also stores into, through a gather"):
        generate(task)
