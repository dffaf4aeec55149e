"""What the launch observer costs the timings, apart from the judge: fresh processes with and
without the CUPTI library loaded (and with and without a torch.profiler session first, as the
worker's warm-up runs one), each timing the same kernels with profiling.time_cuda, alternated
over rounds. One JSON line per process.

    python scripts/diag/observer_overhead.py --rounds 2
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time


def child(profiler: bool) -> None:
    import torch

    from benchmarks.harness.warmup_kernel import copy_scaled
    from profiling import time_cuda

    torch.cuda.init()
    if profiler:
        from torch.profiler import ProfilerActivity, profile

        x = torch.ones(1024, device="cuda")
        with profile(activities=[ProfilerActivity.CUDA]):
            copy_scaled(x)
            torch.cuda.synchronize()
    big = torch.randn(128 * 2**20, device="cuda", dtype=torch.float16)
    small = torch.randn(32 * 4096, device="cuda", dtype=torch.float16)
    out: dict[str, float] = {}
    for name, fn in (
        ("triton_copy_256MB", lambda: copy_scaled(big)),
        ("torch_add_256MB", lambda: big + 1),
        ("triton_copy_256KB", lambda: copy_scaled(small)),
    ):
        fn()
        out[name] = round(time_cuda(fn).median_us, 2)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(2000):
        copy_scaled(small)
    torch.cuda.synchronize()
    out["host_us_per_launch"] = round((time.perf_counter() - t0) / 2000 * 1e6, 2)
    print(json.dumps(out), flush=True)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--child", choices=["plain", "profiler"], default=None)
    args = parser.parse_args()
    if args.child:
        child(args.child == "profiler")
        return 0
    from benchmarks.harness import observer

    lib = observer.library()
    if lib is None:
        print(json.dumps({"error": observer.describe("cuda")}))
        return 1
    for r in range(args.rounds):
        for prof in ("plain", "profiler"):
            for on in (True, False):
                env = dict(os.environ)
                fds: tuple[int, ...] = ()
                stream = None
                if on:
                    env, fds, stream = observer.arm(env, lib)
                proc = subprocess.Popen(
                    [sys.executable, __file__, "--child", prof],
                    env=env,
                    pass_fds=fds,
                    stdout=subprocess.PIPE,
                    text=True,
                )
                for fd in fds:
                    os.close(fd)
                text, _ = proc.communicate(timeout=300)
                row = {"round": r, "observer": on, "mode": prof, "rc": proc.returncode}
                try:
                    row.update(json.loads(text.strip().splitlines()[-1]))
                except (ValueError, IndexError):
                    row["stdout"] = text[-300:]
                if stream is not None:
                    try:
                        row["stream_lines_ok"] = stream.windows().pid > 0
                    except observer.ObservationError as exc:
                        row["stream_error"] = str(exc)
                print(json.dumps(row), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
