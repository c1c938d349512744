"""HanaGraphStore against the hdbcli double (SPARQL_EXECUTE runs on pyoxigraph)."""

from __future__ import annotations

import re
import subprocess
import sys
import threading
from collections.abc import Iterator

import pytest

from hybrid_rag.errors import ConfigurationError, SparqlValidationError, StoreError
from hybrid_rag.rdf import XSD, iri, literal
from hybrid_rag.stores.hana import HanaConnectionPool, HanaGraphStore
from hybrid_rag.testing._graph_contract import GraphStoreContract, named_subject
from hybrid_rag.testing.hana_doubles import FAKE_SETTINGS, FakeHdbcli

NAME = "http://example.org/contract/name"


def make_store(
    driver: FakeHdbcli | None = None, **options: object
) -> tuple[HanaGraphStore, FakeHdbcli]:
    driver = driver or FakeHdbcli()
    pool = HanaConnectionPool(FAKE_SETTINGS, driver=driver)
    return HanaGraphStore(pool=pool, **options), driver  # type: ignore[arg-type]


class TestHanaGraphJson(GraphStoreContract):
    @pytest.fixture
    def graph_store(self) -> Iterator[HanaGraphStore]:
        store, driver = make_store()
        with store:
            yield store
        assert driver.database.default_graph_size() == 0
        assert driver.database.shared_connections() == []


_LITERALS = next(
    m.args[1]
    for m in GraphStoreContract.test_literal_round_trip_exact.pytestmark  # type: ignore[attr-defined]
    if m.name == "parametrize"
)


class TestHanaGraphXml(GraphStoreContract):
    @pytest.fixture
    def graph_store(self) -> Iterator[HanaGraphStore]:
        store, _ = make_store(result_format="xml")
        with store:
            yield store

    # XML 1.0 cannot carry most control characters, and its end-of-line handling turns
    # an unescaped CR into LF: XML results cannot round-trip those; JSON (the default) can.
    @pytest.mark.parametrize("text", [t for t in _LITERALS if not re.search("[\x00-\x08\r]", t)])
    def test_literal_round_trip_exact(self, graph_store: HanaGraphStore, text: str) -> None:
        super().test_literal_round_trip_exact(graph_store, text)


def _queries(driver: FakeHdbcli) -> list[str]:
    return [
        str(c.params[0])
        for c in driver.database.calls
        if c.op == "callproc" and c.params and "sparql-query" in str(c.params[1])
    ]


def test_query_dataset_is_exactly_the_scope() -> None:
    store, driver = make_store()
    for doc in ("a", "b", "c"):
        store.replace(doc, named_subject(doc, f"name-{doc}"))
    driver.database.calls.clear()
    result = store.query(f"SELECT ?n WHERE {{ ?s <{NAME}> ?n }} ORDER BY ?n", scope=["a", "c"])
    assert [r["n"].value for r in result.rows] == ["name-a", "name-c"]
    (sent,) = _queries(driver)
    froms = re.findall(r"FROM (NAMED )?<([^>]+)>", sent)
    assert sorted(froms) == sorted(
        [(named, store.graph_iri(d)) for named in ("", "NAMED ") for d in ("a", "c")]
    )
    assert "SELECT" in sent and "Accept: application/sparql-results+json" in str(
        driver.database.calls[-1].params[1]  # type: ignore[index]
    )


def test_default_graph_and_foreign_graphs_are_never_read() -> None:
    store, driver = make_store()
    store.replace("a", named_subject("a", "mine"))
    rdf = driver.database.rdf
    rdf.update(f"INSERT DATA {{ <urn:x> <{NAME}> 'planted-in-default' }}")  # any user can
    rdf.update(f"INSERT DATA {{ GRAPH <urn:other> {{ <urn:x> <{NAME}> 'foreign' }} }}")
    q = f"SELECT ?n WHERE {{ {{ ?s <{NAME}> ?n }} UNION {{ GRAPH ?g {{ ?s <{NAME}> ?n }} }} }}"
    assert {r["n"].value for r in store.query(q, scope=["a"]).rows} == {"mine"}
    for widened in (
        f"SELECT ?n FROM <urn:other> WHERE {{ ?s <{NAME}> ?n }}",
        f"SELECT ?n WHERE {{ GRAPH <urn:other> {{ ?s <{NAME}> ?n }} }}",
    ):
        with pytest.raises(SparqlValidationError):
            store.query(widened, scope=["a"])
    assert store.doc_ids() == ["a"]  # foreign graph is not a document


PER_GRAPH = f"SELECT ?g ?n WHERE {{ GRAPH ?g {{ ?s <{NAME}> ?n }} }}"


def _planted(driver: FakeHdbcli, store: HanaGraphStore) -> None:
    """Triples no scope holds: in DEFAULT (any user may write there), in another
    application's graph, and in a graph under the store's base that is no document."""
    rdf = driver.database.rdf
    rdf.update(f"INSERT DATA {{ <urn:x> <{NAME}> 'planted-in-default' }}")
    rdf.update(f"INSERT DATA {{ GRAPH <urn:other> {{ <urn:x> <{NAME}> 'foreign' }} }}")
    stray = store.graph_iri("stray")
    rdf.update(f"INSERT DATA {{ GRAPH <{stray}> {{ <urn:x> <{NAME}> 'stray' }} }}")


@pytest.mark.parametrize("values_at_most", [256, 4])
def test_a_per_graph_query_names_its_scope_in_the_query_not_as_from_lists(
    monkeypatch: pytest.MonkeyPatch, values_at_most: int
) -> None:
    # a query that reads only inside GRAPH ?g is sent without FROM / FROM NAMED: the
    # scope is VALUES ?g, or (a large scope) the store's base less the graphs outside it
    monkeypatch.setattr("hybrid_rag._per_graph.VALUES_AT_MOST", values_at_most)
    store, driver = make_store()
    docs = [f"d{i:02d}" for i in range(12)]
    for doc in docs:
        store.replace(doc, named_subject(doc, f"name-{doc}"))
    _planted(driver, store)
    driver.database.calls.clear()
    rows = store.query(PER_GRAPH, scope=docs[1:]).rows
    assert sorted(r["n"].value for r in rows) == [f"name-{d}" for d in docs[1:]]
    sent = _queries(driver)[-1]
    assert "FROM" not in sent
    if values_at_most < len(docs):  # the graphs outside: d00 and the stray one
        assert "NOT IN" in sent and sent.count("urn:hybrid-rag:doc:") == 3
    else:
        assert "VALUES ?g" in sent and sent.count("urn:hybrid-rag:doc:") == len(docs) - 1
    # a query that reads outside GRAPH ?g keeps the FROM lists
    plain = store.query(f"SELECT ?n WHERE {{ ?s <{NAME}> ?n }}", scope=docs[1:])
    assert len(plain.rows) == len(docs) - 1 and "FROM NAMED" in _queries(driver)[-1]


def test_a_graph_written_after_the_listing_is_never_in_the_rows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the graphs outside a large scope are listed, and the listing is kept a few
    # seconds; a document another process writes meanwhile (in no scope yet) is not
    # excluded by the query, and its rows are dropped by the store
    monkeypatch.setattr("hybrid_rag._per_graph.VALUES_AT_MOST", 2)
    store, driver = make_store()
    for doc in ("a", "b", "c"):
        store.replace(doc, named_subject(doc, f"name-{doc}"))
    assert len(store.query(PER_GRAPH, scope=["a", "b", "c"]).rows) == 3
    late = store.graph_iri("late")
    driver.database.rdf.update(f"INSERT DATA {{ GRAPH <{late}> {{ <urn:x> <{NAME}> 'late' }} }}")
    driver.database.calls.clear()
    rows = store.query(PER_GRAPH, scope=["a", "b", "c"]).rows
    assert sorted(r["n"].value for r in rows) == ["name-a", "name-b", "name-c"]
    assert len(_queries(driver)) == 1  # the listing was kept
    store.replace("d", named_subject("d", "name-d"))  # its own write: listed again
    rows = store.query(PER_GRAPH, scope=["a", "b", "c"]).rows
    assert "late" in _queries(driver)[-1] and len(rows) == 3


def test_writes_never_touch_the_default_graph_and_ddl_runs_in_autocommit() -> None:
    store, driver = make_store(max_request_bytes=2048)
    subject = iri("http://example.org/s")
    triples = [(subject, iri(f"http://example.org/p{i}"), literal(f"v{i}" * 20)) for i in range(60)]
    assert store.replace("big", triples) == 60
    updates = [
        str(c.params[0])
        for c in driver.database.calls
        if c.op == "callproc" and c.params and "sparql-update" in str(c.params[1])
    ]
    inserts = [u for u in updates if u.startswith("INSERT DATA")]
    assert updates[0].startswith("DROP SILENT GRAPH") and len(inserts) > 3
    assert all(len(u.encode()) <= 2048 + 200 for u in inserts)
    assert all(f"GRAPH <{store.graph_iri('big')}>" in u for u in inserts)
    assert driver.database.default_graph_size() == 0
    assert store.replace("big", triples[:5]) == 5  # replace drops the old graph


def test_failed_batch_commits_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    store, driver = make_store(max_request_bytes=1024)
    store.replace("a", named_subject("a", "old"))
    subject = iri("http://example.org/s")
    triples = [(subject, iri(f"http://example.org/p{i}"), literal("v" * 100)) for i in range(40)]
    real = store._update
    seen = {"inserts": 0}

    def failing(conn: object, update: str) -> None:
        if update.startswith("INSERT"):
            seen["inserts"] += 1
            if seen["inserts"] == 3:
                raise driver.Error(2048, "column store error: out of memory")
        real(conn, update)

    monkeypatch.setattr(store, "_update", failing)
    with pytest.raises(StoreError, match="out of memory"):
        store.replace("a", triples)
    monkeypatch.setattr(store, "_update", real)
    assert store.count("a") == 0  # the two batches before the failure were rolled back


def test_engine_error_is_a_store_error_without_connection_details(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # an allowed function the engine does not know gets past validation
    monkeypatch.setattr("hybrid_rag.sparql._extra_functions", {XSD + "nonsense"})
    store, _ = make_store()
    store.replace("a", named_subject("a", "x"))
    with pytest.raises(StoreError) as info:
        store.query("SELECT ?x WHERE { ?x ?p ?o } ORDER BY xsd:nonsense(?x)", scope=["a"])
    assert "Server Connection" not in str(info.value)


def test_reconnects_after_idle_timeout_and_lost_connection() -> None:
    driver = FakeHdbcli()
    pool = HanaConnectionPool(FAKE_SETTINGS, driver=driver, idle_check_s=0.0)
    store = HanaGraphStore(pool=pool)
    store.replace("a", named_subject("a", "x"))
    driver.database.drop_connections()  # server closed the idle session
    assert store.count("a") == 3
    assert len(driver.database.connections) == 2
    pool2 = HanaConnectionPool(FAKE_SETTINGS, driver=driver, idle_check_s=3600)
    store2 = HanaGraphStore(pool=pool2)
    assert store2.count("a") == 3
    driver.database.drop_connections()  # dropped without the idle check noticing
    assert store2.count("a") == 3  # lost-connection error -> reopened and retried once
    store.close()
    store2.close()
    assert all(c.closed for c in driver.database.connections if c.connected)


def test_one_connection_per_thread_and_close_releases_all() -> None:
    store, driver = make_store()
    store.replace("a", named_subject("a", "x"))

    def work() -> None:
        for _ in range(5):
            assert store.count("a") == 3

    threads = [threading.Thread(target=work) for _ in range(5)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert driver.database.shared_connections() == []
    assert len(driver.database.connections) == 6
    store.close()
    assert all(c.closed for c in driver.database.connections)
    with pytest.raises(StoreError):
        store.count("a")


def test_repr_and_settings_never_show_the_password() -> None:
    store, driver = make_store()
    store.replace("a", named_subject("a", "x"))
    secret = FAKE_SETTINGS.password.get_secret_value()
    for text in (repr(store), repr(FAKE_SETTINGS), str(FAKE_SETTINGS), repr(store._pool)):
        assert secret not in text
    assert all("password" in keys for keys in driver.connect_keys)


def test_constructor_needs_settings_and_does_no_io() -> None:
    with pytest.raises(ConfigurationError):
        HanaGraphStore()
    driver = FakeHdbcli()
    HanaGraphStore(pool=HanaConnectionPool(FAKE_SETTINGS, driver=driver))
    assert driver.database.connections == []


def test_import_does_not_load_drivers() -> None:
    code = (
        "import sys, hybrid_rag, hybrid_rag.stores.hana, hybrid_rag.stores.sparql_http;"
        "from hybrid_rag.stores.hana import HanaGraphStore;"
        "print(sorted(m for m in ('hdbcli', 'httpx') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
