"""Load a local page in headless Chromium and report what a reader would see.

Talks the DevTools protocol over `--remote-debugging-pipe` (JSON messages separated by NUL bytes
on file descriptors 3 and 4): no network port, no websocket. Used by the report test.

    result = render_page(Path("report.html"), steps=["document.title"])
    result.images      [{"tag", "width", "height", "loaded"}...] for every <img> and <svg>
    result.errors      console errors, uncaught exceptions and failed loads, as text
    result.requests    every URL the page asked for after its own (data: URLs included)
    result.values      what each of `steps` (JavaScript expressions, run in order after the
                       load) evaluated to, JSON values
"""

from __future__ import annotations

import fcntl
import json
import os
import queue
import shutil
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CHROMIUM = Path("/usr/bin/chromium")
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--remote-debugging-pipe",
]

MEASURE = """JSON.stringify([...document.querySelectorAll('img, svg')].map(e => {
  const r = e.getBoundingClientRect();
  return {tag: e.tagName.toLowerCase(), width: r.width, height: r.height,
          loaded: e.tagName.toLowerCase() === 'img' ? (e.complete && e.naturalWidth > 0) : true};
}))"""


@dataclass
class PageResult:
    title: str = ""
    images: list[dict[str, Any]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)
    values: list[Any] = field(default_factory=list)


def _pipe() -> tuple[int, int]:
    """A pipe whose two ends are above fd 4, so that wiring the child's fds 3 and 4 copies them
    (os.dup2 onto itself is a no-op that leaves the fd close-on-exec: with nothing else open,
    os.pipe() returns 3 and 4 and Chromium started without its pipe)."""
    ends = []
    for fd in os.pipe():
        ends.append(fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10))
        os.close(fd)
    return ends[0], ends[1]


class _Pipe:
    def __init__(self, user_data_dir: Path) -> None:
        to_chrome_r, self._to_chrome = _pipe()
        self._from_chrome, from_chrome_w = _pipe()

        def wire() -> None:  # in the child: its fd 3 reads our commands, its fd 4 carries replies
            os.dup2(to_chrome_r, 3)  # both ends are above 4, so these are real copies, inherited
            os.dup2(from_chrome_w, 4)

        self.proc = subprocess.Popen(
            [str(CHROMIUM), *FLAGS, f"--user-data-dir={user_data_dir}", "about:blank"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            close_fds=False,
            preexec_fn=wire,
        )
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self._next = 0
        self.inbox: queue.Queue[dict[str, Any]] = queue.Queue()
        self.events: list[dict[str, Any]] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        buf = b""
        while True:
            chunk = os.read(self._from_chrome, 1 << 16)
            if not chunk:
                return
            buf += chunk
            while b"\0" in buf:
                msg, buf = buf.split(b"\0", 1)
                self.inbox.put(json.loads(msg))

    def send(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        session: str | None = None,
        timeout: float = 30,
    ) -> dict[str, Any]:
        self._next += 1
        msg: dict[str, Any] = {"id": self._next, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self._to_chrome, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            reply = self.inbox.get(timeout=max(0.1, deadline - time.monotonic()))
            if reply.get("id") == self._next:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)

    def wait_event(self, method: str, timeout: float = 30) -> dict[str, Any]:
        for evt in self.events:
            if evt.get("method") == method:
                return evt
        deadline = time.monotonic() + timeout
        while True:
            evt = self.inbox.get(timeout=max(0.1, deadline - time.monotonic()))
            self.events.append(evt)
            if evt.get("method") == method:
                return evt

    def drain(self, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            try:
                self.events.append(self.inbox.get(timeout=0.05))
            except queue.Empty:
                pass

    def close(self) -> None:
        try:
            self.send("Browser.close", timeout=5)
        except (RuntimeError, queue.Empty, OSError):
            pass
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(5)
        os.close(self._to_chrome)


def _errors(events: list[dict[str, Any]]) -> list[str]:
    out = []
    for evt in events:
        method, params = evt.get("method"), evt.get("params", {})
        if method == "Runtime.exceptionThrown":
            details = params.get("exceptionDetails", {})
            out.append(
                f"exception: {details.get('text')} {details.get('exception', {}).get('description', '')}"
            )
        elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
            out.append(
                "console.error: "
                + " ".join(
                    str(a.get("value", a.get("description", ""))) for a in params.get("args", [])
                )
            )
        elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
            entry = params["entry"]
            out.append(f"log ({entry.get('source')}): {entry.get('text')} {entry.get('url', '')}")
    return out


def _requests(events: list[dict[str, Any]], own: str) -> list[str]:
    urls = [
        evt.get("params", {}).get("request", {}).get("url", "")
        for evt in events
        if evt.get("method") == "Network.requestWillBeSent"
    ]
    return [u for u in urls if u != own]


def _evaluate(pipe: _Pipe, session: str, expression: str, errors: list[str]) -> Any:
    reply = pipe.send(
        "Runtime.evaluate",
        {"expression": expression, "returnByValue": True, "awaitPromise": True},
        session=session,
    )
    if "exceptionDetails" in reply:
        details = reply["exceptionDetails"]
        errors.append(
            f"step {expression[:60]!r}: {details.get('exception', {}).get('description', details.get('text'))}"
        )
        return None
    return reply["result"].get("value")


def render_page(
    page: Path, timeout: float = 60, steps: list[str] | tuple[str, ...] = ()
) -> PageResult:
    """Open `page` (a local file) in headless Chromium; measure its images, collect errors and
    requests, and evaluate `steps` in order."""
    user_data = Path(tempfile.mkdtemp(prefix="kf-chromium-"))
    pipe = _Pipe(user_data)
    try:
        target = pipe.send("Target.createTarget", {"url": "about:blank"}, timeout=timeout)[
            "targetId"
        ]
        session = pipe.send("Target.attachToTarget", {"targetId": target, "flatten": True})[
            "sessionId"
        ]
        for domain in ("Page", "Runtime", "Log", "Network"):
            pipe.send(f"{domain}.enable", session=session)
        own = page.resolve().as_uri()
        pipe.send("Page.navigate", {"url": own}, session=session)
        pipe.wait_event("Page.loadEventFired", timeout=timeout)
        pipe.drain(0.5)  # late console messages
        step_errors: list[str] = []
        measured = _evaluate(pipe, session, MEASURE, step_errors)
        title = _evaluate(pipe, session, "document.title", step_errors)
        values = [_evaluate(pipe, session, step, step_errors) for step in steps]
        pipe.drain(0.2)  # anything the steps logged or requested
        return PageResult(
            title or "",
            json.loads(measured) if measured else [],
            _errors(pipe.events) + step_errors,
            _requests(pipe.events, own),
            values,
        )
    finally:
        pipe.close()
        shutil.rmtree(user_data, ignore_errors=True)
