"""Hardware sheets as knowledge-base docs, generated at build time from `profiling.hardware`.

The numbers live in one place (`profiling.hardware.SHEETS`, the datasheet records the roofline
uses before calibration); this module only turns each sheet into prose the agent can retrieve:
the peaks, the ridge points they imply, what fits in shared memory and L2, and the architecture
notes a kernel writer needs on that part. Figures measured on our own device are added where we
have them, and only those make a sheet "proven".
"""

from __future__ import annotations

import re
from typing import Any

from knowledge_base.chunks import Chunk, Source, chunk_markdown, content_hash, encode_list

# Architecture notes per sheet name: what changes in how you write a Triton kernel there.
ARCH_NOTES: dict[str, str] = {
    "H100 SXM": (
        "Hopper (sm_90). Triton lowers `tl.dot` on fp16/bf16/fp8 tiles to asynchronous wgmma "
        "when a warp group (4 warps) owns at least a 64-row tile, so BLOCK_M >= 64 and num_warps "
        "4 or 8 are the useful GEMM configurations. TMA (tensor descriptors) moves 2-D tiles "
        "without address arithmetic in registers; use it for GEMM and attention operands on "
        "large shapes. Thread-block clusters and distributed shared memory exist but Triton "
        "exposes little of them. FP8 (e4m3/e5m2) tensor cores run at twice the bf16 rate."
    ),
    "H200 SXM": (
        "Same GH100 die as the H100 SXM (sm_90: wgmma, TMA, FP8) with 141 GB HBM3e at 4.8 TB/s. "
        "Compute peaks are unchanged, bandwidth is 43% higher, so the ridge point drops and more "
        "shapes become compute-bound; memory-bound kernels (norms, activations, decode GEMV, "
        "KV-cache reads) gain the most. Decode attention with long contexts benefits directly."
    ),
    "A100 SXM 80GB": (
        "Ampere (sm_80). `tl.dot` lowers to mma.sync (warp-level), software-pipelined with "
        "cp.async: num_stages 3-4 hides global latency. No FP8 and no TMA; the Hopper-only "
        "paths (tensor descriptors, warp specialization) fall back or fail. 164 KB shared memory "
        "per SM bounds BLOCK_M x BLOCK_K x num_stages. bf16 and tf32 tensor cores are available."
    ),
    "L40S": (
        "Ada Lovelace (sm_89), a PCIe card with GDDR6 at 864 GB/s: almost every LLM serving "
        "kernel except large GEMMs is memory-bound here. FP8 tensor cores exist (Triton supports "
        "fp8 `tl.dot` on sm_89), but no wgmma and no TMA. Only about 100 KB of shared memory per "
        "SM: Hopper-sized GEMM configs (128x256x64, 4 stages) do not fit; use 128x128x32 with 3 "
        "stages or fewer. The 96 MB L2 is large, so repeated small operands stay resident."
    ),
    "RTX 4090": (
        "Ada Lovelace (sm_89), consumer part. Tensor rates with fp32 accumulation are half the "
        "fp16-accumulate figures; Triton's `tl.dot` accumulates in fp32, so use the fp32-accumulate "
        "peak for rooflines. About 100 KB shared memory per SM and 72 MB of L2. No TMA or wgmma."
    ),
    "RTX 5090": (
        "Consumer Blackwell (sm_120). Not the datacenter Blackwell: no tcgen05/TMEM, about 100 KB "
        "shared memory per SM, GDDR7 at 1.79 TB/s. Triton support for sm_120 arrived later than "
        "for sm_90/sm_100; check the installed Triton version before relying on fp8 `tl.dot`."
    ),
    "MI300X": (
        "AMD CDNA 3 (gfx942). A wavefront is 64 lanes, so `num_warps=4` means 256 threads; "
        "LDS (shared memory) is 64 KB per CU, which caps tile sizes well below Hopper's. Triton "
        "on ROCm exposes `waves_per_eu`, `matrix_instr_nonkdim` (16 or 32) and `kpack` as extra "
        "tuning knobs, and the software pipeliner prefers num_stages 2 (0 on older releases). "
        "FP8 is the e4m3fnuz variant (different bias and no negative zero): scales computed for "
        "OCP e4m3fn do not transfer unchanged. The 256 MB Infinity Cache sits behind the L2."
    ),
}

# Figures measured on our own device (see /work/shared/GPU.md): the only thing that makes a sheet
# "proven". Keyed by sheet name.
MEASURED: dict[str, str] = {
    "H200 SXM": (
        "Measured on our H200 (torch 2.11 + triton 3.6, do_bench medians, 2026-11-29): "
        "device-to-device copy about 4.0 TB/s counting bytes read plus written (83% of the "
        "4.8 TB/s datasheet); dense 8192^3 matmul bf16 690-790 TFLOP/s (cuBLAS ran 716-731 "
        "TFLOP/s at 4096^3), fp16 about 750, fp32 about 51, fp8 e4m3 about 1270; an empty Triton "
        "launch costs about 3.7 us under do_bench and 0.7 us per launch inside a CUDA graph. "
        "Treat ~4.0 TB/s, not 4.8, as the practical memory ceiling, and calibrate compute peaks "
        "from the best of several GEMM shapes."
    ),
}


def _slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


def _fmt_bytes(n: int) -> str:
    if n >= 1 << 30:
        return f"{n / (1 << 30):.0f} GiB"
    if n >= 1 << 20:
        return f"{n / (1 << 20):.0f} MiB"
    return f"{n / (1 << 10):.0f} KiB"


def sheet_markdown(sheet: Any) -> str:
    """The Markdown body for one `profiling.hardware.HardwareSheet`."""
    bw = sheet.bandwidth_bytes_per_s
    lines = [
        f"# {sheet.name} ({sheet.vendor})",
        "",
        "## Peaks and ridge points",
        f"Memory bandwidth {bw / 1e12:.2f} TB/s; {sheet.sm_count} "
        f"{'CUs' if sheet.vendor == 'AMD' else 'SMs'}; shared memory per SM "
        f"{_fmt_bytes(sheet.shared_memory_per_sm_bytes)}; L2 {_fmt_bytes(sheet.l2_bytes)}; "
        f"device memory {_fmt_bytes(sheet.memory_bytes)}.",
        "",
        "| dtype | dense peak (TFLOP/s) | ridge point (FLOP per byte) |",
        "| --- | --- | --- |",
    ]
    for dtype, tflops in sheet.peak_tflops.items():
        lines.append(f"| {dtype} | {tflops:g} | {tflops * 1e12 / bw:.0f} |")
    lines += [
        "",
        "A kernel whose arithmetic intensity (FLOPs / minimal DRAM bytes) is below the ridge point "
        "is memory-bound on this part: its speed of light is bytes / bandwidth. Above it, the "
        "dense peak of its dtype bounds it.",
        "",
        "## What fits on chip",
        f"Per SM, {_fmt_bytes(sheet.shared_memory_per_sm_bytes)} of shared memory holds the "
        "software-pipelined GEMM operands: a (BLOCK_M x BLOCK_K + BLOCK_K x BLOCK_N) tile in 2-byte "
        "dtypes costs 2 * (BM*BK + BK*BN) bytes per stage; for 128x128x64 that is 32 KiB per stage, "
        f"so at most {sheet.shared_memory_per_sm_bytes // (32 * 1024)} stages fit before occupancy "
        "drops to one program per SM. "
        f"The {_fmt_bytes(sheet.l2_bytes)} L2 keeps a working set of that size resident between "
        "kernels: a benchmark that does not flush it reports cache bandwidth, not DRAM bandwidth. "
        f"A grid of fewer than {sheet.sm_count} programs leaves SMs idle; persistent kernels "
        f"launch exactly {sheet.sm_count} (or a multiple) programs.",
        "",
        "## Architecture notes",
        ARCH_NOTES.get(sheet.name, "No architecture notes yet."),
    ]
    if sheet.notes:
        lines += ["", f"Datasheet notes: {sheet.notes}"]
    if sheet.name in MEASURED:
        lines += ["", "## Measured here", MEASURED[sheet.name]]
    lines += ["", "## Source", sheet.source]
    return "\n".join(lines)


def hardware_sources() -> list[Source]:
    """One doc per sheet in `profiling.hardware.SHEETS`; none when that module is absent."""
    try:
        from profiling import SHEETS
    except ImportError:
        return []
    sources = []
    for name, sheet in sorted(SHEETS.items()):
        body = sheet_markdown(sheet)
        title = f"Hardware sheet: {name}"
        slug = _slug(name)
        chunks: list[Chunk] = chunk_markdown(title, body.split("\n", 1)[1])
        measured = name in MEASURED
        sources.append(
            Source(
                source_id=f"hw:{slug}",
                kind="doc",
                title=title,
                path=f"profiling/hardware.py#{name}",
                tier="proven" if measured else "promising",
                metadata={
                    "topic": "hardware",
                    "tags": encode_list(["hardware", "roofline", "peaks", sheet.vendor, slug]),
                    "applies_to": "",
                    "derived_from_task": "",
                    "evidence": MEASURED.get(name, ""),
                    "hardware": slug,
                },
                chunks=chunks,
                content_hash=content_hash(body),
            )
        )
    return sources
