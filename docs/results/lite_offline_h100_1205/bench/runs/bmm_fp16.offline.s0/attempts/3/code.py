"""bmm_fp16: generated from the task's PyTorch reference by agents/offline/codegen/translate.py.

Reference ops (aten, in order): bmm.default.
Structure: gemm. One program per BLOCK_M x BLOCK_N tile of the product (and per batch
for bmm), tiles walked in groups of GROUP_M tile rows (0: column-major); K is walked
in BLOCK_K steps, tl.dot accumulating in fp32 (IEEE fp32 products for fp32 operands);
loads are masked, or with WRAP wrapped modulo M and N and unmasked when K divides
evenly; with TMA (where the operands' strides allow) both are read through Hopper
tensor descriptors instead, and with PERSIST about one program per SM walks the tiles
(FLATTEN: tile and K loops pipelined as one). Calls with at most 64 rows use the DECODE_* configuration
and split K into SPLIT_K slices (0: by tile count) summed in fp32 by a second kernel.
The epilogue runs on the accumulator tile, per-row and per-column tensors broadcast
over it.
Numerics: fp32 inside the kernel; values the reference holds in fp16/bf16/fp8 are rounded
where it rounds them; one cast to the output dtype on store.
Tunables: BLOCK_M, BLOCK_N, BLOCK_K, num_warps, num_stages, GROUP_M, WRAP, TMA, PERSIST, FLATTEN, DECODE_BLOCK_M, DECODE_BLOCK_N, DECODE_BLOCK_K, DECODE_WARPS, DECODE_STAGES, SPLIT_K.
"""

import torch
import triton
import triton.language as tl

KB_META = {'tunables': {'BLOCK_M': [16, 32, 64, 128, 256], 'BLOCK_N': [16, 32, 64, 128, 256], 'BLOCK_K': [16, 32, 64, 128], 'num_warps': [2, 4, 8], 'num_stages': [2, 3, 4, 5], 'GROUP_M': [0, 4, 8, 16], 'WRAP': [0, 1], 'TMA': [0, 1], 'PERSIST': [0, 1], 'FLATTEN': [0, 1], 'DECODE_BLOCK_M': [16, 32, 64], 'DECODE_BLOCK_N': [32, 64, 128, 256], 'DECODE_BLOCK_K': [32, 64, 128, 256], 'DECODE_WARPS': [2, 4, 8], 'DECODE_STAGES': [2, 3, 4, 5], 'SPLIT_K': [0, 1, 2, 4, 8]}, 'generated_by': 'agents/offline/codegen/translate.py', 'structure': 'gemm'}


@triton.jit
def _bmm_gemm_kernel(a_ptr, b_ptr, out0_ptr, part_ptr, M, N, K, K_PER, GROUP, _sab, _sam, _sak, _sbb, _sbk, _sbn, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, WRAP: tl.constexpr, EVEN_K: tl.constexpr, SPLIT: tl.constexpr, TMA: tl.constexpr, B_KMAJOR: tl.constexpr):
    _pid = tl.program_id(0)
    _pid_b = tl.program_id(1).to(tl.int64)
    _tiles_m = tl.cdiv(M, BLOCK_M)
    _per_group = GROUP * tl.cdiv(N, BLOCK_N)
    _first_m = (_pid // _per_group) * GROUP
    _rows_here = tl.minimum(_tiles_m - _first_m, GROUP)
    _pid_m = _first_m + (_pid % _per_group) % _rows_here
    _pid_n = (_pid % _per_group) // _rows_here
    _offs_m = _pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    _offs_n = _pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    _k_lo = tl.program_id(2) * K_PER
    _k_hi = tl.minimum(K, _k_lo + K_PER)
    if TMA:
        _a_desc = tl.make_tensor_descriptor(
            a_ptr + _pid_b * _sab, shape=[M, K], strides=[_sam, 1], block_shape=[BLOCK_M, BLOCK_K]
        )
        if B_KMAJOR:
            _b_desc = tl.make_tensor_descriptor(
                b_ptr + _pid_b * _sbb, shape=[N, K], strides=[_sbn, 1], block_shape=[BLOCK_N, BLOCK_K]
            )
        else:
            _b_desc = tl.make_tensor_descriptor(
                b_ptr + _pid_b * _sbb, shape=[K, N], strides=[_sbk, 1], block_shape=[BLOCK_K, BLOCK_N]
            )
        _acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for _k0 in range(_k_lo, _k_hi, BLOCK_K):
            _a = _a_desc.load([_pid_m * BLOCK_M, _k0])
            if B_KMAJOR:
                _b = _b_desc.load([_pid_n * BLOCK_N, _k0]).T
            else:
                _b = _b_desc.load([_k0, _pid_n * BLOCK_N])
            _acc = tl.dot(_a.to(tl.float16), _b.to(tl.float16), _acc)
    else:
        _offs_k = _k_lo + tl.arange(0, BLOCK_K)
        if WRAP:
            _am = _offs_m % M
            _bn = _offs_n % N
        else:
            _am = _offs_m
            _bn = _offs_n
        _a_ptrs = (
            a_ptr + _pid_b * _sab + _am[:, None].to(tl.int64) * _sam
            + _offs_k[None, :].to(tl.int64) * _sak
        )
        _b_ptrs = (
            b_ptr + _pid_b * _sbb + _offs_k[:, None].to(tl.int64) * _sbk
            + _bn[None, :].to(tl.int64) * _sbn
        )
        _acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for _k0 in range(_k_lo, _k_hi, BLOCK_K):
            if WRAP and EVEN_K:
                _a = tl.load(_a_ptrs)
                _b = tl.load(_b_ptrs)
            elif WRAP:
                _ks = _k0 - _k_lo + _offs_k
                _a = tl.load(_a_ptrs, mask=_ks[None, :] < _k_hi, other=0.0)
                _b = tl.load(_b_ptrs, mask=_ks[:, None] < _k_hi, other=0.0)
            else:
                _ks = _k0 - _k_lo + _offs_k
                _a = tl.load(_a_ptrs, mask=(_offs_m[:, None] < M) & (_ks[None, :] < _k_hi), other=0.0)
                _b = tl.load(_b_ptrs, mask=(_ks[:, None] < _k_hi) & (_offs_n[None, :] < N), other=0.0)
            _acc = tl.dot(_a.to(tl.float16), _b.to(tl.float16), _acc)
            _a_ptrs += BLOCK_K * _sak
            _b_ptrs += BLOCK_K * _sbk
    if SPLIT > 1:
        _p_ptrs = (
            part_ptr + ((_pid_b * SPLIT + tl.program_id(2)) * M + _offs_m[:, None].to(tl.int64)) * N
            + _offs_n[None, :]
        )
        tl.store(_p_ptrs, _acc, mask=(_offs_m[:, None] < M) & (_offs_n[None, :] < N))
    else:
        row = _pid_b * M + _offs_m[:, None].to(tl.int64)
        cols = _offs_n[None, :]
        base = row * N
        _rmask = _offs_m[:, None] < M
        _cmask = cols < N
        mask = _rmask & _cmask
        v0 = (_acc).to(tl.float16).to(tl.float32)  # bmm.default
        tl.store(out0_ptr + base + cols, v0.to(out0_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _bmm_gemm_sum_kernel(out0_ptr, part_ptr, M, N, GROUP, SPLIT, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    _pid = tl.program_id(0)
    _pid_b = tl.program_id(1).to(tl.int64)
    _tiles_m = tl.cdiv(M, BLOCK_M)
    _per_group = GROUP * tl.cdiv(N, BLOCK_N)
    _first_m = (_pid // _per_group) * GROUP
    _rows_here = tl.minimum(_tiles_m - _first_m, GROUP)
    _pid_m = _first_m + (_pid % _per_group) % _rows_here
    _pid_n = (_pid % _per_group) // _rows_here
    _offs_m = _pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    _offs_n = _pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    _pmask = (_offs_m[:, None] < M) & (_offs_n[None, :] < N)
    _p_ptrs = part_ptr + (_pid_b * SPLIT * M + _offs_m[:, None].to(tl.int64)) * N + _offs_n[None, :]
    _acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for _s in range(0, SPLIT):
        _acc += tl.load(_p_ptrs + _s * M * N, mask=_pmask, other=0.0)
    row = _pid_b * M + _offs_m[:, None].to(tl.int64)
    cols = _offs_n[None, :]
    base = row * N
    _rmask = _offs_m[:, None] < M
    _cmask = cols < N
    mask = _rmask & _cmask
    v0 = (_acc).to(tl.float16).to(tl.float32)  # bmm.default
    tl.store(out0_ptr + base + cols, v0.to(out0_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _bmm_gemm_persistent_kernel(a_ptr, b_ptr, out0_ptr, M, N, K, NUM_PROGS, GROUP, _sab, _sam, _sbb, _sbk, _sbn, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, B_KMAJOR: tl.constexpr, FLATTEN: tl.constexpr):
    _pid_b = tl.program_id(1).to(tl.int64)
    _a_desc = tl.make_tensor_descriptor(
        a_ptr + _pid_b * _sab, shape=[M, K], strides=[_sam, 1], block_shape=[BLOCK_M, BLOCK_K]
    )
    if B_KMAJOR:
        _b_desc = tl.make_tensor_descriptor(
            b_ptr + _pid_b * _sbb, shape=[N, K], strides=[_sbn, 1], block_shape=[BLOCK_N, BLOCK_K]
        )
    else:
        _b_desc = tl.make_tensor_descriptor(
            b_ptr + _pid_b * _sbb, shape=[K, N], strides=[_sbk, 1], block_shape=[BLOCK_K, BLOCK_N]
        )
    _n_tiles = tl.cdiv(M, BLOCK_M) * tl.cdiv(N, BLOCK_N)
    for _pid in tl.range(tl.program_id(0), _n_tiles, NUM_PROGS, flatten=FLATTEN):
        _tiles_m = tl.cdiv(M, BLOCK_M)
        _per_group = GROUP * tl.cdiv(N, BLOCK_N)
        _first_m = (_pid // _per_group) * GROUP
        _rows_here = tl.minimum(_tiles_m - _first_m, GROUP)
        _pid_m = _first_m + (_pid % _per_group) % _rows_here
        _pid_n = (_pid % _per_group) // _rows_here
        _offs_m = _pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
        _offs_n = _pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
        _acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for _k0 in range(0, K, BLOCK_K):
            _a = _a_desc.load([_pid_m * BLOCK_M, _k0])
            if B_KMAJOR:
                _b = _b_desc.load([_pid_n * BLOCK_N, _k0]).T
            else:
                _b = _b_desc.load([_k0, _pid_n * BLOCK_N])
            _acc = tl.dot(_a.to(tl.float16), _b.to(tl.float16), _acc)
        row = _pid_b * M + _offs_m[:, None].to(tl.int64)
        cols = _offs_n[None, :]
        base = row * N
        _rmask = _offs_m[:, None] < M
        _cmask = cols < N
        mask = _rmask & _cmask
        v0 = (_acc).to(tl.float16).to(tl.float32)  # bmm.default
        tl.store(out0_ptr + base + cols, v0.to(out0_ptr.dtype.element_ty), mask=mask)


def bmm(a, b, BLOCK_M: int = 128, BLOCK_N: int = 256, BLOCK_K: int = 64, num_warps: int = 8, num_stages: int = 4, GROUP_M: int = 8, WRAP: int = 1, TMA: int = 1, PERSIST: int = 1, FLATTEN: int = 1, DECODE_BLOCK_M: int = 64, DECODE_BLOCK_N: int = 128, DECODE_BLOCK_K: int = 64, DECODE_WARPS: int = 4, DECODE_STAGES: int = 4, SPLIT_K: int = 0):
    _opa = a
    _opb = b
    B, M, K = _opa.shape
    N = _opb.shape[2]
    out0 = torch.empty((*a.shape[:-1], N), dtype=torch.float16, device=a.device)
    if out0.numel() == 0:
        return out0
    if M <= 64:
        _bm, _bn, _bk = DECODE_BLOCK_M, DECODE_BLOCK_N, DECODE_BLOCK_K
        _warps, _stages, _group, _wrap = DECODE_WARPS, DECODE_STAGES, 0, 1
        _split = SPLIT_K
        if _split == 0:
            _tiles = triton.cdiv(M, _bm) * triton.cdiv(N, _bn) * B
            _split = 1
            while _split < 8 and _tiles * _split * 2 <= 192:
                _split *= 2
        _tma, _bkm = 0, 0
    else:
        _bm, _bn, _bk = BLOCK_M, BLOCK_N, BLOCK_K
        _warps, _stages, _group, _wrap, _split = num_warps, num_stages, GROUP_M, WRAP, 1
        _bkm = int(_opb.stride(-2) == 1 and _opb.stride(-1) != 1)
        _b_unit = _opb.dim() - 2 if _bkm else _opb.dim() - 1
        _tma = TMA and _opa.stride(-1) == 1 and _opb.stride(_b_unit) == 1
        _tma = _tma and _opa.data_ptr() % 16 == 0 and _opb.data_ptr() % 16 == 0
        _tma = _tma and all(s * _opa.element_size() % 16 == 0 for s in _opa.stride()[:-1])
        _tma = _tma and all(
            s * _opb.element_size() % 16 == 0 for i, s in enumerate(_opb.stride()) if i != _b_unit
        )
        _tma = int(bool(_tma))
        if _tma:  # device-side descriptors take their 128 bytes from this allocator
            triton.set_allocator(
                lambda size, align, stream: torch.empty(size, dtype=torch.int8, device=a.device)
            )
    _k_per = triton.cdiv(triton.cdiv(K, max(_split, 1)), _bk) * _bk if K > 0 else _bk
    _split = max(triton.cdiv(K, _k_per), 1)  # no empty slices
    if _group <= 0:
        _group = triton.cdiv(M, _bm)
    _part = out0
    if _tma and PERSIST and _split == 1 and M > 64:
        _tiles = triton.cdiv(M, _bm) * triton.cdiv(N, _bn)
        _dev = a.device
        _sms = torch.cuda.get_device_properties(_dev).multi_processor_count if _dev.type == 'cuda' else 4
        _progs = max(1, min(_tiles, _sms // B))
        _bmm_gemm_persistent_kernel[(_progs, B)](
            a, b, out0,
            M, N, K, _progs, _group,
            _opa.stride(0), _opa.stride(1),
            _opb.stride(0), _opb.stride(1), _opb.stride(2),
            BLOCK_M=_bm, BLOCK_N=_bn, BLOCK_K=_bk, B_KMAJOR=_bkm, FLATTEN=FLATTEN,
            num_warps=_warps, num_stages=_stages,
        )
        return out0
    if _split > 1:
        _part = torch.empty((B, _split, M, N), dtype=torch.float32, device=a.device)
    grid = (triton.cdiv(M, _bm) * triton.cdiv(N, _bn), B, _split)
    _bmm_gemm_kernel[grid](
        a, b, out0, _part,
        M, N, K, _k_per, _group,
        _opa.stride(0), _opa.stride(1), _opa.stride(2),
        _opb.stride(0), _opb.stride(1), _opb.stride(2),
        BLOCK_M=_bm, BLOCK_N=_bn, BLOCK_K=_bk, WRAP=_wrap,
        EVEN_K=K % _bk == 0 and _k_per % _bk == 0, SPLIT=_split, TMA=_tma, B_KMAJOR=_bkm,
        num_warps=_warps, num_stages=_stages,
    )
    if _split > 1:
        _bmm_gemm_sum_kernel[(triton.cdiv(M, _bm) * triton.cdiv(N, _bn), B)](
            out0, _part, M, N, _group, _split,
            BLOCK_M=_bm, BLOCK_N=_bn, num_warps=4,
        )
    return out0
