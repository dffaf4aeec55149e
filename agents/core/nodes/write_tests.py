"""write_test: the model writes a test script for the task once, before the first kernel
(agent.llm_tests, as KernelAgent does).

prompts/write_test.md.j2 gives it the task's contract; the script is saved in the run directory
(model_test/) and kept in the state. Every candidate is then run against it
(agents/core/model_tests.py) and the output is shown in repair prompts. It is feedback, never the
verdict: the judge alone decides correctness.
"""

from __future__ import annotations

from typing import Any

from agents.core.ask import ask_for_code
from agents.core.context import RunContext
from agents.core.llm.base import BudgetExceeded
from agents.core.model_tests import KERNEL_FILE, TEST_FILE
from agents.core.prompting import render, task_contract
from agents.core.state import AgentState


def write_test(state: AgentState, ctx: RunContext) -> dict[str, Any]:
    task = task_contract(ctx.task)
    device = state.get("device_info") or {"name": ctx.device, "peaks": "not measured"}
    prompt = render(
        "write_test.md.j2",
        task=task,
        device=device,
        on_cpu=ctx.device != "cuda",
        test_file=TEST_FILE,
        kernel_file=KERNEL_FILE,
    )
    system = render("test_system.md.j2", task=task)
    try:
        reply = ask_for_code(ctx, "write_test", system, prompt)
    except BudgetExceeded as exc:
        ctx.event("budget_stop", node="write_test", reason=str(exc))
        return {
            "stop_reason": str(exc),
            "model_test": {"code": None, "path": None, "note": str(exc)},
            **ctx.llm_updates(),
        }
    updates: dict[str, Any] = {"nocode_errors": reply.nocode, **ctx.llm_updates()}
    if reply.code is None:
        note = f"no usable test after {reply.nocode} replies: candidates are judged without one"
        ctx.event("model_test_written", path=None, note=note)
        ctx.progress.note(f"write_test: {note}", style="yellow")
        return {**updates, "model_test": {"code": None, "path": None, "note": note}}
    path = ctx.run.write_model_test(reply.code, reply.prompt_md, reply.reply_md)
    ctx.event("model_test_written", path=path, lines=len(reply.code.splitlines()))
    ctx.progress.note(f"write_test: the model's test is {path} (feedback only; the judge decides)")
    return {**updates, "model_test": {"code": reply.code, "path": path, "note": ""}}
