"""An in-memory copy of an on-disk pyoxigraph store, for queries over many graphs.

RocksDB lookups cost several times what in-memory ones do, so a query over every
document of a large on-disk store is slower per document than one over a few hundred
documents copied into memory. The mirror holds every quad of the store in an in-memory
``pyoxigraph.Store`` (about 400 MB per million triples); whole-store queries and the
scope copies read it instead of the disk, so their cost per document is the same at any
scope size.

* It is loaded in a background thread on first need; until it is ready, callers keep
  reading the disk (``Mirror.reader``).
* Every write is applied to it inside the writer's critical section (``Mirror.apply``),
  in one transaction, so readers see the old graph or the new one, as on disk.
* Graphs written while it loads are read again from the disk before it is published.
* A failure while loading or applying drops the mirror (logged); queries go back to the
  disk, never to a stale copy.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from pyoxigraph import Store

__all__ = ["Mirror"]

log = logging.getLogger("hybrid_rag")

_BATCH = 50_000  # quads per bulk insert while loading (and between stop checks)
_ERRORS = (OSError, SyntaxError, ValueError, RuntimeError, TypeError, MemoryError)
State = Literal["off", "loading", "ready", "failed"]


class Mirror:
    """The in-memory copy of one on-disk store; thread-safe. No I/O until ``reader``."""

    def __init__(self) -> None:
        self._lock = threading.Lock()  # orders loading's last step against writers
        self._store: Store | None = None  # set only when ready
        self._state: State = "off"
        self._dirty: set[str] = set()  # graphs written while loading
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._done = threading.Event()

    @property
    def state(self) -> State:
        """``off`` (never needed), ``loading``, ``ready`` or ``failed``."""
        return self._state

    def reader(self, db: Store) -> Store:
        """The mirror when it is ready, else ``db`` (and the load starts if it has not)."""
        store = self._store
        if store is not None:
            return store
        self._start(db)
        return db

    def wait(self, timeout: float | None = None) -> bool:
        """Block until a started load ends; whether the mirror is ready."""
        if self._state == "off":
            return False
        self._done.wait(timeout)
        return self._store is not None

    def apply(self, graph: str, change: Callable[[Store], object]) -> None:
        """Apply a write that succeeded on disk (call it inside the writer's section).

        ``change`` must be one transaction on the given store (an update text, ``extend``
        or ``remove_graph``), so that readers of the mirror never see half of it.
        """
        with self._lock:
            if self._state == "loading":
                self._dirty.add(graph)
            elif self._store is not None:
                try:
                    change(self._store)
                except _ERRORS as exc:
                    self._drop(f"cannot apply a write to {graph}: {exc}")

    def close(self) -> None:
        """Stop a load in progress (waits for its thread) and free the copy."""
        self._stop.set()
        thread = self._thread
        if thread is not None:
            thread.join()
        with self._lock:
            self._store = None
            self._state = "off"

    # -- loading -----------------------------------------------------------------------

    def _start(self, db: Store) -> None:
        with self._lock:
            if self._state != "off" or self._stop.is_set():
                return
            self._state = "loading"
            self._thread = threading.Thread(
                target=self._load, args=(db,), name="hybrid-rag-graph-mirror", daemon=True
            )
        self._thread.start()

    def _load(self, db: Store) -> None:
        from pyoxigraph import Store

        copy = Store()
        try:
            if not _copy_all(db, copy, self._stop):
                return
            with self._lock:  # writers wait here: nothing is written meanwhile
                _recopy(db, copy, sorted(self._dirty))
                self._dirty.clear()
                if not self._stop.is_set():
                    self._store, self._state = copy, "ready"
        except _ERRORS as exc:
            with self._lock:
                self._drop(f"cannot load: {exc}")
        finally:
            self._done.set()

    def _drop(self, why: str) -> None:
        """Give the mirror up (caller holds the lock); queries read the disk again."""
        log.warning("graph store mirror dropped, queries read the disk: %s", why)
        self._store, self._state = None, "failed"
        self._dirty.clear()


def _copy_all(db: Store, copy: Store, stop: threading.Event) -> bool:
    """Every quad of ``db`` into ``copy``; ``False`` when stopped first."""
    batch: list[Any] = []
    for quad in db.quads_for_pattern(None, None, None, None):
        batch.append(quad)
        if len(batch) >= _BATCH:
            if stop.is_set():
                return False
            copy.bulk_extend(batch)
            batch = []
    copy.bulk_extend(batch)
    return not stop.is_set()


def _recopy(db: Store, copy: Store, graphs: Iterable[str]) -> None:
    """Make each of ``graphs`` in ``copy`` equal to the disk's, one transaction each."""
    from pyoxigraph import NamedNode, RdfFormat, serialize

    for graph in graphs:
        node = NamedNode(graph)
        triples = (q.triple for q in db.quads_for_pattern(None, None, None, node))
        body = (serialize(triples, format=RdfFormat.N_TRIPLES) or b"").decode()
        insert = f"INSERT DATA {{ GRAPH <{graph}> {{\n{body}}} }}"
        copy.update(f"DROP SILENT GRAPH <{graph}> ;\n{insert}")
