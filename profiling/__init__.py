"""Measurement: timing, device fingerprints, hardware peaks, roofline, Nsight Compute.

This package depends on nothing else of ours. Other packages use the names below
(`from profiling import time_cuda`); each loads its module on first use, so importing the package
imports no torch (`profiling.timing` needs it to capture its functions).

- `profiling.hardware`    vendor datasheets (`HardwareSheet`, `match_sheet`)
- `profiling.fingerprint` what machine and software produced a number (`device_fingerprint`)
- `profiling.timing`      honest GPU timing (`time_cuda`, `launch_floor_us`, `time_cpu`)
- `profiling.peaks`       calibrated, cached device peaks (`get_peaks`, `peaks_for`)
- `profiling.roofline`    roofline arithmetic and scores (pure functions)
- `profiling.ncu`         Nsight Compute command, CSV parser, summary and diagnosis
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

# what other packages may use: name -> "module" (or "module:attribute" where the name differs)
_EXPORTS: dict[str, str] = {
    # profiling.fingerprint
    "device_fingerprint": "profiling.fingerprint",
    # profiling.hardware
    "match_sheet": "profiling.hardware",
    "SHEETS": "profiling.hardware",
    # profiling.ncu
    "build_ncu_command": "profiling.ncu",
    "diagnose": "profiling.ncu",
    "NCU_TIMEOUT_S": "profiling.ncu",
    "NcuTimeout": "profiling.ncu",
    "ncu_available": "profiling.ncu",
    "ncu_path": "profiling.ncu",
    "run_ncu": "profiling.ncu",
    "run_ncu_command": "profiling.ncu",
    "summarize": "profiling.ncu",
    # profiling.peaks
    "cache_dir": "profiling.peaks",
    "get_peaks": "profiling.peaks",
    "Peaks": "profiling.peaks",
    # profiling.roofline
    "geomean": "profiling.roofline",
    "roofline": "profiling.roofline",
    # profiling.timing
    "flush_bytes": "profiling.timing",
    "launch_floor_us": "profiling.timing",
    "time_cuda": "profiling.timing",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    """Import what `name` lives in on first use, so importing the package stays cheap."""
    where = _EXPORTS.get(name)
    if where is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module, _, attr = where.partition(":")
    loaded = import_module(module)
    return loaded if module == f"{__name__}.{name}" else getattr(loaded, attr or name)
