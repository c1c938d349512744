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
from hybrid_rag.stores.hana.vectors import HnswConfig, _create_sql, vector_bytes
from hybrid_rag.testing._vector_contract import VectorStoreContract, make_chunks, unit_vectors
from hybrid_rag.testing.hana_doubles import FAKE_SETTINGS, FakeHdbcli, HanaDoubleError
from hybrid_rag.text import keyword_tokens as tokenize


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


def test_keyword_search_runs_in_the_database_and_returns_only_top_k() -> None:
    driver = FakeHdbcli()
    store = HanaVectorStore(pool=pool(driver))
    texts = ["acetone UN1090 flash point", "acetone CAS 67-64-1", "ethanol UN1170"]
    store.replace("A", make_chunks("A", texts), unit_vectors(3, 8))
    store.replace("B", make_chunks("B", ["acetone again", "UN1090 elsewhere"]), unit_vectors(2, 8))
    db = driver.database
    (index,) = db.statements("^CREATE FULLTEXT INDEX")
    assert index.sql == (
        'CREATE FULLTEXT INDEX "HYBRID_RAG_CHUNKS_TOKENS_FTI" ON "HYBRID_RAG_CHUNKS" ("TOKENS")'
        " FAST PREPROCESS ON SYNC"
    )
    db.calls.clear()
    hits = store.keyword_search("UN 1090 acetone", k=2, doc_ids=["A"])
    (query,) = db.calls  # one statement; nothing else left the database
    assert query.sql.startswith("SELECT TOP 2 ") and 'SCORE() AS "SCORE"' in query.sql
    assert 'WHERE CONTAINS("TOKENS", ?, EXACT) AND "DOC_ID" IN (?)' in query.sql
    terms = " OR ".join(f'"{t}"' for t in dict.fromkeys(tokenize("UN 1090 acetone")))
    assert query.params == (terms, "A")
    assert len(hits) == 2 and {h.chunk.doc_id for h in hits} == {"A"}
    assert hits[0].chunk.text == "acetone UN1090 flash point"  # both terms beat one
    assert hits[0].score > hits[1].score > 0


def test_keyword_search_finds_identifiers_by_exact_string() -> None:
    driver = FakeHdbcli()
    store = HanaVectorStore(pool=pool(driver))
    store.replace("A", make_chunks("A", ["CAS 67-64-1 acetone", "H225 H319"]), unit_vectors(2, 8))
    store.replace("B", make_chunks("B", ["CAS 64-17-5 ethanol"]), unit_vectors(1, 8, seed=1))
    # the whole code ranks first; its parts ("64") also match other codes, lower
    assert store.keyword_search("67-64-1", k=5)[0].chunk.text == "CAS 67-64-1 acetone"
    assert store.keyword_search("64-17-5", k=5)[0].chunk.doc_id == "B"
    assert [h.chunk.text for h in store.keyword_search("h319", k=5)] == ["H225 H319"]
    assert store.keyword_search("toluene", k=5) == []
    other = HanaVectorStore(pool=pool(driver))  # another process replaces B
    other.replace("B", make_chunks("B", ["methanol UN1230"]), unit_vectors(1, 8, seed=2))
    assert [h.chunk.text for h in store.keyword_search("UN1230", k=3)] == ["methanol UN1230"]
    assert store.keyword_search("ethanol", k=3) == []


def test_table_of_an_older_version_gets_tokens_and_index_once() -> None:
    driver = FakeHdbcli()
    old_ddl = _create_sql('"HYBRID_RAG_CHUNKS"', "REAL_VECTOR", 8).replace('"TOKENS" NCLOB, ', "")
    db = driver.database
    db.sql.execute(old_ddl.replace("CREATE COLUMN TABLE", "CREATE TABLE"))
    for i in range(5):
        db.sql.execute(
            'INSERT INTO "HYBRID_RAG_CHUNKS" VALUES (?,?,?,?,?,?,?,?,?,?,?)',
            ("A", f"A:{i}", i, 1, 0, 5, None, f"text {i} UN1090", "{}", "w", b"\0"),
        )
    store = HanaVectorStore(pool=pool(driver), batch_size=2)
    assert len(store.keyword_search("un1090", k=10)) == 5
    assert [c.batch for c in db.calls if c.op == "executemany"] == [2, 2, 1]
    assert len(db.statements("^ALTER TABLE")) == len(db.statements("^CREATE FULLTEXT")) == 1
    db.calls.clear()
    again = HanaVectorStore(pool=pool(driver))
    assert len(again.keyword_search("text", k=10)) == 5
    assert not db.statements("^ALTER|^CREATE|^UPDATE")


def test_double_refuses_contains_without_a_fulltext_index() -> None:
    driver = FakeHdbcli()
    conn = driver.connect(address="h", password="p")
    cur = conn.cursor()
    cur.execute('CREATE COLUMN TABLE "T" ("X" NCLOB)')
    with pytest.raises(HanaDoubleError, match="full-text index"):
        cur.execute('SELECT SCORE() FROM "T" WHERE CONTAINS("X", ?, EXACT)', ['"a"'])
    cur.execute('CREATE FULLTEXT INDEX "T_FTI" ON "T" ("X") FAST PREPROCESS ON SYNC')
    cur.execute("INSERT INTO \"T\" VALUES ('the UN-1090 code')")
    cur.execute('SELECT SCORE() FROM "T" WHERE CONTAINS("X", ?, EXACT)', ['"un" OR "zzz"'])
    assert cur.fetchone()[0] > 0
    cur.execute('SELECT SCORE() FROM "T" WHERE CONTAINS("X", ?, EXACT)', ['"1090 code"'])
    assert cur.fetchone() is not None  # a phrase: consecutive words
    cur.execute('SELECT SCORE() FROM "T" WHERE CONTAINS("X", ?, EXACT)', ['"code 1090"'])
    assert cur.fetchone() is None
    with pytest.raises(HanaDoubleError, match="only terms joined by OR"):
        cur.execute('SELECT SCORE() FROM "T" WHERE CONTAINS("X", ?, EXACT)', ["a -b"])


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
