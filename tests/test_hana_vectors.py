"""HanaVectorStore, HanaCatalog and HanaInternalEmbedder against the recording hdbcli double.

The double runs the SQL on SQLite (after mechanical HANA -> SQLite rewrites) and records
every statement, so these tests check both behaviour (the shared contract) and the SQL
text, bound parameters and batch sizes the stores send.
"""

from __future__ import annotations

import asyncio
import struct
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

from hybrid_rag import HybridRAG
from hybrid_rag.errors import ConfigurationError, StoreError
from hybrid_rag.models import DocumentInfo
from hybrid_rag.protocols import Catalog, Embedder
from hybrid_rag.stores.hana import (
    HanaCatalog,
    HanaConnectionPool,
    HanaGraphStore,
    HanaInternalEmbedder,
    HanaVectorStore,
)
from hybrid_rag.stores.hana.vectors import HnswConfig, vector_bytes
from hybrid_rag.testing._vector_contract import VectorStoreContract, make_chunks, unit_vectors
from hybrid_rag.testing.hana_doubles import FAKE_SETTINGS, FakeHdbcli


def pool(driver: FakeHdbcli) -> HanaConnectionPool:
    return HanaConnectionPool(FAKE_SETTINGS, driver=driver)


class TestHanaVectorsOnDouble(VectorStoreContract):
    @pytest.fixture
    def vector_store(self, dim: int) -> Iterator[HanaVectorStore]:
        driver = FakeHdbcli()
        with HanaVectorStore(pool=pool(driver), dim=dim) as store:
            yield store
        assert driver.database.shared_connections() == []


def test_sql_text_parameters_and_batches() -> None:
    driver = FakeHdbcli()
    store = HanaVectorStore(pool=pool(driver), batch_size=4, hnsw=HnswConfig(m=16, ef_search=80))
    vecs = unit_vectors(10, 8)
    assert store.replace("A", make_chunks("A", [f"t{i}" for i in range(10)]), vecs) == 10
    db = driver.database
    (exists, *_) = db.statements(r"FROM SYS\.TABLES")
    assert exists.params == ("HYBRID_RAG_CHUNKS",)  # no schema: CURRENT_SCHEMA in the SQL
    (create,) = db.statements(r"^CREATE COLUMN TABLE")
    assert '"EMBEDDING" REAL_VECTOR(8) NOT NULL' in create.sql
    assert '"TEXT" NCLOB' in create.sql and 'PRIMARY KEY ("DOC_ID", "CHUNK_ID")' in create.sql
    (index,) = db.statements("HNSW")
    assert index.sql.endswith(
        "SIMILARITY FUNCTION COSINE_SIMILARITY BUILD CONFIGURATION '{\"M\": 16}'"
        " SEARCH CONFIGURATION '{\"efSearch\": 80}' ONLINE"
    )
    inserts = [c for c in db.calls if c.op == "executemany"]
    assert [c.batch for c in inserts] == [4, 4, 2]
    assert all(c.sql.startswith('INSERT INTO "HYBRID_RAG_CHUNKS"') for c in inserts)
    stored = db.sql.execute('SELECT "EMBEDDING" FROM "HYBRID_RAG_CHUNKS" ORDER BY "SEQ"')
    blob = stored.fetchone()[0]
    assert isinstance(blob, bytes) and struct.unpack_from("<I", blob)[0] == 8
    assert blob == vector_bytes(vecs[0])  # binary fvecs, not text

    db.calls.clear()
    store.search(vecs[3], k=2, doc_ids=["A", "B"])
    (search,) = db.statements("COSINE_SIMILARITY")
    assert search.sql.startswith("SELECT TOP 2 ")
    assert 'COSINE_SIMILARITY("EMBEDDING", TO_REAL_VECTOR(?))' in search.sql
    assert 'WHERE "DOC_ID" IN (?, ?)' in search.sql
    assert search.params == (vector_bytes(vecs[3]), "A", "B")  # query vector bound
    assert "0." not in search.sql  # nothing of the vector inlined


def test_replace_is_one_transaction_and_a_failure_keeps_old_rows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    driver = FakeHdbcli()
    store = HanaVectorStore(pool=pool(driver), batch_size=2)
    store.replace("A", make_chunks("A", ["old one", "old two"]), unit_vectors(2, 8))
    real = driver.database.sql.executemany
    calls = {"n": 0}

    def flaky(sql: str, rows: object) -> object:
        calls["n"] += 1
        if calls["n"] == 2:
            raise __import__("sqlite3").OperationalError("disk full")
        return real(sql, rows)  # type: ignore[arg-type]

    monkeypatch.setattr(driver.database, "sql", _Proxy(driver.database.sql, executemany=flaky))
    with pytest.raises(StoreError, match="disk full"):
        store.replace("A", make_chunks("A", ["n1", "n2", "n3", "n4"]), unit_vectors(4, 8, seed=2))
    assert [c.text for c in store.chunks("A")] == ["old one", "old two"]


class _Proxy:
    def __init__(self, inner: object, **overrides: object) -> None:
        self._inner, self._overrides = inner, overrides

    def __getattr__(self, name: str) -> object:
        return self._overrides.get(name) or getattr(self._inner, name)


def test_existing_table_of_other_dimension_is_a_clear_error() -> None:
    driver = FakeHdbcli()
    HanaVectorStore(pool=pool(driver)).replace("A", make_chunks("A", ["x"]), unit_vectors(1, 8))
    other = HanaVectorStore(pool=pool(driver), dim=16)
    with pytest.raises(StoreError, match="dimension 8"):
        other.chunks("A")
    learned = HanaVectorStore(pool=pool(driver))  # dim=None: taken from the table
    with pytest.raises(StoreError):
        learned.replace("B", make_chunks("B", ["y"]), unit_vectors(1, 4))
    assert learned.chunks("B") == [] and len(learned.chunks("A")) == 1


def test_schema_is_used_and_identifiers_validated() -> None:
    from hybrid_rag.stores.hana import HanaSettings

    settings = HanaSettings(
        host="h", user="u", password=FAKE_SETTINGS.password, schema="RAG_SCHEMA"
    )
    driver = FakeHdbcli()
    store = HanaVectorStore(pool=HanaConnectionPool(settings, driver=driver), table="CHUNKS_T")
    store.replace("A", make_chunks("A", ["x"]), unit_vectors(1, 8))
    (create,) = driver.database.statements("^CREATE COLUMN TABLE")
    assert create.sql.startswith('CREATE COLUMN TABLE "RAG_SCHEMA"."CHUNKS_T"')
    assert driver.database.statements("SYS.TABLES")[0].params == ("RAG_SCHEMA", "CHUNKS_T")
    with pytest.raises(ConfigurationError):
        HanaVectorStore(pool=pool(driver), table='x"; DROP TABLE y; --')


def test_keyword_search_refetches_only_changed_documents() -> None:
    driver = FakeHdbcli()
    store = HanaVectorStore(pool=pool(driver))
    store.replace("A", make_chunks("A", ["acetone UN1090"]), unit_vectors(1, 8))
    store.replace("B", make_chunks("B", ["ethanol UN1170"]), unit_vectors(1, 8, seed=1))
    assert store.keyword_search("UN1090", k=3)[0].chunk.doc_id == "A"
    driver.database.calls.clear()
    assert store.keyword_search("ethanol", k=3)[0].chunk.doc_id == "B"
    assert not driver.database.statements('"TEXT"')  # cached: no text fetched
    other = HanaVectorStore(pool=pool(driver))  # another process writes B
    other.replace("B", make_chunks("B", ["methanol UN1230"]), unit_vectors(1, 8, seed=2))
    driver.database.calls.clear()
    assert store.keyword_search("UN1230", k=3)[0].chunk.text == "methanol UN1230"
    (fetch,) = driver.database.statements('"WRITE_ID" FROM')
    assert fetch.params == ("B",)


def _info(doc_id: str, digest: str = "h1") -> DocumentInfo:
    now = datetime.now(UTC)
    return DocumentInfo(
        doc_id=doc_id, source=f"{doc_id}.pdf", content_hash=digest, pages=2, chunks=3,
        triples=4, created_at=now, updated_at=now,
    )  # fmt: skip


def test_catalog_behaves_like_the_embedded_one() -> None:
    driver = FakeHdbcli()
    catalog = HanaCatalog(pool=pool(driver))
    assert isinstance(catalog, Catalog)
    assert catalog.get("a") is None and catalog.list() == []
    catalog.put(_info("b"))
    catalog.put(_info("a"))
    catalog.put(_info("a", "h2"))
    assert [i.doc_id for i in catalog.list()] == ["a", "b"]
    assert catalog.get("a") == _info("a", "h2").model_copy(
        update={
            "created_at": catalog.get("a").created_at,  # type: ignore[union-attr]
            "updated_at": catalog.get("a").updated_at,
        }  # type: ignore[union-attr]
    )
    assert catalog.get("a").content_hash == "h2"  # type: ignore[union-attr]
    assert catalog.delete("a") is True and catalog.delete("a") is False
    (upsert, *_) = driver.database.statements("^UPSERT")
    assert upsert.sql.endswith("WITH PRIMARY KEY")
    catalog.close()
    catalog.close()


def test_internal_embedder_uses_vector_embedding_in_one_statement() -> None:
    driver = FakeHdbcli()
    embedder = HanaInternalEmbedder(pool=pool(driver), dim=64, batch_size=10)
    assert isinstance(embedder, Embedder) and embedder.name == "hana:SAP_NEB.20240715"
    vecs = asyncio.run(embedder.embed_documents(["acetone", "ethanol", "acetone"]))
    assert vecs.shape == (3, 64) and vecs.dtype == np.float32
    assert np.allclose(np.linalg.norm(vecs, axis=1), 1.0)
    assert np.allclose(vecs[0], vecs[2]) and not np.allclose(vecs[0], vecs[1])
    (call,) = driver.database.statements("VECTOR_EMBEDDING")
    assert call.sql.count("VECTOR_EMBEDDING(?, 'DOCUMENT', ?)") == 3
    assert call.params == (0, "acetone", "SAP_NEB.20240715", 1, "ethanol", "SAP_NEB.20240715",
                           2, "acetone", "SAP_NEB.20240715")  # fmt: skip
    q = asyncio.run(embedder.embed_query("acetone"))
    assert q.shape == (64,)
    assert "'QUERY'" in driver.database.statements("VECTOR_EMBEDDING")[-1].sql
    with pytest.raises(StoreError):
        HanaInternalEmbedder(pool=pool(driver), dim=768).embed_sync(["x"], "QUERY")


def test_concurrent_asks_and_ingest_never_share_a_connection(tmp_path: Path) -> None:
    from hybrid_rag.samples import sample_pdfs

    driver = FakeHdbcli()
    shared = pool(driver)
    rag = HybridRAG(
        graph=HanaGraphStore(pool=shared),
        vectors=HanaVectorStore(pool=shared),
        catalog=HanaCatalog(pool=shared),
        embedder="hashing",
        max_threads=6,
    )
    pdfs = sample_pdfs(tmp_path)
    rag.ingest(pdfs[0])
    errors: list[BaseException] = []

    def ask(i: int) -> None:
        try:
            for _ in range(3):
                rag.ask("What is the flash point?" if i % 2 else "Which hazards are listed?")
        except BaseException as exc:  # re-raised below
            errors.append(exc)

    def ingest() -> None:
        try:
            for pdf in pdfs[1:]:
                rag.ingest(pdf)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=ask, args=(i,)) for i in range(8)]
    threads.append(threading.Thread(target=ingest))
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert [d.doc_id for d in rag.documents()] == sorted(d.doc_id for d in rag.documents()) and len(
        rag.documents()
    ) == len(pdfs)
    answer = rag.ask("What is the flash point?")
    assert answer.passages
    db = driver.database
    assert len(db.connections) > 2  # many threads really did work
    assert db.shared_connections() == []
    assert {c.thread for c in db.calls}  # every call was recorded with its thread
    rag.forget(rag.documents()[0].doc_id)
    assert len(rag.documents()) == len(pdfs) - 1
    assert db.default_graph_size() == 0
    rag.close()
    assert all(c.closed for c in db.connections)
