"""The judge's CPU interpreter computes bf16 arithmetic and fp8 casts as the GPU does
(benchmarks/harness/interp_math.py), so the judge checks the numbers of every bf16 and fp8 kernel
on the CPU. It used to skip them on words in the candidate's source (no "float32", a `dot(`, a
"float8"), which a candidate controls: a wrong kernel then passed (tests/hostile/
bf16_no_upcast_skips_numerics.py, fp8_word_skips_numerics.py)."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

KERNELS = r"""
import os, sys
os.environ["TRITON_INTERPRET"] = "1"
import torch, triton, triton.language as tl
if sys.argv[1] == "patched":
    from benchmarks.harness.interp_rounding import patch
    assert patch()

@triton.jit
def softmax(x_ptr, y_ptr, n, B: tl.constexpr):  # bf16 throughout: no upcast in the source
    o = tl.arange(0, B)
    m = o < n
    x = tl.load(x_ptr + o, mask=m, other=float("-inf"))
    e = tl.exp(x - tl.max(x, 0))
    tl.store(y_ptr + o, e / tl.sum(e, 0), mask=m)

@triton.jit
def matmul(a_ptr, b_ptr, c_ptr, B: tl.constexpr):
    i = tl.arange(0, B)
    a = tl.load(a_ptr + i[:, None] * B + i[None, :])
    b = tl.load(b_ptr + i[:, None] * B + i[None, :])
    tl.store(c_ptr + i[:, None] * B + i[None, :], tl.dot(a, b).to(tl.bfloat16))

@triton.jit
def misc(x_ptr, y_ptr, z_ptr, n, B: tl.constexpr):
    o = tl.arange(0, B)
    m = o < n
    x = tl.load(x_ptr + o, mask=m, other=0.0)
    tl.store(y_ptr + o, tl.maximum(tl.where(x > 0, x, x * 0.5), -0.25) + tl.abs(x), mask=m)
    tl.store(z_ptr + o, tl.cumsum(x, 0), mask=m)

@triton.jit
def to_fp8(x_ptr, q_ptr, r_ptr, n, B: tl.constexpr):
    o = tl.arange(0, B)
    m = o < n
    x = tl.load(x_ptr + o, mask=m)
    tl.store(q_ptr + o, x.to(tl.float8e4nv), mask=m)
    tl.store(r_ptr + o, x.to(tl.float8e5), mask=m)

gen = torch.Generator().manual_seed(3)
checks = []
x = torch.randn(200, generator=gen).to(torch.bfloat16)
y = torch.empty_like(x)
softmax[(1,)](x, y, 200, B=256)
want = torch.softmax(x.float(), 0)
checks.append(bool(((y.float() - want).abs() <= 0.01 * want + 1e-6).all()))
a, b = (torch.randn(32, 32, generator=gen).to(torch.bfloat16) for _ in range(2))
c = torch.empty_like(a)
matmul[(1,)](a, b, c, B=32)
checks.append(bool(torch.allclose(c.float(), a.float() @ b.float(), rtol=2e-2, atol=5e-2)))
y, z = torch.empty_like(x), torch.empty_like(x)
misc[(1,)](x, y, z, 200, B=256)
xf = x.float()
checks.append(bool(torch.allclose(y.float(), torch.where(xf > 0, xf, xf * 0.5).clamp(min=-0.25) + xf.abs(), rtol=1e-2, atol=1e-2)))
checks.append(bool(torch.allclose(z.float(), torch.cumsum(xf, 0), rtol=2e-2, atol=0.1)))
x = torch.randn(4096, generator=gen) * 100
x[:5] = torch.tensor([1000.0, -1000.0, float("nan"), 0.0, -0.0])
q = torch.empty(4096, dtype=torch.float8_e4m3fn)
r = torch.empty(4096, dtype=torch.float8_e5m2)
to_fp8[(1,)](x, q, r, 4096, B=4096)
checks.append(torch.equal(q.view(torch.uint8), x.clamp(-448, 448).to(torch.float8_e4m3fn).view(torch.uint8)))
checks.append(torch.equal(r.view(torch.uint8), x.clamp(-57344, 57344).to(torch.float8_e5m2).view(torch.uint8)))
print(" ".join(str(v) for v in checks))
"""


def _run(mode: str) -> list[bool]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run(
        [sys.executable, "-c", KERNELS, mode],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    return [word == "True" for word in out.stdout.split()]


def test_bf16_math_dot_reductions_scans_and_fp8_casts_match_pytorch_once_mended():
    # softmax (exp, max, sum, div), dot, select/max/abs, cumsum, fp8 e4m3 and e5m2 casts
    assert _run("patched") == [True] * 6


def test_the_unmended_interpreter_gets_them_wrong():
    """What the mend is for (and that the test above can fail): the raw interpreter computes
    on bf16 bit patterns and rounds fp8 casts its own way."""
    raw = _run("raw")
    assert len(raw) == 6 and not all(raw), raw
    assert raw[1] is False  # tl.dot on bf16 bit patterns


def test_honest_fp8_kernels_pass_the_isolated_judge():
    """The mend runs inside the candidate's traced launch: done with PyTorch (from_numpy, clamp,
    .to, .numpy()), it was counted as the candidate's reads and ops, and the knowledge base's own
    fp8 quantization kernels failed as `fallback` (a red-team pass, 2026-12-08)."""
    from benchmarks.harness.judge import JudgeConfig, evaluate
    from benchmarks.loading import get_task
    from knowledge_base import solution_path

    for task_id in ("fp8_per_tensor_quant_fp32", "fp8_per_token_quant_fp32"):
        task = get_task(task_id)
        verdict = evaluate(task, solution_path(task.name), JudgeConfig(device="cpu", trials=2))
        assert verdict.passed, f"{task_id}: {verdict.error_class}: {verdict.message}"


def test_fp8_bits_are_torchs_rounding_with_saturation():
    import numpy as np
    import torch

    from benchmarks.harness.interp_bits import fp8_bits

    gen = torch.Generator().manual_seed(0)
    x = torch.cat([torch.randn(20_000, generator=gen) * s for s in (1e-4, 1e-2, 1.0, 100.0, 1e4)])
    edges = [0.0, -0.0, float("inf"), -float("inf"), 448.0, 449.0, 464.0, -500.0, 2.0**-9, 2.0**-10]
    x = torch.cat([x, torch.tensor(edges + [3 * 2.0**-11, 57344.0, 60000.0, float("nan")])])
    for fmt, dtype in (("float8e4nv", torch.float8_e4m3fn), ("float8e5", torch.float8_e5m2)):
        top = torch.finfo(dtype).max
        want = x.clamp(-top, top).to(dtype)
        got = torch.from_numpy(fp8_bits(x.numpy(), fmt)).view(dtype)
        assert torch.equal(got.isnan(), want.isnan())
        keep = ~want.isnan()
        assert np.array_equal(
            got[keep].view(torch.uint8).numpy(), want[keep].view(torch.uint8).numpy()
        )
