"""The generated GEMM's configurations, each through the CPU judge (Triton interpreter): tile
order in groups (GROUP_M), wrapped unmasked loads (WRAP) with K dividing BLOCK_K or not, the
decode configuration (at most 64 rows) with split-K slices summed by the second kernel, and an
epilogue in both kernels. The task CPU shapes have at most 33 rows, so probes here make products
of 83 and 143 rows to reach the prefill configuration."""

from __future__ import annotations

import pytest

from agents.offline.codegen.translate import generate
from agents.offline.policy import set_tunables, tunable_values
from benchmarks.harness.judge import JudgeConfig
from tests.test_codegen import CPU, _judge, _probe

SMALL = {"BLOCK_M": 16, "BLOCK_N": 16, "BLOCK_K": 16, "num_warps": 4, "num_stages": 1}
SMALL_DECODE = {
    "DECODE_BLOCK_M": 16,
    "DECODE_BLOCK_N": 16,
    "DECODE_BLOCK_K": 16,
    "DECODE_WARPS": 4,
    "DECODE_STAGES": 1,
}


def _product_probe(tmp_path, rows: str, k: int, k_major: bool, dtype: str = "fp32"):
    """a @ b (+ a per-column bias c) with `rows` rows; b is stored [N, K] when k_major."""
    if k_major:
        body, stored = "return a @ w.t() + c", f"randn((24, {k}), dtype, gen, std=0.2)"
    else:
        body, stored = "return a @ w + c", f"randn(({k}, 24), dtype, gen, std=0.2)"
    return _probe(
        tmp_path,
        body,
        params="a, w, c",
        inputs=f"(randn(({rows}, {k}), dtype, gen), {stored}, randn((24,), dtype, gen))",
        dtype=dtype,
    )


@pytest.mark.parametrize(
    ("k_major", "k", "wrap", "group"),
    [
        (False, 48, 0, 0),  # masked loads, column-major tiles
        (False, 40, 1, 2),  # wrapped, K tail masked, groups of 2 tile rows (a partial last group)
        (True, 48, 1, 3),  # wrapped and K even: no mask at all
        (True, 40, 0, 16),  # masked, one group larger than the tile rows
    ],
)
def test_prefill_configurations(tmp_path, k_major, k, wrap, group):
    task = _product_probe(tmp_path, "M * 20 + 3", k, k_major)
    gen = generate(task)
    assert gen.structure == "gemm"
    source = set_tunables(gen.source, task.entry_point, {**SMALL, "WRAP": wrap, "GROUP_M": group})
    _judge(task, source, tmp_path)


@pytest.mark.parametrize(
    ("k", "split", "dtype"),
    [
        (48, 2, "fp32"),  # slices of 32 and 16: EVEN_K
        (40, 2, "fp32"),  # slices of 32 and 8: the last one masked
        (80, 4, "fp16"),  # four slices of 32, 32, 16 (the rounding to BLOCK_K leaves three)
        (48, 1, "fp32"),  # never split: the epilogue in the product kernel
        (64, 0, "fp32"),  # by tile count: 2 x 2 tiles ask for 8 slices; K = 64 gives 4 of 16
    ],
)
def test_decode_split_k(tmp_path, k, split, dtype):
    task = _product_probe(tmp_path, "M + 20", k, k_major=True, dtype=dtype)
    gen = generate(task)
    source = set_tunables(gen.source, task.entry_point, {**SMALL_DECODE, "SPLIT_K": split})
    _judge(task, source, tmp_path)


def test_the_launcher_picks_decode_or_prefill_by_rows(tmp_path):
    """The decode configuration serves products of at most 64 rows, prefill the rest; both sets
    of tunables are the launcher's parameters."""
    task = _product_probe(tmp_path, "M * 20 + 3", 48, k_major=False)
    source = generate(task).source
    values = tunable_values(source, task.entry_point)
    assert {"BLOCK_M", "GROUP_M", "WRAP", "DECODE_BLOCK_M", "SPLIT_K"} <= set(values)
    assert "if M <= 64:" in source and "_gemm_sum_kernel" in source


@pytest.mark.parametrize(
    ("k_major", "k", "dtype", "persist", "flatten"),
    [
        (False, 48, "fp32", 0, 0),  # B read [K, N] through its descriptor
        (True, 40, "fp32", 0, 0),  # B stored [N, K] (a Linear weight): tiles transposed for the dot
        (True, 40, "fp16", 0, 0),  # K past the last full tile reads as zero from the descriptor
        (True, 40, "fp16", 1, 0),  # persistent: 4 programs (the interpreter's "SMs") walk 6 tiles
        (False, 48, "fp16", 1, 1),  # persistent, tile and K loops flattened
    ],
)
def test_the_tensor_descriptor_path(tmp_path, k_major, k, dtype, persist, flatten):
    task = _product_probe(tmp_path, "M * 20 + 3", k, k_major, dtype)
    tunables = {**SMALL, "BLOCK_M": 32, "TMA": 1, "PERSIST": persist, "FLATTEN": flatten}
    source = set_tunables(generate(task).source, task.entry_point, tunables)
    _judge(task, source, tmp_path, SEEDED if dtype == "fp16" else CPU)


# fp16 products on inputs and shapes of fixed seeds: the CPU interpreter's fp16 `tl.dot` does not
# round as a GPU's does, and one drawn input in many left one element 8 ulps from the reference
# (`.ci/run`, 2026-12-05: 1 of 4872 elements, 0.00195 off at -0.4375, tolerance 0.001875); the
# tolerance stays the task's
SEEDED = JudgeConfig(device="cpu", trials=1, timeout_s=120, seed=20261205, shape_seed=20261205)


@pytest.mark.parametrize(
    ("k", "persist", "taken"), [(48, 0, 1), (42, 0, 0), (48, 1, 2), (42, 1, 0)]
)
def test_the_descriptor_path_is_taken_only_where_strides_allow(tmp_path, k, persist, taken):
    """fp16 rows of 48 elements are 96 bytes (a multiple of 16: descriptors are legal); rows of
    42 are 84 bytes, so the launcher keeps the pointer path whatever TMA and PERSIST ask.
    `taken`: 0 the pointer path, 1 descriptors, 2 the persistent kernel."""
    import importlib.util

    import torch

    task = _product_probe(tmp_path, "M * 20 + 3", k, True, "fp16")
    path = tmp_path / "candidate.py"
    tunables = {**SMALL, "TMA": 1, "PERSIST": persist}
    path.write_text(set_tunables(generate(task).source, task.entry_point, tunables))
    spec = importlib.util.spec_from_file_location("tma_candidate", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    seen: list[tuple[int, int]] = []

    class Spy:  # records which kernel ran, its descriptor path and B's layout, then launches it
        def __init__(self, kernel, persistent):
            self.kernel, self.persistent = kernel, persistent

        def __getitem__(self, grid):
            def launch(*args, **kwargs):
                path = 2 if self.persistent else kwargs["TMA"]
                seen.append((path, kwargs["B_KMAJOR"]))
                return self.kernel[grid](*args, **kwargs)

            return launch

    products = ("_gemm_kernel", "_gemm_persistent_kernel")
    for name in [n for n in vars(module) if n.endswith(products)]:
        setattr(module, name, Spy(getattr(module, name), "persistent" in name))
    dims = {**task.cpu_shapes[0].dims, "M": 4}
    inputs = task.make_inputs(dims, "standard", torch.Generator().manual_seed(0))
    out = getattr(module, task.entry_point)(*inputs)
    expected = task.reference_for(dims)(*inputs)
    assert torch.allclose(out.float(), expected.float(), atol=2e-2, rtol=2e-2)
    assert seen == [(taken, 1)]
