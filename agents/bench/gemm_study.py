"""How far the generated GEMM's structure is from cuBLAS, one structural change at a time.

    python -m agents.bench.gemm_study --device cuda --out gemm_variants.md
    TRITON_INTERPRET=1 python -m agents.bench.gemm_study --device cpu --smoke  # CPU check

The serving suite's two GEMM tasks (linear: x @ w^T with w stored [N, K]; matmul: a @ b) at their
weighted GPU shapes, bf16, against `torch.nn.functional.linear` / `torch.matmul` (cuBLAS) and
`torch.compile` of the same call, in one process. Variants, each a kernel of its own here:

- `masked`:  what the offline generator writes today (agents/offline/codegen/emit.py): one tile per
  program in row-major program order, every load masked in M, N and K;
- `grouped`: programs ordered in groups of GROUP_M tile rows (tiles that share operand panels run
  close together, so the panels stay in L2), M and N offsets wrapped modulo the size so operand
  loads need no mask, and the K loop unmasked when K is a multiple of BLOCK_K;
- `tma`:     `grouped` with both operands read through device-side TMA tensor descriptors
  (`tl.make_tensor_descriptor`; Hopper's copy engine moves the tiles, no address math per element);
- `splitk`:  for decode shapes, K cut into SPLIT_K slices, each program writes an fp32 partial tile
  and a second kernel sums the slices and rounds (skinny GEMMs otherwise leave most SMs idle);
- `generated` (with --generated): the offline generator's own candidate for the task
  (agents.offline.codegen), called with its defaults and with tunables overridden, as the
  optimizer's search would set them.

Each variant runs over a small configuration list; every result is checked against the fp32
product before it is timed (a wrong kernel is reported, never timed). Times are
`triton.testing.do_bench` medians (warm-up, L2 flushed between repetitions); decode shapes are
also timed inside a CUDA graph (`do_bench_cudagraph`), the way serving runs them. The first call
of each (variant, configuration, shape) is timed too: that is compilation plus one launch, what a
configuration search pays per candidate.

Imports torch, triton, benchmarks (the task shapes) and, for --generated, the generator
(agents.offline.codegen), which is why it lives in agents/bench and not benchmarks/studies.
"""

from __future__ import annotations

import argparse
import datetime as dt
import functools
import json
import math
import platform
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
import triton
import triton.language as tl

from benchmarks import get_task


@triton.jit
def _masked_gemm(
    a_ptr,
    b_ptr,
    c_ptr,
    M,
    N,
    K,
    sam,
    sak,
    sbk,
    sbn,
    scm,
    scn,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None].to(tl.int64) * sam + offs_k[None, :].to(tl.int64) * sak
    b_ptrs = b_ptr + offs_k[:, None].to(tl.int64) * sbk + offs_n[None, :].to(tl.int64) * sbn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        ks = k0 + offs_k
        a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (ks[None, :] < K), other=0.0)
        b = tl.load(b_ptrs, mask=(ks[:, None] < K) & (offs_n[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * sak
        b_ptrs += BLOCK_K * sbk
    mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    c_ptrs = c_ptr + offs_m[:, None].to(tl.int64) * scm + offs_n[None, :] * scn
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _tile_of(pid, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, GROUP_M: tl.constexpr):
    # groups of GROUP_M tile rows; inside a group, programs walk down the rows first, so the
    # GROUP_M row panels of A and the current column panel of B are reused while in L2
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
    per_group = GROUP_M * tiles_n
    first_m = (pid // per_group) * GROUP_M
    rows = min(tiles_m - first_m, GROUP_M)
    pid_m = first_m + (pid % per_group) % rows
    pid_n = (pid % per_group) // rows
    return pid_m, pid_n


@triton.jit
def _grouped_gemm(
    a_ptr,
    b_ptr,
    c_ptr,
    M,
    N,
    K,
    sam,
    sak,
    sbk,
    sbn,
    scm,
    scn,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr,
    EVEN_K: tl.constexpr,
):
    pid_m, pid_n = _tile_of(tl.program_id(0), M, N, BLOCK_M, BLOCK_N, GROUP_M)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    # rows and columns past the edge re-read valid ones (wrapped); their results are not stored
    am = tl.max_contiguous(tl.multiple_of(offs_m % M, BLOCK_M), BLOCK_M)
    bn = tl.max_contiguous(tl.multiple_of(offs_n % N, BLOCK_N), BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + am[:, None].to(tl.int64) * sam + offs_k[None, :] * sak
    b_ptrs = b_ptr + offs_k[:, None] * sbk + bn[None, :].to(tl.int64) * sbn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, tl.cdiv(K, BLOCK_K)):
        if EVEN_K:
            a = tl.load(a_ptrs)
            b = tl.load(b_ptrs)
        else:
            a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k0 * BLOCK_K, other=0.0)
            b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k0 * BLOCK_K, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * sak
        b_ptrs += BLOCK_K * sbk
    mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    c_ptrs = c_ptr + offs_m[:, None].to(tl.int64) * scm + offs_n[None, :] * scn
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _tma_gemm(
    a_ptr,
    b_ptr,
    c_ptr,
    M,
    N,
    K,
    sam,
    sbk,
    sbn,
    scm,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr,
    B_KMAJOR: tl.constexpr,
):
    # descriptors need a unit last stride: A is [M, K] row-major; B is either [K, N] row-major
    # (matmul) or stored as w[N, K] (linear, B_KMAJOR) and transposed in registers for the dot
    pid_m, pid_n = _tile_of(tl.program_id(0), M, N, BLOCK_M, BLOCK_N, GROUP_M)
    a_desc = tl.make_tensor_descriptor(
        a_ptr, shape=[M, K], strides=[sam, 1], block_shape=[BLOCK_M, BLOCK_K]
    )
    if B_KMAJOR:
        b_desc = tl.make_tensor_descriptor(
            b_ptr, shape=[N, K], strides=[sbn, 1], block_shape=[BLOCK_N, BLOCK_K]
        )
    else:
        b_desc = tl.make_tensor_descriptor(
            b_ptr, shape=[K, N], strides=[sbk, 1], block_shape=[BLOCK_K, BLOCK_N]
        )
    c_desc = tl.make_tensor_descriptor(
        c_ptr, shape=[M, N], strides=[scm, 1], block_shape=[BLOCK_M, BLOCK_N]
    )
    om = pid_m * BLOCK_M
    on = pid_n * BLOCK_N
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, tl.cdiv(K, BLOCK_K)):
        ok = k0 * BLOCK_K
        a = a_desc.load([om, ok])  # out-of-bounds rows and columns read as zero
        if B_KMAJOR:
            b = b_desc.load([on, ok]).T
        else:
            b = b_desc.load([ok, on])
        acc = tl.dot(a, b, acc)
    c_desc.store([om, on], acc.to(c_ptr.dtype.element_ty))  # clipped at the edges


@triton.jit
def _tma_persistent_gemm(
    a_ptr,
    b_ptr,
    c_ptr,
    M,
    N,
    K,
    sam,
    sbk,
    sbn,
    scm,
    NUM_PROGS,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr,
    B_KMAJOR: tl.constexpr,
    FLATTEN: tl.constexpr,
    WARP_SPEC: tl.constexpr,
    DESC_STORE: tl.constexpr,
):
    # `tma`, persistent: NUM_PROGS programs (about one per SM) each walk tiles pid, pid +
    # NUM_PROGS, ... in grouped order, so the descriptors are made once per program and the
    # next tile's loads can start while this tile's epilogue runs (FLATTEN: the tile and K
    # loops as one pipelined loop; WARP_SPEC: producer and consumer warps, where the compiler
    # supports it). DESC_STORE: the tile stored through a TMA descriptor; else a masked
    # pointer store, which is what a fused elementwise epilogue needs.
    a_desc = tl.make_tensor_descriptor(
        a_ptr, shape=[M, K], strides=[sam, 1], block_shape=[BLOCK_M, BLOCK_K]
    )
    if B_KMAJOR:
        b_desc = tl.make_tensor_descriptor(
            b_ptr, shape=[N, K], strides=[sbn, 1], block_shape=[BLOCK_N, BLOCK_K]
        )
    else:
        b_desc = tl.make_tensor_descriptor(
            b_ptr, shape=[K, N], strides=[sbk, 1], block_shape=[BLOCK_K, BLOCK_N]
        )
    c_desc = tl.make_tensor_descriptor(
        c_ptr, shape=[M, N], strides=[scm, 1], block_shape=[BLOCK_M, BLOCK_N]
    )
    tiles = tl.cdiv(M, BLOCK_M) * tl.cdiv(N, BLOCK_N)
    k_tiles = tl.cdiv(K, BLOCK_K)
    for tile in tl.range(
        tl.program_id(0), tiles, NUM_PROGS, flatten=FLATTEN, warp_specialize=WARP_SPEC
    ):
        pid_m, pid_n = _tile_of(tile, M, N, BLOCK_M, BLOCK_N, GROUP_M)
        om = pid_m * BLOCK_M
        on = pid_n * BLOCK_N
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for kk in range(0, k_tiles):
            a = a_desc.load([om, kk * BLOCK_K])
            if B_KMAJOR:
                b = b_desc.load([on, kk * BLOCK_K]).T
            else:
                b = b_desc.load([kk * BLOCK_K, on])
            acc = tl.dot(a, b, acc)
        if DESC_STORE:
            c_desc.store([om, on], acc.to(c_ptr.dtype.element_ty))
        else:
            offs_m = om + tl.arange(0, BLOCK_M)
            offs_n = on + tl.arange(0, BLOCK_N)
            mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
            c_ptrs = c_ptr + offs_m[:, None].to(tl.int64) * scm + offs_n[None, :]
            tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _splitk_partial(
    a_ptr,
    b_ptr,
    p_ptr,
    M,
    N,
    K,
    sam,
    sak,
    sbk,
    sbn,
    K_PER,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
):
    # program (tile, slice): the slice's K range into an fp32 partial tile p[slice, M, N]
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    s = tl.program_id(2)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    am = offs_m % M
    bn = tl.max_contiguous(tl.multiple_of(offs_n % N, BLOCK_N), BLOCK_N)
    offs_k = s * K_PER + tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + am[:, None].to(tl.int64) * sam + offs_k[None, :].to(tl.int64) * sak
    b_ptrs = b_ptr + offs_k[:, None].to(tl.int64) * sbk + bn[None, :].to(tl.int64) * sbn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    end = tl.minimum(K, (s + 1) * K_PER)
    for k0 in range(s * K_PER, end, BLOCK_K):
        kmask = (k0 - s * K_PER + tl.arange(0, BLOCK_K)) < end - s * K_PER
        a = tl.load(a_ptrs, mask=kmask[None, :], other=0.0)
        b = tl.load(b_ptrs, mask=kmask[:, None], other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * sak
        b_ptrs += BLOCK_K * sbk
    mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    p_ptrs = p_ptr + (s * M + offs_m[:, None]).to(tl.int64) * N + offs_n[None, :]
    tl.store(p_ptrs, acc, mask=mask)


@triton.jit
def _splitk_sum(p_ptr, c_ptr, MN, SPLIT: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < MN
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for s in tl.static_range(SPLIT):
        acc += tl.load(p_ptr + s * MN + offs, mask=mask, other=0.0)
    tl.store(c_ptr + offs, acc.to(c_ptr.dtype.element_ty), mask=mask)


PREFILL = [  # BLOCK_M, BLOCK_N, BLOCK_K, num_warps, num_stages
    (64, 64, 32, 4, 3),  # the generator's default today
    (128, 128, 64, 4, 4),
    (128, 128, 64, 8, 3),
    (128, 256, 64, 8, 3),
    (256, 128, 64, 8, 3),
    (64, 256, 64, 4, 4),
]
DECODE = [
    (64, 64, 32, 4, 3),
    (16, 64, 128, 4, 4),
    (16, 128, 128, 4, 4),
    (32, 64, 256, 4, 3),
    (64, 128, 64, 4, 4),
]
SPLITS = (2, 4, 8, 16)
# the TMA variants' own lists (--variants tma,tmap,...): Hopper's usual tiles, deeper pipelines
PREFILL_TMA = [
    (128, 128, 64, 4, 4),  # the best `tma` row of 2026-12-02
    (128, 128, 64, 8, 4),
    (128, 128, 64, 4, 5),
    (128, 256, 64, 8, 3),
    (128, 256, 64, 8, 4),
    (128, 128, 128, 8, 3),
    (256, 128, 64, 8, 4),
    (64, 256, 64, 4, 4),
]
DECODE_TMA = [
    (64, 32, 128, 4, 4),
    (64, 32, 256, 4, 3),
    (64, 64, 128, 4, 4),
    (64, 64, 256, 4, 3),
    (64, 128, 128, 4, 3),
]
# persistent variants: (FLATTEN, WARP_SPEC, DESC_STORE)
PERSISTENT = {
    "tmap": (False, False, False),
    "tmapf": (True, False, False),
    "tmapw": (False, True, False),
    "tmapd": (False, False, True),
}
VARIANTS = ("masked", "grouped", "tma", "splitk", *PERSISTENT)


@functools.cache
def _sm_count(device: torch.device) -> int:
    if device.type != "cuda":
        return 3  # the interpreter: a few programs, so each walks several tiles
    return torch.cuda.get_device_properties(device).multi_processor_count


# the generated candidate's overrides (over its defaults, `{}` first)
GENERATED_PREFILL: list[dict[str, int]] = [
    {},
    # the pointer kernel (the K-major default before 2026-12-03) and one program per tile
    # through descriptors, against the persistent kernel over Hopper's usual tiles
    {"TMA": 0, "PERSIST": 0, "FLATTEN": 0, "BLOCK_M": 128, "BLOCK_N": 128, "num_warps": 4,
     "num_stages": 4, "WRAP": 1},
    {"TMA": 1, "PERSIST": 0, "BLOCK_M": 128, "BLOCK_N": 128, "num_warps": 4, "num_stages": 4},
    *[
        {"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": 64, "num_warps": w, "num_stages": st,
         "GROUP_M": 8, "TMA": 1, "PERSIST": 1, "FLATTEN": f}
        for bm, bn, w, st, f in (
            (128, 128, 4, 5, 0), (128, 128, 4, 4, 1), (128, 256, 8, 3, 1), (128, 256, 8, 4, 0),
            (256, 128, 8, 4, 0), (128, 256, 8, 3, 0),
        )
    ],
]  # fmt: skip
GENERATED_DECODE: list[dict[str, int]] = [
    {},
    *[{"SPLIT_K": k} for k in (1, 2, 4, 8)],
    {"DECODE_BLOCK_M": 16, "DECODE_BLOCK_N": 64, "DECODE_BLOCK_K": 128, "SPLIT_K": 1},
    {"DECODE_BLOCK_M": 16, "DECODE_BLOCK_N": 64, "DECODE_BLOCK_K": 128, "SPLIT_K": 4},
    {"DECODE_BLOCK_M": 32, "DECODE_BLOCK_N": 64, "DECODE_BLOCK_K": 256, "DECODE_STAGES": 3},
]
SMOKE = [(16, 16, 16, 4, 1), (32, 16, 16, 4, 1)]


def _operands(
    task: str, dims: dict[str, int], dtype: torch.dtype, device: str, gen: torch.Generator
):
    """(A [M, K], B as a [K, N] view, the torch call, B stored K-major)."""
    M, N, K = dims["M"], dims["N"], dims["K"]
    a = torch.randn((M, K), generator=gen, device=device).to(dtype)
    if task == "linear":
        w = (torch.randn((N, K), generator=gen, device=device) * K**-0.5).to(dtype)
        return a, w.t(), (lambda: torch.nn.functional.linear(a, w)), True
    b = (torch.randn((K, N), generator=gen, device=device) * K**-0.5).to(dtype)
    return a, b, (lambda: torch.matmul(a, b)), False


def _launcher(
    variant: str, a: torch.Tensor, b: torch.Tensor, cfg: tuple, split: int, b_kmajor: bool
) -> Callable[[], torch.Tensor]:
    M, K = a.shape
    N = b.shape[1]
    bm, bn, bk, warps, stages = cfg
    c = torch.empty((M, N), device=a.device, dtype=a.dtype)
    opts = {"num_warps": warps, "num_stages": stages}
    if variant == "masked":
        grid = (triton.cdiv(M, bm), triton.cdiv(N, bn))

        def masked() -> torch.Tensor:
            _masked_gemm[grid](
                a,
                b,
                c,
                M,
                N,
                K,
                a.stride(0),
                a.stride(1),
                b.stride(0),
                b.stride(1),
                c.stride(0),
                c.stride(1),
                BLOCK_M=bm,
                BLOCK_N=bn,
                BLOCK_K=bk,
                **opts,
            )
            return c

        return masked
    if variant == "grouped":
        grid = (triton.cdiv(M, bm) * triton.cdiv(N, bn),)

        def grouped() -> torch.Tensor:
            _grouped_gemm[grid](
                a,
                b,
                c,
                M,
                N,
                K,
                a.stride(0),
                a.stride(1),
                b.stride(0),
                b.stride(1),
                c.stride(0),
                c.stride(1),
                BLOCK_M=bm,
                BLOCK_N=bn,
                BLOCK_K=bk,
                GROUP_M=8,
                EVEN_K=K % bk == 0,
                **opts,
            )
            return c

        return grouped
    if variant == "tma":
        grid = (triton.cdiv(M, bm) * triton.cdiv(N, bn),)
        base = b.t() if b_kmajor else b  # the stored tensor, unit last stride

        def tma() -> torch.Tensor:
            _tma_gemm[grid](
                a,
                base,
                c,
                M,
                N,
                K,
                a.stride(0),
                b.stride(0),
                base.stride(0),
                c.stride(0),
                BLOCK_M=bm,
                BLOCK_N=bn,
                BLOCK_K=bk,
                GROUP_M=8,
                B_KMAJOR=b_kmajor,
                **opts,
            )
            return c

        return tma
    if variant in PERSISTENT:
        flatten, warp_spec, desc_store = PERSISTENT[variant]
        tiles = triton.cdiv(M, bm) * triton.cdiv(N, bn)
        programs = min(tiles, _sm_count(a.device))
        base = b.t() if b_kmajor else b

        def persistent() -> torch.Tensor:
            _tma_persistent_gemm[(programs,)](
                a,
                base,
                c,
                M,
                N,
                K,
                a.stride(0),
                b.stride(0),
                base.stride(0),
                c.stride(0),
                programs,
                BLOCK_M=bm,
                BLOCK_N=bn,
                BLOCK_K=bk,
                GROUP_M=8,
                B_KMAJOR=b_kmajor,
                FLATTEN=flatten,
                WARP_SPEC=warp_spec,
                DESC_STORE=desc_store,
                **opts,
            )
            return c

        return persistent
    assert variant == "splitk"
    k_per = triton.cdiv(triton.cdiv(K, split), bk) * bk
    p = torch.empty((split, M, N), device=a.device, dtype=torch.float32)
    grid = (triton.cdiv(M, bm), triton.cdiv(N, bn), split)

    def run() -> torch.Tensor:
        _splitk_partial[grid](
            a,
            b,
            p,
            M,
            N,
            K,
            a.stride(0),
            a.stride(1),
            b.stride(0),
            b.stride(1),
            k_per,
            BLOCK_M=bm,
            BLOCK_N=bn,
            BLOCK_K=bk,
            **opts,
        )
        _splitk_sum[(triton.cdiv(M * N, 1024),)](p, c, M * N, SPLIT=split, BLOCK=1024)
        return c

    return run


def _error(out: torch.Tensor, ref: torch.Tensor) -> float:
    return float(((out.float() - ref).abs().max() / ref.abs().max().clamp_min(1e-6)).item())


def _bench(fn: Callable[[], Any], graph: bool) -> float:
    from triton.testing import do_bench, do_bench_cudagraph

    if graph:
        return float(do_bench_cudagraph(fn, rep=50, return_mode="median")) * 1e3
    return float(do_bench(fn, warmup=10, rep=60, return_mode="median")) * 1e3


def _generated_entry(task_id: str, folder: Path) -> tuple[Callable[..., Any], dict[str, Any]]:
    """The generator's candidate for `task_id`, imported from a file, and its tunables."""
    import importlib.util

    from agents.offline.codegen import generate
    from agents.offline.policy import tunable_values

    task = get_task(task_id)
    source = generate(task).source
    path = folder / f"{task_id}_generated.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(f"_gen_{task_id}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, task.entry_point), tunable_values(source, task.entry_point)


def run_study(
    device: str,
    smoke: bool,
    deadline_s: float,
    generated: bool = False,
    variants: tuple[str, ...] = (),
    phases: tuple[str, ...] = (),
) -> dict[str, Any]:
    """The study's rows; `variants` (default: masked, grouped, tma, splitk) and `phases`
    (default: every shape) narrow it."""
    start = time.monotonic()
    gen = torch.Generator(device=device).manual_seed(0)
    dtype = torch.float16 if smoke else torch.bfloat16
    # device-side descriptors need a scratch allocator for the descriptor storage
    triton.set_allocator(
        lambda size, align, stream: torch.empty(size, dtype=torch.int8, device=device)
    )
    rows: list[dict[str, Any]] = []
    for task in ("linear", "matmul"):
        shapes = [(s.name, s.dims, s.phase) for s in get_task(f"{task}_bf16").shapes]
        if smoke:
            shapes = [
                ("tiny", {"M": 40, "N": 24, "K": 48}, "prefill"),
                ("tiny_decode", {"M": 5, "N": 24, "K": 64}, "decode"),
            ]
        for shape_name, dims, phase in shapes:
            if phases and phase not in phases:
                continue
            a, b, torch_call, b_kmajor = _operands(task, dims, dtype, device, gen)
            ref = torch_call().float() if smoke else (a.float() @ b.float())
            flops = 2.0 * dims["M"] * dims["N"] * dims["K"]
            graph = phase == "decode" and device == "cuda"
            base: dict[str, Any] = {"task": task, "shape": shape_name, "phase": phase, **dims}
            if device == "cuda":
                compiled = torch.compile(torch_call)
                for name, fn in (("cublas", torch_call), ("torch.compile", compiled)):
                    t0 = time.monotonic()
                    fn()
                    torch.cuda.synchronize()
                    first = time.monotonic() - t0
                    us = _bench(fn, False)
                    rows.append(
                        {
                            **base,
                            "variant": name,
                            "config": "",
                            "ok": True,
                            "err": 0.0,
                            "us": us,
                            "graph_us": _bench(fn, True) if graph else None,
                            "tflops": flops / us * 1e-6,
                            "first_call_s": first,
                        }
                    )
            if generated:
                _time_generated(rows, base, task, dtype, a, b, ref, flops, graph, smoke, device)
                continue
            cfgs = SMOKE if smoke else (DECODE if phase == "decode" else PREFILL)
            tma_cfgs = SMOKE if smoke else (DECODE_TMA if phase == "decode" else PREFILL_TMA)
            chosen = variants or ("masked", "grouped", "tma", "splitk")
            plan = [(v, c, 1) for v in ("masked", "grouped") if v in chosen for c in cfgs]
            plan += [(v, c, 1) for v in ("tma", *PERSISTENT) if v in chosen for c in tma_cfgs]
            if phase == "decode" and "splitk" in chosen:
                plan += [("splitk", c, s) for c in cfgs[1:] for s in SPLITS]
            for variant, cfg, split in plan:
                if time.monotonic() - start > deadline_s:
                    rows.append(
                        {
                            **base,
                            "variant": variant,
                            "config": str(cfg),
                            "ok": False,
                            "err": math.nan,
                            "detail": "not run: deadline",
                        }
                    )
                    continue
                if variant in ("tma", *PERSISTENT) and device != "cuda" and not smoke:
                    continue
                label = "x".join(map(str, cfg[:3])) + f" w{cfg[3]} s{cfg[4]}"
                label += f" split{split}" if variant == "splitk" else ""
                row = {**base, "variant": variant, "config": label}
                try:
                    fn = _launcher(variant, a, b, cfg, split, b_kmajor)
                    t0 = time.monotonic()
                    out = fn()
                    if device == "cuda":
                        torch.cuda.synchronize()
                    row["first_call_s"] = time.monotonic() - t0
                    err = _error(out, ref)
                    row.update(ok=err < 2e-2, err=err)
                    if row["ok"] and device == "cuda":
                        us = _bench(fn, False)
                        row.update(
                            us=us,
                            tflops=flops / us * 1e-6,
                            graph_us=_bench(fn, True) if graph else None,
                        )
                except Exception as exc:  # noqa: BLE001 - a config that fails to build is a result
                    row.update(ok=False, err=math.nan, detail=f"{type(exc).__name__}: {exc}"[:200])
                rows.append(row)
                print(json.dumps(row), flush=True)
    return {
        "generated": generated,
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "device": torch.cuda.get_device_name()
        if device == "cuda"
        else platform.processor() or "cpu",
        "torch": torch.__version__,
        "triton": triton.__version__,
        "dtype": str(dtype),
        "command": "python -m agents.bench.gemm_study --device "
        + device
        + (" --smoke" if smoke else "")
        + (" --generated" if generated else "")
        + (f" --variants {','.join(variants)}" if variants else "")
        + (f" --phases {','.join(phases)}" if phases else ""),
        "rows": rows,
    }


_ENTRIES: dict[str, tuple[Callable[..., Any], dict[str, Any]]] = {}


def _time_generated(
    rows: list[dict[str, Any]],
    base: dict[str, Any],
    task: str,
    dtype: torch.dtype,
    a: torch.Tensor,
    b: torch.Tensor,
    ref: torch.Tensor,
    flops: float,
    graph: bool,
    smoke: bool,
    device: str,
) -> None:
    import tempfile

    task_id = f"{task}_{'fp16' if smoke else 'bf16'}"
    if task_id not in _ENTRIES:
        _ENTRIES[task_id] = _generated_entry(task_id, Path(tempfile.mkdtemp()))
    fn, defaults = _ENTRIES[task_id]
    args = (a, b.t()) if task == "linear" else (a, b)  # linear takes w as stored, [N, K]
    plan = GENERATED_DECODE if base["phase"] == "decode" else GENERATED_PREFILL
    for override in plan[:2] if smoke else plan:
        label = ", ".join(f"{k}={v}" for k, v in override.items()) or "defaults: " + ", ".join(
            f"{k}={v}" for k, v in defaults.items()
        )
        row = {**base, "variant": "generated", "config": label}
        try:
            call = functools.partial(fn, *args, **override)
            t0 = time.monotonic()
            out = call()
            if device == "cuda":
                torch.cuda.synchronize()
            row["first_call_s"] = time.monotonic() - t0
            err = _error(out, ref)
            row.update(ok=err < 2e-2, err=err)
            if row["ok"] and device == "cuda":
                us = _bench(call, False)
                row.update(
                    us=us, tflops=flops / us * 1e-6, graph_us=_bench(call, True) if graph else None
                )
        except Exception as exc:  # noqa: BLE001 - a config that fails to build is a result
            row.update(ok=False, err=math.nan, detail=f"{type(exc).__name__}: {exc}"[:200])
        rows.append(row)
        print(json.dumps(row), flush=True)


def markdown(report: dict[str, Any]) -> str:
    lines = [
        "# GEMM structure study: the generated GEMM's variants against cuBLAS and torch.compile",
        "",
        f"{report['device']}, torch {report['torch']}, triton {report['triton']}, {report['dtype']},"
        f" {report['date']}. Command: `{report['command']}`. Times are do_bench medians in µs"
        " (decode rows also inside a CUDA graph); `first call` is compile plus one launch.",
        "",
    ]
    keys = sorted({(r["task"], r["shape"]) for r in report["rows"]}, key=lambda k: k)
    for task, shape in keys:
        rows = [r for r in report["rows"] if r["task"] == task and r["shape"] == shape]
        dims = rows[0]
        cublas = next((r["us"] for r in rows if r["variant"] == "cublas"), math.nan)
        lines += [
            f"## {task} {shape} (M={dims['M']}, N={dims['N']}, K={dims['K']}, {dims['phase']})",
            "",
            "| variant | config | µs | TFLOP/s | × cuBLAS | graph µs | first call s | note |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for r in rows:
            us = r.get("us")
            graph_us, first = r.get("graph_us"), r.get("first_call_s")
            cells = (
                ["", "", ""]
                if us is None
                else [f"{us:.1f}", f"{r['tflops']:.0f}", f"{cublas / us:.2f}"]
            )
            note = r.get("detail", "") if not r["ok"] else ""
            if not r["ok"] and not note:
                note = f"wrong: rel err {r['err']:.2e}"
            cells += [
                "" if graph_us is None else f"{graph_us:.1f}",
                "" if first is None else f"{first:.2f}",
                note,
            ]
            lines.append(f"| {r['variant']} | {r['config']} | " + " | ".join(cells) + " |")
        lines.append("")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--smoke", action="store_true", help="tiny shapes (the CPU interpreter)")
    parser.add_argument("--deadline", type=float, default=1e9, help="seconds; later rows not run")
    parser.add_argument("--generated", action="store_true", help="time the generator's candidate")
    parser.add_argument(
        "--variants", default="", help=f"comma list of {', '.join(VARIANTS)} (default: the first 4)"
    )
    parser.add_argument(
        "--phases", default="", help="comma list of prefill, decode (default: both)"
    )
    parser.add_argument("--out", default="gemm_variants.md")
    args = parser.parse_args(argv)
    variants = tuple(v for v in args.variants.split(",") if v)
    unknown = [v for v in variants if v not in VARIANTS]
    if unknown:
        parser.error(f"unknown variant(s) {', '.join(unknown)}; known: {', '.join(VARIANTS)}")
    phases = tuple(p for p in args.phases.split(",") if p)
    report = run_study(args.device, args.smoke, args.deadline, args.generated, variants, phases)
    out = Path(args.out)
    out.write_text(markdown(report))
    out.with_suffix(".json").write_text(json.dumps(report, indent=1))
    print(f"wrote {out} and {out.with_suffix('.json')}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
