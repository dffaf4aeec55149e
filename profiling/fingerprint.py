"""Which machine and software produced a number.

Every verdict carries a fingerprint, and calibrated peaks are cached under its `key`: a number
measured on one GPU, driver or compiler version is never silently reused on another.

torch and triton are imported inside the function, so importing this module is cheap and works
where neither is installed.
"""

from __future__ import annotations

import hashlib
import json
import platform
import shutil
import socket
import subprocess
from functools import lru_cache
from typing import Any


def device_fingerprint(device: str = "cuda") -> dict[str, Any]:
    """Describe the device and software stack. `device` is "cpu", "cuda" or "cuda:N".

    Keys: device, gpu_available, gpu_name, compute_capability, sm_count, memory_bytes,
    l2_cache_bytes, driver_version, cuda_version, hip_version, torch_version, triton_version,
    python_version, platform, hostname, note, key. GPU fields are None without a GPU, and
    `note` says why. `key` is a short hash of the name, compute capability and versions: stable
    across processes on the same machine, different when any of them changes.
    """
    return dict(_fingerprint(device))


@lru_cache(maxsize=8)
def _fingerprint(device: str) -> dict[str, Any]:
    device = device.strip().lower()
    if device != "cpu" and not device.startswith("cuda"):
        raise ValueError(f"device must be 'cpu', 'cuda' or 'cuda:N', got {device!r}")

    info: dict[str, Any] = {
        "device": device,
        "gpu_available": False,
        "gpu_name": None,
        "compute_capability": None,
        "sm_count": None,
        "memory_bytes": None,
        "l2_cache_bytes": None,
        "driver_version": None,
        "cuda_version": None,
        "hip_version": None,
        "torch_version": None,
        "triton_version": None,
        "python_version": platform.python_version(),
        "platform": f"{platform.system()} {platform.machine()}",
        "hostname": socket.gethostname(),
        "note": "",
    }
    try:
        import torch

        info["torch_version"] = torch.__version__
        info["cuda_version"] = torch.version.cuda
        info["hip_version"] = getattr(torch.version, "hip", None)
    except ImportError:
        torch = None
    try:
        import triton

        info["triton_version"] = triton.__version__
    except ImportError:
        pass

    if device == "cpu":
        info["note"] = "no GPU: CPU requested"
    elif torch is None:
        info["note"] = "no GPU: torch is not installed"
    elif not torch.cuda.is_available():
        info["note"] = "no GPU: CUDA requested but torch sees no CUDA device"
    else:
        index = int(device.split(":", 1)[1]) if ":" in device else torch.cuda.current_device()
        props = torch.cuda.get_device_properties(index)
        info.update(
            device=f"cuda:{index}",
            gpu_available=True,
            gpu_name=props.name,
            compute_capability=f"{props.major}.{props.minor}",
            sm_count=props.multi_processor_count,
            memory_bytes=props.total_memory,
            l2_cache_bytes=getattr(props, "L2_cache_size", None),
            driver_version=_driver_version(),
        )

    identity = [
        info["gpu_name"] or f"cpu:{platform.processor() or platform.machine()}",
        info["compute_capability"],
        info["driver_version"],
        info["cuda_version"],
        info["hip_version"],
        info["torch_version"],
        info["triton_version"],
    ]
    info["key"] = hashlib.sha256(json.dumps(identity).encode()).hexdigest()[:16]
    return info


def _driver_version() -> str | None:
    """The NVIDIA driver version from nvidia-smi, or None where it cannot be asked."""
    exe = shutil.which("nvidia-smi")
    if exe is None:
        return None
    try:
        out = subprocess.run(
            [exe, "--query-gpu=driver_version", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=20,
            check=True,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    lines = [line.strip() for line in out.splitlines() if line.strip()]
    return lines[0] if lines else None
