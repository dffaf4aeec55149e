"""Small real HTTP servers on 127.0.0.1 that speak the OpenAI and Anthropic wire formats.

The provider tests run the official SDKs against these, so everything between our code and the
socket (headers, JSON shapes, status codes, retry-after, timeouts) is exercised for real.

    with FakeLLMServer("openai") as server:
        server.answer(429, openai_error("slow down"), headers={"retry-after": "0.2"})
        server.answer(200, openai_reply("hello", prompt_tokens=12, completion_tokens=3))
        provider = OpenAIProvider("gpt-5.5", base_url=server.base_url, ...)
        ...
        server.requests[0].json["messages"]   # what arrived

Each request takes the next scripted answer from the queue; with the queue empty the server
answers 500 "no scripted answer left", which a test sees as an unexpected extra request, unless
`respond_with(fn)` set a function that answers every request the queue does not
(`fn(request) -> Answer`, e.g. a reply whose usage is computed from the request).
An answer may carry `delay_s`: the handler sleeps before replying (to provoke client timeouts).
Faults, per answer: `raw=` sends those bytes as the body, as they are (not JSON, HTML, cut
short), with `content_type`; `drip_s=` sends the body one byte every `drip_s` seconds (after
prompt headers); `freeze=True` reads the request and never answers (until the server stops).
`hold_while(predicate)` makes every request wait, before it takes its answer, for as long as the
predicate is true: a test can stop a client at a known point (then kill it) without a race.

`FrozenServer` is a TCP listener that accepts connections and never sends a byte: any HTTP
service (a chroma server) that has hung.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

PATHS = {"openai": "/v1/chat/completions", "anthropic": "/v1/messages"}


@dataclass
class Answer:
    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0
    raw: bytes | None = None  # sent as the body instead of `body`
    content_type: str = "application/json"
    drip_s: float = 0.0  # seconds between the body's bytes
    freeze: bool = False  # never answer


@dataclass
class ReceivedRequest:
    method: str
    path: str
    headers: dict[str, str]  # lower-cased names
    json: Any


class FakeLLMServer:
    """A ThreadingHTTPServer on a free 127.0.0.1 port, scriptable per test."""

    def __init__(self, kind: Literal["openai", "anthropic"]) -> None:
        self.kind = kind
        self.requests: list[ReceivedRequest] = []
        self._answers: deque[Answer] = deque()
        self._lock = threading.Lock()
        self._hold: Callable[[], bool] = lambda: False
        self._fallback: Callable[[ReceivedRequest], Answer] | None = None
        self._stopping = threading.Event()
        self.held = 0  # requests that have waited under hold_while
        self.in_flight = 0  # requests being answered now
        self.peak_in_flight = 0  # the most answered at once
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._httpd.daemon_threads = True
        self.port = self._httpd.server_address[1]
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def base_url(self) -> str:
        """The URL the SDKs take as base_url (OpenAI's includes /v1, Anthropic's does not)."""
        root = f"http://127.0.0.1:{self.port}"
        return root + "/v1" if self.kind == "openai" else root

    def answer(
        self,
        status: int = 200,
        body: Any = None,
        *,
        headers: dict[str, str] | None = None,
        delay_s: float = 0.0,
        raw: bytes | None = None,
        content_type: str = "application/json",
        drip_s: float = 0.0,
        freeze: bool = False,
    ) -> None:
        """Queue the answer to the next request (the fault options: see the module doc)."""
        answer = Answer(
            status, body, dict(headers or {}), delay_s, raw, content_type, drip_s, freeze
        )
        with self._lock:
            self._answers.append(answer)

    def respond_with(self, fn: Callable[[ReceivedRequest], Answer] | None) -> None:
        """Answer every request the queue does not with `fn(request)` (None: 500 again)."""
        self._fallback = fn

    def hold_while(self, predicate: Callable[[], bool]) -> None:
        """Requests wait (before taking an answer) while `predicate()` is true."""
        self._hold = predicate

    def start(self) -> FakeLLMServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()  # frozen and dripping answers end
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> FakeLLMServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def _next_answer(self, request: ReceivedRequest) -> Answer:
        if self._hold():
            with self._lock:
                self.held += 1
            while self._hold():
                time.sleep(0.02)
        with self._lock:
            self.requests.append(request)
            if request.path != PATHS[self.kind]:
                return Answer(404, {"error": {"message": f"no route {request.path}"}})
            if self._answers:
                return self._answers.popleft()
            fallback = self._fallback
        if fallback is not None:
            return fallback(request)
        return Answer(500, {"error": {"message": "no scripted answer left"}})

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length) if length else b""
                request = ReceivedRequest(
                    method="POST",
                    path=self.path,
                    headers={k.lower(): v for k, v in self.headers.items()},
                    json=json.loads(raw) if raw else None,
                )
                with server._lock:
                    server.in_flight += 1
                    server.peak_in_flight = max(server.peak_in_flight, server.in_flight)
                self._answered = False
                try:
                    self._answer(server._next_answer(request))
                finally:
                    self._leave()

            def _leave(self) -> None:
                # A request stops counting as in flight before its first byte goes back: once the
                # client has the reply it may send its next request at once, and counting that one
                # while this thread is still finishing its write would report an overlap the
                # client never made.
                if not self._answered:
                    self._answered = True
                    with server._lock:
                        server.in_flight -= 1

            def _answer(self, answer: Answer) -> None:
                if answer.delay_s:
                    time.sleep(answer.delay_s)
                if answer.freeze:
                    server._stopping.wait()
                    return
                self._leave()
                if answer.raw is not None:
                    payload = answer.raw
                else:
                    body = answer.body if isinstance(answer.body, str) else json.dumps(answer.body)
                    payload = body.encode()
                try:
                    self.send_response(answer.status)
                    self.send_header("content-type", answer.content_type)
                    self.send_header("content-length", str(len(payload)))
                    for name, value in answer.headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    if not answer.drip_s:
                        self.wfile.write(payload)
                        return
                    for i in range(len(payload)):
                        self.wfile.write(payload[i : i + 1])
                        self.wfile.flush()
                        if server._stopping.wait(answer.drip_s):
                            return
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test); nothing to answer

            def log_message(self, format: str, *args: Any) -> None:
                pass  # keep test output clean

        return Handler


class FrozenServer:
    """A TCP listener on 127.0.0.1 that accepts connections and never answers (a hung service).
    `accepted` counts the connections it took."""

    def __init__(self) -> None:
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(64)
        self._sock.settimeout(0.05)
        self.port = self._sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.accepted = 0
        self._held: list[socket.socket] = []
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._accept, daemon=True)

    def _accept(self) -> None:
        while not self._stopping.is_set():
            try:
                conn, _ = self._sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            self.accepted += 1
            self._held.append(conn)  # kept open, never read, never answered

    def __enter__(self) -> FrozenServer:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stopping.set()
        self._thread.join(5)
        for conn in self._held:
            conn.close()
        self._sock.close()


def closed_port() -> int:
    """A 127.0.0.1 port with nothing listening (connections are refused)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# ---- answer bodies in each wire format ----


def openai_reply(
    text: str,
    *,
    model: str = "gpt-5.5",
    prompt_tokens: int = 10,
    completion_tokens: int = 5,
    finish_reason: str = "stop",
) -> dict[str, Any]:
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": finish_reason,
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


def openai_error(message: str, *, type_: str = "server_error", code: str | None = None) -> dict:
    return {"error": {"message": message, "type": type_, "param": None, "code": code}}


def anthropic_reply(
    text: str,
    *,
    model: str = "claude-sonnet-4-6",
    input_tokens: int = 10,
    output_tokens: int = 5,
    stop_reason: str = "end_turn",
) -> dict[str, Any]:
    return {
        "id": "msg_test",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [{"type": "text", "text": text}],
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens},
    }


def anthropic_error(message: str, *, type_: str = "api_error") -> dict[str, Any]:
    return {"type": "error", "error": {"type": type_, "message": message}}
