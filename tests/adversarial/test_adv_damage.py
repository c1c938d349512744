"""Damaged store files: found and typed, never served, never a reason to delete data.

Issue 19's run: with ``catalog.sqlite`` deleted or emptied, the store opened with no
documents and the first ask deleted every graph and chunk as "orphans"; 6 of 22 damaged
files gave raw errors (``RuntimeError: Corruption``, ``IndexError``, ...); a deleted
graph folder was recreated empty and answered "not stated"; flipped bytes in the vector
file went unnoticed.

Each case here damages one file of a store holding the three sample sheets, then opens
it. The outcome must be one of:

* **healed**: the file held derived data (keyword or HNSW index, a lock note) and is
  rebuilt; documents and answers are exactly those of the undamaged store;
* **typed**: ``DamagedStoreError`` whose message names the damaged file and a repair,
  from ``documents()`` and from every ask mode, and every document's graph, chunks and
  catalog entry are still on disk (nothing was deleted). Then ``repair_store`` either
  brings back every document with the same answers (0 lost), or, where the damage hit
  data nothing else holds (the graph, the chunk records), says it cannot and leaves the
  store refusing to answer.

No case may raise anything but a ``HybridRAGError``.
"""

from __future__ import annotations

import shutil
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import pytest

from hybrid_rag import DamagedStoreError, HybridRAG, HybridRAGError
from hybrid_rag.repair import repair_store
from hybrid_rag.samples import sample_pdfs

QUESTIONS = ["What is the flash point of Examplon Solvent 99?"]
OTHER = "What is the pH of Samplex Acid Descaler 10?"  # about a document no case loses
MODES: list[Any] = ["hybrid", "kg", "vector"]
LOST = "examplon-solvent-99"
Outcome = Literal["healed", "repaired", "lost", "unrepairable"]


@dataclass
class Reference:
    """A clean store, a copy taken before its last document, and what it answers."""

    store: Path
    older: Path  # the store's catalog as it was before the third sheet
    docs: list[tuple[str, str]]
    answers: dict[tuple[str, str], str | None]
    other: str | None


def _answers(rag: HybridRAG) -> dict[tuple[str, str], str | None]:
    return {(q, m): rag.ask(q, mode=m).text for q in QUESTIONS for m in MODES}


@pytest.fixture(scope="module")
def ref(tmp_path_factory: pytest.TempPathFactory) -> Reference:
    root = tmp_path_factory.mktemp("damage")
    pdfs = sample_pdfs(root / "pdfs")
    store = root / "clean"
    with HybridRAG(store, embedder="hashing") as rag:
        rag.ingest_many(pdfs[:2], raise_errors=True)
    older = root / "older"
    shutil.copytree(store, older)
    with HybridRAG(store, embedder="hashing") as rag:
        rag.ingest(pdfs[2])
        docs = [(d.doc_id, d.content_hash) for d in rag.documents()]
        answers, other = _answers(rag), rag.ask(OTHER).text
    assert len(docs) == 3 and all(answers.values()) and other
    return Reference(store, older, docs, answers, other)


# -- the damage ---------------------------------------------------------------------------


def _flip(file: Path, *, every: int = 97, start: int = 100) -> None:
    data = bytearray(file.read_bytes())
    for i in range(start, max(start + 1, len(data) - 16), every):
        data[i] ^= 0xFF
    file.write_bytes(bytes(data))


def _half(file: Path) -> None:
    file.write_bytes(file.read_bytes()[: file.stat().st_size // 2])


def _append(file: Path, data: bytes) -> None:
    with open(file, "ab") as fh:
        fh.write(data)


def _ssts(store: Path) -> list[Path]:
    return sorted((store / "graph").glob("*.sst"))


def _first(store: Path, pattern: str) -> Path:
    return sorted((store / "graph").glob(pattern))[0]


def _sql(file: Path, statement: str) -> None:
    db = sqlite3.connect(file)
    db.execute(statement)
    db.commit()
    db.close()


def _older_catalog(store: Path, ref: Reference) -> None:
    for f in store.glob("catalog.sqlite*"):
        f.unlink()
    for f in ref.older.glob("catalog.sqlite*"):
        shutil.copy2(f, store / f.name)


def _drop_graph_behind(store: Path) -> None:
    from pyoxigraph import NamedNode, Store

    db = Store(str(store / "graph"))
    db.remove_graph(NamedNode(f"urn:hybrid-rag:doc:{LOST}"))
    db.flush()
    del db


def _zero_rows(store: Path) -> None:
    file = store / "vectors" / "vectors.f32"
    data = bytearray(file.read_bytes())
    data[: 4 * 384 * 2] = b"\0" * (4 * 384 * 2)
    file.write_bytes(bytes(data))


def _garbage_keyword_segments(store: Path) -> None:
    for f in (store / "vectors" / "keywords").iterdir():
        if f.is_file() and f.name != "meta.json" and not f.name.startswith("."):
            f.write_bytes(b"\0" * 64)


Damage = Callable[[Path, Reference], object]
# (name, damage, the file the error must name (relative), what must come of it)
CASES: list[tuple[str, Damage, str, Outcome]] = [
    # the catalog
    ("catalog-deleted", lambda s, r: (s / "catalog.sqlite").unlink(), "catalog.sqlite", "repaired"),
    ("catalog-empty", lambda s, r: (s / "catalog.sqlite").write_bytes(b""), "catalog.sqlite",
     "repaired"),
    ("catalog-garbage", lambda s, r: (s / "catalog.sqlite").write_bytes(b"\x13" * 9000),
     "catalog.sqlite", "repaired"),
    ("catalog-truncated", lambda s, r: _half(s / "catalog.sqlite"), "catalog.sqlite", "repaired"),
    ("catalog-bytes-flipped", lambda s, r: _flip(s / "catalog.sqlite", every=61, start=0),
     "catalog.sqlite", "repaired"),
    ("catalog-older-copy", _older_catalog, "catalog.sqlite", "repaired"),
    ("catalog-entry-damaged",
     lambda s, r: _sql(s / "catalog.sqlite", "UPDATE documents SET info = '{' WHERE rowid = 1"),
     "catalog.sqlite", "repaired"),
    ("catalog-entry-deleted-behind",
     lambda s, r: _sql(s / "catalog.sqlite", "DELETE FROM documents WHERE rowid = 2"),
     "catalog.sqlite", "repaired"),
    # the graph
    ("graph-folder-deleted", lambda s, r: shutil.rmtree(s / "graph"), "graph", "unrepairable"),
    ("graph-folder-emptied", lambda s, r: [f.unlink() for f in (s / "graph").iterdir()], "graph",
     "unrepairable"),
    ("graph-sst-flipped", lambda s, r: [_flip(f) for f in _ssts(s)], "graph", "unrepairable"),
    ("graph-sst-truncated", lambda s, r: [_half(f) for f in _ssts(s)], "graph", "unrepairable"),
    ("graph-current-deleted", lambda s, r: (s / "graph" / "CURRENT").unlink(), "graph",
     "unrepairable"),
    ("graph-manifest-garbage", lambda s, r: _first(s, "MANIFEST-*").write_bytes(b"x" * 300),
     "graph", "unrepairable"),
    ("graph-options-deleted", lambda s, r: _first(s, "OPTIONS-*").unlink(), "", "healed"),
    ("graph-dropped-behind", lambda s, r: _drop_graph_behind(s), "graph", "lost"),
    # the vectors
    ("vectors-folder-deleted", lambda s, r: shutil.rmtree(s / "vectors"), "vectors",
     "unrepairable"),
    ("chunks-deleted", lambda s, r: (s / "vectors" / "chunks.sqlite3").unlink(),
     "vectors/chunks.sqlite3", "unrepairable"),
    ("chunks-empty", lambda s, r: (s / "vectors" / "chunks.sqlite3").write_bytes(b""),
     "vectors/chunks.sqlite3", "unrepairable"),
    ("chunks-garbage", lambda s, r: (s / "vectors" / "chunks.sqlite3").write_bytes(b"\x07" * 8192),
     "vectors/chunks.sqlite3", "unrepairable"),
    ("chunks-truncated", lambda s, r: _half(s / "vectors" / "chunks.sqlite3"),
     "vectors/chunks.sqlite3", "unrepairable"),
    ("matrix-deleted", lambda s, r: (s / "vectors" / "vectors.f32").unlink(), "vectors/vectors.f32",
     "repaired"),
    ("matrix-truncated", lambda s, r: _half(s / "vectors" / "vectors.f32"), "vectors/vectors.f32",
     "repaired"),
    ("matrix-bytes-flipped", lambda s, r: _flip(s / "vectors" / "vectors.f32", every=4001),
     "vectors/vectors.f32", "repaired"),
    ("matrix-rows-zeroed", lambda s, r: _zero_rows(s), "vectors/vectors.f32", "repaired"),
    ("matrix-extended", lambda s, r: _append(s / "vectors" / "vectors.f32", b"\1" * 999), "",
     "healed"),
    ("keywords-deleted", lambda s, r: shutil.rmtree(s / "vectors" / "keywords"), "", "healed"),
    ("keywords-meta-garbage", lambda s, r: (s / "vectors" / "keywords" / "meta.json").write_text(
        "{not json"), "", "healed"),
    ("keywords-segments-garbage", lambda s, r: _garbage_keyword_segments(s), "", "healed"),
    ("hnsw-file-garbage", lambda s, r: (s / "vectors" / "ann.usearch").write_bytes(b"\0" * 99), "",
     "healed"),
    # what the store keeps beside them
    ("settings-garbage", lambda s, r: (s / "store.json").write_text("[1, 2"), "store.json",
     "repaired"),
    ("journal-generation-garbage", lambda s, r: (s / "journal" / "generation").write_text("x!"),
     "journal/generation", "repaired"),
    ("journal-record-garbage", lambda s, r: (s / "journal" / "0a.intent.json").write_text("{"),
     "journal/0a.intent.json", "repaired"),
    ("lock-note-garbage", lambda s, r: (s / "vectors.lock.json").write_text("\0\0"), "", "healed"),
]  # fmt: skip


def _stored(store: Path) -> tuple[set[str], set[str], set[str]]:
    """What each store file holds, read without the library's checks (what is left)."""
    from pyoxigraph import Store

    graphs: set[str] = set()
    if (store / "graph" / "CURRENT").exists():
        try:
            db = Store.read_only(str(store / "graph"))
            graphs = {g.value.rsplit(":", 1)[-1] for g in db.named_graphs()}
            del db
        except (OSError, RuntimeError):
            pass
    chunks: set[str] = set()
    entries: set[str] = set()
    for file, sql, into in (
        (store / "vectors" / "chunks.sqlite3", "SELECT DISTINCT doc_id FROM chunks", chunks),
        (store / "catalog.sqlite", "SELECT doc_id FROM documents", entries),
    ):
        try:
            db = sqlite3.connect(f"file:{file}?mode=ro", uri=True)
            into.update(r[0] for r in db.execute(sql))
            db.close()
        except sqlite3.Error:
            pass
    return graphs, chunks, entries


def _refused(store: Path, named: str) -> None:
    """Every way in raises DamagedStoreError naming the file; nothing gets deleted."""
    before = _stored(store)
    with HybridRAG(store, embedder="hashing") as rag:
        with pytest.raises(DamagedStoreError) as info:
            rag.documents()
        assert str(store / named) in str(info.value) and "to repair:" in str(info.value)
        with pytest.raises(DamagedStoreError):
            rag.ask(QUESTIONS[0], mode="vector")  # the mode that needs the graph least
    assert _stored(store) == before, "opening a damaged store changed what it holds"


@pytest.mark.parametrize(("name", "damage", "named", "outcome"), CASES, ids=[c[0] for c in CASES])
def test_damaged_file(
    name: str, damage: Damage, named: str, outcome: Outcome, ref: Reference, tmp_path: Path
) -> None:
    store = tmp_path / "store"
    shutil.copytree(ref.store, store)
    if not (store / "vectors" / "ann.usearch").exists():
        (store / "vectors" / "ann.usearch").write_bytes(b"")  # small stores have none yet
    damage(store, ref)
    try:
        if outcome == "healed":
            with HybridRAG(store, embedder="hashing") as rag:
                assert [(d.doc_id, d.content_hash) for d in rag.documents()] == ref.docs
                assert _answers(rag) == ref.answers
            return
        _refused(store, named)
        report = repair_store(store, embedder="hashing" if name.startswith("settings") else None)
        if outcome == "unrepairable":
            assert not report.ok and report.unrepaired, report
            _refused(store, named)
            return
        if outcome == "lost":  # the damage took one document's graph: it is taken out whole
            assert report.ok and [x.split()[0] for x in report.lost] == [LOST], report
            assert all(k.is_file() for k in report.kept)  # what was left of it, kept
            with HybridRAG(store, embedder="hashing") as rag:
                kept = [d for d, _ in ref.docs if d != LOST]
                assert [d.doc_id for d in rag.documents()] == kept
                assert rag.ask(OTHER).text == ref.other
            return
        assert report.ok and report.found and not report.lost, report
        with HybridRAG(store, embedder="hashing") as rag:
            assert [d.doc_id for d in rag.documents()] == [d for d, _ in ref.docs]
            assert _answers(rag) == ref.answers  # 0 lost: every answer as before
    except HybridRAGError:
        raise
    except Exception as exc:  # pragma: no cover - the point of the suite
        pytest.fail(f"{name}: untyped {type(exc).__name__}: {exc}")


def test_the_suite_covers_every_store_file() -> None:
    named = {c[2].split("/")[0] for c in CASES if c[2]}
    assert {"catalog.sqlite", "graph", "vectors", "store.json", "journal"} <= named
    assert len(CASES) >= 30 and len({c[0] for c in CASES}) == len(CASES)
