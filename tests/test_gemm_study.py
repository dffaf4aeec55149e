"""agents/bench/gemm_study.py on the CPU interpreter (tiny shapes, fp16): every hand-written
variant and the generator's own kernel compute the product (the study checks each against the
fp32 product before it would time it), and the report is written; nothing is timed here."""

from __future__ import annotations

from agents.bench.gemm_study import PERSISTENT, main, run_study


def test_every_variant_and_the_generated_kernel_are_correct_on_tiny_shapes(tmp_path):
    for generated in (False, True):
        report = run_study("cpu", smoke=True, deadline_s=600, generated=generated)
        rows = report["rows"]
        assert rows and all(r["ok"] for r in rows), [r for r in rows if not r["ok"]]
        assert all("us" not in r for r in rows)  # not measured without a GPU
        variants = {r["variant"] for r in rows}
        expected = {"masked", "grouped", "tma", "splitk"}
        assert variants == ({"generated"} if generated else expected)
    # the tensor-descriptor variants (the interpreter runs device-side descriptors too)
    report = run_study("cpu", smoke=True, deadline_s=600, variants=tuple(PERSISTENT))
    rows = report["rows"]
    assert {r["variant"] for r in rows} == set(PERSISTENT)
    assert all(r["ok"] for r in rows), [r for r in rows if not r["ok"]]
    out = tmp_path / "study.md"
    assert main(["--device", "cpu", "--smoke", "--out", str(out)]) == 0
    assert "| masked |" in out.read_text() and out.with_suffix(".json").is_file()
