# expect: forbidden_api
# task: softmax_fp32
# unchecked: resource_limit
# why: writes 64 KiB files round-robin into its worker folder, the folder's tmp/, /tmp and /dev/shm, going on past every refusal; the static check rejects open(), and run past it the judge must stop it with resource_limit (a sandbox tmpfs full, or too many files in the folder), and no file it wrote may be left in the host's /tmp or /dev/shm, nor its worker folder
import os

import torch
import triton
import triton.language as tl

_CHUNK = b"k" * 65536


@triton.jit
def _row_softmax(x_ptr, y_ptr, stride, N, BLOCK: tl.constexpr):
    # one program per row; the whole row in one masked block (CPU shapes are small)
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=float("-inf")).to(tl.float32)
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(y_ptr + row * stride + cols, e / tl.sum(e, axis=0), mask=mask)


def _softmax(x):
    x = x.contiguous()
    y = torch.empty_like(x)
    _row_softmax[(x.shape[0],)](
        x, y, x.stride(0), x.shape[1], BLOCK=triton.next_power_of_2(x.shape[1])
    )
    return y


def softmax(x):
    places = [".", "tmp", "/tmp", "/dev/shm"]
    for n in range(40000):  # ~2.5 GiB in all: the judge stops it long before
        try:
            with open(os.path.join(places[n % 4], f"kf_fill_{n}.bin"), "wb") as f:
                f.write(_CHUNK)
        except OSError:
            continue
    return _softmax(x)
