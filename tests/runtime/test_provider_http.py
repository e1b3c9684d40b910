"""OpenAICompatProvider against a loopback server: one pooled client, retries with backoff on
429/5xx, timeouts and malformed bodies, no retry on other 4xx."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar

import pytest

from policyctl.runtime import OpenAICompatProvider
from policyctl.runtime.providers import ProviderError

OK = {"choices": [{"message": {"role": "assistant", "content": "hello"}, "finish_reason": "stop"}]}


class Scripted(BaseHTTPRequestHandler):
    """Answers each request with the next step: (status, body, headers, delay)."""

    protocol_version = "HTTP/1.1"  # keep-alive, so a pooled client reuses its connection
    steps: ClassVar[list[tuple[int, Any, dict[str, str], float]]] = []
    seen: ClassVar[list[tuple[float, int]]] = []  # (time, client port)

    def do_POST(self) -> None:  # the stdlib's method name
        self.rfile.read(int(self.headers["Content-Length"]))
        Scripted.seen.append((time.monotonic(), self.client_address[1]))
        status, body, headers, delay = Scripted.steps.pop(0) if Scripted.steps else (200, OK, {}, 0)
        if delay:
            time.sleep(delay)
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        try:
            self.send_response(status)
            for k, v in headers.items():
                self.send_header(k, v)
            sse = data.startswith(b"data:")
            self.send_header("Content-Type", "text/event-stream" if sse else "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except OSError:
            pass  # the client gave up (a timeout test)

    def log_message(self, *_: Any) -> None:
        pass


@pytest.fixture
def server() -> Iterator[str]:
    Scripted.steps = []
    Scripted.seen = []
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Scripted)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    httpd.shutdown()
    httpd.server_close()


def provider(url: str, **kw: Any) -> OpenAICompatProvider:
    kw.setdefault("backoff", 0.01)
    return OpenAICompatProvider(url, "m", **kw)


def test_one_pooled_client_serves_every_request(server: str) -> None:
    p = provider(server)

    async def three() -> list[str | None]:
        async with p:
            return [(await p.complete([], [])).content for _ in range(3)]

    assert asyncio.run(three()) == ["hello"] * 3
    assert p.clients_made == 1
    assert len({port for _, port in Scripted.seen}) == 1  # one connection, reused


@pytest.mark.parametrize("status", [408, 409, 429, 500, 502, 503, 504])
def test_retryable_statuses_are_retried(server: str, status: int) -> None:
    Scripted.steps = [(status, {"error": "busy"}, {}, 0), (status, {"error": "busy"}, {}, 0)]
    out = asyncio.run(provider(server, retries=2).complete([], []))
    assert out.content == "hello" and len(Scripted.seen) == 3


def test_backoff_grows_and_retry_after_is_honoured(server: str) -> None:
    Scripted.steps = [(429, {}, {"Retry-After": "0.3"}, 0)]
    asyncio.run(provider(server, retries=1).complete([], []))
    (t0, _), (t1, _) = Scripted.seen
    assert t1 - t0 >= 0.25
    Scripted.seen.clear()
    Scripted.steps = [(503, {}, {}, 0), (503, {}, {}, 0)]
    asyncio.run(provider(server, retries=2, backoff=0.1).complete([], []))
    gaps = [b[0] - a[0] for a, b in zip(Scripted.seen, Scripted.seen[1:], strict=False)]
    assert gaps[0] >= 0.04 and gaps[1] >= 0.09  # 0.1 then 0.2, each jittered to half at least


def test_other_client_errors_are_not_retried(server: str) -> None:
    Scripted.steps = [(401, {"error": "bad key"}, {}, 0)]
    with pytest.raises(ProviderError, match="HTTP 401"):
        asyncio.run(provider(server, retries=3).complete([], []))
    assert len(Scripted.seen) == 1


def test_a_timeout_is_retried_then_reported(server: str) -> None:
    Scripted.steps = [(200, OK, {}, 3.0)]
    started = time.monotonic()
    out = asyncio.run(provider(server, timeout=0.2, retries=1).complete([], []))
    assert out.content == "hello" and time.monotonic() - started < 2.5  # not the 3 s answer
    Scripted.steps = [(200, OK, {}, 3.0), (200, OK, {}, 3.0)]
    with pytest.raises(ProviderError, match=r"no answer within 0\.2 s"):
        asyncio.run(provider(server, timeout=0.2, retries=1).complete([], []))


@pytest.mark.parametrize("bad", [b"not json", b"{}", b'{"choices": "x"}', b"[1]"])
def test_malformed_bodies_are_retried_then_a_provider_error(server: str, bad: bytes) -> None:
    Scripted.steps = [(200, bad, {}, 0)]
    assert asyncio.run(provider(server, retries=1).complete([], [])).content == "hello"
    Scripted.steps = [(200, bad, {}, 0), (200, bad, {}, 0)]
    with pytest.raises(ProviderError, match="malformed response body"):
        asyncio.run(provider(server, retries=1).complete([], []))


def test_connection_refused_is_a_provider_error() -> None:
    with pytest.raises(ProviderError, match="connection failed"):
        asyncio.run(provider("http://127.0.0.1:9/v1", retries=1).complete([], []))


@pytest.mark.parametrize(
    "kw", [{"timeout": float("nan")}, {"timeout": 0}, {"retries": -1}, {"backoff": float("inf")}]
)
def test_provider_options_are_checked(kw: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        OpenAICompatProvider("http://127.0.0.1:1/v1", "m", **kw)


def test_retry_after_is_capped() -> None:
    p = OpenAICompatProvider("http://127.0.0.1:1/v1", "m", backoff=0.5)
    assert p._delay(0, "3600") == 30.0
    assert p._delay(0, "nan") <= 0.5 and p._delay(2, None) >= 1.0  # 0.5 * 2**2, jittered


def sse(*chunks: Any) -> bytes:
    lines = [f"data: {c if isinstance(c, str) else json.dumps(c)}\n\n" for c in chunks]
    return ("".join(lines) + "data: [DONE]\n\n").encode()


def delta(**d: Any) -> dict[str, Any]:
    return {"choices": [{"index": 0, "delta": d}]}


def test_streamed_content_and_tool_calls_are_joined(server: str) -> None:
    Scripted.steps = [
        (
            200,
            sse(
                delta(content="Let me "),
                delta(content="look."),
                delta(tool_calls=[{"index": 0, "id": "c1", "function": {"name": "read_file"}}]),
                delta(tool_calls=[{"index": 0, "function": {"arguments": '{"path": '}}]),
                delta(tool_calls=[{"index": 0, "function": {"arguments": '"a.txt"}'}}]),
                delta(tool_calls=[{"index": 1, "id": "c2", "function": {"arguments": "{}"}}]),
                {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
                {"usage": {"total_tokens": 5}, "choices": []},
            ),
            {},
            0,
        )
    ]
    out = asyncio.run(provider(server, stream=True).complete([], []))
    assert out.content == "Let me look." and out.finish_reason == "tool_calls"
    first, second = out.tool_calls
    assert (first.id, first.name, first.arguments, first.error) == (
        "c1",
        "read_file",
        '{"path": "a.txt"}',
        None,
    )
    assert second.error == "the tool call has no tool name"  # never a crash, never a run


def test_a_malformed_stream_is_retried_then_a_provider_error(server: str) -> None:
    bad = (200, sse(delta(content="a"), "{not json"), {}, 0)
    Scripted.steps = [bad, bad]
    with pytest.raises(ProviderError, match="stream chunk is not JSON"):
        asyncio.run(provider(server, stream=True, retries=1).complete([], []))
    Scripted.steps = [bad]
    out = asyncio.run(provider(server, stream=True, retries=1).complete([], []))
    assert out.content == "hello"  # the retry got a JSON body: servers may ignore "stream"


def test_a_stream_is_bounded() -> None:
    from policyctl.runtime.streaming import StreamAccumulator, StreamError

    joined = StreamAccumulator(limit=1_000)
    with pytest.raises(StreamError, match="passed 1000 characters"):
        for _ in range(100):
            joined.add_line("data: " + json.dumps(delta(content="x" * 50)))
