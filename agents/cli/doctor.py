"""`kernforge doctor`: what this machine offers the judge and the agent."""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
import sys
from typing import Any


def _version(module: str) -> str:
    try:
        mod = __import__(module)
    except Exception as exc:  # noqa: BLE001 - doctor reports, never fails
        return f"not importable ({type(exc).__name__})"
    return str(getattr(mod, "__version__", "installed"))


def _ncu() -> str:
    path = shutil.which("ncu")
    if not path:
        return "absent (profiler feedback falls back to timing only)"
    try:
        out = (
            subprocess.run([path, "--version"], capture_output=True, text=True, timeout=20)
            .stdout.strip()
            .splitlines()
        )
        return f"{path} ({out[-1] if out else 'version unknown'})"
    except (OSError, subprocess.SubprocessError) as exc:
        return f"{path} (does not run: {exc})"


def collect() -> dict[str, Any]:
    """A flat dict of facts, in the order a person reads them."""
    import torch

    info: dict[str, Any] = {
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "torch": torch.__version__,
        "triton": _version("triton"),
    }
    if torch.cuda.is_available():
        props = torch.cuda.get_device_properties(0)
        info["gpu"] = (
            f"{props.name} (sm_{props.major}{props.minor}, {props.multi_processor_count} SMs, {props.total_memory / 2**30:.0f} GiB)"
        )
        info["cuda runtime"] = torch.version.cuda
        try:
            smi = subprocess.run(
                ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                capture_output=True,
                text=True,
                timeout=20,
            )
            info["driver"] = smi.stdout.strip() or "unknown"
        except (OSError, subprocess.SubprocessError):
            info["driver"] = "nvidia-smi not available"
        info["judge device"] = "cuda: full judge with timing and roofline"
    else:
        info["gpu"] = "none"
        info["judge device"] = "cpu: Triton interpreter on CPU shapes; performance not measured"
    info["ncu"] = _ncu()
    from benchmarks import describe_cpu_workers, describe_isolation, describe_observation

    info["isolation"] = describe_isolation()
    info["CPU workers"] = describe_cpu_workers()
    info["launch observation"] = describe_observation(
        "cuda" if torch.cuda.is_available() else "cpu"
    )
    info["OPENAI_API_KEY"] = "set" if os.environ.get("OPENAI_API_KEY") else "not set"
    info["ANTHROPIC_API_KEY"] = "set" if os.environ.get("ANTHROPIC_API_KEY") else "not set"
    keys = info["OPENAI_API_KEY"] == "set" or info["ANTHROPIC_API_KEY"] == "set"
    info["agent LLM"] = "a provider key is set" if keys else "offline policy (no key set)"
    for mod in ("langgraph", "chromadb", "sentence_transformers", "openai", "anthropic"):
        info[mod] = _version(mod)
    return info
