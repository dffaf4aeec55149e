"""The agent's test seams: one frozen record, picklable for the bench's workers, and out of reach
of settings, the environment and the CLI."""

from __future__ import annotations

import dataclasses
import pickle

import pytest
from fixtures.agent.scripted import always_gain

from agents.core.seams import Seams


def test_seams_are_empty_by_default_and_frozen() -> None:
    seams = Seams()
    assert seams.scripted_measure is None and seams.open_kb is None and not seams.scripted
    assert seams.scripted_sweep is None
    with pytest.raises(dataclasses.FrozenInstanceError):
        seams.open_kb = always_gain  # type: ignore[misc]


def test_seams_pickle_when_their_members_do() -> None:
    seams = Seams(scripted_measure=always_gain)
    copy = pickle.loads(pickle.dumps(seams))
    assert copy == seams and copy.scripted


def test_no_setting_and_no_config_field_reaches_a_seam() -> None:
    from agents.core.config import AgentConfig
    from agents.core.settings import BY_KEY

    names = {f.name for f in dataclasses.fields(Seams)}
    assert not any(n in key for key in BY_KEY for n in names)
    assert not names & {f.name for f in dataclasses.fields(AgentConfig)}


def test_a_scripted_sweep_labels_the_run_scripted_but_does_not_re_measure() -> None:
    from types import SimpleNamespace

    from fixtures.agent.scripted import ranked_by_block

    from agents.core.context import RunContext

    seams = Seams(scripted_sweep=ranked_by_block)
    assert seams.scripted and pickle.loads(pickle.dumps(seams)) == seams
    # a ranking is no re-measurement: on the CPU the optimizer still says it cannot measure
    ctx = SimpleNamespace(device="cpu", seams=seams)
    assert not RunContext.can_measure.fget(ctx)
    ctx.seams = Seams(scripted_measure=always_gain, scripted_sweep=ranked_by_block)
    assert RunContext.can_measure.fget(ctx)
