"""The pointwise-convolution template (knowledge_base/kernels/tpl_pointwise_conv.py): direct calls
against F.conv2d on ragged shapes, strided inputs, bias and outliers, and the conv2d_1x1 task
passing the real judge with the template wrapped to its entry point, as the offline agent does.

CPU, Triton interpreter; fp32 and fp16 only (the interpreter computes bf16 tl.dot wrongly).
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from types import ModuleType

import pytest
import torch
import torch.nn.functional as F

from agents.offline.policy import adapt
from benchmarks import get_task
from benchmarks.harness.judge import JudgeConfig, evaluate
from benchmarks.inputs import amplify_outliers

TEMPLATE = (
    Path(__file__).resolve().parents[1] / "knowledge_base" / "kernels" / "tpl_pointwise_conv.py"
)
SMALL = {"BLOCK_CO": 16, "BLOCK_P": 16, "BLOCK_CI": 16}  # several tiles and K steps on tiny maps
# (atol, rtol, terms): |y - ref| <= atol + rtol |ref| + terms * sum_ci |w| |x|. fp32 is tight (an
# fp32 sum of <= 64 products in another order); fp16 is the conv2d_1x1 task's tolerance.
TOL = {torch.float32: (1e-5, 1e-5, 2.0**-20), torch.float16: (5e-3, 5e-3, 2.0**-16)}


@pytest.fixture(scope="module")
def mod() -> ModuleType:
    """Import the template with TRITON_INTERPRET=1 set (triton.jit reads it at decoration)."""
    old = os.environ.get("TRITON_INTERPRET")
    os.environ["TRITON_INTERPRET"] = "1"
    try:
        spec = importlib.util.spec_from_file_location("kb_interp_tpl_pointwise_conv", TEMPLATE)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        if old is None:
            os.environ.pop("TRITON_INTERPRET", None)
        else:
            os.environ["TRITON_INTERPRET"] = old
    return module


def _inputs(
    B: int, Cin: int, Cout: int, H: int, W: int, dtype: torch.dtype, seed: int = 0
) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(B, Cin, H, W, generator=g).to(dtype)
    w = (torch.randn(Cout, Cin, 1, 1, generator=g) * Cin**-0.5).to(dtype)
    return x, w


def _check(y: torch.Tensor, x: torch.Tensor, w: torch.Tensor, bias: torch.Tensor | None = None):
    """y against F.conv2d in fp32, within TOL of x's dtype; y keeps x's dtype and NCHW layout."""
    w4 = w if w.dim() == 4 else w[:, :, None, None]
    b = None if bias is None else bias.float()
    ref = F.conv2d(x.float(), w4.float(), b)
    terms = F.conv2d(x.float().abs(), w4.float().abs())
    atol, rtol, t = TOL[x.dtype]
    assert y.dtype == x.dtype and y.shape == ref.shape and y.is_contiguous()
    err = (y.float() - ref).abs()
    bound = atol + rtol * ref.abs() + t * terms
    assert bool(torch.isfinite(y).all())
    assert bool((err <= bound).all()), (
        f"max err {err.max().item():.3g}, worst excess {(err - bound).max().item():.3g}"
    )


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
@pytest.mark.parametrize(
    "dims",
    [(2, 20, 12, 7, 5), (2, 3, 12, 7, 5), (1, 20, 12, 7, 5), (3, 40, 33, 4, 9)],
    ids=["tail", "cin3", "b1", "ragged"],
)
def test_ragged_shapes_match_conv2d(mod: ModuleType, dims: tuple[int, ...], dtype: torch.dtype):
    x, w = _inputs(*dims, dtype)
    _check(mod.pointwise_conv2d(x, w, **SMALL), x, w)
    _check(mod.pointwise_conv2d(x, w), x, w)  # default blocks: one tile covers everything


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_bias_and_a_two_dimensional_weight(mod: ModuleType, dtype: torch.dtype):
    x, w = _inputs(2, 20, 12, 7, 5, dtype, seed=1)
    bias = torch.randn(12, generator=torch.Generator().manual_seed(2)).to(dtype)
    w2 = w[:, :, 0, 0]
    _check(mod.pointwise_conv2d(x, w2, bias=bias, **SMALL), x, w2, bias)
    assert torch.equal(mod.pointwise_conv2d(x, w2, **SMALL), mod.pointwise_conv2d(x, w, **SMALL))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_strided_inputs(mod: ModuleType, dtype: torch.dtype):
    x, w = _inputs(2, 40, 12, 9, 11, dtype, seed=3)
    views = {
        "channels_last": x.to(memory_format=torch.channels_last),  # stride_c == 1
        "every other channel": x[:, ::2],  # pixels still one dense run
        "cropped and strided map": x[:, :20, 1:8, ::2],  # stride_h != W * stride_w
        "transposed map": x[:, :20].transpose(2, 3),
    }
    for name, v in views.items():
        assert not v.is_contiguous(), name
        wv = w[:, : v.shape[1]]
        _check(mod.pointwise_conv2d(v, wv, **SMALL), v.contiguous(), wv)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_outlier_activations(mod: ModuleType, dtype: torch.dtype):
    x, w = _inputs(2, 20, 12, 7, 5, dtype, seed=4)
    x = amplify_outliers(x, torch.Generator().manual_seed(5))
    assert x.float().abs().max() > 8  # amplified: 700 normal samples stay under ~4
    _check(mod.pointwise_conv2d(x, w, **SMALL), x, w)


def test_mixed_dtypes_take_the_fp32_path(mod: ModuleType):
    x, w = _inputs(2, 20, 12, 7, 5, torch.float16, seed=6)
    w32 = torch.randn(12, 20, generator=torch.Generator().manual_seed(7)) * 20**-0.5
    y = mod.pointwise_conv2d(x, w32, **SMALL)
    ref = F.conv2d(x.float(), w32[:, :, None, None])
    assert y.dtype == torch.float16
    # one fp16 rounding of an fp32 result, the weight kept in fp32: at most one fp16 ulp from the
    # rounded reference (the two fp32 sums differ in order, so a rounding can tip either way)
    torch.testing.assert_close(y, ref.half(), atol=2.0**-24, rtol=2.0**-10)


def test_rejects_what_is_not_a_pointwise_conv(mod: ModuleType):
    x, w = _inputs(1, 8, 4, 3, 3, torch.float32)
    with pytest.raises(ValueError, match="1x1"):
        mod.pointwise_conv2d(x, torch.zeros(4, 8, 3, 3))
    with pytest.raises(ValueError, match="Cin"):
        mod.pointwise_conv2d(x, torch.zeros(4, 7))
    with pytest.raises(ValueError, match="bias"):
        mod.pointwise_conv2d(x, w, bias=torch.zeros(5))


@pytest.mark.parametrize("task_id", ["conv2d_1x1_fp32", "conv2d_1x1_fp16"])
def test_the_wrapped_template_passes_the_judge(task_id: str, tmp_path: Path):
    task = get_task(task_id)
    adapted = adapt(TEMPLATE.read_text(), task.entry_point, list(task.signature().parameters))
    assert adapted is not None
    source, how = adapted
    assert how == "wrapped pointwise_conv2d()"
    path = tmp_path / f"{task_id}_tpl_pointwise_conv.py"
    path.write_text(source)
    verdict = evaluate(task, path, JudgeConfig(device="cpu", trials=1, timeout_s=300))
    assert verdict.passed, f"{task_id}: {verdict.error_class}: {verdict.message}"
