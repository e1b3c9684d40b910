"""Model providers: a protocol, a scripted provider (tests, demos) and an OpenAI-compatible one.

A model's output is untrusted input. `parse_chat_completion` never raises on a malformed tool
call: a call without `function`, with a name that is not a string, or with arguments of the
wrong shape becomes a `ToolCall` carrying `error`, which the gate turns into a tool error the
model reads (and loop detection counts). Only a body with no usable message at all is a
`ProviderError`.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from .streaming import StreamAccumulator

if TYPE_CHECKING:
    import httpx

log = logging.getLogger("policyctl.runtime")

RETRY_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504})
MAX_RETRY_AFTER = 30.0  # seconds: a server's Retry-After is honoured up to this


class ProviderError(RuntimeError):
    """The provider gave no usable answer (after retries where retrying made sense)."""


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    arguments: Any  # a JSON string or an object, as providers send it
    error: str | None = None  # set when the call was malformed: it is never run


@dataclass(frozen=True)
class ProviderResponse:
    content: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    finish_reason: str | None = None

    def message(self) -> dict[str, Any]:
        msg: dict[str, Any] = {"role": "assistant", "content": self.content}
        if self.tool_calls:
            msg["tool_calls"] = [
                {
                    "id": c.id,
                    "type": "function",
                    "function": {
                        "name": c.name if isinstance(c.name, str) else "",
                        "arguments": _arguments_text(c.arguments),
                    },
                }
                for c in self.tool_calls
            ]
        return msg


def _arguments_text(arguments: Any) -> str:
    """Arguments as the JSON text sent back in the history (NaN is not JSON: a server would
    refuse every later request of the session)."""
    if isinstance(arguments, str):
        return arguments
    try:
        return json.dumps(arguments, default=str, allow_nan=False)
    except (ValueError, TypeError, RecursionError):
        return json.dumps(repr(arguments))


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


def _content(value: Any) -> str | None:
    """Message content: a string, or a list of parts whose text parts are joined."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, list):
        texts = [p.get("text") for p in value if isinstance(p, dict)]
        return "".join(t for t in texts if isinstance(t, str)) or None
    return None


def _tool_call(index: int, raw: Any) -> ToolCall:
    if not isinstance(raw, dict):
        return ToolCall(f"call_{index}", "", None, "a tool call must be an object")
    call_id = raw.get("id")
    call_id = call_id if isinstance(call_id, str) and call_id else f"call_{index}"
    function = raw.get("function")
    if not isinstance(function, dict):
        return ToolCall(call_id, "", None, "the tool call has no function")
    name = function.get("name")
    arguments = function.get("arguments", "{}")
    if not isinstance(name, str) or not name.strip():
        return ToolCall(call_id, "", arguments, "the tool call has no tool name")
    if arguments is not None and not isinstance(arguments, str | dict):
        return ToolCall(call_id, name, arguments, "the arguments must be a JSON object")
    return ToolCall(call_id, name, arguments)


def parse_chat_completion(body: Any) -> ProviderResponse:
    """A chat-completions response body -> ProviderResponse (ProviderError if it has none)."""
    try:
        choice = body["choices"][0]
        message = choice["message"]
    except (KeyError, IndexError, TypeError):
        raise ProviderError("response has no choices[0].message") from None
    if not isinstance(message, dict):
        raise ProviderError("choices[0].message is not an object")
    raw_calls = message.get("tool_calls") or []
    if not isinstance(raw_calls, list):
        raw_calls = [raw_calls]
    calls = tuple(_tool_call(i, c) for i, c in enumerate(raw_calls))
    reason = choice.get("finish_reason") if isinstance(choice, dict) else None
    return ProviderResponse(
        _content(message.get("content")), calls, reason if isinstance(reason, str) else None
    )


class OpenAICompatProvider:
    """Any server that speaks OpenAI's chat-completions protocol (hosted or local).

    One pooled `httpx.AsyncClient` serves every request (per event loop: a client cannot
    outlive the loop it was made on); `aclose()` or `async with` releases it. A 408, 409, 429
    or 5xx answer, a timeout, a dropped connection or a body that is not a chat completion is
    retried `retries` times with exponential backoff (`backoff` seconds, doubled each time,
    with jitter; a Retry-After header is honoured up to 30 s); then `ProviderError`. Other 4xx
    answers are not retried. With `stream=True` the answer is requested as server-sent events
    and joined (`streaming.StreamAccumulator`); the same retries apply.
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        timeout: float = 60.0,
        extra: dict[str, Any] | None = None,
        *,
        retries: int = 2,
        backoff: float = 0.5,
        stream: bool = False,
    ) -> None:
        if not (isinstance(timeout, int | float) and math.isfinite(timeout) and timeout > 0):
            raise ValueError(f"timeout must be a finite number > 0, got {timeout!r}")
        if isinstance(retries, bool) or not isinstance(retries, int) or retries < 0:
            raise ValueError(f"retries must be a whole number >= 0, got {retries!r}")
        if not (isinstance(backoff, int | float) and math.isfinite(backoff) and backoff >= 0):
            raise ValueError(f"backoff must be a finite number >= 0, got {backoff!r}")
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.api_key = api_key
        self.timeout = float(timeout)
        self.extra = dict(extra or {})
        self.retries = retries
        self.backoff = float(backoff)
        self.stream = stream
        self._client: httpx.AsyncClient | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self.clients_made = 0  # how many pools were opened (one per event loop)

    def client(self) -> httpx.AsyncClient:
        import httpx

        loop = asyncio.get_running_loop()
        if self._client is None or self._loop is not loop or self._client.is_closed:
            self._client = httpx.AsyncClient(timeout=self.timeout)
            self._loop = loop
            self.clients_made += 1
        return self._client

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    async def __aenter__(self) -> OpenAICompatProvider:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.aclose()

    def _delay(self, attempt: int, retry_after: str | None) -> float:
        if retry_after is not None:
            try:
                seconds = float(retry_after)
                if math.isfinite(seconds) and seconds >= 0:
                    return min(seconds, MAX_RETRY_AFTER)
            except ValueError:
                pass
        base: float = self.backoff * 2**attempt
        return base * (0.5 + random.random() / 2)

    async def _body(self, response: httpx.Response) -> Any:
        kind = response.headers.get("Content-Type", "")
        if not self.stream or kind.startswith("application/json"):
            return json.loads(await response.aread())  # some servers ignore "stream"
        joined = StreamAccumulator()
        async for line in response.aiter_lines():
            joined.add_line(line)
            if joined.done:
                break
        return joined.body()

    async def complete(
        self, messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]]
    ) -> ProviderResponse:
        import httpx

        payload: dict[str, Any] = {"model": self.model, "messages": list(messages), **self.extra}
        if self.stream:
            payload["stream"] = True
        if tools:
            payload["tools"] = list(tools)
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        url = f"{self.base_url}/chat/completions"
        problem = "no attempt made"
        for attempt in range(self.retries + 1):
            retry_after = None
            try:
                async with self.client().stream(
                    "POST", url, json=payload, headers=headers
                ) as response:
                    if response.status_code in RETRY_STATUS:
                        problem = f"HTTP {response.status_code}"
                        retry_after = response.headers.get("Retry-After")
                    elif response.status_code >= 400:
                        text = (await response.aread())[:200].decode("utf-8", "replace")
                        raise ProviderError(f"{url}: HTTP {response.status_code}: {text}")
                    else:
                        try:
                            return parse_chat_completion(await self._body(response))
                        except (ValueError, ProviderError) as exc:
                            problem = f"malformed response body: {exc}"
            except httpx.TimeoutException:
                problem = f"no answer within {self.timeout} s"
            except httpx.TransportError as exc:
                problem = f"connection failed: {type(exc).__name__}"
            if attempt < self.retries:
                delay = self._delay(attempt, retry_after)
                log.warning("provider %s: %s; retrying in %.2f s", url, problem, delay)
                await asyncio.sleep(delay)
        raise ProviderError(f"{url}: {problem} (after {self.retries + 1} attempts)")
