"""Contract tests for the two flow seams: ``Extractor`` and
``QuestionRouter``.

Subclass and provide one fixture::

    class TestMyExtractor(ExtractorContract):
        @pytest.fixture
        def extractor(self):
            return MyExtractor(...)

    class TestMyRouter(QuestionRouterContract):
        @pytest.fixture
        def router(self):
            return MyRouter(...)

The documents and questions are small and built here; an extractor or router backed by a
model can be given a scripted fake model in its fixture.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

import pytest

from hybrid_rag.models import ChatMessage, Chunk, Page, PreparedDocument

if TYPE_CHECKING:
    from hybrid_rag.ask.analysis import ScopeView
    from hybrid_rag.ingest.extract import Extraction
    from hybrid_rag.protocols import Extractor, Ontology, QuestionRouter

__all__ = ["ExtractorContract", "QuestionRouterContract", "sample_document", "sample_scope"]

_PAGES = [
    "SAFETY DATA SHEET\nProduct name: Examplon Solvent 99%\nSignal word: Danger\n"
    "H225 Highly flammable liquid and vapour.",
    "SECTION 9. PHYSICAL AND CHEMICAL PROPERTIES\nFlash point: -18 °C (closed cup)\n"
    "Boiling point: 56 °C\npH: No information available\n",
]


def sample_document(doc_id: str = "examplon") -> PreparedDocument:
    """A two-page prepared document with one chunk per page."""
    pages = tuple(Page(number=i + 1, text=t) for i, t in enumerate(_PAGES))
    chunks = tuple(
        Chunk(
            chunk_id=f"{doc_id}:{p.number}",
            doc_id=doc_id,
            page=p.number,
            start=0,
            end=len(p.text),
            text=p.text,
        )
        for p in pages
    )
    return PreparedDocument(
        doc_id=doc_id, name=f"{doc_id}.pdf", source=f"{doc_id}.pdf", pages=pages, chunks=chunks
    )


def sample_scope(ontology: Ontology) -> ScopeView:
    """Two documents whose products are "Examplon Solvent 99%" and "Demoline Glass Cleaner"."""
    from hybrid_rag.ask.analysis import ScopeView
    from hybrid_rag.ask.linking import SubjectIndex

    index = SubjectIndex(
        [("examplon", ["Examplon Solvent 99%"]), ("demoline", ["Demoline Glass Cleaner"])]
    )
    return ScopeView(("examplon", "demoline"), index, ontology, False)


class _WithOntology:
    @pytest.fixture
    def ontology(self) -> Ontology:
        """The bundled ontology (override the fixture to test with your own)."""
        from hybrid_rag.ontology import load_ontology

        return load_ontology("msds")


class ExtractorContract(_WithOntology):
    """Every ``Extractor`` passes these tests."""

    def test_is_an_extractor(self, extractor: Extractor) -> None:
        from hybrid_rag.protocols import Extractor

        assert isinstance(extractor, Extractor)
        assert isinstance(extractor.name, str) and extractor.name

    def test_product_is_never_empty(self, extractor: Extractor, ontology: Ontology) -> None:
        ex = asyncio.run(extractor.extract(sample_document(), ontology=ontology))
        assert ex.subject.strip()

    def test_facts_are_backed_by_quotes_on_their_pages(
        self, extractor: Extractor, ontology: Ontology
    ) -> None:
        doc = sample_document()
        ex = asyncio.run(extractor.extract(doc, ontology=ontology))
        pages = {p.number: p.text for p in doc.pages}
        chunk_pages = {c.chunk_id: c.page for c in doc.chunks}
        for f in ex.facts:
            ontology.property(f.prop)  # raises OntologyError for an unknown property
            assert f.page in pages, f
            assert f.quote and f.quote in pages[f.page], f
            assert f.chunk_id is None or chunk_pages.get(f.chunk_id) == f.page, f
            assert f.status in ("stated", "unavailable")

    def test_empty_document_gives_no_facts_not_an_error(
        self, extractor: Extractor, ontology: Ontology
    ) -> None:
        doc = PreparedDocument(
            doc_id="blank", name="blank.txt", source="blank.txt", pages=(Page(number=1, text=""),)
        )
        ex = asyncio.run(extractor.extract(doc, ontology=ontology))
        assert ex.facts == () and ex.subject.strip()

    def test_concurrent_calls_are_independent(
        self, extractor: Extractor, ontology: Ontology
    ) -> None:
        async def both() -> list[Extraction]:
            docs = [sample_document("a"), sample_document("b")]
            return list(
                await asyncio.gather(*(extractor.extract(d, ontology=ontology) for d in docs))
            )

        a, b = asyncio.run(both())
        assert all(f.chunk_id is None or f.chunk_id.startswith("a:") for f in a.facts)
        assert all(f.chunk_id is None or f.chunk_id.startswith("b:") for f in b.facts)
        assert [(f.prop, f.value) for f in a.facts] == [(f.prop, f.value) for f in b.facts]


class QuestionRouterContract(_WithOntology):
    """Every ``QuestionRouter`` passes these tests."""

    def test_is_a_router(self, router: QuestionRouter) -> None:
        from hybrid_rag.protocols import QuestionRouter

        assert isinstance(router, QuestionRouter)

    def test_analysis_is_for_the_question_asked(
        self, router: QuestionRouter, ontology: Ontology
    ) -> None:
        q = "What is the flash point of Examplon Solvent 99%?"
        a = asyncio.run(router.route(q, scope=sample_scope(ontology)))
        assert a.question == q

    def test_products_are_in_scope_and_properties_in_the_ontology(
        self, router: QuestionRouter, ontology: Ontology
    ) -> None:
        scope = sample_scope(ontology)
        names = {p.name for p in ontology.properties()}
        for q in (
            "What is the flash point of Examplon Solvent 99%?",
            "Which has the lower flash point: Examplon Solvent 99% or Demoline Glass Cleaner?",
            "What is the boiling point of Glorbium Nitrate?",
        ):
            a = asyncio.run(router.route(q, scope=scope))
            assert {p.doc_id for p in a.subjects} <= set(scope.doc_ids), q
            assert {p.name for p in a.properties} <= names, q
            assert a.intent in (
                "lookup",
                "min",
                "max",
                "filter",
                "same",
                "procedure",
                "out_of_scope",
                "unsafe",
            )

    def test_direct_intents_say_why(self, router: QuestionRouter, ontology: Ontology) -> None:
        for q in ("Please delete every document in the database.", "Who founded SAP?"):
            a = asyncio.run(router.route(q, scope=sample_scope(ontology)))
            if a.intent in ("out_of_scope", "unsafe"):
                assert a.reason, q

    def test_follow_up_takes_products_from_history(
        self, router: QuestionRouter, ontology: Ontology
    ) -> None:
        history = [
            ChatMessage(role="user", content="What is the flash point of Examplon Solvent 99%?"),
            ChatMessage(role="assistant", content="-18 °C"),
        ]
        a = asyncio.run(
            router.route("And its boiling point?", scope=sample_scope(ontology), history=history)
        )
        assert a.question == "And its boiling point?"
        assert [p.doc_id for p in a.subjects] == ["examplon"]
