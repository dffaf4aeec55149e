# expect: forbidden_api
# task: softmax_fp32
# why: through pathlib.Path (re-exported by Triton) and a format string that finds the project, writes marker files into the project tree, the tasks folder, the venv, the judge's work folder and every home, and opens the task file it is judged on for writing; the static check refuses both crossings, and run past it (tests/test_sandbox_hostile.py) all must be read-only or hidden in the sandbox (it raises what it managed, for the record)
# os-attack: write
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


def softmax(x):
    y = _softmax(x)
    P = triton.testing.runtime.build.knobs.pathlib.Path  # pathlib, re-exported (Triton 3.6 and 3.9)
    tasks = P("{0.__globals__[torch].os.sys.modules[benchmarks.loading].TASKS_DIR}".format(softmax))  # noqa: UP030, UP032 - the attack
    task_file = P("{0.__globals__[torch].os.sys.modules[benchmarks.task].__file__}".format(softmax))  # noqa: UP030, UP032 - the attack
    venv = P("{0.__globals__[torch].__file__}".format(softmax)).parent  # noqa: UP030, UP032 - the attack
    here = P.cwd()
    targets = [tasks, tasks.parent.parent, venv, here.parent, P("/root"), *P("/home").glob("*")]
    targets += list(P("/tmp").glob("*/*/*/kf-planted-home"))
    wrote, refused = [], []
    for folder in targets:
        try:
            (folder / "kf_hostile_marker.txt").write_text("written by a candidate")
            wrote.append(str(folder))
        except Exception as exc:  # noqa: BLE001
            refused.append(f"{folder}: {type(exc).__name__}")
    for name in list(tasks.glob("*/softmax.py")) + [task_file]:
        try:
            with name.open("a"):  # appends nothing: tests writability without harm
                wrote.append(str(name))
        except Exception as exc:  # noqa: BLE001
            refused.append(f"{name}: {type(exc).__name__}")
    raise RuntimeError(f"wrote {wrote}; refused {refused}")
