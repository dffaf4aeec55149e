# expect: forbidden_api
# task: softmax_fp32
# unchecked: fallback
# why: a gc callback (threshold 20) that acts only outside its calls, in the worker's own code between one trial's shipping and the next call, where the collector ran again: it finds the next trial's input among the collector's objects as soon as the worker has made it, computes that input's softmax with PyTorch there (no call is being traced), and keeps the answer by the input's address; the call then only copies the kept answer with the same Triton kernel the honest first calls ran (a runtime flag), so every call launched the same kernels and no aten op ran inside one; it passed past the static check while the collector ran again once a trial was shipped; now the collector runs only inside calls, so its PyTorch work is traced there
import gc
import weakref

import torch
import triton
import triton.language as tl

_ANSWERS = {}
_INSIDE = []
_SEEN = set()
_ARMED = []


@triton.jit
def _row_softmax(x_ptr, y_ptr, N, copy, BLOCK: tl.constexpr):
    """A row softmax, or a plain row copy when `copy` (a runtime flag: the same kernel launched)."""
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    if copy:
        for start in range(0, N, BLOCK):
            mask = start + offs < N
            x = tl.load(x_ptr + row * N + start + offs, mask=mask)
            tl.store(y_ptr + row * N + start + offs, x, mask=mask)
    else:
        row_max = tl.full([BLOCK], float("-inf"), tl.float32)
        for start in range(0, N, BLOCK):
            x = tl.load(x_ptr + row * N + start + offs, mask=start + offs < N, other=float("-inf"))
            row_max = tl.maximum(row_max, x)
        m = tl.max(row_max, axis=0)
        acc = tl.zeros([BLOCK], tl.float32)
        for start in range(0, N, BLOCK):
            x = tl.load(x_ptr + row * N + start + offs, mask=start + offs < N, other=float("-inf"))
            acc += tl.exp(x - m)
        inv = 1.0 / tl.sum(acc, axis=0)
        for start in range(0, N, BLOCK):
            mask = start + offs < N
            x = tl.load(x_ptr + row * N + start + offs, mask=mask, other=float("-inf"))
            tl.store(y_ptr + row * N + start + offs, tl.exp(x - m) * inv, mask=mask)


def _precompute(phase, info):
    if phase != "stop" or _INSIDE or not _ARMED:
        return
    _INSIDE.append(1)
    try:
        for obj in gc.get_objects():
            if (
                type(obj) is torch.Tensor
                and id(obj) not in _SEEN
                and obj.dim() == 2
                and obj.dtype == torch.float32
                and obj.numel() > 0
            ):
                _SEEN.add(id(obj))
                answer = torch.softmax(obj, dim=-1)
                _SEEN.add(id(answer))
                _ANSWERS[id(obj)] = (weakref.ref(obj), answer)
    except BaseException:  # noqa: BLE001 - inside a call the recorder refuses: try later
        pass
    finally:
        _INSIDE.clear()


gc.callbacks.append(_precompute)
gc.set_threshold(20)


def softmax(x):
    x = x.contiguous()
    M, N = x.shape
    y = torch.empty_like(x)
    block = min(1024, triton.next_power_of_2(N))
    _ARMED.clear()
    kept = _ANSWERS.pop(id(x), None)
    _ANSWERS.clear()
    _INSIDE.append(1)  # nothing computed inside the call
    try:
        if kept is not None and kept[0]() is x:
            _row_softmax[(M,)](kept[1], y, N, 1, BLOCK=block)
        else:
            _row_softmax[(M,)](x, y, N, 0, BLOCK=block)
    finally:
        _INSIDE.clear()
    # from here on, any new tensor is the next call's input: what exists now is not
    _ARMED[:] = [1]
    _SEEN.clear()
    _SEEN.update(id(o) for o in gc.get_objects() if type(o) is torch.Tensor)
    _SEEN.add(id(y))
    return y
