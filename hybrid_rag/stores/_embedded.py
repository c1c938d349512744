"""The embedded stores under one ``HybridRAG(path)`` folder: opened once per process, checked.

Layout: ``graph/`` (Oxigraph), ``vectors/`` (``LocalVectorStore``), ``catalog.sqlite``,
``journal/`` (writes in progress and the catalog's generation) and ``store.json`` (the
embedder that built the store).

* **Shared in a process.** Every ``HybridRAG`` on the same folder in one process uses
  the same ``StoreSet`` (``acquire``/``release``, counted), so re-running
  ``rag = HybridRAG(path)`` in a notebook just works, and two instances never keep
  caches that disagree. Another process gets ``StoreLockedError`` naming the holder.
* **Checked before use.** Before the first flow, ``check_layout`` refuses a store whose
  catalog, graph or vector folder is missing or empty while the others hold data, and
  ``check_consistency`` (after recovery) refuses one whose catalog is older than the
  stores, does not list what they hold, or lists documents they lack. Each is a
  ``DamagedStoreError`` naming the file and the repair (``hybrid-rag repair``), raised
  before anything is read for an answer or deleted: never an empty store that answers.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hybrid_rag._store_meta import STORE_META
from hybrid_rag.errors import StoreError
from hybrid_rag.stores._damage import damaged
from hybrid_rag.stores._journal import Journal
from hybrid_rag.stores.catalog import SqliteCatalog
from hybrid_rag.stores.local_vectors import CHUNKS_FILE, LocalVectorStore
from hybrid_rag.stores.oxigraph import OxigraphGraphStore

__all__ = [
    "CATALOG",
    "GRAPH",
    "JOURNAL",
    "VECTORS",
    "StoreSet",
    "acquire",
    "rebuild_hint",
    "release",
]

GRAPH, VECTORS, CATALOG, JOURNAL = "graph", "vectors", "catalog.sqlite", "journal"
_SHOWN = 5


def rebuild_hint(root: Path) -> str:
    """How to rebuild a lost or older catalog."""
    return (
        f"run `hybrid-rag repair --store {root}`: it rebuilds the catalog from the graph "
        "and the chunks (nothing is deleted)"
    )


def _restore_hint(root: Path) -> str:
    return (
        "restore it from a backup, or ingest the documents again into a new store "
        f"(`hybrid-rag docs --store {root}` lists their sources)"
    )


@dataclass(eq=False)
class StoreSet:
    """The graph, vectors, catalog and journal under ``path`` (see the module docstring).

    Attributes:
        shared: objects the facade keeps per store set (per-id locks, caches).
        ready: layout and consistency checked and recovery done (by any user).
    """

    path: Path
    journal: Journal = field(init=False)
    graph: OxigraphGraphStore = field(init=False)
    vectors: LocalVectorStore = field(init=False)
    catalog: SqliteCatalog = field(init=False)
    shared: dict[str, Any] = field(default_factory=dict)
    ready: bool = False
    users: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self.journal = Journal(self.path / JOURNAL)
        self._make_stores()

    def _make_stores(self) -> None:
        self.graph = OxigraphGraphStore(self.path / GRAPH)
        self.vectors = LocalVectorStore(self.path / VECTORS)
        self.catalog = SqliteCatalog(self.path / CATALOG, on_write=self.journal.record_generation)

    def reset(self) -> None:
        """Close the stores (their OS locks go) and start again with unopened ones."""
        try:
            self.close()
        finally:
            self._make_stores()
            self.ready = False

    def close(self) -> None:
        """Close the three stores (each one, even when another fails); idempotent.

        Raises:
            StoreError: the first store that could not persist what it held (on a full
                disk: ``DiskFullError``); what was committed before is kept.
        """
        failed: list[StoreError] = []
        for store in (self.graph, self.vectors, self.catalog):
            try:
                store.close()
            except StoreError as exc:
                failed.append(exc)
        if failed:
            raise failed[0]

    def open_all(self) -> None:
        """Open every store (each takes its OS lock: ``StoreLockedError`` at once)."""
        self.catalog.generation()
        self.graph.doc_ids()
        self.vectors.doc_ids()

    # -- checks -----------------------------------------------------------------------

    def written(self) -> bool:
        """Whether anything was ever stored here (else a new store: nothing to check)."""
        p = self.path
        return (
            (p / STORE_META).is_file()
            or self.journal.generation() > 0
            or _size(p / CATALOG) > 0
            or _size(p / VECTORS / CHUNKS_FILE) > 0
            or _non_empty(p / GRAPH)
        )

    def check_layout(self) -> None:
        """Refuse a store whose catalog, graph or vector folder is gone (before opening).

        Raises:
            DamagedStoreError: naming the missing or empty part and the repair.
        """
        if not self.written():
            return
        root, catalog = self.path, self.path / CATALOG
        if not catalog.exists():
            raise damaged("the catalog file is missing", catalog, how=rebuild_hint(root))
        if _size(catalog) == 0:
            raise damaged("the catalog file is empty (0 bytes)", catalog, how=rebuild_hint(root))
        for name in (GRAPH, VECTORS):
            if not (root / name).is_dir():
                raise damaged(f"the {name} folder is missing", root / name, how=_restore_hint(root))

    def check_consistency(self) -> None:
        """Refuse a catalog that is older than the stores or disagrees with them.

        Raises:
            DamagedStoreError: naming the file to repair (the catalog, the graph folder or
                the vector folder) and the documents concerned.
        """
        root, catalog = self.path, self.path / CATALOG
        entries = {d.doc_id: d for d in self.catalog.list()}
        have, recorded = self.catalog.generation(), self.journal.generation()
        if have < recorded:
            raise damaged(
                f"the catalog is older than the stores: it records {have} writes, the "
                f"stores {recorded} (restored from an older copy?)",
                catalog,
                how=rebuild_hint(root),
            )
        graphs, counts = set(self.graph.doc_ids()), self.vectors.chunk_counts()
        stray = sorted((graphs | counts.keys()) - entries.keys())
        if stray:
            raise damaged(
                f"the catalog does not list {_ids(stray)} that the stores hold: it is older "
                "than the stores or was replaced",
                catalog,
                how=rebuild_hint(root),
            )
        _check_part(
            [d for d, i in entries.items() if i.triples and d not in graphs],
            len([i for i in entries.values() if i.triples]),
            "graph store",
            root / GRAPH,
        )
        _check_part(
            [d for d, i in entries.items() if i.chunks and d not in counts],
            len([i for i in entries.values() if i.chunks]),
            "vector store",
            root / VECTORS,
        )
        wrong = sorted(d for d, i in entries.items() if d in counts and counts[d] != i.chunks)
        if wrong:
            raise damaged(
                f"the catalog and the vector store disagree on the chunks of {_ids(wrong)}",
                catalog,
                how=rebuild_hint(root),
            )


def _check_part(missing: list[str], expected: int, what: str, path: Path) -> None:
    if not missing:
        return
    problem = (
        f"the {what} holds none of the {expected} catalogued documents (it was deleted, "
        "emptied or replaced)"
        if len(missing) == expected
        else f"the {what} lacks {_ids(sorted(missing))} that the catalog lists"
    )
    raise damaged(problem, path, how=_restore_hint(path.parent))


def _ids(ids: list[str]) -> str:
    shown = ", ".join(repr(i) for i in ids[:_SHOWN])
    more = f" and {len(ids) - _SHOWN} more" if len(ids) > _SHOWN else ""
    return f"{len(ids)} document(s) ({shown}{more})"


def _size(path: Path) -> int:
    try:
        return path.stat().st_size if path.is_file() else 0
    except OSError:
        return 0


def _non_empty(folder: Path) -> bool:
    try:
        return folder.is_dir() and any(f.name != "LOCK" for f in folder.iterdir())
    except OSError:
        return False


_REGISTRY: dict[Path, StoreSet] = {}
_REGISTRY_LOCK = threading.Lock()


def acquire(path: Path) -> StoreSet:
    """The process's ``StoreSet`` for ``path`` (made on first use; counted)."""
    key = path.expanduser().resolve()
    with _REGISTRY_LOCK:
        stores = _REGISTRY.get(key)
        if stores is None:
            stores = _REGISTRY[key] = StoreSet(key)
        stores.users += 1
        return stores


def release(stores: StoreSet) -> None:
    """One user less; the last one closes the stores."""
    with _REGISTRY_LOCK:
        stores.users -= 1
        if stores.users > 0:
            return
        if _REGISTRY.get(stores.path) is stores:
            del _REGISTRY[stores.path]
    stores.close()
