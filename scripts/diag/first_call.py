"""Diagnostic (session 21): why a sweep's first call of a compiled-ahead attention config takes ~3 s.
python scripts/diag/first_call.py  -> prints per phase (ahead compile-only on meta inputs, GPU first
calls with that cache, GPU first calls again) the seconds per (config, shape), and a cProfile of one."""

import cProfile
import io
import os
import pstats
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)
CONFIGS = [(64, 64, 4, 2), (128, 64, 8, 3), (128, 32, 8, 4), (64, 128, 4, 3)]
TASK = ("benchmarks/tasks/attention/attn_causal_prefill.py", "attn_causal_prefill_fp16")


def phase(name: str) -> None:
    import torch

    from benchmarks.loading import load_task_file

    if name == "ahead":
        from benchmarks.executor.warm_compile import ShapeOnlyInputs, compile_only

        compile_only(90, 32)
    task = next(t for t in load_task_file(os.path.join(ROOT, TASK[0])) if t.id == TASK[1])
    from benchmarks.harness.worker import load_module

    mod = load_module(os.path.join(ROOT, "scripts/diag/attn_candidate.py"), "cand")
    entry = mod.attn_causal_prefill
    gen = torch.Generator()
    shapes = list(task.shapes_for("cuda"))
    cache = os.environ["TRITON_CACHE_DIR"]
    before = set(os.listdir(cache)) if os.path.isdir(cache) else set()
    for cfg in CONFIGS:
        for s in shapes:
            gen.manual_seed(0)
            if name == "ahead":
                with ShapeOnlyInputs():
                    args = task.make_inputs(dict(s.dims), "standard", gen)
            else:
                args = tuple(
                    a.cuda() if hasattr(a, "cuda") else a
                    for a in task.make_inputs(dict(s.dims), "standard", gen)
                )
            t0 = time.perf_counter()
            prof = (
                cProfile.Profile()
                if (name == "gpu" and cfg == CONFIGS[1] and s is shapes[0])
                else None
            )
            if prof:
                prof.enable()
            try:
                entry(*args, BLOCK_M=cfg[0], BLOCK_N=cfg[1], num_warps=cfg[2], num_stages=cfg[3])
                if name != "ahead":
                    torch.cuda.synchronize()
                err = ""
            except Exception as exc:  # noqa: BLE001
                err = f" {type(exc).__name__}: {str(exc)[:100]}"
            dt = time.perf_counter() - t0
            if prof:
                prof.disable()
                buf = io.StringIO()
                pstats.Stats(prof, stream=buf).sort_stats("cumulative").print_stats(30)
                print(buf.getvalue()[:6000])
            if name != "ahead":
                t1 = time.perf_counter()
                try:
                    entry(
                        *args, BLOCK_M=cfg[0], BLOCK_N=cfg[1], num_warps=cfg[2], num_stages=cfg[3]
                    )
                    torch.cuda.synchronize()
                except Exception:  # noqa: BLE001
                    pass
                second = time.perf_counter() - t1
            else:
                second = 0.0
            print(
                f"{name} cfg={cfg} shape={s.name} first={dt:.3f}s second={second:.4f}s{err}",
                flush=True,
            )
    after = set(os.listdir(cache)) if os.path.isdir(cache) else set()
    print(
        f"{name}: cache folders {len(before)} -> {len(after)} (new {len(after - before)})",
        flush=True,
    )


if __name__ == "__main__":
    if len(sys.argv) > 1:
        phase(sys.argv[1])
        sys.exit(0)
    cache = tempfile.mkdtemp()
    for name in ("ahead", "gpu", "gpu"):
        env = dict(os.environ, TRITON_CACHE_DIR=cache)
        if name == "ahead":
            env["CUDA_VISIBLE_DEVICES"] = ""
        t0 = time.perf_counter()
        r = subprocess.run(
            [sys.executable, __file__, name], env=env, capture_output=True, text=True
        )
        print(
            f"=== {name} rc {r.returncode} in {time.perf_counter() - t0:.1f}s\n{r.stdout}\n{r.stderr[-3000:]}",
            flush=True,
        )
