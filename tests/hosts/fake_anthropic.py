"""A loopback stand-in for the Anthropic Messages API, enough for Claude Code to run one turn.

The main conversation gets a scripted answer chosen by how many tool results it already carries:
the first request gets ``script[0]`` (usually a ``tool_use``), the request that carries that
call's ``tool_result`` gets ``script[1]``, and so on; past the end, a plain text answer. Side
requests (titles, topic checks, token counts) are answered with short text, so the host never
waits on the network. Every request body is kept for the test to read.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

FINAL_TEXT = "All done."


@dataclass(frozen=True)
class ToolUse:
    """One scripted model turn: call ``name`` with ``input``."""

    name: str
    input: dict[str, Any]


@dataclass
class FakeAnthropic:
    script: list[ToolUse] = field(default_factory=list)
    requests: list[dict[str, Any]] = field(default_factory=list)
    port: int = 0  # 0: any free port

    def __post_init__(self) -> None:
        self._server = ThreadingHTTPServer(("127.0.0.1", self.port), _handler_for(self))
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> FakeAnthropic:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def tool_results(self) -> list[dict[str, Any]]:
        """The ``tool_result`` blocks of the last main-conversation request."""
        return tool_results(self.requests, self.script)

    def answer(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        """The content blocks to answer ``body`` with."""
        if not _is_main(body, self.script):
            return [{"type": "text", "text": FINAL_TEXT}]
        done = sum(
            1
            for m in body.get("messages", [])
            for b in _blocks(m)
            if b.get("type") == "tool_result"
        )
        if done < len(self.script):
            step = self.script[done]
            return [
                {
                    "type": "tool_use",
                    "id": f"toolu_fake{done:04d}",
                    "name": step.name,
                    "input": step.input,
                }
            ]
        return [{"type": "text", "text": FINAL_TEXT}]


def tool_results(requests: list[dict[str, Any]], script: list[ToolUse]) -> list[dict[str, Any]]:
    """The ``tool_result`` blocks of the last main-conversation request among ``requests``."""
    main = [r for r in requests if _is_main(r, script)]
    if not main:
        return []
    messages = main[-1].get("messages", [])
    return [b for m in messages for b in _blocks(m) if b.get("type") == "tool_result"]


def _blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    content = message.get("content")
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def _is_main(body: dict[str, Any], script: list[ToolUse]) -> bool:
    # The main loop offers the tools; side requests (titles, classifiers) offer none of ours.
    offered = {t.get("name") for t in body.get("tools") or [] if isinstance(t, dict)}
    return any(step.name in offered for step in script) or (not script and bool(offered))


def _events(model: str, blocks: list[dict[str, Any]]) -> Iterator[tuple[str, dict[str, Any]]]:
    usage = {"input_tokens": 10, "output_tokens": 1}
    yield (
        "message_start",
        {
            "type": "message_start",
            "message": {
                "id": "msg_fake",
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": usage,
            },
        },
    )
    for index, block in enumerate(blocks):
        if block["type"] == "tool_use":
            start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        else:
            start = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": block["text"]}
        yield (
            "content_block_start",
            {"type": "content_block_start", "index": index, "content_block": start},
        )
        yield "content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}
        yield "content_block_stop", {"type": "content_block_stop", "index": index}
    stop = "tool_use" if any(b["type"] == "tool_use" for b in blocks) else "end_turn"
    yield (
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop, "stop_sequence": None},
            "usage": {"output_tokens": 5},
        },
    )
    yield "message_stop", {"type": "message_stop"}


def _handler_for(fake: FakeAnthropic) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: object) -> None:  # quiet: pytest shows failures
            pass

        def do_GET(self) -> None:  # health or model lookups: an empty, well-formed answer
            self._json(200, {"data": [], "has_more": False})

        def do_HEAD(self) -> None:
            self._json(200, {})

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            try:
                body = json.loads(self.rfile.read(length) or b"{}")
            except ValueError:
                body = {}
            path = self.path.split("?")[0]
            if path.endswith("/count_tokens"):
                self._json(200, {"input_tokens": 10})
                return
            if not path.endswith("/v1/messages"):
                self._json(
                    404, {"type": "error", "error": {"type": "not_found_error", "message": path}}
                )
                return
            fake.requests.append(body)
            blocks = fake.answer(body)
            model = str(body.get("model", "claude-fake"))
            if body.get("stream"):
                self._stream(model, blocks)
            else:
                stop = "tool_use" if any(b["type"] == "tool_use" for b in blocks) else "end_turn"
                self._json(
                    200,
                    {
                        "id": "msg_fake",
                        "type": "message",
                        "role": "assistant",
                        "model": model,
                        "content": blocks,
                        "stop_reason": stop,
                        "stop_sequence": None,
                        "usage": {"input_tokens": 10, "output_tokens": 5},
                    },
                )

        def _json(self, status: int, payload: dict[str, Any]) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _stream(self, model: str, blocks: list[dict[str, Any]]) -> None:
            data = b"".join(
                f"event: {name}\ndata: {json.dumps(event)}\n\n".encode()
                for name, event in _events(model, blocks)
            )
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    return Handler
