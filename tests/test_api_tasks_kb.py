"""The Python API's tasks and knowledge-base functions (agents/api_tools.py): records back, the
same answers as the CLI's, one-line typed errors. The knowledge base is a small one built in a
temporary folder (three kernels), so the embedding model runs on a handful of chunks."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

import agents
from agents.cli.main import app
from benchmarks import suite_tasks
from knowledge_base.retrieve import KnowledgeBase

ROOT = Path(__file__).resolve().parents[1]
KERNELS = ROOT / "knowledge_base" / "kernels"


def test_every_name_of_the_front_door_is_the_api_not_a_subpackage() -> None:
    import agents.bench  # noqa: F401 - a subpackage attribute would shadow a function of its name

    for name in agents.__all__:
        assert callable(getattr(agents, name)) and not isinstance(
            getattr(agents, name), type(agents)
        )


def test_tasks_of_a_suite_and_a_category_are_task_records() -> None:
    lite = agents.tasks("lite")
    assert [t.id for t in lite.tasks] == [t.id for t in suite_tasks("lite")]
    assert lite.not_loaded == []
    norms = agents.tasks(category="normalization").tasks
    assert norms and {t.category for t in norms} == {"normalization"}
    assert "softmax_fp32" in {t.id for t in norms}
    assert agents.task("softmax_fp32").entry_point == "softmax"


def test_a_folder_suite_lists_what_did_not_load_and_the_cli_shows_the_same(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "suite"
    folder.mkdir()
    shutil.copy(ROOT / "tests" / "fixtures" / "kernelbench" / "relu.py", folder)
    (folder / "broken.py").write_text("this is not python (\n")
    listed = agents.tasks(str(folder))
    assert len(listed.tasks) == 1 and len(listed.not_loaded) == 1
    assert listed.not_loaded[0].path.name == "broken.py"
    out = CliRunner().invoke(app, ["tasks", "list", "--suite", str(folder)], env={"COLUMNS": "300"})
    assert out.exit_code == 0, out.output
    assert listed.tasks[0].id in out.output and "1 tasks, 1 file(s) not loaded" in out.output


def test_unknown_suites_and_tasks_are_one_line_input_errors() -> None:
    with pytest.raises(agents.InputError, match="unknown suite 'nope'") as suite:
        agents.tasks("nope")
    with pytest.raises(
        agents.InputError, match="unknown task 'softmx_fp32'; did you mean 'softmax_fp32'"
    ) as task:
        agents.task("softmx_fp32")
    assert "\n" not in str(suite.value) and "\n" not in str(task.value)


@pytest.fixture(scope="module")
def small_kb(tmp_path_factory: pytest.TempPathFactory) -> KnowledgeBase:
    content = tmp_path_factory.mktemp("content")
    (content / "kernels").mkdir()
    for name in ("softmax", "tpl_online_softmax", "gelu_tanh"):
        shutil.copy(KERNELS / f"{name}.py", content / "kernels")
    store = tmp_path_factory.mktemp("store")
    return KnowledgeBase(path=store, content_root=content, include_hardware=False)


def test_kb_build_search_and_stats_return_records(small_kb: KnowledgeBase) -> None:
    built = agents.kb_build(kb=small_kb)
    assert sorted(built.added) == [
        "kernel:gelu_tanh",
        "kernel:softmax",
        "kernel:tpl_online_softmax",
    ]
    assert agents.kb_build(kb=small_kb).unchanged == 3  # nothing embedded twice
    hits = agents.kb_search("row softmax with max subtraction", k=2, kinds=["kernel"], kb=small_kb)
    assert len(hits) == 2 and all(h.kind == "kernel" for h in hits)
    assert "kernel:softmax" in {h.id for h in hits}
    hidden = agents.kb_search(task="softmax_fp32", hidden=True, k=3, kb=small_kb)
    assert "kernel:softmax" not in {h.id for h in hidden}  # the task's own solution is hidden
    stats = agents.kb_stats(kb=small_kb)
    assert stats["sources"] == 3 and stats["templates"] == ["kernel:tpl_online_softmax"]


def test_kb_search_input_errors_say_what_is_wrong(small_kb: KnowledgeBase) -> None:
    with pytest.raises(agents.InputError, match="hidden=True needs task="):
        agents.kb_search("softmax", hidden=True, kb=small_kb)
    with pytest.raises(agents.InputError, match="unknown kind 'recipe'"):
        agents.kb_search("softmax", kinds=["recipe"], kb=small_kb)
    with pytest.raises(agents.InputError, match="unknown task 'softmx'"):
        agents.kb_search(task="softmx", kb=small_kb)
