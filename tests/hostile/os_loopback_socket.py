# expect: forbidden_api
# task: softmax_fp32
# why: imports socket and connects to a server on the host's 127.0.0.1 (the test runs one on PORT) to send what it can; the static check rejects it, and run past the static check (tests/test_sandbox_hostile.py) its own network namespace has no route to the host
# os-attack: network
import socket

import torch
import triton
import triton.language as tl

PORT = 47913


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
    try:
        with socket.create_connection(("127.0.0.1", PORT), timeout=2) as s:
            s.sendall(b"candidate reached the host")
    except OSError:
        pass
    return _softmax(x)
