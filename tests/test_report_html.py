"""The report: self-contained HTML with its plots, a Markdown summary, scripted rows labelled,
and the page rendered by headless Chromium without console errors."""

import base64
import re

import pytest
import typer
from chromium_cdp import CHROMIUM, render_page
from result_rows import H200, cpu_row, row
from typer.testing import CliRunner

from agents.cli.report import report_cmd
from benchmarks.results.report import write_report
from benchmarks.results.rows import ResultStore

WEIGHTS = {"t1": 2.0, "t2": 1.0}


def flat(output: str) -> str:
    """CLI output with rich's line wrapping undone."""
    return " ".join(output.split())


def bench_rows():
    """Two real methods on a GPU (with an iteration history, a repair and PTX), one scripted method,
    and CPU rows whose speed must read "not measured"."""
    return [
        row("t1", "aka", passed=False, attempt=1, iteration=1, run_id="A"),
        row(
            "t1",
            "aka",
            speedup=1.4,
            compile_speedup=1.1,
            score=0.6,
            attempt=2,
            iteration=2,
            parent=1,
            run_id="A",
            ptx_features={"wgmma": True, "tma": False},
        ),
        row(
            "t2",
            "aka",
            speedup=2.2,
            compile_speedup=1.5,
            score=0.8,
            category="c2",
            attempt=1,
            iteration=1,
            run_id="B",
        ),
        row(
            "t1",
            "geak",
            speedup=0.9,
            compile_speedup=0.7,
            score=0.3,
            attempt=1,
            iteration=1,
            run_id="C",
        ),
        row(
            "t2",
            "geak",
            passed=False,
            stage="compile",
            category="c2",
            attempt=1,
            iteration=1,
            run_id="D",
        ),
        row("t1", "aka", speedup=1.2, device="NVIDIA A100", run_id="E"),
        row(
            "t1",
            "kernelagent",
            speedup=5.0,
            score=0.9,
            scripted=True,
            attempt=1,
            iteration=1,
            run_id="F",
        ),
        cpu_row("t3", "single-shot", category="c3", run_id="G"),
    ]


def test_report_files_tables_and_scripted_labels(tmp_path):
    files = write_report(bench_rows(), tmp_path, ["bench/ (8 rows)"], weights=WEIGHTS)
    page = files.html.read_text()
    md = files.markdown.read_text()
    assert {p.name for p in files.plots} >= {
        "stage_pass_rates.svg",
        "fast_p_eager.svg",
        "category_method.svg",
        "iteration_correct_rate.svg",
        "portability.svg",
        "hardware_features.svg",
    }
    assert len(re.findall(r"<img ", page)) == len(files.plots)
    # every scripted row is labelled, in the row listing and in every per-method table
    listing = md.split("## Every row", 1)[1]
    scripted_lines = [line for line in listing.splitlines() if "kernelagent" in line]
    assert scripted_lines and all(
        "[scripted]" in line and "| scripted |" in line for line in scripted_lines
    )
    assert "kernelagent |" not in md.replace(
        "kernelagent [scripted] |", ""
    )  # never shown without its label
    assert "Rows labelled [scripted]" in md and '<span class="scripted">[scripted]</span>' in page
    # speed of the CPU-only method is "not measured", never a number
    speed = md.split("## Speed", 1)[1].split("##", 1)[0]
    single = next(line for line in speed.splitlines() if line.startswith("| single-shot"))
    assert single.count("not measured") >= 4
    assert "S_agg" in speed and H200 in md


def test_report_is_self_contained(tmp_path):
    files = write_report(bench_rows(), tmp_path, weights=WEIGHTS)
    page = files.html.read_text()
    assert "<script" not in page.lower()
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page)
    for data in re.findall(r'src="data:image/svg\+xml;base64,([^"]+)"', page):
        svg = base64.b64decode(data).decode()
        urls = set(re.findall(r"https?://[^\s\"'<>)]+", svg))
        assert urls <= {
            "http://www.w3.org/2000/svg",
            "http://www.w3.org/1999/xlink",
            "http://purl.org/dc/elements/1.1/",
            "http://creativecommons.org/ns#",
            "http://www.w3.org/1999/02/22-rdf-syntax-ns#",
        }, urls


def test_a_stale_plot_is_removed_when_the_new_rows_cannot_draw_it(tmp_path):
    write_report(bench_rows(), tmp_path, weights=WEIGHTS)
    assert (tmp_path / "plots" / "portability.svg").exists()
    write_report([cpu_row("t1")], tmp_path, weights=WEIGHTS)
    assert not (tmp_path / "plots" / "portability.svg").exists()


@pytest.mark.skipif(
    not CHROMIUM.exists(),
    reason="headless Chromium (/usr/bin/chromium) is not installed here: "
    "`apt-get install -y chromium` to run this check (.ci/run installs it)",
)
def test_report_renders_in_headless_chromium_with_its_plots_and_no_console_errors(tmp_path):
    files = write_report(bench_rows(), tmp_path, weights=WEIGHTS, title="kernforge report test")
    result = render_page(files.html)
    assert result.title == "kernforge report test"
    assert result.errors == []
    images = [i for i in result.images if i["tag"] == "img"]
    assert len(images) == len(files.plots) >= 6
    assert all(i["loaded"] and i["width"] > 50 and i["height"] > 50 for i in images), images


def test_report_command_writes_into_the_bench_folder(tmp_path):
    store = ResultStore(tmp_path / "bench")
    store.extend(bench_rows())
    app = typer.Typer()
    app.command()(report_cmd)
    result = CliRunner().invoke(app, [str(tmp_path / "bench")])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "bench" / "report" / "report.html").is_file()
    assert "1 scripted (labelled)" in flat(result.output)
    missing = CliRunner().invoke(app, [str(tmp_path / "nothing")])
    assert missing.exit_code == 2 and "does not exist" in flat(missing.output)
