"""A failed replace keeps the old version whole; recovery deletes only what a crash left.

Issue 19's run: replace dropped the old catalog entry first and wrote the new one last;
when that write failed (a file name that is not valid UTF-8 raised an untyped
``PydanticSerializationError``) the old version was gone, and the next open deleted the
new graph and chunks as orphans. A catalog that lost an entry made the first ask delete
that document everywhere.

Here every step of a replace is made to fail in turn (the real stores, with one call
replaced by one that raises, named ``_fail``): each time the old version is whole, in
this process and after reopening, with no record left pending. A write cut short the
way a crash leaves it is undone on the next open from its journal record, and a
document the catalog lost (no record) is never deleted: the store refuses to open
until ``repair`` gives it back its entry.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hybrid_rag import DamagedStoreError, HybridRAG, HybridRAGError, StoreError
from hybrid_rag.repair import repair_store
from hybrid_rag.samples import pdf_bytes, sample_pdfs, sample_text

DOC = "examplon-solvent-99"
Q = "What is the flash point of Examplon Solvent 99?"


def _state(rag: HybridRAG, doc_id: str = DOC) -> tuple[Any, ...]:
    info = rag.catalog.get(doc_id)
    entry = None if info is None else (info.content_hash, info.chunks, info.triples)
    return entry, rag.graph.dump(doc_id), rag.vectors.chunks(doc_id)  # type: ignore[attr-defined]


def _new_version() -> bytes:
    text = sample_text(DOC).replace("Flash point: -18", "Flash point: 21")
    return pdf_bytes(text.split("\n\n"))


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("replace")
    with HybridRAG(root / "store", embedder="hashing") as rag:
        rag.ingest_many(sample_pdfs(root / "pdfs"), raise_errors=True)
    return root / "store"


@pytest.fixture()
def store(template: Path, tmp_path: Path) -> Iterator[Path]:
    shutil.copytree(template, tmp_path / "store")
    yield tmp_path / "store"


def _fail(*args: Any, **kwargs: Any) -> Any:
    raise StoreError("injected failure")


async def _afail(*args: Any, **kwargs: Any) -> Any:
    raise StoreError("injected failure")


STEPS = {
    "graph.replace": lambda rag: ("graph", "replace", _fail),
    "vectors.replace": lambda rag: ("vectors", "replace", _fail),
    "catalog.put": lambda rag: ("catalog", "put", _fail),
    "embedder.embed_documents": lambda rag: ("embedder", "embed_documents", _afail),
}


@pytest.mark.parametrize("step", sorted(STEPS))
def test_a_replace_that_fails_at_any_step_keeps_the_old_version(
    step: str, store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with HybridRAG(store, embedder="hashing") as rag:
        before, answer = _state(rag), rag.ask(Q).text
        part, method, fake = STEPS[step](rag)
        with monkeypatch.context() as patch:
            patch.setattr(getattr(rag, part), method, fake)
            with pytest.raises(HybridRAGError, match="injected failure"):
                rag.ingest(_new_version(), name=f"{DOC}.pdf")
        assert _state(rag) == before
        assert rag.ask(Q).text == answer  # the old version is still served
        assert rag._stores is not None and rag._stores.journal.pending() == []
    with HybridRAG(store, embedder="hashing") as rag:  # and after reopening
        assert _state(rag) == before and rag.ask(Q).text == answer
        assert rag.ingest(_new_version(), name=f"{DOC}.pdf").status == "replaced"
        assert "21 °C" in (rag.ask(Q).text or "")


def test_a_write_a_crash_cut_short_is_undone_on_open(store: Path) -> None:
    """What a kill -9 after the graph write leaves: the new graph, the old chunks and
    entry, and the journal record with the backup. The next open restores the backup."""
    from hybrid_rag.ingest._writes import StoreWriter
    from hybrid_rag.stores._journal import Intent, Journal

    with HybridRAG(store, embedder="hashing") as rag:
        before = _state(rag)
        stores = rag._stores
        assert stores is not None
        rag.documents()
        writer = StoreWriter.of(stores, embedder=rag.embedder, workers=rag._workers)
        import anyio

        backup = anyio.run(writer.backup, DOC)
        intent = Intent(DOC, "write", new_hash="f" * 64, old=rag.catalog.get(DOC), has_backup=True)
        stores.journal.begin(intent, backup)
        stores.graph.replace(DOC, backup.triples[: len(backup.triples) // 2])  # half the new
    assert [i.doc_id for i in Journal(store / "journal").pending()] == [DOC]
    with HybridRAG(store, embedder="hashing") as rag:
        rag.documents()  # the first flow recovers
        assert _state(rag) == before
    assert Journal(store / "journal").pending() == []


def test_a_document_the_catalog_lost_is_never_deleted(store: Path) -> None:
    """No journal record: the library does not know a crash left it, so it keeps it."""
    with HybridRAG(store, embedder="hashing") as rag:
        before, answer = _state(rag), rag.ask(Q).text
        rag.catalog.delete(DOC)  # behind the flow's back: no record of a write
    with HybridRAG(store, embedder="hashing") as rag:
        with pytest.raises(DamagedStoreError, match="does not list 1 document"):
            rag.ask(Q)
        assert rag.graph.dump(DOC) == before[1]  # type: ignore[attr-defined]
        assert rag.vectors.chunks(DOC) == before[2]
    report = repair_store(store)
    assert report.ok and any(DOC in line for line in report.done)
    with HybridRAG(store, embedder="hashing") as rag:
        assert _state(rag)[1:] == before[1:] and rag.ask(Q).text == answer


def test_a_file_name_that_is_not_utf8_gets_a_safe_label(store: Path, tmp_path: Path) -> None:
    """Issue 19: a name with byte 0xE9 (latin-1 'é') raised PydanticSerializationError
    after the graph and chunks were written; now the label shows the byte as ``\\xe9``."""
    folder = os.fsencode(tmp_path / "odd")
    os.makedirs(folder, exist_ok=True)
    raw = os.path.join(folder, b"caf\xe9-sheet.txt")
    with open(raw, "wb") as fh:
        fh.write(b"Product name: Cafe Cleaner\nFlash point: 61 C\n")
    with HybridRAG(store, embedder="hashing") as rag:
        report = rag.ingest(os.fsdecode(raw))
        assert report.status == "ingested"
        info = rag.catalog.get(report.doc_id)
        assert info is not None and info.source.endswith("caf\\xe9-sheet.txt")
        with open(raw, "ab") as fh:
            fh.write(b"Boiling point: 99 C\n")
        assert rag.ingest(os.fsdecode(raw)).status == "replaced"
        bad_name = rag.ingest(b"Product name: X\n", name="\udcff-bytes.txt")
        assert bad_name.status == "ingested" and "\\xff" in bad_name.source
    with HybridRAG(store, embedder="hashing") as rag:  # the entries were stored whole
        assert {report.doc_id, bad_name.doc_id} <= {d.doc_id for d in rag.documents()}


def test_replace_false_leaves_the_document_and_says_so(store: Path) -> None:
    from hybrid_rag import DocumentExistsError

    with HybridRAG(store, embedder="hashing") as rag:
        before = _state(rag)
        with pytest.raises(DocumentExistsError, match=DOC):
            rag.ingest(_new_version(), name=f"{DOC}.pdf", replace=False)
        assert _state(rag) == before
        same = sample_pdfs(store.parent / "again")[1]
        assert rag.ingest(same, replace=False).status == "skipped"  # same bytes: no conflict


def test_a_second_process_cannot_restore_an_old_copy_silently(store: Path, tmp_path: Path) -> None:
    """A whole store copied back over a newer one (files of two ages) is refused."""
    old = tmp_path / "old-copy"
    shutil.copytree(store, old)
    with HybridRAG(store, embedder="hashing") as rag:
        rag.ingest(_new_version(), name=f"{DOC}.pdf")
    for f in old.glob("catalog.sqlite*"):
        shutil.copy2(f, store / f.name)  # only the catalog goes back in time
    with (
        HybridRAG(store, embedder="hashing") as rag,
        pytest.raises(DamagedStoreError, match="older"),
    ):
        rag.documents()
