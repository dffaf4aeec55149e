"""The HTTP transport under the OpenAI and Anthropic SDKs: a total deadline per request and a
cap on the size of a reply body.

An SDK's `timeout` bounds each socket operation, not the request: a server that sends one byte
every 20 s never trips a 300 s read timeout and can hold a call for ever. Here every socket
operation (connect, TLS handshake, each write, each read) waits at most the time left before
the request's deadline, so the whole request, every byte of the reply included, ends by the
deadline (give or take one scheduler tick):

    client = httpx.Client(transport=DeadlineTransport(max_body_bytes=32 << 20))
    with deadline(600.0):
        client.post(...)            # or an SDK call made through that client

The deadline is a context variable: it follows the calling thread into the SDK and down to the
socket, and parallel calls from other threads each keep their own. Outside `deadline(...)` the
transport waits as the caller's own timeouts say. A socket wait cut by the deadline raises
httpx's ReadTimeout (or ConnectTimeout, WriteTimeout), which the SDKs turn into their
APITimeoutError; `deadline_passed()` then tells the provider that the whole time was used.

A reply body longer than `max_body_bytes` is not read further: `BodyTooLarge` is raised (the
SDKs wrap it in their APIConnectionError, with this error as the cause).

Both SDKs speak HTTP through httpx2 and httpcore2 (their maintained forks of httpx and
httpcore, imported here under the usual names); the transport is built from their public parts.

Proxies: an http(s) proxy from the environment (HTTPS_PROXY, HTTP_PROXY, ALL_PROXY, minus
NO_PROXY) is honoured, as httpx would; `proxy_for(url)` picks it.
"""

from __future__ import annotations

import time
import typing
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from urllib.parse import urlparse

import httpcore2 as httpcore
import httpx2 as httpx

_DEADLINE: ContextVar[float | None] = ContextVar("kernforge_http_deadline", default=None)

# httpcore's errors as httpx's (the SDKs catch httpx's), most specific first
_ERRORS: tuple[tuple[type[Exception], type[httpx.TransportError]], ...] = (
    (httpcore.ConnectTimeout, httpx.ConnectTimeout),
    (httpcore.ReadTimeout, httpx.ReadTimeout),
    (httpcore.WriteTimeout, httpx.WriteTimeout),
    (httpcore.PoolTimeout, httpx.PoolTimeout),
    (httpcore.TimeoutException, httpx.TimeoutException),
    (httpcore.ConnectError, httpx.ConnectError),
    (httpcore.ReadError, httpx.ReadError),
    (httpcore.WriteError, httpx.WriteError),
    (httpcore.NetworkError, httpx.NetworkError),
    (httpcore.ProxyError, httpx.ProxyError),
    (httpcore.UnsupportedProtocol, httpx.UnsupportedProtocol),
    (httpcore.RemoteProtocolError, httpx.RemoteProtocolError),
    (httpcore.LocalProtocolError, httpx.LocalProtocolError),
    (httpcore.ProtocolError, httpx.ProtocolError),
)


class BodyTooLarge(httpx.TransportError):
    """The server sent a reply body longer than the transport reads."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"the reply body is longer than {limit} bytes; not read further")
        self.limit = limit


@contextmanager
def deadline(seconds: float) -> Iterator[None]:
    """Requests made inside this block (through a DeadlineTransport) end `seconds` from now."""
    token = _DEADLINE.set(time.monotonic() + seconds)
    try:
        yield
    finally:
        _DEADLINE.reset(token)


def deadline_passed() -> bool:
    """Whether the current block's deadline (if any) has passed."""
    end = _DEADLINE.get()
    return end is not None and time.monotonic() >= end


def _left(timeout: float | None, expired: type[Exception]) -> float | None:
    """`timeout` shortened to the time left before the deadline; `expired` once it has passed."""
    end = _DEADLINE.get()
    if end is None:
        return timeout
    left = end - time.monotonic()
    if left <= 0:
        raise expired("the request's deadline has passed")
    return left if timeout is None else min(timeout, left)


class _Stream(httpcore.NetworkStream):
    """A socket stream whose every wait ends by the deadline."""

    def __init__(self, inner: httpcore.NetworkStream) -> None:
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, _left(timeout, httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, _left(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(
        self,
        ssl_context: typing.Any,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.NetworkStream:
        tls = self._inner.start_tls(
            ssl_context, server_hostname, _left(timeout, httpcore.ConnectTimeout)
        )
        return _Stream(tls)

    def get_extra_info(self, info: str) -> typing.Any:
        return self._inner.get_extra_info(info)


class _Backend(httpcore.NetworkBackend):
    """httpcore's own socket backend, with every stream it opens bound by the deadline."""

    def __init__(self) -> None:
        self._inner = httpcore.SyncBackend()

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: typing.Iterable[typing.Any] | None = None,
    ) -> httpcore.NetworkStream:
        stream = self._inner.connect_tcp(
            host, port, _left(timeout, httpcore.ConnectTimeout), local_address, socket_options
        )
        return _Stream(stream)

    def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: typing.Iterable[typing.Any] | None = None,
    ) -> httpcore.NetworkStream:
        stream = self._inner.connect_unix_socket(
            path, _left(timeout, httpcore.ConnectTimeout), socket_options
        )
        return _Stream(stream)

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


@contextmanager
def _as_httpx(request: httpx.Request) -> Iterator[None]:
    try:
        yield
    except httpcore.ConnectionNotAvailable as exc:
        raise httpx.TransportError(str(exc)) from exc
    except Exception as exc:
        for core, ours in _ERRORS:
            if isinstance(exc, core):
                raise ours(str(exc), request=request) from exc
        raise


class _Body(httpx.SyncByteStream):
    """The reply body, read at most `limit` bytes far."""

    def __init__(self, inner: typing.Any, limit: int, request: httpx.Request) -> None:
        self._inner = inner
        self._limit = limit
        self._request = request

    def __iter__(self) -> Iterator[bytes]:
        read = 0
        with _as_httpx(self._request):
            for chunk in self._inner:
                read += len(chunk)
                if read > self._limit:
                    raise BodyTooLarge(self._limit)
                yield chunk

    def close(self) -> None:
        if hasattr(self._inner, "close"):
            self._inner.close()


def proxy_for(url: str | None) -> str | None:
    """The environment's proxy for `url` (None: connect directly)."""
    if not url:
        return None
    parsed = urlparse(url)
    if parsed.hostname and urllib.request.proxy_bypass(parsed.hostname):
        return None
    proxies = urllib.request.getproxies()
    return proxies.get(parsed.scheme) or proxies.get("all")


class DeadlineTransport(httpx.BaseTransport):
    """An httpx transport whose requests end by the `deadline(...)` they were made under and
    whose reply bodies are read at most `max_body_bytes` far. `proxy`: an http(s) proxy URL."""

    def __init__(self, *, max_body_bytes: int, proxy: str | None = None) -> None:
        if max_body_bytes < 1:
            raise ValueError(f"max_body_bytes must be >= 1, got {max_body_bytes}")
        self.max_body_bytes = max_body_bytes
        ssl_context = httpx.create_ssl_context()
        pool: httpcore.ConnectionPool | httpcore.HTTPProxy
        if proxy is None:
            pool = httpcore.ConnectionPool(
                ssl_context=ssl_context, max_connections=100, network_backend=_Backend()
            )
        else:
            parsed = httpx.Proxy(proxy)
            if parsed.url.scheme not in ("http", "https"):
                raise ValueError(
                    f"proxy {proxy!r}: only http(s) proxies are supported for model servers; "
                    "unset it or add the server's host to NO_PROXY"
                )
            pool = httpcore.HTTPProxy(
                proxy_url=httpcore.URL(
                    scheme=parsed.url.raw_scheme,
                    host=parsed.url.raw_host,
                    port=parsed.url.port,
                    target=parsed.url.raw_path,
                ),
                proxy_auth=parsed.raw_auth,
                proxy_headers=parsed.headers.raw,
                ssl_context=ssl_context,
                max_connections=100,
                network_backend=_Backend(),
            )
        self._pool = pool

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        with _as_httpx(request):
            # waiting for a pooled connection counts against the deadline too
            timeouts = dict(request.extensions.get("timeout", {}))
            timeouts["pool"] = _left(timeouts.get("pool"), httpcore.PoolTimeout)
            core = httpcore.Request(
                method=request.method,
                url=httpcore.URL(
                    scheme=request.url.raw_scheme,
                    host=request.url.raw_host,
                    port=request.url.port,
                    target=request.url.raw_path,
                ),
                headers=request.headers.raw,
                content=request.stream,
                extensions={**request.extensions, "timeout": timeouts},
            )
            response = self._pool.handle_request(core)
        return httpx.Response(
            status_code=response.status,
            headers=response.headers,
            stream=_Body(response.stream, self.max_body_bytes, request),
            extensions=response.extensions,
        )

    def close(self) -> None:
        self._pool.close()
