"""Nsight Compute: build the command, parse its CSV, summarise, diagnose.

We run `ncu` with `--csv --page raw`: one row per profiled kernel, one column per metric, a
units row under the header, and `==PROF==` progress lines around it. The parser also reads
the long "details" layout (`Metric Name`, `Metric Unit`, `Metric Value` columns), so a CSV
exported from a saved report works too.

`--clock-control none` leaves the GPU at its normal boost clocks (ncu otherwise locks them to
base, and durations then disagree with `time_cuda`). Filter by kernel name: without a filter ncu
profiles every kernel in the process, the L2-flush fills and PyTorch's own kernels included.

Missing metrics are never an error: the summary field is None, and the diagnosis says what it
could not see.
"""

from __future__ import annotations

import csv
import io
import os
import re
import shutil
import signal
import subprocess
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from profiling.roofline import launch_bound

DEFAULT_SECTIONS: tuple[str, ...] = (
    "SpeedOfLight",
    "MemoryWorkloadAnalysis",
    "Occupancy",
    "LaunchStats",
    "WarpStateStats",
)
# Local-memory (register spill) instruction counts are in no default section; ask for them.
SPILL_METRICS: tuple[str, ...] = (
    "smsp__sass_inst_executed_op_local_ld.sum",
    "smsp__sass_inst_executed_op_local_st.sum",
)
UNITS_KEY = "_units"

# Non-metric identity columns of the raw page.
_ID_COLUMNS = (
    "ID",
    "Process ID",
    "Process Name",
    "Host Name",
    "Kernel Name",
    "Context",
    "Stream",
    "Block Size",
    "Grid Size",
    "Device",
    "CC",
)
_TIME_UNITS_TO_US = {
    "nsecond": 1e-3,
    "ns": 1e-3,
    "usecond": 1.0,
    "us": 1.0,
    "msecond": 1e3,
    "ms": 1e3,
    "second": 1e6,
    "s": 1e6,
}
_STALL_RE = re.compile(r"^smsp__average_warps_issue_stalled_(\w+?)_per_issue_active\.ratio$")
# Stall "reasons" that are not stalls.
_NOT_STALLS = {"selected", "not_issued"}

# A throughput share at or above this (percent of peak) means that unit is the limiter;
# NVIDIA's own Speed-of-Light rule uses 60 %.
HIGH_THROUGHPUT_PCT = 60.0

# How long one profile may take in total; the default of the agent's profile.ncu_timeout.
NCU_TIMEOUT_S = 300.0


def ncu_path() -> str | None:
    """Path of the `ncu` executable: `$KERNFORGE_NCU`, then PATH, then the usual CUDA install."""
    candidates = [os.environ.get("KERNFORGE_NCU"), shutil.which("ncu"), "/usr/local/cuda/bin/ncu"]
    for candidate in candidates:
        if candidate and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


def ncu_available() -> bool:
    """True when an `ncu` executable is present (it may still lack counter permissions)."""
    return ncu_path() is not None


def build_ncu_command(
    python_cmd: list[str],
    kernel_regex: str,
    sections: Sequence[str] = DEFAULT_SECTIONS,
    launch_count: int = 1,
    *,
    launch_skip: int = 0,
    extra_metrics: Sequence[str] = SPILL_METRICS,
    ncu: str | None = None,
) -> list[str]:
    """The argv that profiles kernels matching `kernel_regex` while running `python_cmd`.

    `launch_skip` skips the first matching launches (e.g. Triton's autotuning runs).
    """
    if not python_cmd:
        raise ValueError("python_cmd is empty: give the command that runs the kernel")
    if launch_count < 1 or launch_skip < 0:
        raise ValueError(
            f"need launch_count >= 1 and launch_skip >= 0, got {launch_count}, {launch_skip}"
        )
    cmd = [
        ncu or ncu_path() or "ncu",
        "--clock-control",
        "none",
        "--target-processes",
        "all",
        "--kernel-name",
        f"regex:{kernel_regex}",
        "--launch-skip",
        str(launch_skip),
        "--launch-count",
        str(launch_count),
    ]
    for section in sections:
        cmd += ["--section", section]
    if extra_metrics:
        cmd += ["--metrics", ",".join(extra_metrics)]
    cmd += ["--csv", "--page", "raw", "--print-units", "base"]
    return cmd + list(python_cmd)


class NcuTimeout(RuntimeError):
    """ncu ran past its deadline; it and every process under it were killed."""


def run_ncu(
    python_cmd: list[str],
    kernel_regex: str,
    *,
    timeout_s: float = NCU_TIMEOUT_S,
    **kwargs: Any,
) -> list[dict[str, Any]]:
    """Run `ncu` over `python_cmd` in this process's environment and return the parsed
    per-kernel metrics (`run_ncu_command` runs a command built elsewhere, e.g. sandboxed).

    `kwargs` go to `build_ncu_command`. Raises RuntimeError when ncu is missing, fails, or
    profiles no kernel; NcuTimeout past `timeout_s`.
    """
    if not ncu_available():
        raise RuntimeError("ncu (Nsight Compute) is not installed here; set KERNFORGE_NCU or PATH")
    return run_ncu_command(
        build_ncu_command(python_cmd, kernel_regex, **kwargs), kernel_regex, timeout_s=timeout_s
    )


def run_ncu_command(
    cmd: list[str],
    kernel_regex: str,
    *,
    timeout_s: float = NCU_TIMEOUT_S,
    env: Mapping[str, str] | None = None,
    preexec_fn: Callable[[], None] | None = None,
    cwd: str | os.PathLike[str] | None = None,
) -> list[dict[str, Any]]:
    """Run a command that ends in ncu's (`build_ncu_command`, or a sandbox's argv wrapped around
    it) and return the parsed per-kernel metrics of its stdout.

    `env` (default: this process's), `preexec_fn` (run in the child before exec, e.g. setting
    rlimits) and `cwd` are handed to `subprocess.Popen`. `timeout_s` is a total deadline: past it
    the command and everything in its process group are killed and NcuTimeout is raised. Raises
    RuntimeError when the command fails or ncu profiles no kernel matching `kernel_regex` (with
    the tail of its output).
    """
    # its own session: on a timeout the whole group goes, not just ncu (whose children would
    # otherwise hold the output pipes open, and `communicate` would wait for them for ever)
    proc = subprocess.Popen(
        cmd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=None if env is None else dict(env),
        preexec_fn=preexec_fn,  # noqa: PLW1509 - the caller's hook, e.g. only setrlimit calls
        cwd=cwd,
        start_new_session=True,
    )
    try:
        stdout, stderr = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        raise NcuTimeout(
            f"ncu ran past its {timeout_s:g} s deadline and was killed with the program it profiled"
        ) from None
    except BaseException:
        _kill_group(proc)
        raise
    kernels = parse_ncu_raw_csv(stdout)
    if proc.returncode != 0 or not kernels:
        tail = (stdout[-2000:] + "\n" + stderr[-2000:]).strip()
        raise RuntimeError(
            f"ncu exited with {proc.returncode} and profiled {len(kernels)} kernel(s) "
            f"matching {kernel_regex!r}:\n{tail}"
        )
    return kernels


def _kill_group(proc: subprocess.Popen[str]) -> None:
    """SIGKILL `proc`'s process group, reap it and close its pipes (a process that left the
    group may still hold them: they are closed rather than read to the end)."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass  # the group is gone already
    try:
        proc.communicate(timeout=5)
    except subprocess.TimeoutExpired:
        for pipe in (proc.stdout, proc.stderr):
            if pipe is not None:
                pipe.close()
        proc.wait(timeout=5)


def _to_number(text: str) -> float | str | None:
    """ncu prints "1,048,576", "12.5", "n/a" or "(128, 1, 1)": number, None or the string."""
    value = text.strip()
    if value == "" or value.lower() in {"n/a", "na", "nan"}:
        return None
    plain = value.replace(",", "")
    try:
        return float(plain)
    except ValueError:
        return value


def _csv_rows(text: str) -> list[list[str]]:
    """CSV rows of ncu output, without its `==PROF==` / `==WARNING==` lines and program output.

    The table starts at the header, the first line that begins with `"ID"`.
    """
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith('"ID"')), None)
    if start is None:
        return []
    table = [line for line in lines[start:] if line.startswith('"')]
    return [row for row in csv.reader(io.StringIO("\n".join(table))) if row]


def parse_ncu_raw_csv(text: str) -> list[dict[str, Any]]:
    """Parse ncu CSV output: one dict per profiled kernel launch, in profile order.

    Each dict maps column / metric name to a float where the value is numeric, None where ncu
    printed nothing or "n/a", else the string. `dict["_units"]` maps metric name to its unit
    ("nsecond", "%", "byte", ...) where the CSV gives one.
    """
    rows = _csv_rows(text)
    if not rows:
        return []
    header = rows[0]
    if "Metric Name" in header and "Metric Value" in header:
        return _parse_long(header, rows[1:])

    body = rows[1:]
    units: dict[str, str] = {}
    # The units row: no ID, units under the metric columns.
    if body and body[0] and body[0][0].strip() == "":
        units = {name: unit for name, unit in zip(header, body[0], strict=False) if unit.strip()}
        body = body[1:]

    kernels = []
    for row in body:
        if not row or row[0].strip() == "":
            continue
        record: dict[str, Any] = {}
        for name, raw in zip(header, row, strict=False):
            record[name] = raw if name in _ID_COLUMNS and name != "ID" else _to_number(raw)
        record[UNITS_KEY] = dict(units)
        kernels.append(record)
    return kernels


# The details layout names section metrics by label; map the labels `summarize` reads to their
# raw names. The unit tells the SOL "Memory Throughput" (%) from the MWA one (bytes/s).
_DETAIL_LABELS: dict[str, tuple[str, str | None]] = {
    "Duration": ("gpu__time_duration.sum", "time"),
    "Compute (SM) Throughput": ("sm__throughput.avg.pct_of_peak_sustained_elapsed", "%"),
    "Memory Throughput": ("gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed", "%"),
    "DRAM Throughput": ("dram__throughput.avg.pct_of_peak_sustained_elapsed", "%"),
    "Achieved Occupancy": ("sm__warps_active.avg.pct_of_peak_sustained_active", "%"),
    "Theoretical Occupancy": ("sm__maximum_warps_per_active_cycle_pct", "%"),
    "Registers Per Thread": ("launch__registers_per_thread", None),
    "Grid Size": ("launch__grid_size", None),
    "Block Size": ("launch__block_size", None),
}


def _raw_name(label: str, unit: str) -> str | None:
    entry = _DETAIL_LABELS.get(label)
    if entry is None:
        return None
    raw, wanted = entry
    unit = unit.strip().lower()
    if wanted == "time" and unit not in _TIME_UNITS_TO_US:
        return None
    if wanted == "%" and unit != "%":
        return None
    return raw


def _parse_long(header: list[str], rows: list[list[str]]) -> list[dict[str, Any]]:
    """The details layout: one row per (kernel, metric)."""
    col = {name: i for i, name in enumerate(header)}
    needed = max(col["ID"], col["Metric Name"], col["Metric Value"])
    by_id: dict[str, dict[str, Any]] = {}
    for row in rows:
        if len(row) <= needed or row[col["ID"]].strip() == "":
            continue
        kid = row[col["ID"]]
        record = by_id.get(kid)
        if record is None:
            record = {name: row[col[name]] for name in _ID_COLUMNS if name in col}
            record["ID"] = _to_number(kid)
            record[UNITS_KEY] = {}
            by_id[kid] = record
        metric = row[col["Metric Name"]]
        unit = (
            row[col["Metric Unit"]]
            if "Metric Unit" in col and len(row) > col["Metric Unit"]
            else ""
        )
        value = _to_number(row[col["Metric Value"]])
        names = [] if metric in _ID_COLUMNS else [metric]
        raw = _raw_name(metric, unit)
        if raw is not None:
            names.append(raw)
        for name in names:
            if name == raw and name in record:
                continue  # the raw metric itself was asked for: keep it
            record[name] = value
            if unit.strip():
                record[UNITS_KEY][name] = unit
    return list(by_id.values())


@dataclass
class NcuSummary:
    """The figures a kernel engineer reads first. Any of them is None when ncu did not report it."""

    kernel_name: str | None
    duration_us: float | None
    sm_throughput_pct: float | None
    memory_throughput_pct: float | None  # max of L1/L2/DRAM throughput (SOL "Memory")
    dram_throughput_pct: float | None
    achieved_occupancy_pct: float | None
    theoretical_occupancy_pct: float | None
    registers_per_thread: float | None
    local_memory_instructions: float | None  # local ld+st executed: register spills
    grid_size: float | None
    block_size: float | None
    top_stalls: list[tuple[str, float]] = field(default_factory=list)

    @property
    def spills(self) -> bool | None:
        """True when the kernel executed local-memory loads/stores (spilled registers)."""
        if self.local_memory_instructions is None:
            return None
        return self.local_memory_instructions > 0

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["spills"] = self.spills
        return data


def _number(metrics: dict[str, Any], *names: str) -> float | None:
    """The first of `names` present in `metrics` as a number."""
    for name in names:
        value = metrics.get(name)
        if isinstance(value, float | int) and not isinstance(value, bool):
            return float(value)
    return None


def _duration_us(metrics: dict[str, Any]) -> float | None:
    value = _number(metrics, "gpu__time_duration.sum")
    if value is None:
        return None
    # We ask for base units (ns); a CSV from elsewhere says its unit in the units row.
    unit = metrics.get(UNITS_KEY, {}).get("gpu__time_duration.sum", "nsecond")
    factor = _TIME_UNITS_TO_US.get(unit.strip().lower())
    if factor is None:
        return None
    return value * factor


def summarize(metrics: dict[str, Any]) -> NcuSummary:
    """Reduce one kernel's parsed metrics (from `parse_ncu_raw_csv`) to an `NcuSummary`."""
    local = [v for v in (_number(metrics, name) for name in SPILL_METRICS) if v is not None]
    stalls = []
    for name, value in metrics.items():
        match = _STALL_RE.match(name)
        if match and match.group(1) not in _NOT_STALLS and isinstance(value, float) and value > 0:
            stalls.append((match.group(1), value))
    stalls.sort(key=lambda item: item[1], reverse=True)
    kernel = metrics.get("Kernel Name")
    return NcuSummary(
        kernel_name=kernel if isinstance(kernel, str) and kernel else None,
        duration_us=_duration_us(metrics),
        sm_throughput_pct=_number(metrics, "sm__throughput.avg.pct_of_peak_sustained_elapsed"),
        memory_throughput_pct=_number(
            metrics, "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed"
        ),
        dram_throughput_pct=_number(
            metrics,
            "dram__throughput.avg.pct_of_peak_sustained_elapsed",
            "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
        ),
        achieved_occupancy_pct=_number(
            metrics, "sm__warps_active.avg.pct_of_peak_sustained_active"
        ),
        theoretical_occupancy_pct=_number(metrics, "sm__maximum_warps_per_active_cycle_pct"),
        registers_per_thread=_number(metrics, "launch__registers_per_thread"),
        local_memory_instructions=sum(local) if local else None,
        grid_size=_number(metrics, "launch__grid_size"),
        block_size=_number(metrics, "launch__block_size"),
        top_stalls=stalls[:3],
    )


def diagnose(summary: NcuSummary, launch_floor_us: float | None = None) -> str:
    """One line: "<label>: <reason>". Label is one of "launch-bound", "memory-bound",
    "compute-bound", "latency/occupancy-bound", or "unknown" when ncu reported neither the SM
    nor the memory throughput.

    Order: a kernel within 2x of the launch floor is launch-bound whatever its counters say;
    then the unit at >= 60 % of its peak (the higher one wins); else neither unit is busy, so
    the kernel waits on latency (too few warps in flight, or stalls it cannot hide).
    """
    sm = summary.sm_throughput_pct
    mem_values = [
        v for v in (summary.memory_throughput_pct, summary.dram_throughput_pct) if v is not None
    ]
    mem = max(mem_values) if mem_values else None
    stall = (
        f"; top stall: {summary.top_stalls[0][0]} ({summary.top_stalls[0][1]:.1f} cycles/issue)"
        if summary.top_stalls
        else ""
    )
    spill = (
        f"; {summary.local_memory_instructions:.0f} local-memory instructions (register spills)"
        if summary.spills
        else ""
    )

    if (
        launch_floor_us is not None
        and summary.duration_us is not None
        and summary.duration_us > 0
        and launch_floor_us > 0
        and launch_bound(summary.duration_us, launch_floor_us)
    ):
        return (
            f"launch-bound: {summary.duration_us:.2f} us is within 2x of the "
            f"{launch_floor_us:.2f} us empty-kernel launch floor"
        )
    if sm is None and mem is None:
        return "unknown: ncu reported neither SM nor memory throughput"

    sm_v = sm if sm is not None else 0.0
    mem_v = mem if mem is not None else 0.0
    if mem_v >= HIGH_THROUGHPUT_PCT and mem_v >= sm_v:
        return f"memory-bound: memory throughput {mem_v:.0f}% of peak vs SM {_pct(sm)}{spill}"
    if sm_v >= HIGH_THROUGHPUT_PCT:
        return f"compute-bound: SM throughput {sm_v:.0f}% of peak vs memory {_pct(mem)}{spill}"
    occupancy = (
        f", achieved occupancy {summary.achieved_occupancy_pct:.0f}%"
        if summary.achieved_occupancy_pct is not None
        else ""
    )
    return (
        f"latency/occupancy-bound: SM {_pct(sm)} and memory {_pct(mem)} of peak, both below "
        f"{HIGH_THROUGHPUT_PCT:.0f}%{occupancy}{stall}{spill}"
    )


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.0f}%"
