"""The seam contracts (graph, vectors, catalog, embedder) against a live SAP HANA Cloud instance.

Skipped unless HANA settings are present (``HANA_HOST``, ``HANA_USER``, ``HANA_PASSWORD``,
optional ``HANA_PORT``/``HANA_SCHEMA``, or a ``.env`` file / ``VCAP_SERVICES``) and
``hdbcli`` is installed. Run with ``pytest -m integration tests/test_hana_live.py``.
Every test writes under a unique graph base and table name and removes them afterwards.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from hybrid_rag.stores.hana import (
    HanaCatalog,
    HanaConnectionPool,
    HanaGraphStore,
    HanaInternalEmbedder,
    HanaSettings,
    HanaVectorStore,
)
from hybrid_rag.testing.contracts import (
    CatalogContract,
    EmbedderContract,
    GraphStoreContract,
    VectorStoreContract,
)

pytestmark = pytest.mark.integration
# hdbcli opens its sockets in native code, outside the conftest network guard; these
# tests only run when HANA settings are present.


def _settings() -> HanaSettings:
    settings = HanaSettings.from_env()
    if settings is None:
        pytest.skip("no HANA settings (set HANA_HOST, HANA_USER, HANA_PASSWORD; see docs/hana.md)")
    pytest.importorskip(
        "hdbcli", reason='live HANA tests need hdbcli: pip install "hybrid-rag[hana]"'
    )
    return settings


class TestHanaGraphLive(GraphStoreContract):
    @pytest.fixture
    def graph_store(self) -> Iterator[HanaGraphStore]:
        settings = _settings()
        base = f"urn:hybrid-rag:test:{uuid.uuid4().hex[:12]}:"
        store = HanaGraphStore(settings, graph_base=base)
        yield store
        cleanup = HanaGraphStore(settings, graph_base=base)
        for doc in cleanup.doc_ids():
            cleanup.delete(doc)
        cleanup.close()


class TestHanaVectorsLive(VectorStoreContract):
    @pytest.fixture
    def vector_store(self, dim: int) -> Iterator[HanaVectorStore]:
        settings = _settings()
        table = f"HR_TEST_{uuid.uuid4().hex[:10].upper()}"
        store = HanaVectorStore(settings, table=table, dim=dim)
        yield store
        _drop(settings, table)


class TestHanaCatalogLive(CatalogContract):
    @pytest.fixture
    def catalog(self) -> Iterator[HanaCatalog]:
        settings = _settings()
        table = f"HR_TEST_CAT_{uuid.uuid4().hex[:8].upper()}"
        with HanaCatalog(settings, table=table) as catalog:
            yield catalog
        _drop(settings, table)


class TestHanaInternalEmbedderLive(EmbedderContract):
    """``VECTOR_EMBEDDING`` needs the instance's embedding model (HANA Cloud QRC 3/2024+)."""

    @pytest.fixture
    def embedder(self) -> Iterator[HanaInternalEmbedder]:
        embedder = HanaInternalEmbedder(_settings())
        yield embedder
        embedder.close()


def test_keyword_search_in_the_database_live() -> None:
    """CONTAINS/SCORE() on the real full-text index: codes by exact string, scope in SQL."""
    from hybrid_rag.testing._vector_contract import make_chunks, unit_vectors

    settings = _settings()
    table = f"HR_TEST_KW_{uuid.uuid4().hex[:8].upper()}"
    store = HanaVectorStore(settings, table=table, dim=8)
    try:
        texts = ["CAS 67-64-1 acetone", "UN1090 flash point -20 C", "H225 H319"]
        store.replace("A", make_chunks("A", texts), unit_vectors(3, 8))
        store.replace("B", make_chunks("B", ["CAS 64-17-5 ethanol UN1170"]), unit_vectors(1, 8))
        assert store.keyword_search("67-64-1", k=3)[0].chunk.text == texts[0]
        assert store.keyword_search("UN 1090", k=3)[0].chunk.text == texts[1]
        assert store.keyword_search("ethanol", k=3)[0].chunk.doc_id == "B"
        assert store.keyword_search("ethanol", k=3, doc_ids=["A"]) == []
        store.replace("B", make_chunks("B", ["methanol UN1230"]), unit_vectors(1, 8))
        assert [h.chunk.doc_id for h in store.keyword_search("UN1230", k=3)] == ["B"]
    finally:
        store.close()
        _drop(settings, table)


@pytest.mark.parametrize("values_at_most", [256, 1])
def test_per_graph_queries_say_their_scope_inside_live(
    monkeypatch: pytest.MonkeyPatch, values_at_most: int
) -> None:
    """A query that reads only inside GRAPH ?g runs without FROM lists on HANA: with
    VALUES ?g, and (a scope larger than VALUES_AT_MOST) as the base less the graphs
    outside it; the rows are the scope's, never DEFAULT's nor another graph's."""
    from hybrid_rag.testing._graph_contract import named_subject

    monkeypatch.setattr("hybrid_rag._per_graph.VALUES_AT_MOST", values_at_most)
    settings = _settings()
    base = f"urn:hybrid-rag:test:{uuid.uuid4().hex[:12]}:"
    store = HanaGraphStore(settings, graph_base=base)
    name = "http://example.org/contract/name"
    try:
        for doc in ("a", "b", "c"):
            store.replace(doc, named_subject(doc, f"name-{doc}"))
        query = f"SELECT ?g ?n WHERE {{ GRAPH ?g {{ ?s <{name}> ?n }} }}"
        rows = store.query(query, scope=["a", "b"]).rows
        assert sorted(r["n"].value for r in rows) == ["name-a", "name-b"]
        assert {r["g"].value for r in rows} == {store.graph_iri("a"), store.graph_iri("b")}
        terms = (
            f'SELECT DISTINCT ?n WHERE {{ GRAPH ?g {{ VALUES ?n {{ "name-c" }} ?s <{name}> ?n }} }}'
        )
        assert store.query(terms, scope=["a", "b"]).rows == ()
    finally:
        for doc in store.doc_ids():
            store.delete(doc)
        store.close()


def _drop(settings: HanaSettings, table: str) -> None:
    with HanaConnectionPool(settings) as pool:
        cur = pool.connection().cursor()
        try:
            cur.execute(f'DROP TABLE "{table}"')
        except pool.error_types:  # the table may not have been created
            pass
        finally:
            cur.close()
