"""Nsight Compute: command line, CSV parsing, summary and diagnosis, on a hand-made fixture.

The fixture imitates `ncu --csv --page raw --print-units base` on an H200: progress lines and
the program's own output around the table, a units row under the header, thousands separators,
"n/a" for metrics a kernel did not report. Three kernels: a memory-bound softmax, a
compute-bound matmul that spills registers, and a tiny decode-shape rmsnorm.
"""

from __future__ import annotations

import pytest

from profiling.ncu import (
    DEFAULT_SECTIONS,
    build_ncu_command,
    diagnose,
    ncu_available,
    parse_ncu_raw_csv,
    summarize,
)

_METRICS = [
    "dram__throughput.avg.pct_of_peak_sustained_elapsed",
    "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
    "gpu__time_duration.sum",
    "launch__block_size",
    "launch__grid_size",
    "launch__registers_per_thread",
    "sm__maximum_warps_per_active_cycle_pct",
    "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    "sm__warps_active.avg.pct_of_peak_sustained_active",
    "smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio",
    "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio",
    "smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio",
    "smsp__average_warps_issue_stalled_selected_per_issue_active.ratio",
    "smsp__sass_inst_executed_op_local_ld.sum",
    "smsp__sass_inst_executed_op_local_st.sum",
]
_UNITS = [
    "%",
    "%",
    "nsecond",
    "",
    "",
    "register/thread",
    "%",
    "%",
    "%",
    "",
    "",
    "",
    "",
    "inst",
    "inst",
]
_IDS = '"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC"'


def _row(values: list[str]) -> str:
    return ",".join(f'"{v}"' for v in values)


RAW_CSV = "\n".join(
    [
        "==PROF== Connected to process 41877 (/usr/bin/python3.12)",
        "running softmax 32768x4096 fp16",
        '==PROF== Profiling "softmax_kernel" - 0: 0%....50%....100% - 38 passes',
        '==PROF== Profiling "matmul_kernel" - 1: 0%....50%....100% - 38 passes',
        '==PROF== Profiling "rmsnorm_kernel" - 2: 0%....50%....100% - 38 passes',
        "done",
        "==PROF== Disconnected from process 41877",
        _IDS + "," + ",".join(f'"{m}"' for m in _METRICS),
        _row([""] * 11 + _UNITS),
        _row(
            ["0", "41877", "python3.12", "127.0.0.1", "softmax_kernel", "1", "7"]
            + ["(128, 1, 1)", "(32768, 1, 1)", "0", "9.0"]
            + ["89.71", "90.12", "133,248", "128", "32,768", "28", "100", "31.42", "86.55"]
            + ["0.61", "14.83", "0.12", "1", "0", "0"]
        ),
        _row(
            ["1", "41877", "python3.12", "127.0.0.1", "matmul_kernel", "1", "7"]
            + ["(256, 1, 1)", "(1024, 1, 1)", "0", "9.0"]
            + ["22.40", "48.30", "1,571,392", "256", "1,024", "168", "18.75", "78.90", "18.60"]
            + ["1.20", "0.90", "2.41", "1", "1,024", "512"]
        ),
        _row(
            ["2", "41877", "python3.12", "127.0.0.1", "rmsnorm_kernel", "1", "7"]
            + ["(1024, 1, 1)", "(32, 1, 1)", "0", "9.0"]
            + ["3.10", "5.20", "2,912", "1024", "32", "32", "100", "1.80", "12.40"]
            + ["n/a", "n/a", "n/a", "n/a", "n/a", "n/a"]
        ),
    ]
)


def test_build_ncu_command():
    cmd = build_ncu_command(["python3", "run.py", "--n", "4"], "softmax_kernel", ncu="/opt/ncu")
    assert cmd[0] == "/opt/ncu"
    joined = " ".join(cmd)
    assert "--clock-control none" in joined
    assert "--kernel-name regex:softmax_kernel" in joined
    assert "--launch-count 1" in joined
    assert "--csv --page raw" in joined
    for section in DEFAULT_SECTIONS:
        assert f"--section {section}" in joined
    assert cmd[-4:] == ["python3", "run.py", "--n", "4"]  # the program comes last
    assert "smsp__sass_inst_executed_op_local_ld.sum" in joined


def test_build_ncu_command_options():
    cmd = build_ncu_command(
        ["python3", "x.py"],
        "k",
        sections=("SpeedOfLight",),
        launch_count=3,
        launch_skip=2,
        extra_metrics=(),
        ncu="ncu",
    )
    assert cmd.count("--section") == 1
    assert "--metrics" not in cmd
    assert cmd[cmd.index("--launch-count") + 1] == "3"
    assert cmd[cmd.index("--launch-skip") + 1] == "2"
    with pytest.raises(ValueError):
        build_ncu_command([], "k")


def test_ncu_available_is_a_bool():
    assert isinstance(ncu_available(), bool)


def test_parse_raw_csv_one_dict_per_kernel():
    kernels = parse_ncu_raw_csv(RAW_CSV)
    assert [k["Kernel Name"] for k in kernels] == [
        "softmax_kernel",
        "matmul_kernel",
        "rmsnorm_kernel",
    ]
    softmax = kernels[0]
    assert softmax["ID"] == 0.0
    assert softmax["gpu__time_duration.sum"] == 133248.0  # thousands separator removed
    assert softmax["launch__grid_size"] == 32768.0
    assert softmax["dram__throughput.avg.pct_of_peak_sustained_elapsed"] == pytest.approx(89.71)
    assert softmax["Block Size"] == "(128, 1, 1)"  # identity columns stay strings
    assert softmax["CC"] == "9.0"
    assert softmax["_units"]["gpu__time_duration.sum"] == "nsecond"
    assert kernels[2]["smsp__sass_inst_executed_op_local_ld.sum"] is None  # "n/a"


def test_parse_noise_only_gives_no_kernels():
    assert parse_ncu_raw_csv("") == []
    assert (
        parse_ncu_raw_csv("==PROF== Connected to process 1\n==ERROR== no kernels profiled\n") == []
    )


def test_summarize_memory_bound_softmax():
    s = summarize(parse_ncu_raw_csv(RAW_CSV)[0])
    assert s.kernel_name == "softmax_kernel"
    assert s.duration_us == pytest.approx(133.248)  # 133,248 ns
    assert s.sm_throughput_pct == pytest.approx(31.42)
    assert s.memory_throughput_pct == pytest.approx(90.12)
    assert s.dram_throughput_pct == pytest.approx(89.71)
    assert s.achieved_occupancy_pct == pytest.approx(86.55)
    assert s.theoretical_occupancy_pct == pytest.approx(100.0)
    assert s.registers_per_thread == 28
    assert s.local_memory_instructions == 0
    assert s.spills is False
    assert s.top_stalls[0] == ("long_scoreboard", pytest.approx(14.83))
    assert all(name != "selected" for name, _ in s.top_stalls)  # not a stall
    assert diagnose(s).startswith("memory-bound:")


def test_summarize_compute_bound_matmul_with_spills():
    s = summarize(parse_ncu_raw_csv(RAW_CSV)[1])
    assert s.duration_us == pytest.approx(1571.392)
    assert s.registers_per_thread == 168
    assert s.local_memory_instructions == 1536  # 1,024 loads + 512 stores
    assert s.spills is True
    assert s.top_stalls[0][0] == "math_pipe_throttle"
    verdict = diagnose(s)
    assert verdict.startswith("compute-bound:")
    assert "spill" in verdict


def test_small_kernel_is_latency_bound_or_launch_bound_with_a_floor():
    s = summarize(parse_ncu_raw_csv(RAW_CSV)[2])
    assert s.duration_us == pytest.approx(2.912)
    assert s.top_stalls == []  # all "n/a"
    assert s.local_memory_instructions is None and s.spills is None
    assert diagnose(s).startswith("latency/occupancy-bound:")
    assert diagnose(s, launch_floor_us=3.7).startswith("launch-bound:")  # 2.9 <= 2 * 3.7
    assert diagnose(summarize(parse_ncu_raw_csv(RAW_CSV)[0]), launch_floor_us=3.7).startswith(
        "memory-bound:"
    )


def test_missing_metrics_are_none_not_errors():
    text = "\n".join(
        [
            _IDS + ',"gpu__time_duration.sum"',
            _row([""] * 11 + ["usecond"]),
            _row(
                [
                    "0",
                    "1",
                    "python",
                    "h",
                    "k",
                    "1",
                    "7",
                    "(1, 1, 1)",
                    "(1, 1, 1)",
                    "0",
                    "9.0",
                    "4.5",
                ]
            ),
        ]
    )
    s = summarize(parse_ncu_raw_csv(text)[0])
    assert s.duration_us == pytest.approx(4.5)  # unit taken from the units row
    assert s.sm_throughput_pct is None
    assert s.memory_throughput_pct is None
    assert s.achieved_occupancy_pct is None
    assert s.registers_per_thread is None
    assert s.top_stalls == []
    assert diagnose(s).startswith("unknown:")
    assert summarize({}).duration_us is None
    assert summarize({}).kernel_name is None


def test_parse_long_details_layout():
    """`ncu --csv` without `--page raw`: one row per metric, section metrics by label."""
    header = _IDS + ',"Section Name","Metric Name","Metric Unit","Metric Value"'
    ident = [
        "3",
        "9",
        "python",
        "h",
        "rmsnorm_kernel",
        "1",
        "7",
        "(256, 1, 1)",
        "(8192, 1, 1)",
        "0",
        "9.0",
    ]
    sol, mwa, launch = (
        "GPU Speed Of Light Throughput",
        "Memory Workload Analysis",
        "Launch Statistics",
    )
    text = "\n".join(
        [
            "==PROF== Disconnected from process 9",
            header,
            _row(ident + [sol, "Duration", "usecond", "37.12"]),
            _row(ident + [sol, "Memory Throughput", "%", "85.40"]),
            _row(ident + [sol, "DRAM Throughput", "%", "85.40"]),
            _row(ident + [sol, "Compute (SM) Throughput", "%", "12.50"]),
            _row(ident + [mwa, "Memory Throughput", "Gbyte/second", "3,901.22"]),
            _row(ident + [launch, "Block Size", "", "256"]),
            _row(ident + [launch, "Registers Per Thread", "register/thread", "30"]),
            _row(ident + ["Occupancy", "Achieved Occupancy", "%", "71.30"]),
        ]
    )
    kernels = parse_ncu_raw_csv(text)
    assert len(kernels) == 1
    k = kernels[0]
    assert k["Block Size"] == "(256, 1, 1)"  # the identity column is not overwritten
    s = summarize(k)
    assert s.kernel_name == "rmsnorm_kernel"
    assert s.duration_us == pytest.approx(37.12)
    assert s.memory_throughput_pct == pytest.approx(85.4)  # the %, not the GB/s one
    assert s.sm_throughput_pct == pytest.approx(12.5)
    assert s.block_size == 256
    assert s.registers_per_thread == 30
    assert s.achieved_occupancy_pct == pytest.approx(71.3)
    assert diagnose(s).startswith("memory-bound:")


def test_raw_metric_wins_over_its_label_in_the_details_layout():
    header = _IDS + ',"Section Name","Metric Name","Metric Unit","Metric Value"'
    ident = ["0", "9", "python", "h", "k", "1", "7", "(1, 1, 1)", "(1, 1, 1)", "0", "9.0"]
    text = "\n".join(
        [
            header,
            _row(
                ident
                + ["Command line profiler metrics", "gpu__time_duration.sum", "nsecond", "5,000"]
            ),
            _row(ident + ["GPU Speed Of Light Throughput", "Duration", "usecond", "5.1"]),
        ]
    )
    assert summarize(parse_ncu_raw_csv(text)[0]).duration_us == pytest.approx(5.0)
