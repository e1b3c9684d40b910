"""Server-sent chat-completion chunks -> one response, parsed as defensively as a whole body.

A streamed answer arrives as `data: {...}` lines, each a chunk whose `choices[0].delta` carries
a piece of the content or of a tool call (identified by `index`), and a last `data: [DONE]`.
The pieces are joined into the shape of a non-streamed body and handed to the same parser, so a
stream can never produce a call the whole-body parser would not. A stream longer than
`MAX_STREAM_CHARS` is cut off (a server that never stops cannot fill memory).
"""

from __future__ import annotations

import json
from typing import Any

MAX_STREAM_CHARS = 4_000_000


class StreamError(ValueError):
    """A chunk that is not JSON, or a stream past its size bound."""


class StreamAccumulator:
    def __init__(self, limit: int = MAX_STREAM_CHARS) -> None:
        self.limit = limit
        self.size = 0
        self.content: list[str] = []
        self.calls: dict[int, dict[str, Any]] = {}
        self.finish_reason: str | None = None
        self.done = False

    def add_line(self, line: str) -> None:
        """One line of the event stream (blank lines, comments and other fields are skipped)."""
        self.size += len(line)
        if self.size > self.limit:
            raise StreamError(f"the stream passed {self.limit} characters")
        if not line.startswith("data:"):
            return
        data = line[5:].strip()
        if data == "[DONE]":
            self.done = True
            return
        try:
            chunk = json.loads(data)
        except ValueError as exc:
            raise StreamError(f"a stream chunk is not JSON: {exc}") from None
        self.add_chunk(chunk)

    def add_chunk(self, chunk: Any) -> None:
        choices = chunk.get("choices") if isinstance(chunk, dict) else None
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            return  # a usage or keep-alive chunk
        choice = choices[0]
        delta = choice.get("delta")
        if isinstance(delta, dict):
            if isinstance(delta.get("content"), str):
                self.content.append(delta["content"])
            for piece in delta.get("tool_calls") or ():
                self._add_call(piece)
        if isinstance(choice.get("finish_reason"), str):
            self.finish_reason = choice["finish_reason"]

    def _add_call(self, piece: Any) -> None:
        if not isinstance(piece, dict):
            return
        index = piece.get("index", 0)
        index = index if isinstance(index, int) and not isinstance(index, bool) else 0
        slot = self.calls.setdefault(index, {"function": {}})
        if isinstance(piece.get("id"), str):
            slot["id"] = piece["id"]
        function = piece.get("function")
        if isinstance(function, dict):
            for key in ("name", "arguments"):
                if isinstance(function.get(key), str):
                    slot["function"][key] = slot["function"].get(key, "") + function[key]

    def body(self) -> dict[str, Any]:
        """The joined stream in the shape of a non-streamed chat completion."""
        message: dict[str, Any] = {
            "role": "assistant",
            "content": "".join(self.content) or None,
        }
        if self.calls:
            message["tool_calls"] = [self.calls[i] for i in sorted(self.calls)]
        return {"choices": [{"message": message, "finish_reason": self.finish_reason}]}
