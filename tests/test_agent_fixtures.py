"""The committed replay scripts are what tests/fixtures/agent/make_scripts.py builds from the
kernels they serve (so a kernel fixed in one place is fixed in the scripts too)."""

from __future__ import annotations

from fixtures.agent.make_scripts import HERE, render, scripts

from agents.core.llm.replay import load_script


def test_committed_replay_scripts_match_their_builder() -> None:
    for name, entries in scripts().items():
        path = HERE / name
        assert path.read_text(encoding="utf-8") == render(entries), (
            f"run python {HERE / 'make_scripts.py'}"
        )
        assert len(load_script(path)) == len(entries)
