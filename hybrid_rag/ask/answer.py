"""The extractive answer (no LLM): which composer a question's analysis calls.

The composers live by job: ``_compare`` (a winner, the documents that meet a condition,
whether values agree), ``_lookup`` (a property of named documents), ``_passages``
(values and sentences read from passages) and ``_phrasing`` (how any of them is
written). The LLM synthesis call is in ``hybrid_rag.ask.compose``.
"""

from __future__ import annotations

from collections.abc import Sequence

from hybrid_rag.ask._aggregate import Grouped, aggregate_answer
from hybrid_rag.ask._collection import collection_answer
from hybrid_rag.ask._compare import category_answer, filtered_answer, ranked_answer, same_answer
from hybrid_rag.ask._lookup import lookup
from hybrid_rag.ask._passages import from_passages, passage_facts, prints_a_value
from hybrid_rag.ask._phrasing import MAX_CHARS, Composed, join_names
from hybrid_rag.ask.analysis import QuestionAnalysis
from hybrid_rag.models import Fact, Passage

__all__ = ["MAX_CHARS", "Composed", "compose_extractive", "passage_facts", "prints_a_value"]


def compose_extractive(
    a: QuestionAnalysis,
    facts: Sequence[Fact],
    passages: Sequence[Passage],
    *,
    max_chars: int = MAX_CHARS,
    kg_searched: bool = True,
    grouped: Grouped | None = None,
) -> Composed:
    """Short extractive answer: fact values with product names, or the best passage sentences.

    Args:
        a: the question's analysis.
        facts: what the KG chain found.
        passages: what the vector chain found, best first.
        max_chars: the longest answer text (a longer one is cut at a word with "…").
        kg_searched: the KG chain ran (``False`` in vector mode): only then may a
            value the passages do not print be called "not stated in the sheet";
            without it the answer says "not found in the passages read".
        grouped: how an aggregate query grouped ``facts`` (``KGResult.grouped``): the
            answer then counts the members per group, each cited.
    """
    limit = max_chars
    if a.collection and not kg_searched:  # vector mode reads passages, not every value
        text = "No answer: a question about the whole collection is answered from the graph."
        return Composed(text, (), False, False, "out_of_scope")
    if grouped is not None or a.aggregate:
        return aggregate_answer(a, facts, grouped or Grouped(queried=False), limit)
    if a.collection:
        return collection_answer(a, facts, limit)
    if a.intent in ("min", "max") and facts:
        return ranked_answer(a, facts, passages, limit)
    if a.intent == "filter" and a.polar and a.subjects:
        return category_answer(a, facts, passages, limit)
    if a.intent == "filter" and a.subjects:
        return filtered_answer(a, facts, limit)
    if a.intent == "same" and facts:
        return same_answer(a, facts, limit)
    if a.properties and a.subjects:  # lookups and procedures
        return lookup(a, facts, passages, limit, kg_searched=kg_searched)
    found = from_passages(a, passages, prefix="", limit=limit)
    if found.text is None and passages:
        where = (
            f"the {a.noun} of {join_names([p.label for p in a.subjects])}"
            if a.subjects
            else ("the documents in scope")
        )
        return Composed(
            f"Not stated: nothing in {where} answers this.",
            (),
            False,
            False,
            "not_in_documents",
        )
    return found
