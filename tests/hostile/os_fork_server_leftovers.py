# expect: forbidden_api
# task: softmax_fp32
# unchecked: none
# why: a worker forked from the fork server looks for what the evaluation before it (the same file, judged twice) left behind in /tmp, /dev/shm, its folder's tmp/ and the server's folder, reads the environment, memory map and auxv (the access /proc/<pid>/mem needs, which the probes refuse anyway) of every other process it can see and its own capabilities, and raises what it found; finding nothing, it leaves markers everywhere it can write and computes a correct softmax. Run past the static check twice on one server (tests/test_forkserver.py), both evaluations must pass
# os-attack: leftovers
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


MARK = "kf_fork_leftover"


def _readable(path):
    try:
        with open(path, "rb") as f:
            return len(f.read(64)) > 0
    except OSError:
        return False


def softmax(x):
    import os

    here = os.getcwd()
    places = ["/tmp", "/dev/shm", os.path.join(here, "tmp"), os.path.dirname(here), here]
    found = []
    for place in places:
        try:
            names = os.listdir(place)
        except OSError:
            continue
        mine = f"{MARK}_{os.path.basename(here)}"  # this evaluation's (its calls run many times)
        found += [os.path.join(place, n) for n in names if MARK in n and n != mine]
        if place == os.path.dirname(here):  # the server's folder: only our own folder in view
            found += [os.path.join(place, n) for n in names if n != os.path.basename(here)]
    me = str(os.getpid())
    for pid in [p for p in os.listdir("/proc") if p.isdigit()]:
        if os.path.realpath(f"/proc/{pid}") == os.path.realpath("/proc/self"):
            continue
        for what in ("environ", "maps", "auxv"):  # need the same access as mem, which probes refuse
            if _readable(f"/proc/{pid}/{what}"):
                found.append(f"/proc/{pid}/{what} (I am {me})")
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(("CapEff", "CapPrm", "CapBnd", "CapAmb")) and int(
                line.split()[1], 16
            ):
                found.append(line.strip())
    if found:
        raise RuntimeError(f"left behind or in reach: {found}")
    for place in places:
        try:
            with open(os.path.join(place, f"{MARK}_{os.path.basename(here)}"), "w") as f:
                f.write("x")
        except OSError:
            pass
    return _softmax(x)
