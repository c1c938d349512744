"""Repair a ``HybridRAG(path)`` store: rebuild what can be derived, keep everything else.

``repair_store(path)`` (and ``hybrid-rag repair --store PATH``) is the way out of every
``DamagedStoreError`` whose hint names it:

* **the catalog** (missing, empty, damaged, older than the stores, or disagreeing with
  them) is rebuilt from the graph and the chunks: one entry per document the stores
  hold, with its chunk, page and triple counts, its title and aliases from the graph,
  and from the old catalog (when it can still be read) its source, its dates and, when
  the entry still matches the stores, its content hash. A damaged catalog file is
  moved aside, never deleted;
* **vectors** whose bytes no longer match their checksum, or a missing or truncated
  ``vectors.f32``, are embedded again from their chunks' text with the store's embedder;
* **unfinished writes** the journal records are undone (their backups restored); an
  unreadable record is moved aside;
* ``store.json`` is written again when it is damaged and ``embedder`` is given.

What cannot be derived is never invented: a damaged graph store or ``chunks.sqlite3``
is reported (restore it from a backup, or ingest the documents again), and a document
left with only part of its data is exported to ``repair-<time>/`` before it is taken
out, and listed in ``RepairReport.lost`` with its source, to ingest again.
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from hybrid_rag._store_meta import STORE_META, read_embedder, record_embedder
from hybrid_rag.errors import ConfigurationError, DamagedStoreError
from hybrid_rag.models import Chunk, DocumentInfo
from hybrid_rag.protocols import Embedder

__all__ = ["RepairReport", "repair_store"]

_LABEL = "http://www.w3.org/2000/01/rdf-schema#label"
_ALT = "http://www.w3.org/2004/02/skos/core#altLabel"
_REBUILT = "(entry rebuilt by hybrid-rag repair)"


@dataclass
class RepairReport:
    """What ``repair_store`` found and did.

    Attributes:
        path: the store folder.
        found: the problems found, in words.
        done: what was changed, in words.
        lost: documents whose data could not be recovered, with their source: ingest
            them again.
        kept: where files that were moved aside or exported lie.
        unrepaired: problems repair cannot fix (restore from a backup).
    """

    path: Path
    found: list[str] = field(default_factory=list)
    done: list[str] = field(default_factory=list)
    lost: list[str] = field(default_factory=list)
    kept: list[Path] = field(default_factory=list)
    unrepaired: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """The store can be opened again without ``DamagedStoreError``."""
        return not self.unrepaired


def repair_store(
    path: str | os.PathLike[str],
    *,
    embedder: str | Embedder | None = None,
) -> RepairReport:
    """Check the store at ``path`` and repair what can be repaired (see the module docstring).

    Args:
        path: the ``HybridRAG(path)`` folder.
        embedder: the store's embedder (default: the one ``store.json`` records); needed
            to embed damaged vectors again, and to write a lost ``store.json``.

    Returns:
        The ``RepairReport``; ``report.ok`` when the store opens cleanly now.

    Raises:
        StoreLockedError: another process (or a ``HybridRAG`` of this one) holds the
            store: close it first.
        ConfigurationError: no embedder is known and one is needed.
    """
    from hybrid_rag.stores._embedded import _REGISTRY

    root = Path(path).expanduser().resolve()
    if not root.is_dir():
        raise ConfigurationError(f"no store at {root}")
    if root in _REGISTRY:
        raise ConfigurationError(f"a HybridRAG of this process has {root} open: close it first")
    return _Repair(root, embedder).run()


class _Repair:
    def __init__(self, root: Path, embedder: str | Embedder | None) -> None:
        from hybrid_rag.stores._embedded import CATALOG, GRAPH, JOURNAL, VECTORS
        from hybrid_rag.stores._journal import Journal

        self.root, self.spec = root, embedder
        self.report = RepairReport(root)
        self.aside = root / f"repair-{datetime.now(UTC):%Y%m%dT%H%M%SZ}"
        self.journal = Journal(root / JOURNAL)
        self.paths = {"graph": root / GRAPH, "vectors": root / VECTORS, "catalog": root / CATALOG}
        self._embedder: Embedder | None = None
        self.fresh_catalog = False

    # -- the steps --------------------------------------------------------------------

    def run(self) -> RepairReport:
        from hybrid_rag.stores.catalog import SqliteCatalog
        from hybrid_rag.stores.local_vectors import LocalVectorStore
        from hybrid_rag.stores.oxigraph import OxigraphGraphStore

        self._settings()
        self._generation()
        graph = OxigraphGraphStore(self.paths["graph"], mirror=False)
        vectors = LocalVectorStore(self.paths["vectors"], on_damage="record")
        catalog, self.fresh_catalog = self._catalog(SqliteCatalog)
        try:
            graph_ok = self._exists("graph") and self._opens(
                "graph store", graph.doc_ids, self.paths["graph"]
            )
            vectors_ok = self._exists("vectors") and self._opens(
                "vector store", vectors.doc_ids, self.paths["vectors"]
            )
            self._journal_records(graph_ok and vectors_ok, graph, vectors, catalog)
            if vectors_ok:
                self._reembed(vectors)
            if graph_ok and vectors_ok:
                self._reconcile(graph, vectors, catalog)
                self.journal.reset_generation(catalog.generation())
        finally:
            for store in (graph, vectors, catalog):
                store.close()
        if not self.report.found:
            self.report.done.append("nothing to repair: every file is whole and consistent")
        return self.report

    def _settings(self) -> None:
        """``store.json``: readable, or written again with the embedder given."""
        try:
            recorded = read_embedder(self.root)
        except DamagedStoreError as exc:
            self.report.found.append(exc.problem)
            self._move_aside(self.root / STORE_META)
            recorded = None
        if recorded is None and self.spec is not None and self._written():
            emb = self.embedder()
            record_embedder(self.root, name=emb.name, dim=emb.dim)
            self.report.done.append(f"recorded the embedder {emb.name!r} in {STORE_META}")

    def _written(self) -> bool:
        return any(p.exists() for p in self.paths.values())

    def _exists(self, part: str) -> bool:
        """A missing store folder is not made anew (that would pass for an empty store)."""
        if self.paths[part].is_dir():
            return True
        if self._written():
            self.report.found.append(f"the {part} folder is missing")
            self.report.unrepaired.append(
                f"the {part} folder {self.paths[part]}: restore it from a backup, or ingest "
                "the documents again into a new store"
            )
        return False

    def _generation(self) -> None:
        """An unreadable generation record is moved aside (the catalog's is the truth)."""
        try:
            self.journal.generation()
        except DamagedStoreError as exc:
            self.report.found.append(exc.problem)
            self._move_aside(Path(exc.path), under="journal")

    def embedder(self) -> Embedder:
        """The store's embedder (the one given, else the one ``store.json`` records)."""
        if self._embedder is None:
            from hybrid_rag.providers import resolve_embedder

            spec = self.spec if self.spec is not None else read_embedder(self.root)
            if spec is None:
                raise ConfigurationError(
                    f"the embedder of {self.root} is not recorded: give it "
                    "(`hybrid-rag repair --embedder NAME`)"
                )
            if self.spec is None and isinstance(spec, str) and not spec.startswith("hashing"):
                spec = "local"  # a recorded sentence-transformers model (as HybridRAG does)
            self._embedder = resolve_embedder(spec)
        return self._embedder

    def _catalog(self, make: Any) -> tuple[Any, bool]:
        """The catalog and whether it is new (the damaged file moved aside)."""
        file = self.paths["catalog"]
        if not file.exists():
            if self._written():
                self.report.found.append("the catalog file is missing")
            return make(file, on_write=self.journal.record_generation), True
        catalog = make(file, on_write=self.journal.record_generation)
        try:
            if file.stat().st_size == 0:
                raise DamagedStoreError("the catalog file is empty (0 bytes)", path=str(file),
                                        repair="")  # fmt: skip
            catalog.list()
            return catalog, False
        except DamagedStoreError as exc:
            catalog.close()
            self.report.found.append(exc.problem)
            for suffix in ("", "-wal", "-shm"):
                self._move_aside(file.with_name(file.name + suffix))
            self.report.done.append("started a new catalog (rebuilt below)")
            return make(file, on_write=self.journal.record_generation), True

    def _opens(self, what: str, call: Any, path: Path) -> bool:
        try:
            call()
            return True
        except DamagedStoreError as exc:
            self.report.found.append(exc.problem)
            self.report.unrepaired.append(f"the {what} at {path}: {exc.repair}")
            return False

    def _journal_records(self, usable: bool, graph: Any, vectors: Any, catalog: Any) -> None:
        """Unreadable records moved aside; readable ones settled (their backups restored)."""
        folder = self.journal.folder
        assert folder is not None
        for file in sorted(folder.glob("*.intent.json")) if folder.is_dir() else []:
            try:
                intent = self.journal.read(file)
                self.journal.backup(intent)  # readable too
            except DamagedStoreError as exc:
                self.report.found.append(exc.problem)
                key = file.name.split(".")[0]
                for part in folder.glob(f"{key}.*"):
                    self._move_aside(part, under="journal")
                continue
            if usable:
                self._settle(intent, graph, vectors, catalog)
        for left in self.journal.leftovers():
            left.unlink(missing_ok=True)

    def _settle(self, intent: Any, graph: Any, vectors: Any, catalog: Any) -> None:
        import anyio

        from hybrid_rag._workers import Workers
        from hybrid_rag.ingest._writes import StoreWriter

        writer = StoreWriter(
            graph=graph,
            vectors=vectors,
            catalog=catalog,
            embedder=_LazyEmbedder(self),
            journal=self.journal,
            workers=Workers(1),
        )
        anyio.run(writer.settle, intent.doc_id)
        self.report.found.append(f"an unfinished {intent.op} of {intent.doc_id!r}")
        what = "finished" if intent.op == "forget" else "undone (its previous version restored)"
        self.report.done.append(f"the {intent.op} of {intent.doc_id!r} was {what}")

    def _reembed(self, vectors: Any) -> None:
        """Embed again the chunks whose vectors are damaged or missing."""
        docs = vectors.damaged_documents()
        for note in vectors.notes:
            self.report.found.append(note.split(":")[0])
            self.report.done.append(note.split(": ", 1)[-1])
        if not docs:
            return
        import anyio

        self.report.found.append(f"damaged or missing vectors of {len(docs)} document(s)")
        emb = self.embedder()
        for doc in docs:
            chunks, _ = vectors.export(doc)
            vecs = anyio.run(emb.embed_documents, [c.text for c in chunks])
            vectors.replace(doc, chunks, vecs)
        self.report.done.append(f"embedded again the chunks of {', '.join(docs)}")

    def _reconcile(self, graph: Any, vectors: Any, catalog: Any) -> None:
        """Catalog entries for exactly the documents the stores hold whole."""
        entries = {d.doc_id: d for d in catalog.list()}
        older = catalog.generation() < self.journal.generation()
        if older and not self.fresh_catalog:
            self.report.found.append("the catalog is older than the stores")
        graphs, counts = set(graph.doc_ids()), vectors.chunk_counts()
        if not self._whole(entries, graphs, counts):
            return
        for doc in sorted(graphs | counts.keys() | entries.keys()):
            entry = entries.get(doc)
            if doc not in counts:  # no chunks: the document cannot be served
                self._take_out(doc, entry, graph, vectors, catalog, why="its chunks are gone")
            elif entry is not None and entry.triples and doc not in graphs:
                self._take_out(doc, entry, graph, vectors, catalog, why="its graph is gone")
            elif entry is None or older or entry.chunks != counts[doc]:
                keep_hash = entry is not None and not older and entry.chunks == counts[doc]
                catalog.put(self._rebuilt(doc, entry, graph, vectors, keep_hash=keep_hash))
                state = "missing" if entry is None else "out of date"
                self.report.found.append(f"the catalog entry of {doc!r} is {state}")
                self.report.done.append(f"rebuilt the catalog entry of {doc!r}")

    def _whole(
        self, entries: dict[str, DocumentInfo], graphs: set[str], counts: dict[str, int]
    ) -> bool:
        """A store that lost *every* document is not repaired document by document: it is
        the wrong folder, or needs its backup; nothing is taken out."""
        for what, held, needed in (
            ("graph", graphs, [d for d, i in entries.items() if i.triples]),
            ("vectors", set(counts), [d for d, i in entries.items() if i.chunks]),
        ):
            if needed and not held & set(needed):
                self.report.found.append(f"the {what} store holds none of the documents")
                self.report.unrepaired.append(
                    f"the {what} store {self.paths[what]} holds none of the {len(needed)} "
                    "catalogued documents: restore it from a backup, or ingest the documents "
                    "again into a new store"
                )
                return False
        return True

    def _rebuilt(
        self, doc: str, old: DocumentInfo | None, graph: Any, vectors: Any, *, keep_hash: bool
    ) -> DocumentInfo:
        from hybrid_rag._vocab import DATA
        from hybrid_rag.ingest._writes import graph_triples
        from hybrid_rag.ingest.triples import doc_local_name, subject_iri

        chunks: list[Chunk] = vectors.chunks(doc)
        triples = graph_triples(graph, doc)
        # stores written before the subject rename (issue 16) end it in "-product"
        subjects = {subject_iri(doc), DATA + doc_local_name(doc) + "-product"}
        mine = [t for t in triples if t[0].value in subjects]
        labels = [o.value for s, p, o in mine if p.value == _LABEL]
        now = datetime.now(UTC)
        return DocumentInfo(
            doc_id=doc,
            source=old.source if old else _REBUILT,
            content_hash=old.content_hash if (old and keep_hash) else "",
            pages=max((c.page for c in chunks), default=0),
            chunks=len(chunks),
            triples=len(set(triples)),
            title=labels[0] if labels else (old.title if old else None),
            aliases=[o.value for s, p, o in mine if p.value == _ALT],
            created_at=old.created_at if old else now,
            updated_at=now,
        )

    def _take_out(
        self, doc: str, entry: DocumentInfo | None, graph: Any, vectors: Any, catalog: Any, *,
        why: str,
    ) -> None:  # fmt: skip
        """Export what is left of a document, then remove it from every store."""
        from hybrid_rag.ingest._writes import graph_triples

        self.aside.mkdir(parents=True, exist_ok=True)
        file = self.aside / f"{doc}.json"
        body = {
            "doc_id": doc,
            "why": why,
            "catalog_entry": None if entry is None else entry.model_dump(mode="json"),
            "triples": [[t.n3() for t in triple] for triple in graph_triples(graph, doc)],
            "chunks": [c.model_dump(mode="json") for c in vectors.chunks(doc)],
        }
        file.write_text(json.dumps(body, ensure_ascii=True, indent=1), encoding="ascii")
        catalog.delete(doc)
        graph.delete(doc)
        vectors.delete(doc)
        source = entry.source if entry else "source unknown"
        self.report.found.append(f"{doc!r} is incomplete: {why}")
        self.report.lost.append(f"{doc} ({source})")
        self.report.kept.append(file)
        self.report.done.append(f"took {doc!r} out (what was left of it is in {file})")

    def _move_aside(self, file: Path, *, under: str = "") -> None:
        if not file.exists():
            return
        target = self.aside / under / file.name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(str(file), str(target))
        self.report.kept.append(target)
        self.report.done.append(f"moved {file.name} aside to {target}")


class _LazyEmbedder:
    """The repair's embedder, resolved only if a restore needs to embed."""

    def __init__(self, repair: _Repair) -> None:
        self._repair = repair

    @property
    def name(self) -> str:
        return self._repair.embedder().name

    @property
    def dim(self) -> int:
        return self._repair.embedder().dim

    async def embed_documents(self, texts: Any) -> Any:
        return await self._repair.embedder().embed_documents(texts)

    async def embed_query(self, text: str) -> Any:
        return await self._repair.embedder().embed_query(text)
