"""Answers to aggregate queries: counts and groups the library reads off cited members.

A question that counts, groups or averages across the documents ("How many sheets per
signal word?", "Which supplier has the most sheets?") has no template: a chat model
writes an aggregate query (``COUNT``, ``GROUP BY``, ``HAVING`` ...). Its numbers are
stated by no source, so the KG chain runs, besides it, the query for the solutions it
aggregates (``hybrid_rag.sparql.aggregate_members``) and reads the evidence of each
member. The answer states what the library counts among those members, every member
cited; the model's own numbers are only in ``Answer.sparql``:

    3 sheets in 2 groups, as the graph query groups them (sheets per group: Danger: 2;
    Warning: 1). Danger: A [a p.2]; B [b p.3]. Warning: C [c p.2].
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from hybrid_rag.ask._collection import SHOWN
from hybrid_rag.ask._phrasing import Composed, cite, clip, plural
from hybrid_rag.ask.analysis import QuestionAnalysis
from hybrid_rag.models import Fact

__all__ = ["NO_MODEL", "Grouped", "aggregate_answer"]

SHOWN_GROUPS = 6
"""Groups whose members the text names (every group's count is given first;
``Answer.facts`` holds every member)."""
PER_GROUP = 2
"""Members the text names per group."""


@dataclass(frozen=True, slots=True)
class Grouped:
    """How an aggregate query grouped its members (``KGResult.grouped``).

    Attributes:
        keys: the query's ``GROUP BY`` variables (none: one group of all).
        labels: per fact of the chain's facts, in order, its group's key values.
        complete: whether every member was read (``False``: cut at the row cap; the
            counts are then lower bounds).
        queried: whether a model wrote a query that ran.
        model: whether a model was there to write one.
    """

    keys: tuple[str, ...] = ()
    labels: tuple[str, ...] = ()
    complete: bool = True
    queried: bool = True
    model: bool = True


NO_MODEL = Grouped(queried=False, model=False)
"""An aggregate question asked with no model to write its query."""


def aggregate_answer(
    a: QuestionAnalysis, facts: Sequence[Fact], grouped: Grouped, limit: int
) -> Composed:
    """The count of the members' documents, per group when the query grouped, each
    member with its values and citation."""
    if not grouped.queried:
        why = "none is configured" if not grouped.model else "none ran (see the errors)"
        text = (
            "Not answered: counting, grouping or averaging across the documents takes a "
            f"graph query written by a chat model, and {why}."
        )
        return Composed(text, (), False, False, "out_of_scope")
    if not facts:
        text = f"No {a.noun} in scope matches the graph query written for this question."
        return Composed(text, (), True, False, "not_in_documents")
    labels = grouped.labels if len(grouped.labels) == len(facts) else ("",) * len(facts)
    groups = _grouped(facts, labels)
    n = len({f.doc_id for f in facts})
    count = f"{'' if grouped.complete else 'at least '}{_docs(a, n)}"
    per_doc = all(set(docs) == {label} for label, docs in groups.items())
    if not grouped.keys or per_doc:  # one group of all, or one per document
        every: dict[str, list[Fact]] = {}
        for f in facts:
            every.setdefault(f.doc_id, []).append(f)
        shown = list(every.values())[:SHOWN]
        more = f"; and {n - len(shown)} more" if n > len(shown) else ""
        text = f"{_capital(count)} {'matches' if n == 1 else 'match'} the graph query: "
        text += "; ".join(_member(fs) for fs in shown) + more + "."
    else:  # the count of every group first (never cut), then each group's members
        ranked = sorted(groups.items(), key=lambda g: (-len(g[1]), g[0]))
        sizes = "; ".join(f"{_shown(label)}: {len(docs)}" for label, docs in ranked)
        parts = [_group(label, docs) for label, docs in ranked[:SHOWN_GROUPS]]
        n_groups = f"{len(groups)} group{'' if len(groups) == 1 else 's'}"
        text = f"{_capital(count)} in {n_groups}, as the graph query groups them "
        text += f"({plural(a.noun)} per group: {sizes}). " + " ".join(parts)
    cites = tuple(fs[0].evidence for docs in groups.values() for fs in docs.values())
    return Composed(clip(text, limit), tuple(dict.fromkeys(cites)), True, False)


def _grouped(facts: Sequence[Fact], labels: Sequence[str]) -> dict[str, dict[str, list[Fact]]]:
    """Members by group, then by document. Keys that differ only in case, spacing and
    punctuation ("Warning", "WARNING", "Warning!") are one group, shown as most of its
    members spell it."""
    spelt: dict[str, Counter[str]] = {}
    for label in labels:
        spelt.setdefault(_key(label), Counter())[label] += 1
    shown = {key: c.most_common(1)[0][0] for key, c in spelt.items()}
    groups: dict[str, dict[str, list[Fact]]] = {}
    for f, label in zip(facts, labels, strict=True):
        groups.setdefault(shown[_key(label)], {}).setdefault(f.doc_id, []).append(f)
    return groups


def _key(label: str) -> str:
    return re.sub(r"\W+", "", label.casefold()) or label


def _group(label: str, docs: dict[str, list[Fact]]) -> str:
    """A group's first members, cited, and how many more."""
    shown = list(docs.values())[:PER_GROUP]
    names = "; ".join(f"{fs[0].subject} {cite(fs[0].evidence)}" for fs in shown)
    more = f"; and {len(docs) - len(shown)} more" if len(docs) > len(shown) else ""
    return f"{_shown(label)}: {names}{more}."


def _member(fs: Sequence[Fact]) -> str:
    """A document, its values (how many, and the first two) and the citation."""
    values = list(dict.fromkeys(clip(f.value, 100) for f in fs))
    values = [v for v in values if v != fs[0].subject]
    if not values:
        return f"{fs[0].subject} {cite(fs[0].evidence)}"
    said = "; ".join(values[:2]) + ("; …" if len(values) > 2 else "")
    count = f"{len(values)} values: " if len(values) > 2 else ""
    return f"{fs[0].subject} ({count}{said} {cite(fs[0].evidence)})"


def _docs(a: QuestionAnalysis, n: int) -> str:
    return f"{n} {a.noun if n == 1 else plural(a.noun)}"


def _shown(label: str) -> str:
    """A group's key as a reader sees it: an IRI by its last part, a value clipped."""
    parts = [re.split(r"[#/]", v)[-1] if re.match(r"\w+:", v) else v for v in label.split("\t")]
    return clip(", ".join(p for p in parts if p) or "(no value)", 80)


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]
