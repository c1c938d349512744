"""The ask flow: scope -> route -> both chains within one time budget -> merge -> compose.

::

    question ──► scope (catalog) ──► router ──┬─ out of scope / unsafe ──► direct Answer
                                               │
                                               ├─► KG chain (template | LLM SPARQL + repair) ─┐
                                               └─► vector chain (dense + BM25, RRF) ───────────┤
                                                                                              ▼
                          Answer ◄── composer (extractive | one grounded synthesis) ◄── merge

``Supervisor`` takes only protocols (``GraphStore``,
``VectorStore``, ``Catalog``, ``Embedder``, ``LLMProvider``, ``Ontology``,
``QuestionRouter``). It never writes to a store.
"""

from __future__ import annotations

import logging
import re
import threading
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from functools import partial
from pathlib import PurePath
from typing import Any, Literal

import anyio

from hybrid_rag import _budget
from hybrid_rag._budget import open_budget
from hybrid_rag._workers import Workers
from hybrid_rag.ask._collection_words import generic
from hybrid_rag.ask._readings import reading_note
from hybrid_rag.ask.analysis import QuestionAnalysis, ScopeView
from hybrid_rag.ask.answer import passage_facts, prints_a_value
from hybrid_rag.ask.compose import AnswerComposer, Synthesis
from hybrid_rag.ask.grammar import main_clause, unsafe_request
from hybrid_rag.ask.grounding import content_words
from hybrid_rag.ask.kg import KGResult, of_kind, run_kg_chain, source_names
from hybrid_rag.ask.linking import SubjectIndex, without_names
from hybrid_rag.ask.vector import (
    VectorResult,
    run_vector_chain,
    with_matching_passages,
    with_section_passages,
)
from hybrid_rag.errors import (
    DamagedStoreError,
    DocumentNotFoundError,
    HybridRAGError,
    InputError,
    StoreLockedError,
)
from hybrid_rag.models import (
    Abstention,
    Answer,
    AskMode,
    ChainError,
    ChatMessage,
    Fact,
    NameReading,
    Usage,
)
from hybrid_rag.protocols import (
    Catalog,
    Embedder,
    GraphStore,
    LLMProvider,
    Ontology,
    QuestionRouter,
    VectorStore,
)
from hybrid_rag.text import norm, tokens

__all__ = ["AskParts", "History", "SubjectIndexCache", "Supervisor", "check_docs"]

log = logging.getLogger("hybrid_rag")

History = Sequence[ChatMessage | tuple[str, str]]
"""Earlier turns: chat messages, or ``(question, answer)`` pairs, oldest first."""

MAX_QUESTION_CHARS = 4000
MAX_TOP_K = 100


@dataclass(frozen=True, slots=True)
class AskParts:
    """Everything the ask flow uses; built by ``HybridRAG`` per call."""

    graph: GraphStore
    vectors: VectorStore
    catalog: Catalog
    embedder: Embedder
    ontology: Ontology
    router: QuestionRouter
    composer: AnswerComposer
    llm: LLMProvider | None
    workers: Workers
    subjects: SubjectIndexCache
    timeout: float
    top_k: int
    max_llm_calls: int | None = _budget.DEFAULT_MAX_CALLS


SOURCES_WAIT = 0.25
"""The share of a question's time it waits for the sources' names on the first question
after a change."""


class SubjectIndexCache:
    """The product names of every catalogued document, built once and dropped on change,
    with the names of their sources (a supplier's) once those are read from the graph."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._index: SubjectIndex | None = None
        self._sources: list[tuple[str, str]] | None = None
        self._generation = 0

    def get(self, catalog: Catalog) -> SubjectIndex:
        """The index (built from ``catalog`` on first use after a change), with the
        sources' names when ``load_sources`` has read them."""
        with self._lock:
            if self._index is None:
                infos = catalog.list()
                index = SubjectIndex([(d.doc_id, [d.title or "", *d.aliases]) for d in infos])
                self._index = index.with_sources(self._sources or ())
            return self._index

    def sources_loaded(self) -> bool:
        """Whether the sources' names of this catalog generation are read."""
        with self._lock:
            return self._sources is not None

    def load_sources(self, read: Callable[[], list[tuple[str, str]]]) -> None:
        """Read the sources' names (``read``: one graph query, blocking) and keep them,
        unless the catalog changed meanwhile; the store lock is not held while reading."""
        with self._lock:
            generation = self._generation
        names = read()
        with self._lock:
            if generation == self._generation:
                self._sources, self._index = names, None

    def invalidate(self) -> None:
        """Forget the index; the next question rebuilds it (after an ingest or forget)."""
        with self._lock:
            self._index, self._sources = None, None
            self._generation += 1


class Supervisor:
    """Answers one question from the documents in scope; see the module docstring."""

    def __init__(self, parts: AskParts) -> None:
        self.parts = parts

    async def answer(
        self,
        question: str,
        *,
        docs: Iterable[str] | None,
        mode: AskMode,
        top_k: int | None,
        history: History | None,
    ) -> Answer:
        """The ``Answer``; bad arguments raise ``InputError``."""
        from hybrid_rag._usage import combine_usage, track_usage

        with (
            track_usage() as meter,
            open_budget(self.parts.timeout, max_calls=self.parts.max_llm_calls) as budget,
        ):
            answer = await self._answer(
                question, docs=docs, mode=mode, top_k=top_k, history=history
            )
        answer = _with_notes(answer, budget)
        usage = combine_usage(meter.usage, answer.usage)
        return answer.model_copy(update={"usage": usage}) if usage != answer.usage else answer

    async def _answer(
        self,
        question: str,
        *,
        docs: Iterable[str] | None,
        mode: AskMode,
        top_k: int | None,
        history: History | None,
    ) -> Answer:
        found = await self._gather(question, docs=docs, mode=mode, top_k=top_k, history=history)
        if isinstance(found, Answer):
            return found
        llm = self.parts.llm
        facts = found.kg.facts if found.kg else []
        passages = found.vec.passages if found.vec else []
        if llm is None or not (facts or passages) or _counted(found):
            return _finish(self._extractive(found), found)
        box: list[Answer] = []

        async def extractive() -> None:  # the fallback, written while the model writes
            box.append(await self.parts.workers.run(lambda: self._extractive(found)))

        async with anyio.create_task_group() as tg:
            tg.start_soon(extractive)
            synth = await self.parts.composer.synthesise(
                llm,
                found.analysis.question,
                facts,
                passages,
                draft=None,
                deadline=found.deadline,
                conflict_facts=_passage_facts(found),
            )
        return _finish(_with_synthesis(box[0], synth, found.analysis), found)

    async def stream(
        self,
        question: str,
        *,
        docs: Iterable[str] | None,
        mode: AskMode,
        top_k: int | None,
        history: History | None,
    ) -> AsyncIterator[str | Answer]:
        """Text pieces as the model writes them, then the complete ``Answer``.

        Without an LLM (or with nothing found) the answer's text is one piece. The final
        ``Answer`` has passed the grounding check: when the streamed text fails it, the
        ``Answer`` carries the extractive text and a ``synthesis`` error saying why.
        """
        with open_budget(self.parts.timeout, max_calls=self.parts.max_llm_calls) as budget:
            async for part in self._stream(question, docs, mode, top_k, history):
                yield _with_notes(part, budget) if isinstance(part, Answer) else part

    async def _stream(
        self,
        question: str,
        docs: Iterable[str] | None,
        mode: AskMode,
        top_k: int | None,
        history: History | None,
    ) -> AsyncIterator[str | Answer]:
        found = await self._gather(question, docs=docs, mode=mode, top_k=top_k, history=history)
        if isinstance(found, Answer):
            if found.text:
                yield found.text
            yield found
            return
        llm = self.parts.llm
        facts = found.kg.facts if found.kg else []
        passages = found.vec.passages if found.vec else []
        if llm is None or not (facts or passages) or _counted(found):
            answer = _finish(self._extractive(found), found)
            if answer.text:
                yield answer.text
            yield answer
            return
        if found.analysis.readings:  # how a name was read comes first, as in the Answer
            yield reading_note(found.analysis.readings, found.analysis.noun) + " "
        first: float | None = None
        synth: Synthesis | ChainError | None = None
        async for part in self.parts.composer.synthesise_stream(
            llm,
            found.analysis.question,
            facts,
            passages,
            draft=None,
            deadline=found.deadline,
            conflict_facts=_passage_facts(found),
        ):
            if isinstance(part, str):
                first = first or time.perf_counter()
                yield part
            else:
                synth = part
        answer = await self.parts.workers.run(lambda: self._extractive(found))
        answer = _with_synthesis(answer, synth, found.analysis)
        if first is not None:
            ms = {**answer.timings, "first_token_ms": _ms(found.t_chains, first)}
            answer = answer.model_copy(update={"timings": ms})
        yield _finish(answer, found)

    async def _gather(
        self,
        question: str,
        *,
        docs: Iterable[str] | None,
        mode: AskMode,
        top_k: int | None,
        history: History | None,
    ) -> _Found | Answer:
        """Scope, route and both chains; a direct ``Answer`` for out-of-scope and unsafe."""
        t0 = time.perf_counter()
        question, mode, k = check_question(question, mode), mode, check_top_k(top_k)
        turns = check_history(history)
        doc_list = check_docs(docs)
        scope, scoped = await self._scope(doc_list)
        if not scope and not scoped:  # nothing ingested: say so, not "not found"
            return _no_documents(question, mode=mode, t0=t0)
        if not unsafe_request(question):  # a refusal touches no store
            await self._load_sources()
        view = await self.parts.workers.run(lambda: self._view(scope, scoped))
        from hybrid_rag._usage import track_usage

        with track_usage() as routing:  # an LLM router's calls count in Answer.usage
            analysis = await self.parts.router.route(question, scope=view, history=turns)
            for _round in range(_NAME_ROUNDS):  # "A and B": one name found per round
                if analysis.intent != "out_of_scope" or not analysis.unlinked:
                    break
                looked_up = await self._looked_up(
                    analysis.unlinked, view, scope, scoped, terms=analysis.collection
                )
                if looked_up is None:
                    break
                view = looked_up  # route again with what the documents' text says of it
                analysis = await self.parts.router.route(question, scope=view, history=turns)
        if analysis.collection and analysis.kind_noun:  # "Which liquids ...?"
            analysis = await self._of_kind(analysis, scope)
        t_route = time.perf_counter()
        if analysis.answered_directly:
            direct = _direct(analysis, mode=mode, scope=doc_list, t0=t0)
            return direct.model_copy(update={"usage": routing.usage})
        kg, vec, chain_ms = await self._chains(
            analysis, mode=mode, scope=scope, scoped=scoped, top_k=k or self.parts.top_k
        )
        timings = {"analyse_ms": _ms(t0, t_route), "retrieve_ms": _ms(t_route), **chain_ms}
        deadline = t0 + self.parts.timeout
        return _Found(
            analysis, kg, vec, mode, doc_list, t0, time.perf_counter(), timings, deadline,
            routing.usage,
        )  # fmt: skip

    async def _load_sources(self) -> None:
        """The sources' names (``kg.source_names``) once per catalog generation, waited
        for at most ``SOURCES_WAIT`` of the question's time: a store that does not
        answer leaves them unread (the read goes on and fills the cache when it ends),
        and sets by a maker's name then hold only the documents named so."""
        p = self.parts
        if p.subjects.sources_loaded():
            return

        def read() -> list[tuple[str, str]]:
            return source_names(p.graph, p.ontology, [d.doc_id for d in p.catalog.list()])

        try:
            with anyio.move_on_after(p.timeout * SOURCES_WAIT):
                await p.workers.run(partial(p.subjects.load_sources, read), abandon_on_cancel=True)
        except HybridRAGError as exc:  # the chains meet the store's failure and report it
            log.warning("the sources' names are unread: %s", str(exc)[:200])

    async def _scope(self, docs: list[str] | None) -> tuple[list[str], bool]:
        known = [d.doc_id for d in await self.parts.workers.run(self.parts.catalog.list)]
        if docs is None:
            return known, False
        have = set(known)
        for d in docs:
            if d not in have:
                raise DocumentNotFoundError(f"unknown document id {d!r} in docs=")
        return docs, True

    async def _of_kind(self, a: QuestionAnalysis, scope: list[str]) -> QuestionAnalysis:
        """``a`` asked of the documents of the kind its set's noun says, when some
        document's kind property holds it (``kg.of_kind``; of a named set's documents,
        one of those); else as it is."""
        p, noun = self.parts, a.kind_noun or ""
        named = set(a.named_set)  # "Which Libman products are liquids?": of those
        docs = [d for d in scope if d in named] if named else scope
        kind = await p.workers.run(partial(of_kind, p.graph, p.ontology, docs, noun))
        if kind is None:
            return a
        docs, label, word = kind
        words = a.kind_words | {noun, word}  # they say which documents, not what is stated
        return replace(a, kind_set=tuple(docs), kind_label=label, kind_noun=word, kind_words=words)

    async def _looked_up(
        self,
        names: Sequence[str],
        view: ScopeView,
        scope: list[str],
        scoped: bool,
        *,
        terms: bool = False,
    ) -> ScopeView | None:
        """``view`` with what the documents' text says of names that link no subject:
        the documents whose first page or file name prints one take it as a name
        ("Flipkart" on a seller's invoice); else the words of those printed elsewhere
        are terms of the documents ("USD", "ISO"; ``ScopeView.printed``). ``None``: the
        documents print none of them (or nothing new). Out of scope means the documents
        do not cover a name, not that it failed to link. For a collection question
        (``terms``) a name printed in the text is a term, a value to look for; one a file
        name gives still names documents."""
        named, printed, by_file = await self._named_in_text(names, scope, scoped)
        if terms:  # a file name names documents; text on a page is a value to look for
            printed = [*printed, *(name for _doc, name in named if name not in by_file)]
            named = [(doc, name) for doc, name in named if name in by_file]
        if named:
            return replace(view, subjects=view.subjects.with_names(named))
        words = frozenset(t for name in printed for t in tokens(name))
        if not words - view.printed:
            return None
        return replace(view, printed=view.printed | words)

    async def _named_in_text(
        self, names: Sequence[str], scope: list[str], scoped: bool
    ) -> tuple[list[tuple[str, str]], list[str], set[str]]:
        """``(doc_id, name)`` for the documents whose first page or file name prints a
        name that links no subject, the names some page in scope prints (in order, as
        words) although no first page or file name does, and the names file names give."""
        p = self.parts
        found: dict[str, str] = {}
        printed: list[str] = []
        by_file: set[str] = set()
        infos = await p.workers.run(p.catalog.list)
        inside = set(scope)
        for name in names:
            want = tokens(name)
            if not want:
                continue
            files = [i.doc_id for i in infos if _in_order(_file_words(i.source), want)]
            files = [d for d in files if d in inside]
            if files:  # the documents a file name gives, before those that mention the name
                found.update((d, name) for d in files)
                by_file.add(name)
                continue
            within = scope if scoped else None
            hits = await p.workers.run(
                partial(p.vectors.keyword_search, name, k=_NAME_HITS, doc_ids=within)
            )
            # catalogued documents only: one being written is not there yet
            prints = [
                h.chunk
                for h in hits
                if h.chunk.doc_id in inside and _in_order(tokens(h.chunk.text), want)
            ]
            for chunk in prints:
                if chunk.page == 1:
                    found.setdefault(chunk.doc_id, name)
            if prints and not any(c.page == 1 for c in prints):
                printed.append(name)
        return sorted(found.items()), printed, by_file

    def _view(self, scope: list[str], scoped: bool) -> ScopeView:
        full = self.parts.subjects.get(self.parts.catalog)
        return ScopeView(tuple(scope), full.restricted(scope), self.parts.ontology, scoped, full)

    async def _chains(
        self, a: QuestionAnalysis, *, mode: AskMode, scope: list[str], scoped: bool, top_k: int
    ) -> tuple[KGResult | None, VectorResult | None, dict[str, float]]:
        """Both chains in parallel, each cut at ``timeout - 1`` s; per-chain timings."""
        p = self.parts
        vscope: list[str] | None = scope if scoped else None
        query = a.search or a.question
        if mode == "hybrid" and a.subjects:  # search inside the named products' sheets
            vscope, query = [d for d in a.doc_ids if d in scope], a.search or a.topic
        out: dict[str, Any] = {}
        timings: dict[str, float] = {}

        left = _budget.current()
        # what routing left of the question's budget, less 1 s kept for writing the answer
        budget = max(1.0, (left.left() if left is not None else p.timeout) - 1)
        deadline = time.monotonic() + budget  # the KG chain stops its LLM-written queries here

        async def bounded(name: Literal["kg", "vector"], run: Callable[[], Awaitable[Any]]) -> None:
            t = time.perf_counter()
            with anyio.move_on_after(budget) as cs:  # store calls in the chains are abandoned
                out[name] = await run()
            if cs.cancelled_caught:
                err = ChainError(chain=name, kind="timeout", message=f"over {budget:.1f} s")
                out[name] = (KGResult if name == "kg" else VectorResult)(errors=[err])
            timings[f"{name}_ms"] = _ms(t)

        def kg() -> Awaitable[KGResult]:
            return run_kg_chain(
                a,
                graph=p.graph,
                ontology=p.ontology,
                scope=scope,
                llm=p.llm,
                workers=p.workers,
                deadline=deadline,
            )

        async def search(within: list[str] | None) -> VectorResult:
            return await run_vector_chain(
                query,
                embedder=p.embedder,
                vectors=p.vectors,
                scope=within,
                top_k=top_k,
                workers=p.workers,
            )

        async def vector() -> VectorResult:
            found = await search(vscope)
            if vscope is None and not _catalogued(found, scope):
                # chunks without a catalog entry (a crash, another writer's ingest in
                # flight) are never served: search again within the catalogued documents
                found = await search(scope)
            if mode == "vector" and a.intent != "procedure" and a.subjects and a.properties:
                # no graph: look for the asked values in the subjects' own sheets
                return await with_matching_passages(
                    found,
                    vectors=p.vectors,
                    doc_ids=a.doc_ids,
                    keep=lambda c: prints_a_value(a.properties, c.text),
                    rank="label",
                    workers=p.workers,
                    limit=2,
                )
            if a.intent != "procedure" or not a.sections or not a.subjects:
                return found
            return await with_section_passages(
                found, vectors=p.vectors, doc_ids=a.doc_ids, sections=a.sections, workers=p.workers
            )

        async with anyio.create_task_group() as tg:
            if mode in ("hybrid", "kg"):
                tg.start_soon(bounded, "kg", kg)
            if mode in ("hybrid", "vector"):
                tg.start_soon(bounded, "vector", vector)
        return out.get("kg"), out.get("vector"), timings

    def _extractive(self, found: _Found) -> Answer:
        """Both chains -> one extractive answer; one -> that one; none -> ``text=None``."""
        a, kg, vec = found.analysis, found.kg, found.vec
        facts = kg.facts if kg else []
        passages = vec.passages if vec else []
        errors = [*(kg.errors if kg else []), *(vec.errors if vec else [])]
        for e in errors:  # a store held elsewhere or damaged: say so, never "not stated"
            if e.kind == "StoreLockedError":
                raise StoreLockedError(f"{e.chain} chain: {e.message}")
            if e.kind == "DamagedStoreError":
                raise DamagedStoreError(f"{e.chain} chain: {e.message}", path="", repair="")
        usage = found.routing + (kg.usage if kg else Usage()) + (vec.usage if vec else Usage())
        composed = self.parts.composer.extractive(
            a, facts, passages, kg_searched=kg is not None, grouped=kg.grouped if kg else None
        )
        text = composed.text
        if text and a.collection and kg is not None and kg.notes:  # what the list leaves out
            text = " ".join([text, *kg.notes])
        sources: list[Literal["kg", "vector"]] = []
        if composed.used_facts or (facts and text):
            sources.append("kg")
        if composed.used_passages:
            sources.append("vector")
        found_any = bool(facts or passages)
        abstention = _abstention(composed.abstention, found=found_any, text=text)
        broken = [e for e in errors if e.kind.endswith("StoreError")]
        if broken and abstention in ("not_stated", "not_in_documents"):
            chains = " and ".join(sorted({e.chain for e in broken}))
            text, abstention = f"No answer: the {chains} store could not be read.", "store_error"
            found_any = True  # the sentence stands; facts and passages are whatever was read
        elif _cut_short(errors, abstention):  # what a cut search did not read is not absent
            chains = " and ".join(sorted({e.chain for e in errors if e.kind == "timeout"}))
            text, abstention = f"No answer: the {chains} search ran out of time.", "timeout"
            found_any = True
        return Answer(
            question=a.question,
            text=text if found_any else None,
            mode=found.mode,
            generation="extractive",
            sources=sources if found_any else [],
            facts=facts,
            passages=passages,
            sparql=kg.attempts if kg else [],
            errors=errors,
            usage=usage,
            scope=found.scope,
            citations=list(composed.citations),
            abstention=abstention,
        )


def _cut_short(errors: Sequence[ChainError], abstention: str | None) -> bool:
    """Whether an answer that says nothing is stated rests on a search cut at the time
    budget: the graph's, for "not stated"; either, for "nothing in the documents"."""
    cut = {e.chain for e in errors if e.kind == "timeout" and e.chain in ("kg", "vector")}
    if abstention == "not_in_documents":
        return bool(cut)
    return abstention == "not_stated" and "kg" in cut


def _counted(found: _Found) -> bool:
    """Whether the answer is an aggregate's count, which the library reads off the cited
    members (``hybrid_rag.ask._aggregate``): no model writes it, none could ground it."""
    return found.analysis.aggregate or (found.kg is not None and found.kg.grouped is not None)


def _passage_facts(found: _Found) -> list[Fact] | None:
    """Without the graph (vector mode), the values the passages print, for the
    disagreement sentence; ``None``: the graph's facts serve."""
    if found.kg is not None:
        return None
    return passage_facts(found.analysis, found.vec.passages if found.vec else [])


@dataclass(frozen=True, slots=True)
class _Found:
    """What routing and the chains found for one question (before the answer is written)."""

    analysis: QuestionAnalysis
    kg: KGResult | None
    vec: VectorResult | None
    mode: AskMode
    scope: list[str] | None
    t0: float
    t_chains: float
    timings: dict[str, float]
    deadline: float
    routing: Usage


def _with_synthesis(
    answer: Answer, synth: Synthesis | ChainError | None, analysis: QuestionAnalysis
) -> Answer:
    """The model's answer when it is supported; else the extractive one, with the reason.

    "Supported" (``_rejection``): every claim and number stated by a source (the markers
    are the library's, ``hybrid_rag.ask.grounding``), no abstention where the extractive
    answer has one of its own, a comparison or yes/no that agrees with the typed values
    the graph returned, every value the extractive answer read from the graph kept, and,
    where the extractive answer found no value, a source that speaks of what was asked.
    Markers that pointed nowhere were removed; a ``dangling_citation`` error counts them.
    """
    if synth is None:
        return answer
    if isinstance(synth, ChainError):
        cut = Usage(llm_calls=1) if synth.kind == "timeout" else Usage()  # it was sent
        return answer.model_copy(
            update={"errors": [*answer.errors, synth], "usage": answer.usage + cut}
        )
    errors = list(answer.errors)
    g = synth.grounding
    if g is not None and g.dangling:
        marks = " ".join(f"[{n}]" for n in g.dangling)
        errors.append(
            ChainError(
                chain="synthesis",
                kind="dangling_citation",
                message=f"removed {len(g.dangling)} marker(s) that cite no source: {marks}",
            )
        )
    usage = answer.usage + synth.usage
    rejected = _rejection(answer, synth, analysis)
    if rejected is not None:
        kind, why = rejected
        errors.append(
            ChainError(
                chain="synthesis", kind=kind, message=f"{why}; the extractive answer is served"
            )
        )
        return answer.model_copy(update={"errors": errors, "usage": usage})
    sources: list[Literal["kg", "vector"]] = []
    if answer.facts:
        sources.append("kg")
    if answer.passages:
        sources.append("vector")
    return answer.model_copy(
        update={
            "text": synth.text,
            "citations": list(synth.citations),
            "generation": "llm",
            "sources": sources,
            "errors": errors,
            "usage": usage,
            "abstention": None,
        }
    )


KEEP_SHARE = 0.7
"""Of the words of the graph's values that the extractive answer shows (8 or more: a
procedure, a list), the share a reply must keep to replace it (a procedure summarised
into one clause does not)."""

_ABSTAINS = re.compile(
    r"\b(?:not (?:stated|available|provided|given|mentioned|specified|listed|found|"
    r"included|contain)|no (?:information|data|mention|details?)|does(?: not|n't) "
    r"(?:state|say|mention|provide|give|list|contain|specify)|cannot (?:find|determine|"
    r"answer)|unable to|unknown|no answer)\b",
    re.I,
)
_YES_NO = re.compile(r"^\W*(yes|no)\b", re.I)


def _rejection(answer: Answer, synth: Synthesis, a: QuestionAnalysis) -> tuple[str, str] | None:
    """Why the model's text may not replace the extractive ``answer`` (``None``: it may)."""
    text, extractive = synth.text, answer.text or ""
    if _ABSTAINS.search(text):
        return "model_abstained", "the model says the documents do not state it"
    g = synth.grounding
    if g is not None and not g.ok:
        parts = []
        if g.unsupported:
            parts.append(f"{len(g.unsupported)} number(s) in no source of their claim "
                         f"({', '.join(g.unsupported[:5])})")  # fmt: skip
        if g.unsupported_claims:
            parts.append(f"{len(g.unsupported_claims)} claim(s) no source states")
        return "ungrounded", "; ".join(parts)
    if g is not None and not g.informative:
        return "no_answer", "the reply only restates the question"
    stated = [f for f in answer.facts if f.status == "stated"]
    if stated and (a.intent in ("min", "max", "same") or a.polar):
        disagreement = _disagrees(text, extractive, stated, a)
        if disagreement:
            return "contradicts_graph", disagreement
    if stated and answer.abstention is None and "kg" in answer.sources:
        kept = _numbers(text) | _numbers(a.question)
        flat = " ".join(extractive.split())
        shown = [f.value for f in stated if " ".join(f.value.split())[:60] in flat]
        lost = sorted({n for v in shown for n in _numbers(v)} - kept)
        if lost:
            return "dropped_values", f"the graph's value(s) {', '.join(lost[:5])} left out"
        said = content_words(" ".join(shown))
        if len(said) >= 8 and len(said & content_words(text)) < KEEP_SHARE * len(said):
            return "dropped_values", "the reply leaves out much of what the graph's values say"
    if a.properties and (answer.abstention is not None or a.typed):
        # a number is only as good as the line it is read from: "the pour point is 160 °C
        # [1]" with [1] a boiling point line is no pour point
        labels = [label for p in a.properties for label in p.labels]
        if not any(_speaks_of(src, labels) for src in synth.cited_texts):
            return "off_question", "no cited source speaks of the asked property"
    typed = [lab for p in a.properties if p.name in a.typed for lab in p.labels]
    topic = _topic(a) if not a.properties and _numbers(text) - _numbers(a.question) else ""
    asked = typed or ([topic] if topic else [])  # "the pour point of X", in no property
    quoted = [*synth.cited_texts, *(c.quote for c in synth.citations)]  # the notes' too
    if asked and (far := _away_from_label(text, a.question, asked, quoted)):
        return "off_question", f"{far} is not printed by {asked[0]!r} in a cited source"
    return None


LABEL_REACH = 80
"""Characters after a property's label within which a source prints that property's value."""


def _away_from_label(
    text: str, question: str, labels: Sequence[str], sources: Sequence[str]
) -> str:
    """A number of the reply that no cited source prints within ``LABEL_REACH``
    characters after one of ``labels`` ("160" of a boiling point line, in a passage that
    also holds the pour point's); empty when every one is, or when no source names a
    label (the check before this one speaks to that)."""
    said = [norm(lab) for lab in labels if lab.strip()]
    near = [
        src[m.end() : m.end() + LABEL_REACH]
        for src in map(norm, sources)
        for lab in said
        for m in re.finditer(re.escape(lab), src)
    ]
    if not near:
        return ""
    printed = set().union(*(_numbers(n) for n in near))
    return next((n for n in sorted(_numbers(text) - _numbers(question)) if n not in printed), "")


def _topic(a: QuestionAnalysis) -> str:
    """What a question asks about when no property of the ontology names it: its words
    without the linked names and the words of asking ("pour point")."""
    rest = without_names(main_clause(a.question), a.subjects)
    named = {t for m in a.subjects for t in tokens(m.label)}  # a model's link has no words
    words = [t for t in tokens(rest) if t.isalpha() and not generic(t) and t not in named]
    return " ".join(words[:4])


def _speaks_of(source: str, labels: Sequence[str]) -> bool:
    """Whether ``source`` names one of ``labels``: whole, or most of its words."""
    said = norm(source)
    words = set(tokens(source))
    for label in labels:
        own = [w for w in tokens(label) if len(w) > 2]
        if norm(label) in said or (own and sum(w in words for w in own) * 2 >= len(own) + 1):
            return True
    return False


def _disagrees(text: str, extractive: str, stated: Sequence[Fact], a: QuestionAnalysis) -> str:
    """How a comparison or yes/no in ``text`` contradicts the graph's (empty: it agrees)."""
    mine, theirs = _YES_NO.match(text), _YES_NO.match(extractive)
    if theirs and (not mine or mine.group(1).lower() != theirs.group(1).lower()):
        return f"the graph's typed values answer {theirs.group(1).lower()!r}"
    if a.intent in ("min", "max"):
        subjects = sorted({f.subject for f in stated}, key=lambda s: _at(extractive, s))
        winner = subjects[0] if subjects and _at(extractive, subjects[0]) >= 0 else None
        first = re.split(r"(?<=[.!?])\s", text, maxsplit=1)[0]
        if winner and norm(winner) not in norm(first):
            return f"the graph's typed values name {winner!r} first"
    return ""


def _at(text: str, name: str) -> int:
    at = norm(text).find(norm(name))
    return at if at >= 0 else 10**9


def _numbers(text: str) -> set[str]:
    """The numbers of ``text`` as values (markers, list numbering and identifiers out)."""
    body = re.sub(r"\[[^\]]*\]", " ", text)
    body = re.sub(r"(?m)^\s*\d{1,2}[.)]\s", " ", body)
    body = re.sub(r"\b\d{2,7}-\d{2}-\d\b|\b[A-Z]+\d+[A-Z\d]*\b", " ", body)
    out = set()
    for m in re.finditer(r"(?<![\w.])[-−–]?\d+(?:[.,]\d+)?", body):
        try:
            out.add(f"{float(m.group(0).replace('−', '-').replace('–', '-').replace(',', '.')):g}")
        except ValueError:
            continue
    return out


def _with_notes(answer: Answer, budget: _budget.Budget) -> Answer:
    """``answer`` with the stages the budget cut or skipped in its errors (once each)."""
    notes = [n for n in budget.notes if n not in answer.errors]
    if not notes:
        return answer
    return answer.model_copy(update={"errors": [*answer.errors, *notes]})


def _catalogued(found: VectorResult, scope: Sequence[str]) -> bool:
    """Whether every passage comes from a document of ``scope`` (the catalog's ids)."""
    known = set(scope)
    return all(p.doc_id in known for p in found.passages)


def _finish(answer: Answer, found: _Found) -> Answer:
    answer = _with_readings(answer, found.analysis)
    timings = {**found.timings, "answer_ms": _ms(found.t_chains), "total_ms": _ms(found.t0)}
    _log(answer, timings)
    return answer.model_copy(update={"timings": {**answer.timings, **timings}})


def _with_readings(answer: Answer, a: QuestionAnalysis) -> Answer:
    """``answer`` opening with how a model read the names no document prints
    (``reading_note``), with ``readings`` for code; unchanged without readings."""
    if not a.readings:
        return answer
    text = f"{reading_note(a.readings, a.noun)} {answer.text}" if answer.text else None
    return answer.model_copy(update={"text": text, "readings": _name_readings(a)})


def _name_readings(a: QuestionAnalysis) -> list[NameReading]:
    """The analysis's readings as the answer shows them."""
    return [
        NameReading(said=r.said, read_as=r.read_as, doc_ids=list(r.doc_ids)) for r in a.readings
    ]


def _abstention(composed: Abstention | None, *, found: bool, text: str | None) -> Abstention | None:
    """Why the answer abstains: nothing found, or the extractive answer found no value."""
    if not found or not text:
        return "not_in_documents"
    return composed


NO_DOCUMENTS = "No answer: the store holds no documents yet. Ingest some first."


def _no_documents(question: str, *, mode: AskMode, t0: float) -> Answer:
    """An empty store (nothing ingested, or a mistyped path) answers that it is empty."""
    return Answer(
        question=question,
        text=NO_DOCUMENTS,
        mode=mode,
        abstention="no_documents",
        timings={"total_ms": _ms(t0)},
    )


def _direct(a: QuestionAnalysis, *, mode: AskMode, scope: list[str] | None, t0: float) -> Answer:
    """Out-of-scope and unsafe questions: answered without touching any store."""
    refused = a.intent == "unsafe"
    default = (
        "I can only answer questions about the documents; I cannot change or reveal the system."
        if refused
        else "The documents in scope do not cover this question."
    )
    return Answer(
        question=a.question,
        text=a.reason or default,
        mode=mode,
        scope=scope,
        abstention="refused" if refused else "out_of_scope",
        timings={"total_ms": _ms(t0)},
        readings=_name_readings(a),
    )


def check_question(question: object, mode: object) -> str:
    """The stripped question; ``InputError`` for a non-string, empty or too long one."""
    if not isinstance(question, str):
        raise InputError(f"question must be a string, not {type(question).__name__}")
    if not question.strip():
        raise InputError("question must be a non-empty string")
    if len(question) > MAX_QUESTION_CHARS:
        raise InputError(f"question is longer than {MAX_QUESTION_CHARS} characters")
    if mode not in ("hybrid", "kg", "vector"):
        raise InputError(f"mode must be 'hybrid', 'kg' or 'vector', not {mode!r}")
    return question.strip()


def check_top_k(top_k: object) -> int | None:
    """``top_k`` as given; ``InputError`` unless ``None`` or an int in 1..100."""
    if top_k is None:
        return None
    if isinstance(top_k, bool) or not isinstance(top_k, int):
        raise InputError(f"top_k must be an int, not {type(top_k).__name__}")
    if not 1 <= top_k <= MAX_TOP_K:
        raise InputError(f"top_k must be between 1 and {MAX_TOP_K}, not {top_k}")
    return top_k


def check_docs(docs: Iterable[str] | None) -> list[str] | None:
    """``docs=`` as a de-duplicated list of valid ids; any iterable of strings is accepted.

    Raises:
        InputError: a single string, a non-iterable, or an item that is not a string.
        InvalidDocIdError: an id outside ``[A-Za-z0-9_.-]{1,128}``.
    """
    from hybrid_rag.ingest.load import validate_doc_id

    if docs is None:
        return None
    if isinstance(docs, (str, bytes)):
        raise InputError("docs must be a list of document ids, not a single string")
    try:
        items = list(docs)
    except TypeError:
        raise InputError(f"docs must be an iterable of ids, not {type(docs).__name__}") from None
    for d in items:
        if not isinstance(d, str):
            raise InputError(f"docs must hold document id strings, not {type(d).__name__}")
        validate_doc_id(d)
    return list(dict.fromkeys(items))


def check_history(history: History | None) -> list[ChatMessage]:
    """Earlier turns as chat messages; ``(question, answer)`` pairs become two messages."""
    if history is None:
        return []
    if isinstance(history, (str, bytes)):
        raise InputError("history must be a list of messages or (question, answer) pairs")
    out: list[ChatMessage] = []
    for turn in history:
        if isinstance(turn, ChatMessage):
            out.append(turn)
        elif isinstance(turn, tuple) and len(turn) == 2 and all(isinstance(t, str) for t in turn):
            out.append(ChatMessage(role="user", content=turn[0]))
            if turn[1]:
                out.append(ChatMessage(role="assistant", content=turn[1]))
        else:
            raise InputError(
                "history items must be ChatMessage or (question, answer) string pairs, "
                f"not {type(turn).__name__}"
            )
    return out


def _log(answer: Answer, timings: dict[str, float]) -> None:
    log.info(
        "ask",
        extra={
            "correlation_id": uuid.uuid4().hex[:12],
            "sources": answer.sources,
            "errors": [f"{e.chain}:{e.kind}" for e in answer.errors],
            **timings,
        },
    )


def _ms(t0: float, t1: float | None = None) -> float:
    return round(((time.perf_counter() if t1 is None else t1) - t0) * 1000, 2)


_NAME_ROUNDS = 6
"""Names looked up in the documents' text per question, one at a time (a comparison of
three subjects may also name a term or two of the documents' own: "ISO", "USD")."""
_NAME_HITS = 40
"""Chunks searched for a name the subjects' names do not hold."""


def _in_order(words: Sequence[str], want: Sequence[str]) -> bool:
    """Whether ``want`` occurs in ``words`` as a run."""
    n = len(want)
    return any(list(words[i : i + n]) == list(want) for i in range(len(words) - n + 1))


def _file_words(source: str) -> list[str]:
    """The words of a file's name ("FlipkartInvoice.pdf" -> "flipkart", "invoice")."""
    stem = PurePath(source).stem
    return tokens(re.sub(r"(?<=[a-z])(?=[A-Z])|[-_.]", " ", stem))
