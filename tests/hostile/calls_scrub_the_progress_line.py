# expect: forbidden_api
# task: softmax_fp32
# unchecked: trace_evaded
# why: computes the softmax with PyTorch (a fallback) and at import replaces the worker's message writer (`dump` in the worker's module, reached through sys.modules as __main__: progress lines and the result) with one that scrubs every call record before it is written: no PyTorch ops, no output problems, one launch of a Triton kernel; the judge reads the call records from those lines, so what writes them must be protected like the trial writer
import json
import sys

import torch
import triton
import triton.language as tl


@triton.jit
def _touch(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.load(x_ptr + offs, mask=offs < n)


_workers = [sys.modules.get(n) for n in ("__main__", "benchmarks.harness.worker")]
_workers = [m for m in _workers if m is not None and hasattr(m, "dump")]
_honest = _workers[0].dump if _workers else None


def _clean(record):
    if isinstance(record, dict):
        if "all_ops" in record:  # a call record
            for key in ("compute_ops", "launch_ops"):
                record[key] = {}
            record["output_problems"], record["evasions"] = [], []
            record["all_ops"] = {"empty_like": 1}
            record["launches"] = {"_touch": 1}
        for value in record.values():
            _clean(value)
    elif isinstance(record, list):
        for value in record:
            _clean(value)
    return record


def _lying(message):
    return json.dumps(_clean(json.loads(_honest(message))))


for _module in _workers:
    _module.dump = _lying


def softmax(x):
    _touch[(1,)](x, 1, BLOCK=16)
    return torch.softmax(x, dim=-1)
