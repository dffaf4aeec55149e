"""Scripted replies for the replay provider, built from the repository's reference kernels.

The worked example (agents/bench/worked_example.py) runs the model-driven presets with
`--llm replay:FILE`; this module writes FILE. Nothing in it is a model's work: every reply is
either the task's reference kernel (knowledge_base/kernels/<name>.py), that kernel with one
declared tunable changed, or a deliberately broken variant of it, and every reply says which
("(scripted reply) ..."; an optimizer reply after its CHANGE / PREDICTED_GAIN lines). Runs on
these replies are labelled scripted in every row, table and plot.

Each task follows one of three stories (by its position in the task list), so the report shows
the judge's static refusals, the repair path and the error -> fix pairs as well as first tries:

    first try     slot 0: the reference kernel; slots 1..: a tunable variant of it
    cut off       slot 0: the module cut off mid-way (a reply that hit its token limit);
                  slots 1..: the task's PyTorch reference pasted in (a PyTorch fallback)
    fallback      slot 0: the PyTorch reference; slot 1: the cut-off module; slots 2..: the
                  PyTorch reference
    repairs (the second round of the last two): slot 0 the reference kernel, slot 1 the tunable
    variant, slots 2.. no code

Entries match on the task's contract heading (`## Task <id> (`, prompts/_contract.md.j2) and, for
the parallel slots, on "candidate k of" (prompts/generator.md.j2, repair.md.j2), so each call gets
its own reply whatever order the parallel calls arrive in. The optimizer gets one tunable change
per round (none when the kernel declares no tunables). Untargeted entries at the end answer any
call the stories do not cover with a reply without code (the agent's no-code path), so a run never
stops on an exhausted script.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from agents.offline import policy as offline
from benchmarks import parse_python

STORIES = ("first try", "cut off", "fallback")
SLOTS = 4  # the most parallel slots of any preset (kernelagent)
GENERIC_REFLECTIONS = 48
GENERIC_NO_CODE = 96
NO_CODE = "(scripted: the replay script has no reply for this call; no code)"


def task_marker(task: Any) -> str:
    """The heading every prompt about `task` carries (prompts/_contract.md.j2)."""
    return f"## Task {task.id} ("


def story_of(index: int) -> str:
    return STORIES[index % len(STORIES)]


def reference_source(task: Any) -> str:
    from knowledge_base import solution_path

    return solution_path(task.name).read_text(encoding="utf-8")


def cut_off(source: str) -> str:
    """The first ~55% of `source`, cut mid-line: a module that does not parse."""
    cut = source[: int(len(source) * 0.55)]
    try:
        parse_python(cut)
    except SyntaxError:
        return cut
    return cut + "\n    return ("  # cut on a statement boundary: still unfinished


def torch_fallback(task: Any) -> str:
    """The task's own PyTorch reference as the entry point, beside an unused Triton kernel: the
    judge refuses it (PyTorch compute is a fallback)."""
    reference = inspect.getsource(getattr(task.module, task.entry_point))
    return (
        "import torch\nimport triton\nimport triton.language as tl\n\n\n"
        "@triton.jit\ndef _unused_kernel(x_ptr):\n    pass\n\n\n" + reference
    )


def tunable_changes(source: str, entry_point: str, count: int) -> list[tuple[str, str]]:
    """Up to `count` (change, source) pairs, each the reference with one more declared tunable
    moved (the offline policy's coordinate search order, from the reference's defaults)."""
    space = offline.search_space(
        offline.kb_meta(source), offline.tunable_values(source, entry_point)
    )
    current = {k: v for k, v in offline.tunable_values(source, entry_point).items() if k in space}
    tried = [dict(current)]
    out = []
    while len(out) < count and space:
        config = offline.next_config(current, space, tried)
        if config is None:
            break
        tried.append(config)
        changed = {k: v for k, v in config.items() if current.get(k) != v}
        text = ", ".join(f"{k} {current[k]} -> {v}" for k, v in changed.items())
        out.append((text, offline.set_tunables(source, entry_point, changed)))
    return out


def _block(code: str) -> str:
    return f"```python\n{code.rstrip()}\n```\n"


def _reply(note: str, code: str | None = None) -> str:
    return f"(scripted reply) {note}\n\n" + (_block(code) if code is not None else "")


def task_entries(task: Any, index: int, iterations: int) -> list[dict[str, Any]]:
    """The entries for one task: slots 1.. first (their match is narrower), then slot 0, the
    reflector's diagnoses and the optimizer's proposals."""
    ref = reference_source(task)
    name = f"knowledge_base/kernels/{task.name}.py"
    story = story_of(index)
    marker = task_marker(task)
    variants = tunable_changes(ref, task.entry_point, iterations + 1)
    good = _reply(f"The reference kernel {name}, unchanged.", ref)
    if variants:
        change, code = variants[0]
        second = _reply(f"The reference kernel {name} with {change} (a second design).", code)
    else:
        second = good
    broken = {
        "cut off": _reply(
            "DELIBERATELY BROKEN: the reference kernel cut off mid-module, like a reply that hit "
            "its token limit.",
            cut_off(ref),
        ),
        "fallback": _reply(
            "DELIBERATELY BROKEN: the task's PyTorch reference pasted in as the entry point (a "
            "PyTorch fallback), beside an unused Triton kernel.",
            torch_fallback(task),
        ),
    }
    diagnosis = {
        "cut off": "(scripted diagnosis) The module ends mid-statement, so Python cannot parse "
        "it: the reply was cut off. Return the whole module, closed properly.",
        "fallback": "(scripted diagnosis) The entry point computes with PyTorch operators; the "
        "Triton kernel is never launched. Move the computation into the @triton.jit kernel.",
    }
    if story == "first try":
        slot0, slot1, failures = [good], [second], []
    elif story == "cut off":
        slot0, slot1, failures = (
            [broken["cut off"], good],
            [broken["fallback"], second],
            ["cut off", "fallback"],
        )
    else:
        slot0, slot1, failures = (
            [broken["fallback"], good],
            [broken["cut off"], second],
            ["fallback", "cut off"],
        )
    rounds = max(iterations, 1)
    entries: list[dict[str, Any]] = []
    for slot in range(1, SLOTS):
        others = [second] if story == "first try" else [broken["fallback"]]
        replies = (slot1 if slot == 1 else others)[:rounds]
        replies += [_reply(NO_CODE)] * (rounds - len(replies))
        entries += [
            {"node": "generator", "match": [marker, f"candidate {slot + 1} of"], "text": r}
            for r in replies
        ]
    replies = slot0[:rounds] + [good] * (rounds - len(slot0))
    entries += [{"node": "generator", "match": [marker], "text": r} for r in replies]
    entries += [{"node": "reflector", "match": [marker], "text": diagnosis[f]} for f in failures]
    proposals = variants[1:] if story == "first try" else variants
    for change, code in proposals[:rounds]:
        entries.append(
            {
                "node": "optimizer",
                "match": [marker],
                "text": f"CHANGE: {change}\nPREDICTED_GAIN: 3%\n\n"
                + _reply(f"The reference kernel {name} with {change}.", code),
            }
        )
    return entries


def script_entries(tasks: Iterable[Any], iterations: int) -> list[dict[str, Any]]:
    """Every task's entries, then the untargeted ones that answer anything else."""
    entries: list[dict[str, Any]] = []
    for index, task in enumerate(tasks):
        entries += task_entries(task, index, iterations)
    entries += [
        {
            "node": "reflector",
            "text": "(scripted diagnosis) No task-specific diagnosis in the script: the judge's "
            "message above names what failed.",
        }
    ] * GENERIC_REFLECTIONS
    entries += [{"text": NO_CODE}] * GENERIC_NO_CODE
    return entries


def write_script(path: str | Path, tasks: Iterable[Any], iterations: int) -> Path:
    """Write the replay script (JSONL) for `tasks`; returns its path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [
        "// SCRIPTED replies for the replay provider (agents/bench/scripted_replies.py): reference "
        "kernels, tunable variants and deliberately broken variants. Not a model's output.",
        *(json.dumps(e) for e in script_entries(tasks, iterations)),
    ]
    text = "\n".join(lines) + "\n"
    if not path.is_file() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")
    return path
