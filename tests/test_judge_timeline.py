"""The judge's child timeline: the seconds of each worker stage, read off its progress lines.
The perf stage is split so a throughput study can say where a judge's time goes."""

from __future__ import annotations

from benchmarks.harness.judge import _child_timeline
from benchmarks.harness.messages import CorrectnessDoneEvent, DoneEvent, PerfEvent


def test_perf_setup_and_graph_spans_are_read_off_the_events():
    events = [
        CorrectnessDoneEvent(t=10.0),
        PerfEvent(t=10.5, shape="prefill"),
        PerfEvent(t=11.0, shape="decode"),
        PerfEvent(t=12.0, shape="decode", graph=True),
        PerfEvent(t=12.5, shape="decode_tail", graph=True),
        DoneEvent(t=13.25),
    ]
    spans = _child_timeline(events)
    assert spans["child_perf"] == 3.25
    assert spans["child_perf_setup"] == 0.5
    assert spans["child_perf_graphs"] == 1.25


def test_no_graph_span_without_a_graph_shape():
    spans = _child_timeline(
        [CorrectnessDoneEvent(t=1.0), PerfEvent(t=2.0, shape="a"), DoneEvent(t=4.0)]
    )
    assert spans["child_perf_setup"] == 1.0
    assert "child_perf_graphs" not in spans
