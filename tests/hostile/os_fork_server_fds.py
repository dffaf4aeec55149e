# expect: forbidden_api
# task: softmax_fp32
# unchecked: none
# why: a worker forked from the fork server walks /proc for every process it can see (the server, the process between, its own sandbox's init), lists each one's open files and tries to read their names and open them (the server's channel to the judge, the task file, the evaluation before), and tries to write into the server's folder directly, and through /proc/<pid>/root and /proc/<pid>/cwd where its own view of the same path is not writable; anything that works is raised in its message, otherwise it computes a correct softmax. Run past the static check on one server (tests/test_forkserver.py), it must pass
# os-attack: descriptors
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


MARK = "kf_fork_fd_probe"


def _others():
    import os

    mine = os.path.realpath("/proc/self")
    return [
        p for p in os.listdir("/proc") if p.isdigit() and os.path.realpath(f"/proc/{p}") != mine
    ]


def _descriptors(pid):
    """What this process reaches through another's open files: names it can read, files it can open."""
    import os

    reached = []
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return reached
    for fd in fds:
        path = f"/proc/{pid}/fd/{fd}"
        try:
            reached.append(f"{path} -> {os.readlink(path)}")
        except OSError:
            pass
        try:
            handle = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        except OSError:
            continue
        os.close(handle)
        reached.append(f"{path} opened")
    return reached


def _try_write(path):
    import os

    try:
        with open(path, "w") as f:
            f.write("x")
    except OSError:
        return False
    try:
        os.remove(path)
    except OSError:
        pass
    return True


def _escapes(pid, server_folder):
    """Writes that land outside what this process may write through its own view of the files:
    through another process's root (its mount namespace) or working directory."""
    import os

    landed = []
    for folder in (server_folder, "/tmp"):
        target = f"/proc/{pid}/root{folder}/{MARK}"
        if _try_write(target) and not _try_write(os.path.join(folder, MARK)):
            landed.append(f"wrote {target}")
    target = f"/proc/{pid}/cwd/{MARK}"
    if _try_write(target):
        try:
            mirror = os.path.join(os.readlink(f"/proc/{pid}/cwd"), MARK)
        except OSError:
            mirror = None
        if mirror is None or not _try_write(mirror):
            landed.append(f"wrote {target}")
    return landed


def softmax(x):
    import os

    here = os.getcwd()
    server_folder = os.path.dirname(here)
    found = []
    for pid in _others():
        found += _descriptors(pid) + _escapes(pid, server_folder)
    if _try_write(os.path.join(server_folder, MARK)):
        found.append(f"wrote into the server's folder {server_folder}")
    if found:
        raise RuntimeError(f"reached outside this evaluation: {found}")
    return _softmax(x)
