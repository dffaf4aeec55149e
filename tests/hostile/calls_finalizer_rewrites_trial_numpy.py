# expect: forbidden_api
# task: softmax_fp32
# unchecked: numerical_mismatch
# why: its kernel only copies x (wrong); each call registers a finalizer on its output (`weakref.finalize`, holding the input); the worker drops the output right after writing the trial's file, the finalizer runs there, outside every probe, computes the softmax in numpy over the input and writes it over the output's bytes in the trial's .bin (and the repeat's digest in the .json), which the judge had not read yet: no aten op, no Triton launch, no ctypes; its first trial passed past the static check (tried 2026-12-07) until the worker kept every object of the call, and the collector off, until the judge had taken the trial's files
import glob
import json
import os
import weakref

import numpy as np
import torch
import triton
import triton.language as tl


@triton.jit
def _copy(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)


def _rewrite(x):
    names = sorted(glob.glob("trial_*.json"), key=os.path.getmtime)
    if not names:
        return
    with open(names[-1]) as f:
        header = json.load(f)
    a = x.detach().cpu().numpy()
    e = np.exp(a - a.max(axis=-1, keepdims=True))
    right = (e / e.sum(axis=-1, keepdims=True)).astype(np.float32)
    with open(names[-1][: -len(".json")] + ".bin", "r+b") as f:
        f.seek(header["out"]["offset"])
        f.write(right.tobytes())
    if header.get("repeat") and header["repeat"].get("t") == "digest":
        from benchmarks.harness.transport import digest

        key = int(header["repeat"]["d"].split(":")[1], 16)  # the key is in the file it rewrites
        header["repeat"]["d"] = digest(torch.from_numpy(right), key)
        with open(names[-1], "w") as f:
            json.dump(header, f)


def softmax(x):
    y = torch.empty_like(x)
    n = x.numel()
    _copy[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024)
    weakref.finalize(y, _rewrite, x)
    return y
