"""The time budget is a promise: ``ask(timeout=T)`` returns within ``T + 1`` s, whatever runs.

Issue 12's run: ``ask(timeout=3)`` returned after 24.7 s on a validated, read-only but
expensive query an LLM wrote; a larger product aborted the process on memory. Here a
hostile ``FunctionLLM`` writes a query that passes every check (read-only, scoped, no
cartesian product, a row cap) yet joins the sheets' facts four ways and filters every row
out: in-process oxigraph runs it for minutes (measured: still running after 90 s). The
ask must come back in time with a ``timeout`` chain error, the query's worker process
must be gone, and the next ask must work.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from hybrid_rag import HybridRAG
from hybrid_rag._vocab import HR
from hybrid_rag.ask.kg import check_generated
from hybrid_rag.errors import QueryTimeoutError
from hybrid_rag.models import ChatMessage
from hybrid_rag.rdf import SparqlResult
from hybrid_rag.samples import sample_pdfs
from hybrid_rag.stores.local_vectors import LocalVectorStore
from hybrid_rag.stores.oxigraph import OxigraphGraphStore
from hybrid_rag.testing import FunctionLLM

TIMEOUT = 3.0
SLOW = (
    f"SELECT ?fact WHERE {{ ?fact <{HR}status> ?s . ?f2 <{HR}status> ?s . "
    f'?f3 <{HR}status> ?s . ?f4 <{HR}status> ?s . FILTER(STR(?f4) = "nope") }}'
)
GOOD = f"SELECT ?fact WHERE {{ ?fact <{HR}property> ?p }} ORDER BY ?fact"
NO_TEMPLATE = "Which product's flash point is closest to its boiling point?"  # LLM SPARQL
TEMPLATE = "What is the flash point of Examplon Solvent 99?"


@pytest.fixture(scope="module")
def rag(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[HybridRAG, dict[str, str]]]:
    root = tmp_path_factory.mktemp("timeout")
    state = {"query": SLOW}

    def model(messages: Sequence[ChatMessage]) -> str:
        if "SPARQL" in messages[0].content:
            return f"```sparql\n{state['query']}\n```"
        return "No answer."

    llm = FunctionLLM(model)
    with HybridRAG(root / "store", embedder="hashing", llm=llm, timeout=TIMEOUT) as r:
        r.ingest_many(sample_pdfs(root / "pdfs"), raise_errors=True)
        yield r, state


def test_the_slow_query_passes_every_check(rag: tuple[HybridRAG, dict[str, str]]) -> None:
    r, _ = rag
    graphs = [r.graph.graph_iri(d.doc_id) for d in r.documents()]
    assert "LIMIT 1000" in check_generated(SLOW, allowed_graphs=graphs)


@pytest.mark.parametrize("mode", ["kg", "hybrid"])
def test_ask_returns_within_the_budget_and_stops_the_query(
    rag: tuple[HybridRAG, dict[str, str]], mode: Any
) -> None:
    r, state = rag
    state["query"] = SLOW
    graph = r.graph
    assert isinstance(graph, OxigraphGraphStore)
    killed = graph._processes.killed if graph._processes else 0
    t = time.perf_counter()
    answer = r.ask(NO_TEMPLATE, mode=mode)
    wall = time.perf_counter() - t
    assert wall < TIMEOUT + 1, wall
    assert [(e.chain, e.kind) for e in answer.errors if e.kind == "timeout"] == [("kg", "timeout")]
    assert answer.facts == []
    deadline = time.monotonic() + 5  # the worker learns of the deadline and kills the child
    processes = graph._processes
    assert processes is not None
    while processes.killed == killed and time.monotonic() < deadline:
        time.sleep(0.05)
    assert processes.killed == killed + 1
    assert processes._alive == len(processes._idle)  # no child is still working
    assert all(c.running() for c in processes._idle)


def test_the_process_survives_and_answers_next(rag: tuple[HybridRAG, dict[str, str]]) -> None:
    r, state = rag
    state["query"] = SLOW
    r.ask(NO_TEMPLATE, mode="kg")
    state["query"] = GOOD
    answer = r.ask(NO_TEMPLATE, mode="kg")
    assert [e.kind for e in answer.errors] == ["model_abstained"] and answer.facts
    # the collection template finds no member (its look-ups), the model's query, then its
    # facts' provenance
    origins = [a.origin for a in answer.sparql]
    assert origins[-2:] == ["llm", "template"] and set(origins[:-2]) == {"template"}


def test_bounded_query_reads_what_query_reads_and_caps_rows(
    rag: tuple[HybridRAG, dict[str, str]],
) -> None:
    r, _ = rag
    graph = r.graph
    assert isinstance(graph, OxigraphGraphStore)
    docs = [d.doc_id for d in r.documents()]
    for scope in (docs, docs[:1]):
        plain = graph.query(GOOD, scope=scope)
        bounded = graph.query_bounded(GOOD, scope=scope, timeout=30, max_rows=10_000)
        assert bounded == plain and len(plain.rows) > 10
    everything = graph.query(GOOD, scope=docs)
    capped = graph.query_bounded(GOOD, scope=docs, timeout=30, max_rows=7)
    assert len(capped.rows) == 7 and all(row in everything.rows for row in capped.rows)
    with pytest.raises(QueryTimeoutError):
        graph.query_bounded(SLOW, scope=docs, timeout=0.5, max_rows=10)


class _StuckGraph(OxigraphGraphStore):
    """An engine that neither answers nor stops (a hung server, a store with no bound)."""

    stuck = threading.Event()

    def query(self, sparql: str, *, scope: Sequence[str]) -> SparqlResult:
        if self.stuck.is_set() and "VALUES ?prop" in sparql:
            time.sleep(20)
        return super().query(sparql, scope=scope)


class _StuckVectors(LocalVectorStore):
    stuck = threading.Event()

    def search(self, vector: Any, *, k: int, doc_ids: Sequence[str] | None = None) -> Any:
        if self.stuck.is_set():
            time.sleep(20)
        return super().search(vector, k=k, doc_ids=doc_ids)


def test_a_store_that_never_returns_is_abandoned_at_the_deadline(tmp_path: Path) -> None:
    graph, vectors = _StuckGraph(tmp_path / "g"), _StuckVectors(tmp_path / "v")
    with HybridRAG(tmp_path, embedder="hashing", graph=graph, vectors=vectors, timeout=2) as r:
        r.ingest_many(sample_pdfs(tmp_path / "pdfs"), raise_errors=True)
        graph.stuck.set()
        t = time.perf_counter()
        answer = r.ask(TEMPLATE)
        assert time.perf_counter() - t < 3
        assert ("kg", "timeout") in [(e.chain, e.kind) for e in answer.errors]
        assert answer.passages  # the vector chain was not cut
        graph.stuck.clear()
        vectors.stuck.set()
        t = time.perf_counter()
        answer = r.ask(TEMPLATE)
        assert time.perf_counter() - t < 3
        assert ("vector", "timeout") in [(e.chain, e.kind) for e in answer.errors]
        assert answer.facts and "flash point" in (answer.text or "").lower()
        vectors.stuck.clear()
