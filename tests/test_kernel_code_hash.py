"""A kernel's recorded hash is of its code, not its comments: commenting a reference kernel keeps the
retrieval snapshot (and anything else recorded against the kernel) valid."""

from agents.bench import worked_example
from benchmarks.suites import suite_tasks
from knowledge_base import KERNELS_DIR, code_sha256, solution_path
from knowledge_base.snapshot import SEARCHES, SnapshotKB

SOURCE = '''"""Doc."""

def f(x):
    return x + 1
'''


def test_comments_and_blank_lines_do_not_change_the_code_hash():
    commented = SOURCE.replace("def f(x):", "# why\n\ndef f(x):  # the entry point\n    # add one")
    assert code_sha256(commented) == code_sha256(SOURCE)
    assert code_sha256(SOURCE.replace("x + 1", "x + 2")) != code_sha256(SOURCE)
    assert code_sha256(SOURCE.replace("Doc.", "Docs.")) != code_sha256(SOURCE)  # docstrings count
    assert code_sha256(SOURCE.replace("    return", "        return")) != code_sha256(SOURCE)


def test_the_knowledge_base_owns_the_solutions_folder():
    assert (
        solution_path("softmax") == KERNELS_DIR / "softmax.py"
        and solution_path("softmax").is_file()
    )


def test_no_kernel_in_the_lite_snapshot_is_stale():
    snap = SnapshotKB(worked_example.SNAPSHOT)
    for task in suite_tasks("lite"):
        for k, kinds in SEARCHES:
            snap.search("", k=k, task=task, hidden_task=task.id, kinds=kinds)
    assert snap.stale_kernels == set(), "re-record: python -m knowledge_base.snapshot --suite lite"


def test_the_hash_is_the_same_on_every_python():
    """Python 3.12 splits f-strings into several tokens and renumbers token types; the GPU
    machine runs 3.12, this one 3.11. Tokens are named and an f-string is one STRING of its
    source text, so a recording made on one checks true on the other (the same 122 hashes on
    3.11.7, 3.12.1 and 3.13.0, 2026-12-02)."""
    from knowledge_base.solutions import code_tokens

    source = 'x = f"a{b!r:>{w}} {f\'{c}\'}" + f"""\nmulti {d}\n"""\n'
    assert code_tokens(source) == [
        ("NAME", "x"),
        ("OP", "="),
        ("STRING", "f\"a{b!r:>{w}} {f'{c}'}\""),
        ("OP", "+"),
        ("STRING", 'f"""\nmulti {d}\n"""'),
        ("NEWLINE", "\n"),
    ]
    assert code_sha256(source) != code_sha256(source.replace("{d}", "{e}"))  # inside counts
