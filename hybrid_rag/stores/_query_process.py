"""Killable worker processes for SPARQL queries whose cost nobody vouches for.

Oxigraph cannot interrupt a query: a thread that runs one runs until the engine is done,
which for a valid, read-only but expensive query (a join that matches nothing, hours of
work) is never. An LLM-written query therefore runs in a child process that holds an
in-memory copy of the scoped graphs; when its time is up the child is killed (its CPU
and memory are freed at once) and the next query starts a fresh one.

Cost, measured on the 2-core development VM: the first query of a child pays its start
(0.2-0.5 s: Python, pyoxigraph and the library's light base import), every query on a
scope the child does not hold yet pays for copying the scope's quads (about 5 us per
quad: three sample sheets, 1,100 quads, take milliseconds; 200,000 quads about 1 s),
and a query on a scope it holds costs about 2 ms more than in-process (the pipe and
pickling). The copy is reused while the store has not been written and the scope is
the same. Children live until they are killed at a deadline or the store closes.

The child speaks a tiny protocol on its stdin/stdout: length-prefixed pickles of
``("load", key, nquads)``, ``("query", key, sparql, max_rows)`` and ``("ping",)``.
Only this module's parent writes to it, so unpickling is safe.
"""

from __future__ import annotations

import contextlib
import logging
import os
import pickle
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Hashable
from pathlib import Path
from typing import IO, Any

from hybrid_rag.errors import QueryTimeoutError, StoreError
from hybrid_rag.rdf import SparqlResult, Term

__all__ = ["QueryProcesses"]

log = logging.getLogger("hybrid_rag")

_HEADER = struct.Struct("!Q")
_RowTuple = tuple[tuple[str, str, str | None, str | None] | None, ...]


class QueryProcesses:
    """A small pool of child processes that run queries and are killed at their deadline.

    Args:
        max_processes: children alive at once (each serves one query at a time); a query
            that finds all busy waits for one, within its own deadline.
    """

    def __init__(self, max_processes: int = 2) -> None:
        self._max = max_processes
        self._cond = threading.Condition()
        self._idle: list[_Child] = []
        self._alive = 0
        self._closed = False
        self.killed = 0
        """Children killed at a deadline so far (for tests and metrics)."""

    def run(
        self,
        sparql: str,
        *,
        key: Hashable | None,
        quads: Callable[[], bytes],
        timeout: float,
        max_rows: int,
    ) -> SparqlResult:
        """Run ``sparql`` over the dataset ``quads()`` returns, in a child process.

        Args:
            sparql: a validated read-only query; it runs on the union of the copied graphs.
            key: names the dataset (scope and store generation); a child that holds the
                same key reuses its copy. ``None``: always copy.
            quads: the scope's quads as N-Quads bytes (called only when a copy is needed).
            timeout: seconds the query may take, copying included.
            max_rows: rows read from the engine at most.

        Raises:
            QueryTimeoutError: the time ran out; the child was killed.
            StoreError: the engine failed, or no child process could be started.
        """
        deadline = time.monotonic() + max(timeout, 0.0)
        child = self._take(deadline)
        ok = False
        try:
            if key is None or child.key != key:
                child.key = None
                child.call(("load", key, quads()), deadline)
                child.key = key
            reply = child.call(("query", sparql, max_rows), deadline)
            ok = True
        except QueryTimeoutError:
            self.killed += 1
            log.info("query stopped at its deadline (%.1f s); its process was killed", timeout)
            raise
        finally:
            self._give_back(child, ok=ok)
        return _result(reply)

    def close(self) -> None:
        """Stop every idle child; busy ones are stopped when their query returns."""
        with self._cond:
            self._closed = True
            idle, self._idle = self._idle, []
            self._alive -= len(idle)
            self._cond.notify_all()
        for child in idle:
            child.kill()

    def _take(self, deadline: float) -> _Child:
        with self._cond:
            while True:
                if self._closed:
                    raise StoreError("the query processes are closed")
                if self._idle:
                    return self._idle.pop()
                if self._alive < self._max:
                    self._alive += 1
                    break
                left = deadline - time.monotonic()
                if left <= 0:
                    raise QueryTimeoutError("no query process became free in time")
                self._cond.wait(left)
        try:
            return _Child.start()
        except BaseException:
            with self._cond:
                self._alive -= 1
                self._cond.notify()
            raise

    def _give_back(self, child: _Child, *, ok: bool) -> None:
        with self._cond:
            if ok and child.running() and not self._closed:
                self._idle.append(child)
                self._cond.notify()
                return
            self._alive -= 1
            self._cond.notify()
        child.kill()


class _Child:
    """One child process and the key of the dataset it holds."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        self.proc = proc
        self.key: Hashable | None = None

    @classmethod
    def start(cls) -> _Child:
        cmd = [sys.executable, "-c", "from hybrid_rag.stores._query_process import main; main()"]
        here = str(Path(__file__).resolve().parents[2])  # the child imports this library
        path = os.pathsep.join(p for p in (here, os.environ.get("PYTHONPATH")) if p)
        env = {**os.environ, "PYTHONPATH": path}
        try:
            proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
        except OSError as exc:
            raise StoreError(f"cannot start a query process ({sys.executable}): {exc}") from exc
        return cls(proc)

    def running(self) -> bool:
        return self.proc.poll() is None

    def call(self, message: tuple[Any, ...], deadline: float) -> Any:
        """Send ``message`` and wait for the reply until ``deadline`` (then kill)."""
        box: list[Any] = []
        done = threading.Event()

        def exchange() -> None:
            try:
                assert self.proc.stdin is not None and self.proc.stdout is not None
                _send(self.proc.stdin, message)
                box.append(_receive(self.proc.stdout))
            except (OSError, EOFError, pickle.UnpicklingError, ValueError) as exc:
                box.append(("error", f"query process failed: {exc}"))
            finally:
                done.set()

        worker = threading.Thread(target=exchange, name="hybrid-rag-query", daemon=True)
        worker.start()
        if not done.wait(max(deadline - time.monotonic(), 0.0)):
            self.kill()
            worker.join(5)
            raise QueryTimeoutError("the query ran out of time; its process was stopped")
        status, payload = box[0]
        if status != "ok":
            raise StoreError(str(payload))
        return payload

    def kill(self) -> None:
        with contextlib.suppress(OSError):
            self.proc.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(5)
        for pipe in (self.proc.stdin, self.proc.stdout):
            with contextlib.suppress(OSError):
                if pipe is not None:
                    pipe.close()


def _send(pipe: IO[bytes], message: object) -> None:
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    pipe.write(_HEADER.pack(len(data)) + data)
    pipe.flush()


def _receive(pipe: IO[bytes]) -> Any:
    head = pipe.read(_HEADER.size)
    if len(head) < _HEADER.size:
        raise EOFError("the query process ended")
    (size,) = _HEADER.unpack(head)
    data = pipe.read(size)
    if len(data) < size:
        raise EOFError("the query process ended mid-reply")
    return pickle.loads(data)  # our own child process wrote it


def _result(reply: tuple[Any, ...]) -> SparqlResult:
    kind = reply[0]
    if kind == "boolean":
        return SparqlResult(boolean=bool(reply[1]))
    names: tuple[str, ...] = reply[1]
    rows: list[_RowTuple] = reply[2]
    return SparqlResult(
        variables=names,
        rows=tuple(
            {
                n: Term(cell[0], cell[1], cell[2], cell[3])  # type: ignore[arg-type]
                for n, cell in zip(names, row, strict=True)
                if cell is not None
            }
            for row in rows
        ),
    )


# -- the child ----------------------------------------------------------------------------


def main() -> None:
    """The child's loop: load datasets and answer queries until stdin closes."""
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # nothing else may write to the reply pipe
    store: Any = None
    while True:
        try:
            message = _receive(stdin)
        except EOFError:
            return
        try:
            if message[0] == "load":
                store = _load(message[2])
                reply: tuple[str, Any] = ("ok", None)
            elif store is None:
                reply = ("error", "no dataset loaded")
            else:
                reply = ("ok", _query(store, message[1], message[2]))
        except (OSError, SyntaxError, ValueError, RuntimeError, TypeError) as exc:
            reply = ("error", f"SPARQL engine error: {exc}")
        _send(stdout, reply)


def _load(nquads: bytes) -> Any:
    from pyoxigraph import RdfFormat, Store

    store = Store()
    if nquads:
        store.bulk_load(nquads, format=RdfFormat.N_QUADS)
    return store


def _query(store: Any, sparql: str, max_rows: int) -> tuple[Any, ...]:
    from pyoxigraph import QueryBoolean, QuerySolutions

    result = store.query(sparql, use_default_graph_as_union=True)
    if isinstance(result, QueryBoolean):
        return ("boolean", bool(result))
    if not isinstance(result, QuerySolutions):
        raise ValueError("only SELECT and ASK results are supported")
    variables = result.variables
    names = tuple(v.value for v in variables)
    rows: list[_RowTuple] = []
    for solution in result:
        if len(rows) >= max_rows:  # the row cap holds while reading, not after
            break
        rows.append(tuple(_cell(solution[v]) for v in variables))
    return ("rows", names, rows)


def _cell(node: Any) -> tuple[str, str, str | None, str | None] | None:
    from hybrid_rag.stores._ox_terms import to_term

    if node is None:
        return None
    t = to_term(node)
    return (t.value, t.kind, t.datatype, t.lang)
