"""The report: self-contained HTML with its plots, a Markdown summary, scripted rows labelled,
and the page rendered by headless Chromium without console errors or requests, its tables sorted
and filtered there."""

import base64
import json
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
    # a PNG beside every SVG, linked from the Markdown
    assert [p.with_suffix(".svg") for p in files.pngs] == files.plots
    assert all(p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for p in files.pngs)
    assert all(f"(plots/{p.name})" in md for p in files.pngs)
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
    # the one script is inline; the page names no URL and its policy allows no request
    assert page.lower().count("<script>") == 1 and "<script " not in page.lower()
    assert "<link" not in page.lower()
    assert "default-src 'none'; img-src data:" in page
    sources = re.findall(r"""\b(?:src|href)\s*=\s*["']?([^"'\s>]*)""", page, re.I)
    assert sources and all(v.startswith(("data:image/svg+xml;base64,", "#")) for v in sources)
    text = re.sub(r"data:image/svg\+xml;base64,[A-Za-z0-9+/=]+", "", page)
    assert not re.search(r"https?:|//[a-z0-9]", text, re.I), re.findall(
        r".{30}(?:https?:|//[a-z0-9]).{30}", text, re.I
    )
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
    assert (tmp_path / "plots" / "portability.png").exists()
    write_report([cpu_row("t1")], tmp_path, weights=WEIGHTS)
    assert not (tmp_path / "plots" / "portability.svg").exists()
    assert not (tmp_path / "plots" / "portability.png").exists()


def column(table: str, name: str) -> str:
    """JavaScript: the visible cells of column `name` of table `table`, in page order."""
    return (
        f"(() => {{ const t = document.getElementById('{table}');"
        f" const i = [...t.tHead.rows[0].cells].findIndex(c => c.textContent.trim() === '{name}');"
        " return [...t.tBodies[0].rows].filter(r => !r.hidden).map(r => r.cells[i].textContent); })()"
    )


def click(table: str, name: str) -> str:
    """JavaScript: click the header of column `name` of table `table`."""
    return (
        f"(() => {{ const t = document.getElementById('{table}');"
        f" [...t.tHead.rows[0].cells].find(c => c.textContent.trim() === '{name}')"
        ".querySelector('button').click(); return true; })()"
    )


def type_filter(table: str, words: str) -> str:
    """JavaScript: type `words` into the filter box of table `table`; returns its count line."""
    return (
        f"(() => {{ const box = document.querySelector('input[data-filter=\"{table}\"]');"
        f" box.value = {json.dumps(words)}; box.dispatchEvent(new Event('input'));"
        f" return document.querySelector('[data-count=\"{table}\"]').textContent; }})()"
    )


LAYOUT = """JSON.stringify({
  page: document.documentElement.scrollWidth, view: document.documentElement.clientWidth,
  tables: [...document.querySelectorAll('table')].map(t => t.id),
  rows: (s => [s.scrollWidth, s.clientWidth, getComputedStyle(s).overflowX])(
    document.getElementById('rows-table').parentElement)})"""


@pytest.mark.skipif(
    not CHROMIUM.exists(),
    reason="headless Chromium (/usr/bin/chromium) is not installed here: "
    "`apt-get install -y chromium` to run this check (.ci/run installs it)",
)
def test_report_renders_in_headless_chromium_with_its_plots_and_no_console_errors(tmp_path):
    files = write_report(bench_rows(), tmp_path, weights=WEIGHTS, title="kernforge report test")
    result = render_page(
        files.html,
        steps=[
            LAYOUT,
            click("rows-table", "speedup eager"),
            column("rows-table", "speedup eager"),
            click("rows-table", "speedup eager"),
            column("rows-table", "speedup eager"),
            type_filter("rows-table", "geak h200"),
            column("rows-table", "method"),
            type_filter("rows-table", ""),
            column("rows-table", "method"),
        ],
    )
    assert result.title == "kernforge report test"
    assert result.errors == []
    assert [u for u in result.requests if not u.startswith("data:")] == []  # nothing fetched
    images = [i for i in result.images if i["tag"] == "img"]
    assert len(images) == len(files.plots) >= 6
    assert all(i["loaded"] and i["width"] > 50 and i["height"] > 50 for i in images), images
    layout, _, ascending, _, descending, count, filtered, _, everything = result.values
    layout = json.loads(layout)
    assert {"stage-table", "speed-table", "task-table", "rows-table"} <= set(layout["tables"])
    # the wide rows table scrolls inside its box; the page itself does not overflow
    assert layout["page"] <= layout["view"]
    assert layout["rows"][0] > layout["rows"][1] and layout["rows"][2] == "auto"
    # sorting: numbers in order either way, then the cells without one ("not measured", "—")
    numbers = [float(v) for v in ascending if re.match(r"\d", v)]
    assert numbers == sorted(numbers) and len(numbers) == 5
    assert all(not re.match(r"\d", v) for v in ascending[len(numbers) :])
    assert [float(v) for v in descending[: len(numbers)]] == sorted(numbers, reverse=True)
    # filtering: every word must match a row; clearing the box shows every row again
    assert filtered == ["geak", "geak"] and count == f"2 of {len(bench_rows())} rows"
    assert len(everything) == len(bench_rows())


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


def test_identical_series_stay_visible_and_are_named_in_the_legend(tmp_path):
    """Two methods with the same history drew one line over the other; now the second is drawn
    in another style on top, and its legend entry says whose line it coincides with."""
    rows = [
        row(t, m, passed=ok, speedup=1.5 if ok else None, iteration=i, attempt=i, run_id=f"{t}{m}")
        for m in ("aka", "geak")
        for t, i, ok in (("t1", 1, False), ("t1", 2, True), ("t2", 1, True))
    ]
    files = write_report(rows, tmp_path, weights=WEIGHTS)
    svg = (tmp_path / "plots" / "iteration_correct_rate.svg").read_text()
    assert "geak (same as aka)" in svg and "aka (same as" not in svg
    assert "stroke-dasharray" in svg  # the second line is dashed over the first, solid one
    assert files.markdown.read_text().count("(same as") == 0  # legends only, not the tables
