"""A loopback stand-in for an OpenAI-compatible chat completions API, scripted per test.

Each request is recorded (the tools offered, the messages). The answer is the next scripted
turn of the conversation the request belongs to: a conversation is picked by a marker in the
text of its first user message (so a subagent's requests, which start from its task, get their
own script).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Turn:
    tool: str | None = None
    args: dict[str, Any] = field(default_factory=dict)
    text: str = "done"


@dataclass
class Conversation:
    marker: str
    turns: list[Turn]
    requests: list[dict[str, Any]] = field(default_factory=list)

    def offered(self, index: int = 0) -> set[str]:
        return {t["function"]["name"] for t in self.requests[index].get("tools", [])}

    def tool_results(self) -> list[str]:
        last = self.requests[-1]["messages"] if self.requests else []
        return [str(m.get("content")) for m in last if m.get("role") == "tool"]


class Script:
    def __init__(self, *conversations: Conversation) -> None:
        self.conversations = conversations
        self.unmatched: list[dict[str, Any]] = []
        self.lock = threading.Lock()

    def answer(self, body: dict[str, Any]) -> dict[str, Any]:
        users = [m for m in body.get("messages", []) if m.get("role") == "user"]
        text = json.dumps(users[0].get("content")) if users else ""
        with self.lock:
            # a conversation is known by its first user message (a subagent's is its task)
            for conv in self.conversations:
                if conv.marker in text:
                    conv.requests.append(body)
                    done = len(conv.requests) - 1
                    turn = conv.turns[done] if done < len(conv.turns) else Turn()
                    break
            else:
                self.unmatched.append(body)
                turn = Turn()
        message: dict[str, Any] = {
            "role": "assistant",
            "content": turn.text if turn.tool is None else None,
        }
        if turn.tool is not None:
            message["tool_calls"] = [
                {
                    "id": f"call_{id(body)}",
                    "type": "function",
                    "function": {"name": turn.tool, "arguments": json.dumps(turn.args)},
                }
            ]
        return message


def _handler(script: Script) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *_: Any) -> None:
            pass

        def do_POST(self) -> None:
            size = int(self.headers.get("content-length", 0))
            body = json.loads(self.rfile.read(size) or b"{}")
            message = script.answer(body)
            finish = "tool_calls" if "tool_calls" in message else "stop"
            model = body.get("model", "fake")
            if body.get("stream"):
                delta = dict(message)
                if "tool_calls" in delta:
                    delta["tool_calls"] = [dict(c, index=0) for c in delta["tool_calls"]]
                chunk = {
                    "id": "fake",
                    "object": "chat.completion.chunk",
                    "created": 0,
                    "model": model,
                    "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
                }
                data = f"data: {json.dumps(chunk)}\n\ndata: [DONE]\n\n".encode()
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
            else:
                data = json.dumps(
                    {
                        "id": "fake",
                        "object": "chat.completion",
                        "created": 0,
                        "model": model,
                        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
                    }
                ).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    return Handler


@contextmanager
def serve(script: Script) -> Iterator[str]:
    """The API's base URL on loopback while the block runs."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(script))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/v1"
    finally:
        server.shutdown()
        server.server_close()
