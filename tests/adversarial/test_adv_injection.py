"""Injection and scope-escape queries against ``validate_query`` and every graph store.

Each case of ``_injection_cases.CASES`` runs with the scope ``["a"]`` against:

* ``validate_query`` alone: updates, federation, vendor functions, ambiguous escapes
  and malformed text are rejected with :class:`SparqlValidationError`;
* the embedded Oxigraph store, ``SparqlHttpStore`` against a real ``oxigraph serve``,
  and ``SparqlHttpStore`` against a real Virtuoso whose *query* account is the
  privileged ``dba`` (the worst deployment: only the validator stands between a query
  and ``bif:exec``).

For every store case: the store holds exactly the same triples afterwards (no write),
no row carries a value outside the scope and no ``ASK`` is true (no out-of-scope read),
and anything raised is a typed :class:`HybridRAGError`.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from _injection_cases import (  # type: ignore[import-not-found]
    CASES,
    DOC_A,
    NAME,
    OTHER_GRAPH,
    OUT_OF_SCOPE,
    VALID_READS,
)

from hybrid_rag.errors import HybridRAGError, SparqlValidationError
from hybrid_rag.rdf import SparqlResult, iri, literal
from hybrid_rag.sparql import validate_query

if TYPE_CHECKING:
    from tests.conftest import Virtuoso

PLANT_OTHER = f"INSERT DATA {{ GRAPH <{OTHER_GRAPH}> {{ <urn:o> <{NAME}> 'SECRET-other' }} }}"
PLANT_DEFAULT = f"INSERT DATA {{ <urn:d> <{NAME}> 'SECRET-default' }}"
COUNT_GRAPHS = "SELECT ?g (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } } GROUP BY ?g"
COUNT_DEFAULT = "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }"


def _doc(doc: str, name: str) -> list[Any]:
    s = iri(f"urn:hybrid-rag:adv:{doc}")
    return [(s, iri(NAME), literal(name)), (s, iri(NAME + "2"), literal(f"{doc}-second"))]


@dataclass
class Target:
    """A populated store, and a way to read its whole content around the validator."""

    store: Any
    snapshot: Callable[[], Any]


def _leaks(result: SparqlResult) -> list[str]:
    if result.boolean:
        return ["ASK saw data outside the scope"]
    values = [t.value for row in result.rows for t in row.values()]
    return [v for v in values if any(marker in v for marker in OUT_OF_SCOPE)]


# -- validate_query alone ---------------------------------------------------------------


@pytest.mark.parametrize("query", CASES)
def test_validator_rejects_every_attack(query: str) -> None:
    if query in VALID_READS:  # reads whose scope only the store's dataset can hold
        assert validate_query(query, allowed_graphs=[DOC_A]) == query
        return
    with pytest.raises(SparqlValidationError):
        validate_query(query, allowed_graphs=[DOC_A])


# -- the stores ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def oxigraph_target(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Target]:
    from hybrid_rag.stores.oxigraph import OxigraphGraphStore

    store = OxigraphGraphStore(tmp_path_factory.mktemp("adv") / "graph")
    store.replace("a", _doc("a", "mine"))
    store.replace("b", _doc("b", "SECRET-b"))
    db = store._db()
    db.update(PLANT_OTHER)
    db.update(PLANT_DEFAULT)

    def snapshot() -> Any:
        return sorted(str(q) for q in db)

    yield Target(store, snapshot)
    store.close()


def _http_target(query_url: str, update_url: str, auth: Any, base: str) -> Target:
    import httpx

    from hybrid_rag.stores.sparql_http import SparqlHttpStore, parse_sparql_results

    store = SparqlHttpStore(query_url, update_url, auth=auth, graph_base=base)
    store.replace("a", _doc("a", "mine"))
    store.replace("b", _doc("b", "SECRET-b"))
    raw = httpx.Client(auth=auth)

    def snapshot() -> Any:
        headers = {"Accept": "application/sparql-results+json"}
        response = raw.post(query_url, data={"query": COUNT_GRAPHS}, headers=headers)
        response.raise_for_status()
        result = parse_sparql_results(response.content, response.headers["content-type"])
        return sorted((r["g"].value, r["n"].value) for r in result.rows)

    return Target(store, snapshot)


@pytest.fixture(scope="module")
def oxigraph_http_target(oxigraph_server: str) -> Iterator[Target]:
    import httpx

    httpx.post(f"{oxigraph_server}/update", data={"update": "DROP ALL"}).raise_for_status()
    for plant in (PLANT_OTHER, PLANT_DEFAULT):
        httpx.post(f"{oxigraph_server}/update", data={"update": plant}).raise_for_status()
    base = DOC_A[:-1]
    target = _http_target(f"{oxigraph_server}/query", f"{oxigraph_server}/update", None, base)
    yield target
    target.store.close()


@pytest.fixture(scope="module")
def virtuoso_target(virtuoso: Virtuoso) -> Iterator[Target]:
    import httpx

    auth = httpx.DigestAuth(virtuoso.user, virtuoso.password)
    httpx.post(virtuoso.update_url, data={"update": PLANT_OTHER}, auth=auth).raise_for_status()
    base = DOC_A[:-1]
    # the privileged account runs the queries too: only the validator protects the store
    target = _http_target(virtuoso.update_url, virtuoso.update_url, auth, base)
    yield target
    for doc in ("a", "b"):
        target.store.delete(doc)
    target.store.close()


TARGETS = ["oxigraph_target", "oxigraph_http_target", "virtuoso_target"]


@pytest.mark.parametrize("query", CASES)
@pytest.mark.parametrize("target_name", TARGETS)
def test_store_is_not_written_and_scope_holds(
    target_name: str, query: str, request: pytest.FixtureRequest
) -> None:
    target: Target = request.getfixturevalue(target_name)
    before = target.snapshot()
    try:
        result = target.store.query(query, scope=["a"])
    except HybridRAGError:
        result = SparqlResult()
    assert target.snapshot() == before, "the store changed"
    assert _leaks(result) == []


def test_the_suite_is_large_enough() -> None:
    assert len(CASES) >= 150
    assert len(set(CASES)) == len(CASES)


def test_a_scoped_query_still_answers(tmp_path: Path) -> None:
    """The suite's stores are not vacuous: an honest query sees document a."""
    from hybrid_rag.stores.oxigraph import OxigraphGraphStore

    with OxigraphGraphStore(tmp_path / uuid.uuid4().hex) as store:
        store.replace("a", _doc("a", "mine"))
        rows = store.query(f"SELECT ?n WHERE {{ ?s <{NAME}> ?n }}", scope=["a"]).rows
        assert [r["n"].value for r in rows] == ["mine"]
