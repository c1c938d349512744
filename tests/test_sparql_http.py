"""SparqlHttpStore against a real `oxigraph serve` process on a loopback port."""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from hybrid_rag.errors import ConfigurationError, SparqlValidationError, StoreError
from hybrid_rag.stores.sparql_http import (
    SparqlHttpStore,
    parse_sparql_json,
    parse_sparql_xml,
)
from hybrid_rag.testing._graph_contract import GraphStoreContract, product

pytest.importorskip("httpx", reason="SparqlHttpStore needs httpx (the [server] extra)")

NAME = "http://example.org/contract/name"
XSD_NOPE = "http://www.w3.org/2001/XMLSchema#nope"


def _oxigraph_binary() -> str | None:
    local = Path(sys.executable).with_name("oxigraph")
    return str(local) if local.exists() else shutil.which("oxigraph")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    binary = _oxigraph_binary()
    if binary is None:
        pytest.skip("the `oxigraph` server binary is not installed (pip install oxigraph)")
    port = _free_port()
    location = tmp_path_factory.mktemp("oxigraph")
    proc = subprocess.Popen(
        [binary, "serve", "--location", str(location), "--bind", f"127.0.0.1:{port}"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                if proc.poll() is not None:
                    pytest.skip("oxigraph serve exited at start")
                time.sleep(0.05)
        else:
            pytest.skip("oxigraph serve did not start within 20 s")
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()


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
    store.replace("a", product("a", "mine"))
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
