"""The knowledge base over HTTP: a real `chroma run` server on 127.0.0.1, built and searched."""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from knowledge_base.corpus import KB_ROOT
from knowledge_base.retrieve import KnowledgeBase


def _chroma_cli() -> str | None:
    here = Path(sys.executable).parent / "chroma"
    return str(here) if here.is_file() else shutil.which("chroma")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_for_heartbeat(url: str, proc: subprocess.Popen, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"chroma server exited with code {proc.returncode} before answering")
        try:
            with urllib.request.urlopen(f"{url}/api/v2/heartbeat", timeout=2) as resp:
                if resp.status == 200:
                    return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            time.sleep(0.3)
    raise RuntimeError(f"no heartbeat from {url} within {timeout:.0f} s")


@pytest.fixture
def chroma_server(tmp_path: Path):
    cli = _chroma_cli()
    if cli is None:
        pytest.skip("the `chroma` CLI (shipped by the chromadb package) is not installed")
    port = _free_port()
    log = (tmp_path / "chroma.log").open("w")
    proc = subprocess.Popen(
        [cli, "run", "--path", str(tmp_path / "db"), "--host", "127.0.0.1", "--port", str(port)],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_for_heartbeat(url, proc)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)
        log.close()


def test_build_and_search_through_a_chroma_server(chroma_server: str, tmp_path: Path):
    root = tmp_path / "content"
    (root / "kernels").mkdir(parents=True)
    for name in ("tpl_splitk_gemm.py", "tpl_online_softmax.py", "tpl_paged_attention_decode.py"):
        shutil.copy(KB_ROOT / "kernels" / name, root / "kernels" / name)
    (root / "docs" / "attention").mkdir(parents=True)
    shutil.copy(KB_ROOT / "docs" / "attention" / "flash-decoding.md", root / "docs" / "attention")

    kb = KnowledgeBase(url=chroma_server, content_root=root, include_hardware=False)
    first = kb.build()
    assert first.location == chroma_server
    assert len(first.added) == 4 and first.embedded == first.chunks_total > 0
    assert kb.build().embedded == 0, "incremental over HTTP too"

    hits = kb.search("split the K dimension for a skinny decode GEMM", kinds=("kernel",), k=1)
    assert hits[0].id == "kernel:tpl_splitk_gemm"
    hits = kb.search("decode attention over a paged KV cache", k=2)
    assert {h.id for h in hits} == {
        "kernel:tpl_paged_attention_decode",
        "doc:attention/flash-decoding",
    }

    # a second client (another process would do the same) sees the same collection
    other = KnowledgeBase(
        url=chroma_server, content_root=root, include_hardware=False, auto_build=False
    )
    assert other.stats()["sources"] == 4
