"""Collection questions no template answers (counts per group, groups ranked by a
count, counts per document against a number): the model writes an aggregate query,
checked like any generated query; the library runs it and the query for its members,
and the answer counts those members, each cited.

End to end over real Safety Data Sheets (skipped when the corpus is absent) with the
model behind a loopback OpenAI-compatible server.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from hybrid_rag import HybridRAG, SparqlValidationError
from hybrid_rag.ask.kg import check_generated
from hybrid_rag.testing.llm_server import FakeLLMServer

SHEETS = [
    "alizarin-yellow-r-dry-stain-67aba56af2a97",
    "ammonium-thiocyanate-crystal-lab-grade-6761edd7ba691",
    "calcium-hydroxide-powder-acs-grade-67570e6c4e182",
    "castor-oil-lab-grade-67858c04f0a88",
    "ethanol-140-proof-70-denatured-alcohol-kosher-halal-67b63f21b13cb",
    "hexamethylene-tetramine-lab-grade-678ad9c94d7d2",
    "mercuric-chloride-powder-granular-995-acs-reagent-grade-6757549ac82e6",
    "nhexane-95-high-purity-grade-672e86651c837",
    "sodium-bicarbonate-lab-grade-6797efccbfe7f",
    "sodium-hydroxide-beads-lab-grade-670d5589d3be0",
    "triethanolamine-50-lab-grade-68641058eee58",
]
PREFIXES = "PREFIX msds: <http://hybrid-rag.org/msds#>\nPREFIX hr: <http://hybrid-rag.org/ns#>\n"
PER_SIGNAL_WORD = (
    "SELECT ?word (COUNT(DISTINCT ?doc) AS ?sheets) WHERE {\n"
    "  ?fact hr:property msds:signalWord ; hr:value ?word ; hr:doc ?doc }\n"
    "GROUP BY ?word ORDER BY DESC(?sheets)"
)
MANY_CLASSES = (
    "SELECT ?doc (COUNT(?fact) AS ?classes) WHERE {\n"
    "  ?fact hr:property msds:hasClassification ; hr:doc ?doc }\n"
    "GROUP BY ?doc HAVING (COUNT(?fact) > 3)"
)


class Writer:
    """A model on the loopback server that answers SPARQL prompts with ``queries`` in
    turn (the last one again when they run out) and records the prompts."""

    def __init__(self, *queries: str) -> None:
        self.queries = list(queries)
        self.prompts: list[str] = []

    def __call__(self, body: Mapping[str, Any]) -> str:
        messages = body["messages"]
        self.prompts.append(messages[-1]["content"])
        query = self.queries.pop(0) if len(self.queries) > 1 else self.queries[0]
        return f"```sparql\n{PREFIXES}{query}\n```"


@pytest.fixture(scope="module")
def store(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    files = [corpus / "laballey" / f"{n}.pdf" for n in SHEETS]
    if not all(f.exists() for f in files):
        pytest.skip("corpus sheets missing")
    path = tmp_path_factory.mktemp("aggregates") / "store"
    with HybridRAG(path=path, embedder="hashing") as rag:
        assert {r.status for r in rag.ingest_many(files)} == {"ingested"}
    return path


def _ask(store: Path, model: Writer, question: str, **options: Any) -> Any:
    from hybrid_rag.providers import OpenAILLM

    with FakeLLMServer(chat=model) as server:
        llm = OpenAILLM("gpt-test", base_url=server.openai_url, api_key="k", max_retries=0)
        with HybridRAG(path=store, embedder="hashing", llm=llm, **options) as rag:
            return rag.ask(question)


def _stated(store: Path, prop: str) -> list[tuple[str, str]]:
    """``(doc, value)`` of every fact of a property: the expected answer, read directly."""
    query = (
        f"{PREFIXES}SELECT ?doc ?v WHERE {{ ?f hr:property msds:{prop} ; hr:doc ?doc ; "
        "hr:value ?v }"
    )
    with HybridRAG(path=store, embedder="hashing") as rag:
        rows = rag.graph.query(query, scope=rag.graph.doc_ids()).rows
    return [(r["doc"].value, r["v"].value) for r in rows]


def test_a_count_per_group_states_every_groups_count_and_cites_every_member(
    store: Path,
) -> None:
    model = Writer(PER_SIGNAL_WORD)
    ans = _ask(store, model, "Per signal word, how many of our sheets carry it?")
    stated = _stated(store, "signalWord")
    per_word = Counter(v for _d, v in set(stated))
    assert len(per_word) >= 2, "the sample needs two signal words"
    assert ans.text is not None and ans.abstention is None
    n = len({d for d, _v in stated})
    assert ans.text.startswith(f"{n} sheets in {len(per_word)} groups")
    for word, count in per_word.items():
        assert f"{word}: {count}" in ans.text
    # every member is a cited fact; the citations name each member's document
    assert {(f.doc_id, f.value) for f in ans.facts} == set(stated)
    assert {c.doc_id for c in ans.citations} == {d for d, _v in stated}
    assert all(f.evidence.quote and f.evidence.page >= 1 for f in ans.facts)
    # the model's query ran, then the query for its members; one model call, no synthesis
    generated = [a for a in ans.sparql if a.origin == "llm"]
    assert [a.error for a in generated] == [None, None]
    assert "COUNT" in generated[0].query and "SELECT DISTINCT ?fact ?word" in generated[1].query
    assert ans.usage.llm_calls == 1 and ans.generation == "extractive"


def test_a_bound_on_a_count_per_document_keeps_the_groups_having_keeps(store: Path) -> None:
    ans = _ask(store, Writer(MANY_CLASSES), "Which sheets list more than three hazard classes?")
    per_doc = Counter(d for d, _v in _stated(store, "hasClassification"))
    kept = {d for d, k in per_doc.items() if k > 3}
    assert kept and kept != set(per_doc), "the sample needs sheets on both sides of 3"
    assert {f.doc_id for f in ans.facts} == kept
    assert ans.text is not None and ans.text.startswith(f"{len(kept)} sheets match the graph query")
    assert f"{max(per_doc[d] for d in kept)} values: " in ans.text


def test_the_prompt_carries_aggregate_examples_made_from_the_ontology(store: Path) -> None:
    model = Writer(PER_SIGNAL_WORD)
    _ask(store, model, "How many sheets are there for each signal word?")
    prompt = model.prompts[0]
    assert "GROUP BY" in prompt and "COUNT(DISTINCT ?doc)" in prompt and "HAVING" in prompt
    assert "How many sheets" in prompt  # the documents' own noun
    assert len(prompt) / 3 < 1500


def test_an_aggregate_over_no_fact_is_rejected_and_repaired(store: Path) -> None:
    unbound = (
        "SELECT ?word (COUNT(?s) AS ?n) WHERE { ?s hr:property msds:signalWord ; "
        "hr:value ?word } GROUP BY ?word"
    )
    model = Writer(unbound, PER_SIGNAL_WORD)
    ans = _ask(store, model, "Per signal word, how many of our sheets carry it?")
    first, *rest = [a for a in ans.sparql if a.origin != "template"]
    assert first.error is not None and first.error.startswith("rejected: ")
    assert "?fact" in first.error and first.rows == 0
    assert "?fact" in model.prompts[1]  # the repair request says why
    assert rest and rest[0].origin == "repair" and ans.facts
    assert ans.usage.llm_calls == 2


def test_without_a_model_an_aggregate_question_is_not_answered_by_a_template(
    store: Path,
) -> None:
    with HybridRAG(path=store, embedder="hashing") as rag:
        ans = rag.ask("Which supplier has the most sheets?")
    assert ans.abstention == "out_of_scope" and not ans.facts
    assert ans.text is not None and "written by a chat model" in ans.text


@pytest.mark.parametrize(
    "query",
    [
        "SELECT (COUNT(DISTINCT ?doc) AS ?n) WHERE { ?fact hr:doc ?doc }",
        "SELECT ?v (COUNT(?fact) AS ?n) WHERE { ?fact hr:value ?v } GROUP BY ?v "
        "HAVING (COUNT(?fact) > 2)",
    ],
)
def test_check_generated_accepts_an_aggregate_over_facts(query: str) -> None:
    checked = check_generated(PREFIXES + query, allowed_graphs=[])
    assert checked.rstrip().endswith("LIMIT 1000")


@pytest.mark.parametrize(
    ("query", "why"),
    [
        ("SELECT (COUNT(?s) AS ?n) WHERE { ?s hr:doc ?doc }", "?fact"),
        (
            "SELECT ?v (COUNT(?fact) AS ?n) WHERE { ?fact hr:value ?v } GROUP BY (STR(?v))",
            "GROUP BY",
        ),
        (
            "SELECT (COUNT(?fact) AS ?n) WHERE { SERVICE <http://x.org/s> { ?fact ?p ?o } }",
            "SERVICE",
        ),
    ],
)
def test_check_generated_rejects_an_aggregate_it_cannot_cite(query: str, why: str) -> None:
    with pytest.raises(SparqlValidationError, match=why.replace("?", r"\?")):
        check_generated(PREFIXES + query, allowed_graphs=[])


def test_members_of_a_grouped_aggregate_keep_its_groups() -> None:
    from hybrid_rag.sparql import aggregate_members, validate_query

    top = PREFIXES + PER_SIGNAL_WORD + " LIMIT 1"
    members = aggregate_members(top)
    assert members is not None and members.keys == ("word",)
    validate_query(members.query)
    # the aggregate itself (its ORDER BY and LIMIT: the top group) joined on its key
    assert "LIMIT 1 }" in members.query and members.query.startswith(PREFIXES)
    assert aggregate_members(PREFIXES + "SELECT ?fact WHERE { ?fact hr:doc ?d }") is None
