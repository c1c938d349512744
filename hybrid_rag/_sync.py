"""Run the async core from sync code, including inside a running event loop (Jupyter)."""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Awaitable, Callable
from typing import TypeVar

__all__ = ["run_sync"]

T = TypeVar("T")


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
