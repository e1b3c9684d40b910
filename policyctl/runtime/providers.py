"""Model providers: a protocol, a scripted provider (tests, demos) and an OpenAI-compatible one."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    arguments: Any  # a JSON string or an object, as providers send it


@dataclass(frozen=True)
class ProviderResponse:
    content: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()

    def message(self) -> dict[str, Any]:
        msg: dict[str, Any] = {"role": "assistant", "content": self.content}
        if self.tool_calls:
            msg["tool_calls"] = [
                {
                    "id": c.id,
                    "type": "function",
                    "function": {
                        "name": c.name,
                        "arguments": c.arguments
                        if isinstance(c.arguments, str)
                        else json.dumps(c.arguments),
                    },
                }
                for c in self.tool_calls
            ]
        return msg


class Provider(Protocol):
    async def complete(
        self, messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]]
    ) -> ProviderResponse: ...


@dataclass
class ScriptedProvider:
    """Replays recorded responses in order, and records what it was sent."""

    responses: list[ProviderResponse]
    requests: list[tuple[list[dict[str, Any]], list[dict[str, Any]]]] = field(default_factory=list)

    async def complete(
        self, messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]]
    ) -> ProviderResponse:
        self.requests.append(([dict(m) for m in messages], list(tools)))
        if not self.responses:
            return ProviderResponse(content="(script finished)")
        return self.responses.pop(0)


def parse_chat_completion(body: dict[str, Any]) -> ProviderResponse:
    """A chat-completions response body -> ProviderResponse."""
    try:
        message = body["choices"][0]["message"]
    except (KeyError, IndexError, TypeError):
        raise ValueError("response has no choices[0].message") from None
    calls = tuple(
        ToolCall(
            str(c.get("id", f"call_{i}")),
            c["function"]["name"],
            c["function"].get("arguments", "{}"),
        )
        for i, c in enumerate(message.get("tool_calls") or ())
    )
    return ProviderResponse(message.get("content"), calls)


class OpenAICompatProvider:
    """Any server that speaks OpenAI's chat-completions protocol (hosted or local)."""

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        timeout: float = 60.0,
        extra: dict[str, Any] | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.api_key = api_key
        self.timeout = timeout
        self.extra = dict(extra or {})

    async def complete(
        self, messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]]
    ) -> ProviderResponse:
        import httpx

        payload: dict[str, Any] = {"model": self.model, "messages": list(messages), **self.extra}
        if tools:
            payload["tools"] = list(tools)
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        async with httpx.AsyncClient(timeout=self.timeout) as client:
            response = await client.post(
                f"{self.base_url}/chat/completions", json=payload, headers=headers
            )
            response.raise_for_status()
            return parse_chat_completion(response.json())
