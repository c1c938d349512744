"""Answer composition as a component: extractive text, or one grounded LLM synthesis call.

``AnswerComposer`` turns what the chains found into the answer text and its
citations. Its options are for readers: how long an answer may be and how citations are
written. The extractive rules live in ``hybrid_rag.ask.answer``.
"""

from __future__ import annotations

import re
import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, replace
from functools import partial
from typing import Literal

import anyio

from hybrid_rag import _budget
from hybrid_rag.ask._aggregate import Grouped
from hybrid_rag.ask.analysis import QuestionAnalysis
from hybrid_rag.ask.answer import MAX_CHARS, Composed, compose_extractive, passage_facts
from hybrid_rag.ask.conflicts import conflict_note, find_conflicts, involving
from hybrid_rag.ask.grounding import Grounding, check_grounding, renumber
from hybrid_rag.errors import HybridRAGError, InputError, LLMTimeoutError
from hybrid_rag.models import ChainError, ChatMessage, Evidence, Fact, Passage, Usage
from hybrid_rag.protocols import LLMProvider

__all__ = ["AnswerComposer", "CitationStyle", "Synthesis"]

CitationStyle = Literal["inline", "numbered"]
"""``inline``: ``[doc-id p.4]`` after each statement; ``numbered``: ``[1]`` markers that
index ``Answer.citations`` (1-based), as chat UIs show footnotes."""

_INLINE = re.compile(r"\[([A-Za-z0-9_.-]{1,128}) p\.(\d+)\]")


@dataclass(frozen=True, slots=True)
class Synthesis:
    """The text of one grounded LLM call, the evidence it cites, and what it cost."""

    text: str
    citations: tuple[Evidence, ...]
    usage: Usage
    grounding: Grounding | None = None
    cited_texts: tuple[str, ...] = ()
    """The text of each cited source as the model saw it, in ``citations`` order."""


@dataclass(frozen=True, slots=True)
class AnswerComposer:
    """Writes the answer from facts and passages, extractively or with one LLM call.

    Args:
        max_chars: the longest extractive answer (default 1,000 characters, about a
            paragraph). A longer text ends at its last whole sentence, else at a word with
            "…"; the value asked for always comes first, and every value found is in
            ``Answer.facts`` whatever the length. Procedures (first aid, storage ...) are
            quoted whole up to this length. Must be between 80 and 4,000. A sentence saying
            that documents disagree (same subject, different values) is never cut: the rest
            is shortened to make room for it.
        citations: how citations appear in the text; see ``CitationStyle``.
        synthesis_max_tokens: the most tokens the synthesis call may write.

    Example:
        >>> from hybrid_rag.ask.compose import AnswerComposer
        >>> AnswerComposer(max_chars=600, citations="numbered").max_chars
        600
    """

    max_chars: int = MAX_CHARS
    citations: CitationStyle = "inline"
    synthesis_max_tokens: int = 600

    def __post_init__(self) -> None:
        if not isinstance(self.max_chars, int) or not 80 <= self.max_chars <= 4000:
            raise InputError(f"max_chars must be an int in 80..4000, not {self.max_chars!r}")
        if self.citations not in ("inline", "numbered"):
            raise InputError(f"citations must be 'inline' or 'numbered', not {self.citations!r}")

    def extractive(
        self,
        a: QuestionAnalysis,
        facts: Sequence[Fact],
        passages: Sequence[Passage],
        *,
        kg_searched: bool = True,
        grouped: Grouped | None = None,
    ) -> Composed:
        """The extractive answer (no LLM): fact values with products, or passage sentences.

        When documents that name the same product state different values, a sentence
        lists each value with its sources (``hybrid_rag.ask.conflicts``). Without the
        graph (``kg_searched=False``, vector mode) the values are the lines the passages
        print (``passage_facts``), and no value is called "not stated". ``grouped``: how
        an aggregate query grouped ``facts`` (``compose_extractive``).
        """
        write = partial(compose_extractive, a, facts, passages, kg_searched=kg_searched,
                        grouped=grouped)  # fmt: skip
        composed = write(max_chars=self.max_chars)
        text = composed.text or ""
        shown = [e.doc_id for e in composed.citations if _inline(e) in text]
        stated = facts if kg_searched else passage_facts(a, passages)
        conflicts = [] if a.collection else involving(find_conflicts(stated), text, shown)
        if conflicts:  # written again, shorter, to leave room for the note
            note = conflict_note(conflicts, _inline)
            limit = max(80, self.max_chars - len(note) - 1)
            composed = write(max_chars=limit)
            composed = _with_note(composed, note, stated, from_graph=kg_searched)
        if self.citations == "numbered" and composed.text is not None:
            return replace(composed, text=_numbered(composed.text, composed.citations))
        return composed

    async def synthesise(
        self,
        llm: LLMProvider,
        question: str,
        facts: Sequence[Fact],
        passages: Sequence[Passage],
        *,
        draft: str | None,
        deadline: float,
        conflict_facts: Sequence[Fact] | None = None,
    ) -> Synthesis | ChainError:
        """One grounded LLM call over numbered sources, within what is left of the budget.

        The model's text passes the grounding check (``hybrid_rag.ask.grounding``):
        markers that point nowhere are removed, the rest renumbered to index the returned
        citations, and numbers no cited source states are listed in ``grounding``.
        Documents that disagree among ``conflict_facts`` (default ``facts``) get the
        disagreement sentence appended.

        Returns:
            The synthesis, or a ``ChainError`` (kind ``llm`` or
            ``timeout``) that the supervisor reports while serving the extractive answer.
        """
        skipped = _no_call_left()
        if skipped is not None:
            return skipped
        messages, evidence = synthesis_messages(question, facts, passages, draft=draft)
        done = None
        left = max(1.0, deadline - time.perf_counter())
        with anyio.move_on_after(left):
            try:
                done = await llm.complete(messages, max_tokens=self.synthesis_max_tokens)
            except LLMTimeoutError as exc:
                return ChainError(chain="synthesis", kind="timeout", message=_out_of_time(exc))
            except HybridRAGError as exc:
                return ChainError(chain="synthesis", kind="llm", message=str(exc))
        if done is None:
            return ChainError(chain="synthesis", kind="timeout", message=_out_of_time(left))
        used = Usage(
            llm_calls=1, prompt_tokens=done.prompt_tokens, completion_tokens=done.completion_tokens
        )
        noted = facts if conflict_facts is None else conflict_facts
        return _noted(_grounded(done.text, question, messages, evidence, used), noted)

    async def synthesise_stream(
        self,
        llm: LLMProvider,
        question: str,
        facts: Sequence[Fact],
        passages: Sequence[Passage],
        *,
        draft: str | None,
        deadline: float,
        conflict_facts: Sequence[Fact] | None = None,
    ) -> AsyncIterator[str | Synthesis | ChainError]:
        """``synthesise`` with the model's text yielded piece by piece as it arrives.

        The last item is the checked ``Synthesis`` of the whole text, or a
        ``ChainError`` when the call failed or ran out of time
        (pieces already yielded are then superseded by the extractive answer).
        """
        skipped = _no_call_left()
        if skipped is not None:
            yield skipped
            return
        messages, evidence = synthesis_messages(question, facts, passages, draft=draft)
        pieces: list[str] = []
        failure: ChainError | None = None
        it = llm.stream(messages, max_tokens=self.synthesis_max_tokens)
        try:
            while failure is None:
                piece, failure = await _next_piece(it, deadline)
                if piece is None:
                    break
                pieces.append(piece)
                yield piece
        finally:  # the contract: an abandoned stream is closed, freeing its slot
            close = getattr(it, "aclose", None)
            if close is not None:
                await close()
        if failure is not None:
            yield failure
            return
        used = Usage(llm_calls=1, completion_tokens=len("".join(pieces).split()))
        synth = _grounded("".join(pieces), question, messages, evidence, used)
        noted = _noted(synth, facts if conflict_facts is None else conflict_facts)
        if noted.text != synth.text:
            yield noted.text[len(synth.text) :]
        yield noted


async def _next_piece(
    it: AsyncIterator[str], deadline: float
) -> tuple[str | None, ChainError | None]:
    """The next piece (``None`` at the end) or why there is none, within the deadline."""
    left = max(0.0, deadline - time.perf_counter())
    with anyio.move_on_after(left):
        try:
            return await it.__anext__(), None
        except StopAsyncIteration:
            return None, None
        except LLMTimeoutError as exc:
            return None, ChainError(chain="synthesis", kind="timeout", message=_out_of_time(exc))
        except HybridRAGError as exc:
            return None, ChainError(chain="synthesis", kind="llm", message=str(exc))
    return None, ChainError(chain="synthesis", kind="timeout", message=_out_of_time(left))


def _out_of_time(cause: float | LLMTimeoutError) -> str:
    """Why a synthesis was cut, for ``Answer.errors``."""
    if isinstance(cause, LLMTimeoutError):
        return f"{cause}; the extractive answer is served"
    return (
        f"the model ran out of time: no complete reply within the {cause:.1f} s left of the "
        "question's budget (ask(..., timeout=...) sets it); the extractive answer is served"
    )


def _no_call_left() -> ChainError | None:
    """A ``ChainError`` when the question has no model call left for its answer."""
    budget = _budget.current()
    if budget is None or budget.take_call():
        return None
    return ChainError(
        chain="synthesis",
        kind="no_call_left",
        message=f"the question's {budget.max_calls} model calls were spent before the "
        "answer; the extractive answer is served",
    )


_SYNTH = """Answer the question using only the numbered sources. Cite sources like [1].
If the sources do not contain the answer, say that the documents do not state it.
Be brief (at most 3 sentences) and answer the question in the first sentence."""

_STATUS = {"unavailable": "the document says it is not available"}
_SOURCE_TAG = re.compile(r"\s*\((?:stated|the document says it is not available); [\w.-]+ p\.\d+\)")
_LEAD_IN = re.compile(
    r"^\s*(?:(?:the|my)\s+)?(?:direct\s+|short\s+|final\s+)?answer(?:\s+is)?\s*:\s*", re.I
)
"""A reply's announcement of itself ("The direct answer is: ..."), not part of the answer."""

MAX_FACTS = 8
"""Facts a synthesis prompt carries (those of the asked properties first)."""
MAX_PASSAGES = 4
"""Passages a synthesis prompt carries, best first."""
PASSAGE_CHARS = 600
"""The most characters of one passage in the prompt: the sentences that share the most
words with the question, in the passage's order."""


def synthesis_messages(
    question: str, facts: Sequence[Fact], passages: Sequence[Passage], *, draft: str | None
) -> tuple[list[ChatMessage], list[Evidence]]:
    """Messages for the one grounded synthesis call and the evidence each number refers to.

    Sized for real models: a fixed system message (a cacheable prefix), at most
    ``MAX_FACTS`` facts and ``MAX_PASSAGES`` passages, each passage cut to the sentences
    nearest the question (``PASSAGE_CHARS``).
    """
    lines: list[str] = []
    evidence: list[Evidence] = []
    for f in facts[:MAX_FACTS]:
        evidence.append(f.evidence)
        lines.append(
            f"[{len(evidence)}] {f.subject} - {f.predicate_label}: {f.value} "
            f"({_STATUS.get(f.status, f.status)}; {f.evidence.doc_id} p.{f.evidence.page})"
        )
    for p in passages[:MAX_PASSAGES]:
        text = _nearest(p.text, question, PASSAGE_CHARS)
        evidence.append(Evidence(doc_id=p.doc_id, page=p.page, chunk_id=p.chunk_id, quote=text))
        lines.append(f"[{len(evidence)}] ({p.doc_id} p.{p.page}) {text}")
    user = f"Question: {question}\n\nSources:\n" + "\n".join(lines)
    if draft:
        user += f"\n\nExtractive draft (may help): {draft}"
    return [
        ChatMessage(role="system", content=_SYNTH),
        ChatMessage(role="user", content=user),
    ], evidence


def _nearest(text: str, question: str, limit: int) -> str:
    """The sentences of ``text`` sharing the most words with ``question``, within
    ``limit`` characters, in their order (the whole text when it fits)."""
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    sentences = re.split(r"(?<=[.!?:;])\s+", flat)
    asked = {w[:5] for w in re.findall(r"[^\W\d_]{3,}", question.casefold())}
    score = [
        (-len(asked & {w[:5] for w in re.findall(r"[^\W\d_]{3,}", s.casefold())}), i)
        for i, s in enumerate(sentences)
    ]
    keep: set[int] = set()
    used = 0
    for _s, i in sorted(score):
        if used + len(sentences[i]) + 1 > limit and keep:
            continue
        keep.add(i)
        used += len(sentences[i]) + 1
    return " ".join(sentences[i] for i in sorted(keep))[:limit]


def _grounded(
    text: str,
    question: str,
    messages: Sequence[ChatMessage],
    evidence: Sequence[Evidence],
    used: Usage,
) -> Synthesis:
    """The model's text through the grounding check, markers renumbered to the citations."""
    sources = _source_texts(messages[-1].content, evidence)
    text = _SOURCE_TAG.sub("", text)  # a small model copies "(stated; doc p.3)" from a source
    text = _without_lead_in(text)
    g = check_grounding(text, sources, question=question)
    cites = tuple(evidence[n - 1] for n in g.cited)
    seen = tuple(sources[n - 1] for n in g.cited)
    return Synthesis(renumber(g.text, g.cited), cites, used, g, seen)


def _without_lead_in(text: str) -> str:
    """``text`` without a leading "Answer:" or "The direct answer is:", capitalised."""
    rest = _LEAD_IN.sub("", text, count=1)
    if rest == text or not rest:
        return text
    return rest[0].upper() + rest[1:]


def _inline(e: Evidence) -> str:
    return f"[{e.doc_id} p.{e.page}]"


def _with_note(
    composed: Composed, note: str, facts: Sequence[Fact], *, from_graph: bool = True
) -> Composed:
    """The extractive answer followed by the disagreement sentence and its sources."""
    if composed.text is None:
        return composed
    cites = list(composed.citations)
    cites += [f.evidence for f in facts if f.evidence not in cites and _inline(f.evidence) in note]
    text = f"{composed.text} {note}"
    if from_graph:
        return replace(composed, text=text, citations=tuple(cites), used_facts=True)
    return replace(composed, text=text, citations=tuple(cites), used_passages=True)


def _noted(synth: Synthesis, facts: Sequence[Fact]) -> Synthesis:
    """A synthesis followed by the disagreement sentence, numbered after its citations.

    The sentence is written from the facts themselves, so it needs no grounding check;
    a model that picked one of two disagreeing values is corrected, not trusted.
    """
    conflicts = involving(find_conflicts(facts), synth.text, [e.doc_id for e in synth.citations])
    if not conflicts:
        return synth
    cites = list(synth.citations)

    def cite(e: Evidence) -> str:
        if e not in cites:
            cites.append(e)
        return f"[{cites.index(e) + 1}]"

    note = conflict_note(conflicts, cite)
    return replace(synth, text=f"{synth.text} {note}", citations=tuple(cites))


def _source_texts(prompt: str, evidence: Sequence[Evidence]) -> list[str]:
    """The text of each numbered source as the model saw it (plus its verbatim quote)."""
    out: list[str] = []
    for k, ev in enumerate(evidence, 1):
        start = prompt.find(f"[{k}] ")
        stop = prompt.find(f"\n[{k + 1}] ", start) if start >= 0 else -1
        if stop < 0 and start >= 0:
            stop = prompt.find("\n\n", start)
        seen = prompt[start : stop if stop >= 0 else None] if start >= 0 else ""
        out.append(f"{seen}\n{ev.quote}")
    return out


def _numbered(text: str, citations: Sequence[Evidence]) -> str:
    """Inline ``[doc p.N]`` markers -> ``[k]``, k the 1-based index into ``citations``."""
    index: dict[tuple[str, int], int] = {}
    for i, ev in enumerate(citations, 1):
        index.setdefault((ev.doc_id, ev.page), i)

    def number(m: re.Match[str]) -> str:
        k = index.get((m.group(1), int(m.group(2))))
        return f"[{k}]" if k is not None else m.group(0)

    return _INLINE.sub(number, text)
