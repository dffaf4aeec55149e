"""Measurement: timing, device fingerprints, hardware peaks, roofline, Nsight Compute.

This package depends on nothing else of ours. Import the module you need; none of them imports
torch at package import, except `profiling.timing`, which needs it to capture its functions.

- `profiling.hardware`    vendor datasheets (`HardwareSheet`, `match_sheet`)
- `profiling.fingerprint` what machine and software produced a number (`device_fingerprint`)
- `profiling.timing`      honest GPU timing (`time_cuda`, `launch_floor_us`, `time_cpu`)
- `profiling.peaks`       calibrated, cached device peaks (`get_peaks`, `peaks_for`)
- `profiling.roofline`    roofline arithmetic and scores (pure functions)
- `profiling.ncu`         Nsight Compute command, CSV parser, summary and diagnosis
"""
