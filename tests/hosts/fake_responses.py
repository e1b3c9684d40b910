"""A loopback stand-in for the OpenAI Responses API (``POST /v1/responses``), enough for Codex.

The scripted answer is chosen by how many tool outputs the request's ``input`` already carries:
none → ``script[0]`` (usually a function call), one → ``script[1]``, and so on; past the end, a
plain assistant message. Every request body is kept for the test to read.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

FINAL_TEXT = "All done."
_OUTPUT_TYPES = {"function_call_output", "custom_tool_call_output"}


@dataclass(frozen=True)
class Call:
    """One scripted model turn: call tool ``name``. ``arguments`` is JSON for function tools;
    ``text`` is the raw input for free-form (custom) tools such as ``apply_patch``."""

    name: str
    arguments: dict[str, Any] | None = None
    text: str | None = None


@dataclass
class FakeResponses:
    script: list[Call] = field(default_factory=list)
    requests: list[dict[str, Any]] = field(default_factory=list)
    port: int = 0  # 0: any free port

    def __post_init__(self) -> None:
        self._server = ThreadingHTTPServer(("127.0.0.1", self.port), _handler_for(self))
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def __enter__(self) -> FakeResponses:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def tool_outputs(self) -> list[dict[str, Any]]:
        """The tool outputs the last request sent back to the model."""
        return tool_outputs(self.requests)

    def offered_tools(self) -> list[str]:
        first = self.requests[0] if self.requests else {}
        return [str(t.get("name")) for t in first.get("tools") or [] if isinstance(t, dict)]

    def answer(self, body: dict[str, Any]) -> dict[str, Any]:
        items = body.get("input") or []
        done = sum(1 for i in items if isinstance(i, dict) and i.get("type") in _OUTPUT_TYPES)
        if done >= len(self.script):
            return {
                "type": "message",
                "role": "assistant",
                "id": "msg_fake",
                "content": [{"type": "output_text", "text": FINAL_TEXT, "annotations": []}],
            }
        step = self.script[done]
        if step.text is not None:
            return {
                "type": "custom_tool_call",
                "id": f"ctc_{done}",
                "call_id": f"call_fake{done}",
                "name": step.name,
                "input": step.text,
                "status": "completed",
            }
        return {
            "type": "function_call",
            "id": f"fc_{done}",
            "call_id": f"call_fake{done}",
            "name": step.name,
            "arguments": json.dumps(step.arguments or {}),
            "status": "completed",
        }


def tool_outputs(requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The tool outputs the last of ``requests`` sent back to the model."""
    items = requests[-1].get("input", []) if requests else []
    return [i for i in items if isinstance(i, dict) and i.get("type") in _OUTPUT_TYPES]


def _events(item: dict[str, Any]) -> Iterator[dict[str, Any]]:
    response = {"id": "resp_fake", "object": "response", "status": "in_progress", "output": []}
    yield {"type": "response.created", "response": response}
    yield {"type": "response.output_item.added", "output_index": 0, "item": item}
    yield {"type": "response.output_item.done", "output_index": 0, "item": item}
    usage = {
        "input_tokens": 10,
        "output_tokens": 5,
        "total_tokens": 15,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens_details": {"reasoning_tokens": 0},
    }
    yield {
        "type": "response.completed",
        "response": {**response, "status": "completed", "output": [item], "usage": usage},
    }


def _handler_for(fake: FakeResponses) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: object) -> None:  # quiet: pytest shows failures
            pass

        def do_GET(self) -> None:  # model listings: none, so the host keeps its configured model
            self._send(
                200,
                "application/json",
                json.dumps({"object": "list", "data": [], "models": []}).encode(),
            )

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            try:
                body = json.loads(self.rfile.read(length) or b"{}")
            except ValueError:
                body = {}
            if not self.path.split("?")[0].endswith("/responses"):
                self._send(404, "application/json", b'{"error": {"message": "not faked"}}')
                return
            fake.requests.append(body)
            data = b"".join(
                f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode()
                for e in _events(fake.answer(body))
            )
            self._send(200, "text/event-stream", data)

        def _send(self, status: int, kind: str, data: bytes) -> None:
            self.send_response(status)
            self.send_header("content-type", kind)
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    return Handler
