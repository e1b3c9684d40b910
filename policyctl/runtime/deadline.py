"""Awaiting a hook, an observer or an approver within a timeout, at little cost per call.

`bounded(awaitable, timeout)` means `asyncio.wait_for(awaitable, timeout)`: the answer, or
TimeoutError once `timeout` seconds have passed; whatever the awaitable raises comes out as it
is. On Python 3.11 and later it runs in the caller's task (no task per call, as 3.12's
`wait_for` does) and arms a timer only when one can fire: a coroutine is started at once, and
one that answers without ever waiting (most policy hooks: an `async def` that never awaits)
is done before any timer could run, so none is armed for it. One that waits goes on under
`asyncio.timeout_at` with the deadline taken before it started, so a first step that blocks
the event loop counts against its time exactly as it did before. A timeout can only interrupt
an awaitable that waits: one that blocks the event loop cannot be cut short. So an answer is
also checked against the clock once it comes: one that comes after the deadline (from an
awaitable that blocked the loop past it, or that caught the timeout's cancellation and went
on) is no answer, and raises TimeoutError as a timeout does. A late answer is never obeyed.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Coroutine, Generator
from types import CoroutineType
from typing import Any, TypeVar

T = TypeVar("T")


class _Started:
    """The rest of a coroutine whose first step has run and waits on `pending`: awaiting this
    goes on where it stopped (what `yield from` does: sends, throws and closes passed on)."""

    __slots__ = ("coro", "pending")

    def __init__(self, coro: Coroutine[Any, Any, Any], pending: Any) -> None:
        self.coro = coro
        self.pending = pending

    def __await__(self) -> Generator[Any, Any, Any]:
        coro, pending = self.coro, self.pending
        self.pending = None  # the task holds it now; this object keeps no future alive
        while True:
            try:
                sent = yield pending
            except GeneratorExit:
                coro.close()
                raise
            except BaseException as exc:  # a cancellation (the timeout's among them), passed on
                try:
                    pending = coro.throw(exc)
                except StopIteration as stop:
                    return stop.value
            else:
                try:
                    pending = coro.send(sent)
                except StopIteration as stop:
                    return stop.value


if sys.version_info >= (3, 11):

    async def bounded(awaitable: Awaitable[T], timeout: float) -> T:
        """`awaitable`'s answer within `timeout` seconds, else TimeoutError."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        if type(awaitable) is not CoroutineType:  # a future, or any other awaitable
            async with asyncio.timeout_at(deadline):
                answer: T = await awaitable
        else:
            coro: Coroutine[Any, Any, T] = awaitable  # type: ignore[assignment]
            try:
                pending = coro.send(None)  # its first step, in this task, as `await` runs it
            except StopIteration as stop:  # answered without waiting: no timer could fire
                answer = stop.value
            else:
                async with asyncio.timeout_at(deadline):
                    answer = await _Started(coro, pending)
        if loop.time() > deadline:  # it blocked the loop past the deadline, or ignored it
            raise TimeoutError
        return answer

else:  # pragma: no cover - Python 3.10

    async def bounded(awaitable: Awaitable[T], timeout: float) -> T:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        answer = await asyncio.wait_for(awaitable, timeout)
        if loop.time() > deadline:  # as above: a late answer is no answer
            raise asyncio.TimeoutError
        return answer
