"""Run the async core from sync code, including inside a running event loop (Jupyter)."""

from __future__ import annotations

import asyncio
import concurrent.futures
import queue
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import TypeVar

__all__ = ["iterate_sync", "run_sync"]

T = TypeVar("T")
_END = object()


def run_sync(fn: Callable[[], Awaitable[T]]) -> T:
    """Run ``fn()`` to completion and return its result.

    Without a running loop this is ``asyncio.run``. Inside one (a notebook cell, an async
    web handler calling sync code) the coroutine runs on a fresh loop in a worker thread,
    so the caller's loop is never re-entered or blocked by nested ``run`` calls.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(_call(fn))
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(lambda: asyncio.run(_call(fn))).result()


async def _call(fn: Callable[[], Awaitable[T]]) -> T:
    return await fn()


def iterate_sync(make: Callable[[], AsyncIterator[T]]) -> Iterator[T]:
    """Iterate the async iterator ``make()`` from sync code, each item as soon as it exists.

    The iterator runs on its own event loop in a worker thread (so this works inside a
    running loop too) and hands items over through a queue. An exception it raises is
    raised here; a consumer that stops early lets it finish and waits for it (the
    thread never outlives the iteration).
    """
    items: queue.Queue[tuple[bool, object]] = queue.Queue()
    stop = threading.Event()

    async def pump() -> None:
        it = make()
        try:
            async for item in it:
                items.put((True, item))
                if stop.is_set():
                    break
        finally:
            close = getattr(it, "aclose", None)
            if close is not None:
                await close()

    def work() -> None:
        try:
            asyncio.run(pump())
            items.put((True, _END))
        except BaseException as exc:  # handed to the consumer, raised there
            items.put((False, exc))

    thread = threading.Thread(target=work, name="hybrid-rag-stream", daemon=True)
    thread.start()
    try:
        while True:
            ok, item = items.get()
            if not ok:
                raise item  # type: ignore[misc]
            if item is _END:
                return
            yield item  # type: ignore[misc]
    finally:
        stop.set()
        thread.join()
