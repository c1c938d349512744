"""One writer per embedded store: an exclusive OS file lock taken when the store opens.

The lock is ``filelock.FileLock`` (``flock`` on POSIX, ``msvcrt.locking`` on Windows),
chosen over ``fcntl`` for Windows notebooks and over ``portalocker`` because it is the
lock the Python packaging and Hugging Face stacks already install. An OS lock dies with
its process, so a ``kill -9`` never leaves a stale lock behind.

The lock is per *handle*, not per process: a second store object on the same files is
refused like another process, because two handles would each keep their own caches
(vector slots, graph list) and overwrite each other's writes (``HybridRAG`` objects on
one path share their store handles, see ``hybrid_rag.stores._embedded``). Who holds
the lock (pid, host, since when, its command line and, for a service, where it
answers) is written next to it in ``<name>.lock.json`` so the error can say exactly what
holds the store and what to do; that file is only a message, the OS lock is the truth.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import sys
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from hybrid_rag.errors import StoreError, StoreLockedError

__all__ = ["StoreLock", "describe_holder"]

_NOTE: dict[str, str] = {}


def describe_holder(note: str | None) -> None:
    """Say what this process is, for the lock messages other processes get (``None``: clear).

    ``hybrid-rag serve`` sets ``"the hybrid-rag service at http://HOST:PORT"``, so a CLI
    ``ask`` on the same store is told to ask the service instead.
    """
    if note:
        _NOTE["note"] = note
    else:
        _NOTE.pop("note", None)


class StoreLock:
    """An exclusive, non-blocking lock on one embedded store.

    Args:
        target: The store's file or folder; the lock is ``<target>.lock`` beside it.
        what: Names the store in messages (``"vector store"``).

    The constructor does no I/O. ``acquire`` raises at once when another handle
    holds the lock; ``release`` is idempotent. Thread-safe, and the thread that
    releases need not be the one that acquired (stores open and close in worker threads).
    """

    def __init__(self, target: Path, *, what: str) -> None:
        self.path = target.with_name(target.name + ".lock")
        self._info = target.with_name(target.name + ".lock.json")
        self._what, self._target = what, target
        self._mutex = threading.Lock()
        self._held: Any = None

    def __repr__(self) -> str:
        return f"StoreLock({str(self.path)!r}, held={self._held is not None})"

    def acquire(self) -> None:
        """Take the lock for this handle, or raise at once.

        Raises:
            StoreLockedError: Another handle (this process or another) holds it; the
                message names the holder's pid, host and start time.
            StoreError: The lock file cannot be created (permissions, missing folder).
        """
        with self._mutex:
            if self._held is not None:
                return
            from filelock import Timeout

            lock = _file_lock(self.path)
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                lock.acquire(blocking=False)
            except Timeout:  # a TimeoutError, so before OSError
                raise self._locked_error() from None
            except OSError as exc:
                raise StoreError(f"cannot lock {self._what} at {self.path}: {exc}") from exc
            self._held = lock
            self._write_info()

    def release(self) -> None:
        """Give the lock back; idempotent."""
        with self._mutex:
            lock, self._held = self._held, None
        if lock is None:
            return
        with contextlib.suppress(OSError):  # only a message; the OS lock is what counts
            self._info.unlink(missing_ok=True)
        lock.release(force=True)

    @property
    def held(self) -> bool:
        """Whether this handle holds the lock."""
        return self._held is not None

    def _write_info(self) -> None:
        info = {
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "since": datetime.now(UTC).isoformat(timespec="seconds"),
            "command": " ".join([os.path.basename(sys.argv[0] or "python"), *sys.argv[1:]])[:300],
            "note": _NOTE.get("note"),
        }
        with contextlib.suppress(OSError):  # the lock holds without its description
            self._info.write_text(json.dumps(info), encoding="utf-8")

    def _locked_error(self) -> StoreLockedError:
        try:
            info = json.loads(self._info.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            info = {}
        holder = info if isinstance(info, dict) else {}
        pid, host, since = holder.get("pid"), holder.get("host"), holder.get("since")
        command, note = holder.get("command"), holder.get("note")
        who = f"pid {pid} on {host} since {since}" if pid else "another handle (holder unknown)"
        what = "; ".join(str(x) for x in (command, note) if x)
        same = pid == os.getpid() and host == socket.gethostname()
        if same:
            todo = "this process holds it in another store object: close that one first"
        elif note:
            todo = f"use {note} (it answers while it holds the store), or stop it first"
        else:
            todo = "a store has one writer at a time: stop that process (or close its " \
                "HybridRAG) first, or wait until it is done"  # fmt: skip
        return StoreLockedError(
            f"{self._what} at {self._target} is in use by {who}"
            f"{f' ({what})' if what else ''}; {todo}",
            path=str(self.path),
            pid=pid if isinstance(pid, int) else None,
            host=host if isinstance(host, str) else None,
            since=since if isinstance(since, str) else None,
            holder=what or None,
        )


def _file_lock(path: Path) -> Any:
    from filelock import FileLock

    return FileLock(str(path), thread_local=False)
