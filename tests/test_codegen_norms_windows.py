"""The code generator's large pool windows (looped at run time past 64 taps), per-(sample,
channel) and per-(sample, group) statistics (instance norm, group norm), per-channel statistics
over (N, H, W) (batch norm: rows of the leading and trailing dims; a KernelBench Model's running
statistics and count of batches stored into its own buffers), and broadcast inputs (an input
broadcast in a pattern no kind names, loaded at an index computed from each element's offset:
group norm's per-channel weight, a per-channel bias, a vector over the last dim of a
whole-tensor mean): KernelBench-style, TritonBench-style and function-style references written
here, each generated kernel judged by the real judge on the CPU (Triton interpreter); a kernel
with the wrong rule (a tap missed, the wrong channel, a channel's samples read at the wrong
stride) fails it, and what is not translated is refused by name.

fp32 and fp16 only (the interpreter computes bf16 arithmetic wrongly); tiny shapes.
"""

import re
import textwrap
from pathlib import Path

import pytest
import torch

from agents.offline.codegen.translate import NotSupported, generate
from agents.offline.policy import set_tunables
from benchmarks.harness.judge import JudgeConfig, evaluate
from benchmarks.loading import load_task_file
from benchmarks.task import Task

CPU = JudgeConfig(device="cpu", trials=1, timeout_s=300)

MODEL = """
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__({init_params}):
        super(Model, self).__init__()
{init_body}

    def forward(self, x):
{forward_body}


{constants}


def get_inputs():
    return [torch.rand({input_shape}) * 4.0 - 1.0]


def get_init_inputs():
    return [{init_args}]
"""

FUNCTION = """
import torch
import torch.nn.functional as F
from benchmarks.inputs import elem_size, maybe_outliers, randn

NAME = "probe"
CATEGORY = "math"
DESCRIPTION = "A reference written by tests/test_codegen_norms_windows.py to probe the code generator."
ENTRY_POINT = "probe"
DTYPES = ({dtype!r},)
SHAPES = [{{"name": "gpu", "dims": {{"M": 256, "N": 512}}, "weight": 1.0, "source": "test"}}]
CPU_SHAPES = [{{"name": "tiny", "dims": {{"M": 4, "N": 6}}}}, {{"name": "tail", "dims": {{"M": 7, "N": 13}}}}]
TOLERANCE = {{"fp32": {{"atol": 1e-5, "rtol": 1e-4}}, "fp16": {{"atol": 2e-3, "rtol": 2e-3}}}}
FORBIDDEN = ()


def probe({params}):
{body}


def make_inputs(dims, dtype, mode, gen):
    M, N = dims["M"], dims["N"]
{make}


def flops(dims, dtype):
    return 40.0 * dims["M"] * dims["N"]


def min_bytes(dims, dtype):
    return 40.0 * dims["M"] * dims["N"] * elem_size(dtype)
"""


def _model(tmp_path: Path, name: str, **parts: str) -> Task:
    path = tmp_path / f"{name}.py"
    path.write_text(MODEL.format(**parts))
    return load_task_file(path)[0]


def _function(
    tmp_path: Path, body: str, params: str, make: str, dtype: str = "fp32", name: str = "probe"
) -> Task:
    path = tmp_path / f"{name}.py"
    path.write_text(
        FUNCTION.format(
            dtype=dtype,
            params=params,
            body=textwrap.indent(textwrap.dedent(body).strip(), "    "),
            make=textwrap.indent(textwrap.dedent(make).strip(), "    "),
        )
    )
    return load_task_file(path)[0]


def _judge(task: Task, source: str, tmp_path: Path, name: str = "generated") -> bool:
    path = tmp_path / f"{name}.py"
    path.write_text(source)
    verdict = evaluate(task, path, CPU)
    if not verdict.passed:
        print(f"{task.id}: {verdict.error_class}: {verdict.message}")
    return verdict.passed


# -- pool windows of more than 64 taps -----------------------------------------------------------

POOL = dict(
    init_params="self",
    init_body="        pass",
    constants="batch_size = 2\nchannels = 3\nheight = 25\nwidth = 23",
    input_shape="batch_size, channels, height, width",
    init_args="",
)
BIG_WINDOWS = {
    # KernelBench's 11x11 average pool (stride = kernel): 121 taps
    "avg_pool2d_11x11": "return F.avg_pool2d(x, 11)",
    # its sizes: shrunk for the CPU, the kernel traced at two shapes
    "avg_pool2d_11x11_shrunk": "return F.avg_pool2d(x, 11)",
    # padding outside the map excluded from the divisor, a last window hanging past it
    "avg_pool2d_9x9_ceil_exclude_pad": (
        "return F.avg_pool2d(x, 9, stride=4, padding=3, ceil_mode=True, count_include_pad=False)"
    ),
    # a dilated 9x9 max pool with padding: -inf outside the map
    "max_pool2d_9x9_dilated": "return F.max_pool2d(x, 9, stride=3, padding=4, dilation=2)",
}


@pytest.mark.parametrize("case", list(BIG_WINDOWS))
def test_windows_past_64_taps_loop_and_pass_the_judge(case, tmp_path):
    parts = dict(POOL, forward_body=f"        {BIG_WINDOWS[case]}")
    if case.endswith("_shrunk"):
        parts["constants"] = "batch_size = 16\nchannels = 64\nheight = 2048\nwidth = 2048"
    task = _model(tmp_path, case, **parts)
    assert case.endswith("_shrunk") == (task.cpu_shapes[0].dims != task.shapes[0].dims)
    gen = generate(task)
    assert gen.structure == "pointwise" and re.search(r"_window_(sum|max)\(", gen.source)
    assert _judge(task, gen.source, tmp_path)


def test_a_window_loop_missing_a_tap_is_caught_by_the_judge(tmp_path):
    parts = dict(POOL, forward_body=f"        {BIG_WINDOWS['avg_pool2d_11x11']}")
    task = _model(tmp_path, "avg_pool2d_11x11", **parts)
    source = generate(task).source
    assert source.count("for k in range(0, KW):") == 1
    assert not _judge(
        task, source.replace("for k in range(0, KW):", "for k in range(1, KW):"), tmp_path
    )


def test_small_windows_stay_unrolled(tmp_path):
    parts = dict(POOL, forward_body="        return F.avg_pool2d(x, 8)")  # 64 taps
    source = generate(_model(tmp_path, "avg_pool2d_8x8", **parts)).source
    assert "_window_sum(" not in source


def test_a_large_3d_window_loops_over_depth_too(tmp_path):
    parts = dict(
        POOL,
        forward_body="        return F.avg_pool3d(x, (3, 5, 5), stride=2, padding=(1, 2, 2))",
        constants="batch_size = 2\nchannels = 2\ndepth = 5\nheight = 9\nwidth = 8",
        input_shape="batch_size, channels, depth, height, width",
    )
    task = _model(tmp_path, "avg_pool3d_75_taps", **parts)
    gen = generate(task)
    assert "_window_sum(" in gen.source
    assert _judge(task, gen.source, tmp_path)


# -- instance and group norm -------------------------------------------------------------------

# KernelBench's sizes: the importer shrinks them for the CPU, so the kernel is traced at two
# shapes and its sizes must follow them
NORM = dict(
    init_params="self, features, groups",
    constants="batch_size = 16\nfeatures = 6\ngroups = 3\ndim1 = 256\ndim2 = 256",
    input_shape="batch_size, features, dim1, dim2",
    init_args="features, groups",
    forward_body="        return self.layer(x)",
)
# affine norms get weights other than torch's ones and zeros, so a wrong channel shows
AFFINE = (
    "\n        w = torch.arange(features, dtype=torch.float32)\n"
    "        self.layer.weight = nn.Parameter(w * 0.25 + 0.5)\n"
    "        self.layer.bias = nn.Parameter(w * 0.5 - 1.0)"
)
NORMS = {
    # KernelBench's instance norm: (1, N * C, H, W) reduced over (0, 2, 3), rows of H * W
    "instance_norm": "        self.layer = nn.InstanceNorm2d(features)",
    # KernelBench's group norm: rows of C / G * H * W, the weight and bias per channel
    "group_norm_affine": "        self.layer = nn.GroupNorm(groups, features)" + AFFINE,
    "group_norm_plain": "        self.layer = nn.GroupNorm(groups, features, affine=False)",
}


@pytest.mark.parametrize("case", list(NORMS))
def test_instance_and_group_norms_pass_the_judge(case, tmp_path):
    task = _model(tmp_path, case, **dict(NORM, init_body=NORMS[case]))
    gen = generate(task)
    assert gen.structure == "row" and "var_mean.correction" in gen.ops
    assert _judge(task, gen.source, tmp_path)


def test_group_norm_with_a_wrong_channel_is_caught_by_the_judge(tmp_path):
    """The weight's channel is (e // (H * W)) % C; with H * W taken as W it is wrong."""
    task = _model(tmp_path, "group_norm", **dict(NORM, init_body=NORMS["group_norm_affine"]))
    source = generate(task).source
    wrong, count = re.subn(r"\n(\s+spread_inner\w*) = .*\n", r"\n\1 = x.shape[-1]\n", source)
    assert count >= 1
    assert not _judge(task, wrong, tmp_path)


def test_a_half_group_norm_with_weight_and_bias_inputs_passes_the_judge(tmp_path):
    """F.group_norm of an fp16 (2, 4, M, N) input in 2 groups, weight and bias passed in."""
    task = _function(
        tmp_path,
        "return F.group_norm(x, 2, w, b, 1e-5)",
        "x, w, b",
        """
        x = maybe_outliers(randn((2, 4, M, N), dtype, gen), mode, gen)
        return x, randn((4,), dtype, gen), randn((4,), dtype, gen)
        """,
        dtype="fp16",
    )
    gen = generate(task)
    assert gen.structure == "row"
    assert _judge(task, gen.source, tmp_path)


# -- broadcast inputs ----------------------------------------------------------------------------

BROADCASTS = {
    # KernelBench's hinge loss: a (N,) vector over the last dim of (M, N) in a mean of everything
    "hinge_loss": (
        "return torch.mean(torch.clamp(1 - predictions * targets, min=0))",
        "predictions, targets",
        """
        predictions = maybe_outliers(randn((M, N), dtype, gen), mode, gen)
        return predictions, torch.sign(randn((N,), torch.float32, gen)).to(dtype)
        """,
        "fp32",
        "total",
    ),
    # a per-channel (C, 1, 1) scale and bias of an image batch, elementwise
    "channel_scale_and_bias": (
        "return torch.relu(x * scale + bias.float())",
        "x, scale, bias",
        """
        x = maybe_outliers(randn((2, 3, M, N), dtype, gen), mode, gen)
        return x, randn((3, 1, 1), dtype, gen), randn((3, 1, 1), dtype, gen)
        """,
        "fp16",
        "pointwise",
    ),
}


@pytest.mark.parametrize("case", list(BROADCASTS))
def test_broadcast_inputs_pass_the_judge(case, tmp_path):
    body, params, make, dtype, structure = BROADCASTS[case]
    task = _function(tmp_path, body, params, make, dtype=dtype)
    gen = generate(task)
    assert gen.structure == structure and "spread_dim" in gen.source
    assert _judge(task, gen.source, tmp_path)


def test_a_per_channel_bias_after_a_convolution_passes_the_judge(tmp_path):
    """The convolution's epilogue stage (pointwise) adds a (C, 1, 1) bias at channel
    (e // (H * W)) % C of each element."""
    parts = dict(
        init_params="self, c_in, c_out",
        init_body=(
            "        self.conv = nn.Conv2d(c_in, c_out, 3, padding=1, bias=False)\n"
            "        self.shift = nn.Parameter(torch.randn(c_out, 1, 1))"
        ),
        forward_body="        return torch.relu(self.conv(x) + self.shift)",
        constants="batch_size = 2\nc_in = 2\nc_out = 3\nheight = 6\nwidth = 5",
        input_shape="batch_size, c_in, height, width",
        init_args="c_in, c_out",
    )
    task = _model(tmp_path, "conv_channel_shift", **parts)
    gen = generate(task)
    assert gen.structure == "conv>pointwise" and "spread_dim" in gen.source
    assert _judge(task, gen.source, tmp_path)


def test_a_broadcast_input_that_is_also_reduced_is_refused_by_its_shape(tmp_path):
    body, params, make, _, _ = BROADCASTS["hinge_loss"]
    task = _function(tmp_path, body.replace(", min=0))", ", min=0)) + targets.sum()"), params, make)
    with pytest.raises(
        NotSupported, match=r"input arg1 has shape \(6,\) in a problem of shape \(24,\)"
    ):
        generate(task)


def test_the_broadcast_index_follows_the_element_in_long_rows(tmp_path):
    """A row kernel in tiles of 4 columns: each tile computes its own elements' channels."""
    task = _model(tmp_path, "group_norm", **dict(NORM, init_body=NORMS["group_norm_affine"]))
    source = set_tunables(generate(task).source, task.entry_point, {"MAX_BLOCK_N": 4})
    namespace: dict = {}
    exec(compile(source, "<generated>", "exec"), namespace)  # noqa: S102 - our own output
    model = torch.nn.GroupNorm(3, 6)
    with torch.no_grad():
        model.weight.copy_(torch.arange(6) * 0.25 + 0.5)
        model.bias.copy_(torch.arange(6) * 0.5 - 1.0)
    candidate = namespace["ModelNew"](6, 3)
    candidate.load_state_dict({f"layer.{k}": v for k, v in model.state_dict().items()})
    x = torch.randn(2, 6, 5, 7)
    with torch.no_grad():
        torch.testing.assert_close(candidate(x), model(x), atol=1e-5, rtol=1e-4)


# -- batch norm: per-channel statistics over (N, H, W) -------------------------------------------


def _batch_norm_task(tmp_path: Path, dtype: str = "fp32") -> Task:
    return _function(
        tmp_path,
        "return F.batch_norm(x, None, None, w, b, training=True, eps=1e-5)",
        "x, w, b",
        """
        x = maybe_outliers(randn((2, 3, M, N), dtype, gen), mode, gen)
        return x, randn((3,), dtype, gen), randn((3,), dtype, gen)
        """,
        dtype=dtype,
    )


@pytest.mark.parametrize("dtype", ["fp32", "fp16"])
def test_batch_norm_statistics_over_leading_and_trailing_dims_pass_the_judge(dtype, tmp_path):
    """Training-mode batch norm of (2, 3, M, N): one row per channel, its elements at
    (c // (M * N)) * (3 * M * N) + c % (M * N) from the channel's first."""
    task = _batch_norm_task(tmp_path, dtype)
    gen = generate(task)
    assert gen.structure == "row" and "base = row * split" in gen.source
    assert _judge(task, gen.source, tmp_path)


WRONG = {
    # the samples of a channel read M * N apart instead of 3 * M * N: other channels' values
    "batch_norm_rows_without_the_channel_stride": (
        _batch_norm_task,
        r"\n(\s+)split_stride = .*\n",
        r"\n\1split_stride = split\n",
    ),
    # the hinge loss's targets indexed by the row instead of the column
    "hinge_targets_by_row": (
        lambda tmp_path: _function(tmp_path, *BROADCASTS["hinge_loss"][:3]),
        r"\n(\s+)spread_dim = .*\n",
        r"\n\1spread_dim = predictions.shape[0]\n",
    ),
}


@pytest.mark.parametrize("case", list(WRONG))
def test_wrong_layouts_are_caught_by_the_judge(case, tmp_path):
    make_task, pattern, replacement = WRONG[case]
    task = make_task(tmp_path)
    wrong, count = re.subn(pattern, replacement, generate(task).source)
    assert count == 1
    assert not _judge(task, wrong, tmp_path)


SUMS = {
    # the leading and trailing dims of (2, M, N): one row per m of 2 * N elements
    "sum_over_leading_and_trailing_dims": ("return x.sum(dim=(0, 2)) * 0.5", "row"),
    # a reduced dim of size 1 between two others: the whole tensor
    "sum_around_a_dim_of_size_one": ("return x.unsqueeze(2).sum(dim=(0, 1, 3))", "total"),
}


@pytest.mark.parametrize("case", list(SUMS))
def test_reductions_around_kept_or_empty_dims_pass_the_judge(case, tmp_path):
    body, structure = SUMS[case]
    make = "return (maybe_outliers(randn((2, M, N), dtype, gen), mode, gen),)"
    task = _function(tmp_path, body, "x", make)
    gen = generate(task)
    assert gen.structure == structure
    assert _judge(task, gen.source, tmp_path)


def test_a_reduction_over_dims_neither_adjacent_nor_at_both_ends_is_refused(tmp_path):
    make = "return (maybe_outliers(randn((2, 3, M, N), dtype, gen), mode, gen),)"
    task = _function(tmp_path, "return x.sum(dim=(1, 3))", "x", make)
    with pytest.raises(NotSupported, match=r"aten.sum has shape \(2, 4\) in a problem of shape"):
        generate(task)


BATCH_NORM_BUFFERS = """
import torch
import torch.nn.functional as F


def batch_norm(input, running_mean, running_var, weight, bias, momentum=0.1, eps=1e-5):
    return F.batch_norm(
        input, running_mean, running_var, weight, bias, training=True, momentum=momentum, eps=eps
    )

##################################################################################################


def test_batch_norm():
    results = {}
    for shape in ((2, 4, 3, 5), (3, 4, 6, 2)):
        x = torch.randn(*shape, device="cuda")
        mean, var = torch.randn(4, device="cuda"), torch.rand(4, device="cuda") + 0.5
        w, b = torch.randn(4, device="cuda"), torch.randn(4, device="cuda")
        results[str(shape)] = batch_norm(x, mean, var, w, b)
    return results


test_results = test_batch_norm()
"""


def test_batch_norm_writes_the_running_statistics_of_an_image_batch(tmp_path):
    """TritonBench style: the running mean and (unbiased) variance moved toward the batch's,
    in place, one value per channel, at two shapes (the N / (N - 1) correction follows N)."""
    path = tmp_path / "batch_norm_images.py"
    path.write_text(BATCH_NORM_BUFFERS)
    task = load_task_file(path)[0]
    gen = generate(task)
    assert "N_over_N_minus_1 = N / max(N - 1, 1)" in gen.source
    assert _judge(task, gen.source, tmp_path)


def test_kernelbench_batch_norm_updates_the_models_buffers(tmp_path):
    """nn.BatchNorm2d in training mode: the output from the batch's statistics, and the Model's
    running mean, running variance and count of batches updated in its own buffers (row 0's
    program stores the count)."""
    init = "        self.layer = nn.BatchNorm2d(features)" + AFFINE
    task = _model(tmp_path, "batch_norm", **dict(NORM, init_body=init))
    gen = generate(task)
    assert gen.structure == "row" and "mask=row == 0" in gen.source
    assert _judge(task, gen.source, tmp_path)
    namespace: dict = {}
    exec(compile(gen.source, "<generated>", "exec"), namespace)  # noqa: S102 - our own output
    candidate = namespace["ModelNew"](6, 3)
    model = torch.nn.BatchNorm2d(6)
    candidate.load_state_dict({f"layer.{k}": v for k, v in model.state_dict().items()})
    x = torch.randn(2, 6, 5, 7)
    with torch.no_grad():
        want = model(x)
        got = candidate(x)
    torch.testing.assert_close(got, want, atol=1e-5, rtol=1e-4)
    for name, buffer in model.named_buffers():
        torch.testing.assert_close(candidate.get_buffer(f"layer.{name}"), buffer)
