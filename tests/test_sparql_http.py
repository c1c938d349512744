"""SparqlHttpStore against a real `oxigraph serve` process on a loopback port."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest

from hybrid_rag.errors import ConfigurationError, SparqlValidationError, StoreError
from hybrid_rag.stores.sparql_http import (
    SparqlHttpStore,
    parse_sparql_json,
    parse_sparql_xml,
)
from hybrid_rag.testing._graph_contract import GraphStoreContract, named_subject

if TYPE_CHECKING:
    from tests.conftest import Virtuoso

pytest.importorskip("httpx", reason="SparqlHttpStore needs httpx (the [server] extra)")

NAME = "http://example.org/contract/name"
XSD_NOPE = "http://www.w3.org/2001/XMLSchema#nope"


@pytest.fixture
def server(oxigraph_server: str) -> str:
    """The session's ``oxigraph serve`` (tests/conftest.py)."""
    return oxigraph_server


def _clear(base: str) -> None:
    import httpx

    httpx.post(f"{base}/update", data={"update": "DROP ALL"}).raise_for_status()


def _store(base: str, **options: object) -> SparqlHttpStore:
    return SparqlHttpStore(f"{base}/query", f"{base}/update", **options)  # type: ignore[arg-type]


class TestSparqlHttpContract(GraphStoreContract):
    @pytest.fixture
    def graph_store(self, server: str) -> Iterator[SparqlHttpStore]:
        _clear(server)
        with _store(server) as store:
            yield store


def test_scope_cannot_be_widened_and_default_graph_is_not_read(server: str) -> None:
    import httpx

    _clear(server)
    store = _store(server)
    store.replace("a", named_subject("a", "mine"))
    planted = (
        f"INSERT DATA {{ <urn:x> <{NAME}> 'planted' . GRAPH <urn:o> {{ <urn:y> <{NAME}> 'f' }} }}"
    )
    httpx.post(f"{server}/update", data={"update": planted}).raise_for_status()
    q = f"SELECT ?n WHERE {{ {{ ?s <{NAME}> ?n }} UNION {{ GRAPH ?g {{ ?s <{NAME}> ?n }} }} }}"
    assert {r["n"].value for r in store.query(q, scope=["a"]).rows} == {"mine"}
    with pytest.raises(SparqlValidationError):
        store.query(f"SELECT ?n FROM <urn:o> WHERE {{ ?s <{NAME}> ?n }}", scope=["a"])
    assert store.doc_ids() == ["a"]
    store.close()


def test_large_writes_are_batched(server: str) -> None:
    from hybrid_rag.rdf import iri, literal

    _clear(server)
    store = _store(server, max_request_bytes=2048)
    s = iri("http://example.org/s")
    triples = [(s, iri(f"http://example.org/p{i}"), literal("v" * 80)) for i in range(100)]
    assert store.replace("big", triples) == 100
    assert store.replace("big", triples[:3]) == 3
    store.close()


def test_engine_errors_and_unreachable_endpoint() -> None:
    store = SparqlHttpStore("http://127.0.0.1:9/query", timeout=0.5, retries=1)
    with pytest.raises(StoreError, match="unreachable"):
        store.query("SELECT * WHERE { ?s ?p ?o }", scope=["a"])
    store.close()


def test_engine_error_text_is_kept(server: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # an allowed function the engine does not know gets past validation
    monkeypatch.setattr("hybrid_rag.sparql._extra_functions", {XSD_NOPE})
    store = _store(server)
    with pytest.raises(StoreError, match="HTTP 4"):
        store.query("SELECT ?x WHERE { ?x ?p ?o } ORDER BY xsd:nope(?x)", scope=["a"])
    store.close()


def test_auth_is_sent_and_never_shown() -> None:
    import httpx

    seen: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request.headers.get("authorization", ""))
        return httpx.Response(
            200,
            json={"head": {"vars": []}, "boolean": True},
            headers={"content-type": "application/sparql-results+json"},
        )

    store = SparqlHttpStore("http://kg.example/q", bearer_token="tok-SECRET")
    store._client = httpx.Client(
        transport=httpx.MockTransport(handler), headers={"Authorization": "Bearer tok-SECRET"}
    )
    assert store.delete("a") is True
    assert seen and seen[0] == "Bearer tok-SECRET"
    assert "SECRET" not in repr(store)
    basic = SparqlHttpStore("http://kg.example/q", username="u", password="pw-SECRET")
    assert "SECRET" not in repr(basic)
    with pytest.raises(ConfigurationError):
        SparqlHttpStore("http://x/q", username="u", password="p", bearer_token="t")


def test_result_parsers_agree() -> None:
    js = (
        '{"head":{"vars":["a","b","c"]},"results":{"bindings":[{"a":{"type":"uri","value":"urn:x"},'
        '"b":{"type":"literal","value":"v","xml:lang":"en"},'
        '"c":{"type":"literal","value":"1","datatype":"http://www.w3.org/2001/XMLSchema#integer"}}]}}'
    )
    xml = (
        '<sparql xmlns="http://www.w3.org/2005/sparql-results#"><head><variable name="a"/>'
        '<variable name="b"/><variable name="c"/></head><results><result>'
        '<binding name="a"><uri>urn:x</uri></binding>'
        '<binding name="b"><literal xml:lang="en">v</literal></binding>'
        '<binding name="c"><literal datatype="http://www.w3.org/2001/XMLSchema#integer">1</literal>'
        "</binding></result></results></sparql>"
    )
    assert parse_sparql_json(js) == parse_sparql_xml(xml)
    assert parse_sparql_json('{"head":{},"boolean":false}').boolean is False
    with pytest.raises(StoreError):
        parse_sparql_json("not json")


# -- the same contract against a real Virtuoso (Debian's virtuoso-opensource) ------------


def _virtuoso_store(v: Virtuoso, base: str | None = None, **options: Any) -> SparqlHttpStore:
    """A store with its own graph base, so tests never see each other's graphs."""
    import httpx

    base = base or f"urn:hybrid-rag:test:{uuid.uuid4().hex}:doc:"
    return SparqlHttpStore(
        v.query_url,
        v.update_url,
        graph_base=base,
        update_auth=httpx.DigestAuth(v.user, v.password),
        **options,
    )


class TestVirtuosoContract(GraphStoreContract):
    @pytest.fixture
    def graph_store(self, virtuoso: Virtuoso) -> Iterator[SparqlHttpStore]:
        base = f"urn:hybrid-rag:test:{uuid.uuid4().hex}:doc:"
        with _virtuoso_store(virtuoso, base) as store:
            yield store
        with _virtuoso_store(virtuoso, base) as cleanup:  # the test may have closed it
            for doc in cleanup.doc_ids():
                cleanup.delete(doc)


def test_virtuoso_queries_run_on_a_read_only_account(virtuoso: Virtuoso) -> None:
    import httpx

    store = _virtuoso_store(virtuoso)
    store.replace("a", named_subject("a", "mine"))
    planted = "INSERT DATA { GRAPH <urn:planted> { <urn:x> <urn:p> 'evil' } }"
    anonymous = httpx.post(virtuoso.query_url, data={"update": planted})
    assert anonymous.status_code >= 400  # the query account cannot write at all
    no_update_auth = SparqlHttpStore(virtuoso.query_url, virtuoso.update_url)
    with no_update_auth, pytest.raises(StoreError, match="HTTP 401"):
        no_update_auth.replace("b", named_subject("b", "x"))
    assert store.delete("a") is True
    store.close()


def test_virtuoso_scope_is_held_by_the_from_rewrite(virtuoso: Virtuoso) -> None:
    store = _virtuoso_store(virtuoso)
    store.replace("a", named_subject("a", "mine"))
    store.replace("b", named_subject("b", "theirs"))
    q = f"SELECT ?n WHERE {{ {{ ?s <{NAME}> ?n }} UNION {{ GRAPH ?g {{ ?s <{NAME}> ?n }} }} }}"
    assert {r["n"].value for r in store.query(q, scope=["a"]).rows} == {"mine"}
    for doc in ("a", "b"):
        store.delete(doc)
    store.close()


def test_virtuoso_blank_nodes_are_skolemised_per_document(virtuoso: Virtuoso) -> None:
    from hybrid_rag.rdf import Term, iri, literal
    from hybrid_rag.stores.sparql_http import GENID

    store = _virtuoso_store(virtuoso)
    node = Term("n1", "bnode")
    triples = [(iri("urn:s"), iri(NAME), node), (node, iri(NAME), literal("inner"))]
    store.replace("a", triples)
    store.replace("b", triples)
    q = f"SELECT ?b WHERE {{ <urn:s> <{NAME}> ?b }}"
    a = store.query(q, scope=["a"]).rows[0]["b"]
    b = store.query(q, scope=["b"]).rows[0]["b"]
    assert a.kind == "iri" and a.value.startswith(GENID) and a != b
    for doc in ("a", "b"):
        store.delete(doc)
    store.close()


# -- retries, credentials and blank nodes without a server -------------------------------


def _mock_store(handler: Any, **options: Any) -> SparqlHttpStore:
    import httpx

    store = SparqlHttpStore("http://kg.example/q", "http://kg.example/u", **options)
    store._client = httpx.Client(transport=httpx.MockTransport(handler), auth=store._auth)
    return store


_TRUE = {"head": {}, "boolean": True}


@pytest.mark.parametrize(("status", "calls"), [(500, 1), (400, 1), (502, 3), (503, 3), (429, 3)])
def test_only_transient_statuses_are_retried(status: int, calls: int) -> None:
    import httpx

    seen: list[int] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(1)
        return httpx.Response(status, text="engine says no", headers={"retry-after": "0"})

    store = _mock_store(handler, retries=2)
    with pytest.raises(StoreError, match=f"HTTP {status}"):
        store.query("ASK { ?s ?p ?o }", scope=["a"])
    assert len(seen) == calls


def test_a_transient_failure_then_success_is_retried_until_it_works() -> None:
    import httpx

    answers = iter(
        [httpx.Response(503, headers={"retry-after": "0"}), httpx.Response(200, json=_TRUE)]
    )
    store = _mock_store(lambda request: next(answers), retries=2)
    assert store.query("ASK { ?s ?p ?o }", scope=["a"]).boolean is True


def test_connection_errors_are_retried_read_timeouts_are_not() -> None:
    import httpx

    calls: list[str] = []

    def refused(request: httpx.Request) -> httpx.Response:
        calls.append("connect")
        raise httpx.ConnectError("refused", request=request)

    with pytest.raises(StoreError, match="unreachable"):
        _mock_store(refused, retries=2).query("ASK { ?s ?p ?o }", scope=["a"])
    assert len(calls) == 3

    def slow(request: httpx.Request) -> httpx.Response:
        calls.append("read")
        raise httpx.ReadTimeout("too slow", request=request)

    with pytest.raises(StoreError, match="ReadTimeout"):
        _mock_store(slow, retries=2).query("ASK { ?s ?p ?o }", scope=["a"])
    assert calls.count("read") == 1


def test_update_url_takes_its_own_credentials() -> None:
    import httpx

    seen: dict[str, str] = {}

    def handler(request: httpx.Request) -> httpx.Response:
        seen[request.url.path] = request.headers.get("authorization", "")
        return httpx.Response(200, json=_TRUE)

    store = _mock_store(handler, auth=("reader", "r-SECRET"), update_auth=("writer", "w-SECRET"))
    store.delete("a")  # an ASK on the query URL, then DROP on the update URL
    assert seen["/q"] == httpx.BasicAuth("reader", "r-SECRET")._auth_header
    assert seen["/u"] == httpx.BasicAuth("writer", "w-SECRET")._auth_header
    assert "SECRET" not in repr(store)
    digest = SparqlHttpStore("http://x/q", update_auth=httpx.DigestAuth("w", "d-SECRET"))
    assert "DigestAuth" in repr(digest) and "SECRET" not in repr(digest)
    with pytest.raises(ConfigurationError):
        SparqlHttpStore("http://x/q", auth=("u", "p"), bearer_token="t")


def test_blank_nodes_become_skolem_iris_unique_per_graph() -> None:
    from hybrid_rag.rdf import Term, iri, literal
    from hybrid_rag.stores.sparql_http import GENID, skolemize

    node = Term("n1", "bnode")
    triples = [(iri("urn:s"), iri(NAME), node), (node, iri(NAME), literal("inner"))]
    a, b = skolemize("urn:g:a", triples), skolemize("urn:g:b", triples)
    assert a[0][2] == a[1][0] and a[0][2].kind == "iri" and a[0][2].value.startswith(GENID)
    assert a[0][2] != b[0][2]
    assert skolemize("urn:g:a", triples[:0]) == []
