"""The house: HybridRAG composes an ingest pipeline and an ask supervisor over seams."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from hybrid_rag import DocumentNotFoundError, HybridRAG, InputError
from hybrid_rag.ask.analysis import QuestionAnalysis, ScopeView
from hybrid_rag.ask.compose import AnswerComposer
from hybrid_rag.ask.route import OfflineRouter
from hybrid_rag.ingest.extract import ExtractedFact, Extraction
from hybrid_rag.ingest.extractor import OfflineExtractor
from hybrid_rag.models import Answer, ChatMessage, PreparedDocument
from hybrid_rag.protocols import Ontology
from hybrid_rag.rag import StreamDelta
from hybrid_rag.samples import sample_pdfs
from hybrid_rag.testing import FunctionLLM
from hybrid_rag.testing.contracts import ExtractorContract, QuestionRouterContract


class TestOfflineExtractorContract(ExtractorContract):
    @pytest.fixture
    def extractor(self) -> OfflineExtractor:
        return OfflineExtractor()


class TestOfflineRouterContract(QuestionRouterContract):
    @pytest.fixture
    def router(self) -> OfflineRouter:
        return OfflineRouter()


@pytest.fixture(scope="module")
def samples(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    return sample_pdfs(tmp_path_factory.mktemp("samples"))


@pytest.fixture
def rag(samples: list[Path]) -> Iterator[HybridRAG]:
    with HybridRAG(embedder="hashing") as r:
        r.ingest_many(samples)
        yield r


# --- the Extractor seam -------------------------------------------------------------------


class _PlantedExtractor:
    """An extractor double: one good fact, one with a made-up quote, one off the ontology."""

    name = "planted"

    async def extract(self, document: PreparedDocument, *, ontology: Ontology) -> Extraction:
        page = document.pages[0]
        line = next(x for x in page.text.splitlines() if "Flash" in x)
        return Extraction(
            subject="Widget Oil",
            aliases=(),
            facts=(
                ExtractedFact(prop="flashPoint", value="150 °C", quote=line, page=1),
                ExtractedFact(prop="boilingPoint", value="999 °C", quote="not in the text", page=1),
                ExtractedFact(prop="favouriteColour", value="blue", quote=line, page=1),
            ),
        )


def test_custom_extractor_is_used_and_its_unsupported_facts_dropped() -> None:
    with HybridRAG(embedder="hashing", extractor=_PlantedExtractor()) as r:
        rep = r.ingest(b"Widget Oil\nFlash point: 150 \xc2\xb0C\n", name="widget-oil.txt")
        assert rep.facts == 1
        assert any("quote not found" in w for w in rep.warnings)
        assert any("property not in the ontology" in w for w in rep.warnings)
        ans = r.ask("What is the flash point of Widget Oil?", mode="kg")
    assert [f.value for f in ans.facts] == ["150 °C"]
    assert "999" not in (ans.text or "")


# --- the QuestionRouter seam --------------------------------------------------------------


class _Spy:
    """Wraps a store and counts calls to the named read methods."""

    def __init__(self, inner: Any, *names: str) -> None:
        self.inner, self.names, self.calls = inner, names, 0

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self.inner, name)
        if name in self.names:
            self.calls += 1
        return attr


class _RefusingRouter:
    async def route(
        self, question: str, *, scope: ScopeView, history: Sequence[ChatMessage] = ()
    ) -> QuestionAnalysis:
        return QuestionAnalysis(question, (), (), "unsafe", reason="I cannot delete documents.")


def test_unsafe_route_is_answered_without_touching_the_stores(rag: HybridRAG) -> None:
    graph = _Spy(rag.graph, "query")
    vectors = _Spy(rag.vectors, "search", "keyword_search")
    with HybridRAG(embedder="hashing", graph=graph, vectors=vectors, catalog=rag.catalog) as r:  # type: ignore[arg-type]
        with r.override(router=_RefusingRouter()):
            ans = r.ask("Please delete all the acetone sheets.")
        assert ans.abstention == "refused" and ans.text == "I cannot delete documents."
        assert ans.facts == [] and ans.passages == [] and ans.sources == []
        assert graph.calls == 0 and vectors.calls == 0
        assert r.ask("What is the flash point of Examplon Solvent 99%?").text  # router restored


# --- configuration, override and the concurrency bound -------------------------------------


def test_public_configuration_is_read_only(rag: HybridRAG) -> None:
    for attr in ("llm", "top_k", "timeout", "router", "extractor", "composer"):
        with pytest.raises(AttributeError):
            setattr(rag, attr, None)


def test_override_swaps_and_restores(rag: HybridRAG) -> None:
    llm = FunctionLLM(lambda _m: "It is -18 °C [1].")
    composer = AnswerComposer(citations="numbered")
    with rag.override(llm=llm, composer=composer) as same:
        assert same is rag and rag.llm is llm and rag.composer is composer
        assert rag.ask("What is the flash point of Examplon Solvent 99%?").generation == "llm"
    assert rag.llm is None and rag.composer is not composer
    assert rag.ask("What is the flash point of Examplon Solvent 99%?").generation == "extractive"


class _SlowVectors:
    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def search(self, *a: Any, **k: Any) -> Any:
        time.sleep(0.05)
        return self.inner.search(*a, **k)


def test_one_limiter_bounds_every_concurrent_call(samples: list[Path]) -> None:
    from hybrid_rag.stores.local_vectors import LocalVectorStore

    vectors = _SlowVectors(LocalVectorStore(None))
    with HybridRAG(embedder="hashing", vectors=vectors, max_threads=2) as r:  # type: ignore[arg-type]
        r.ingest_many(samples)

        async def many() -> list[Answer]:
            q = "What is the flash point of Examplon Solvent 99%?"
            return list(await asyncio.gather(*(r.aask(q) for _ in range(8))))

        answers = asyncio.run(many())
        assert all(a.text for a in answers)
        assert r._workers.peak <= 2


# --- input errors -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda r: r.ask(123), "question must be a string"),
        (lambda r: r.ask("x" * 5000), "longer than"),
        (lambda r: r.ask("pH?", top_k="3"), "top_k must be an int"),
        (lambda r: r.ask("pH?", top_k=-5), "top_k must be between"),
        (lambda r: r.ask("pH?", docs="examplon"), "not a single string"),
        (lambda r: r.ask("pH?", docs=5), "iterable"),
        (lambda r: r.ask("pH?", docs=[1]), "document id strings"),
        (lambda r: r.ask("pH?", history=["hi"]), "history items"),
        (lambda r: r.ingest(12345), "path or bytes"),
        (lambda r: r.ingest(b"abc"), "name="),
        (lambda r: r.ingest_many("a.pdf"), "list of paths"),
        (lambda r: r.ingest_many([3.5]), "cannot ingest a float"),
        (lambda r: r.ingest_many([], concurrency=0), "concurrency"),
        (lambda r: r.forget(7), "doc_id must be a string"),
    ],
)
def test_bad_arguments_raise_input_errors(rag: HybridRAG, call: Any, match: str) -> None:
    before = sorted((d.doc_id, d.content_hash) for d in rag.documents())
    with pytest.raises(InputError, match=match):
        call(rag)
    assert sorted((d.doc_id, d.content_hash) for d in rag.documents()) == before


def test_bad_constructor_options_raise_input_errors() -> None:
    for kw in ({"top_k": 0}, {"top_k": "6"}, {"timeout": 0.5}, {"max_threads": 0}):
        with pytest.raises(InputError):
            HybridRAG(**kw)  # type: ignore[arg-type]
    with pytest.raises(InputError):
        AnswerComposer(max_chars=10)


def test_docs_accepts_any_iterable(rag: HybridRAG) -> None:
    ids = [d.doc_id for d in rag.documents()]
    ans = rag.ask("What is the flash point?", docs=(d for d in ids))
    assert ans.scope == ids


# --- per-document atomicity and forget ----------------------------------------------------


def test_concurrent_ingests_of_one_id_leave_one_version() -> None:
    versions = [f"Widget Oil\nFlash point: {t} \u00b0C\n".encode() for t in (100, 200, 300)]
    with HybridRAG(embedder="hashing") as r:

        async def race() -> None:
            await asyncio.gather(*(r.aingest(v, name="widget-oil.txt") for v in versions))

        asyncio.run(race())
        info = r.catalog.get("widget-oil")
        assert info is not None
        text = "".join(c.text for c in r.vectors.chunks("widget-oil"))
        winner = next(v.decode() for v in versions if v.decode().strip() == text.strip())
        facts = r.ask("What is the flash point of Widget Oil?", mode="kg").facts
        assert [f.value for f in facts] == [winner.split(": ")[1].strip()]


def test_forget_removes_a_document_without_a_catalog_entry(rag: HybridRAG) -> None:
    doc = rag.documents()[0].doc_id
    rag.catalog.delete(doc)  # as a crash between the stores and the catalog would leave it
    rag.forget(doc)
    assert doc not in rag.graph.doc_ids() and rag.vectors.chunks(doc) == []
    with pytest.raises(DocumentNotFoundError):
        rag.forget(doc)


# --- streaming, composer options and documentation ----------------------------------------


def test_stream_yields_text_then_the_answer(rag: HybridRAG) -> None:
    parts = list(rag.stream("What is the flash point of Examplon Solvent 99%?"))
    assert isinstance(parts[-1], Answer)
    deltas = [p.delta for p in parts if isinstance(p, StreamDelta)]
    assert "".join(deltas) == parts[-1].text


def test_numbered_citations_index_the_citation_list(rag: HybridRAG) -> None:
    with rag.override(composer=AnswerComposer(citations="numbered")):
        ans = rag.ask("What is the flash point of Examplon Solvent 99%?")
    assert ans.text is not None and "[1]" in ans.text and " p." not in ans.text
    assert ans.citations


def test_short_composer_cuts_at_a_word(rag: HybridRAG) -> None:
    with rag.override(composer=AnswerComposer(max_chars=80)):
        ans = rag.ask("What should be done in case of eye contact with Examplon Solvent 99%?")
    assert ans.text is not None and len(ans.text) <= 80


@pytest.mark.parametrize("name", ["ask", "ingest", "ingest_many", "forget", "documents"])
def test_sync_twins_document_themselves(name: str) -> None:
    doc = getattr(HybridRAG, name).__doc__ or ""
    assert "Example:" in doc and "Twin" not in doc.split("\n")[0]
    if name != "documents":
        assert "Args:" in doc and "Raises:" in doc


def test_ingest_return_type_checks_under_mypy_strict(tmp_path: Path) -> None:
    mypy_api = pytest.importorskip("mypy.api")
    snippet = tmp_path / "use.py"
    snippet.write_text(
        "from hybrid_rag import HybridRAG\n"
        "def status(rag: HybridRAG) -> str:\n"
        "    return rag.ingest('a.pdf').status\n"
    )
    out, err, code = mypy_api.run(["--strict", str(snippet)])  # reuses .mypy_cache
    assert code == 0, out + err


# --- usage: what providers report reaches IngestReport.usage and Answer.usage ---------------


def test_provider_usage_reaches_reports_and_answers(samples: list[Path], tmp_path: Path) -> None:
    pytest.importorskip("openai")
    from hybrid_rag.providers.openai import OpenAIEmbedder, OpenAILLM
    from hybrid_rag.testing.llm_server import FakeLLMServer

    with FakeLLMServer(dim=8) as server:

        def embedder() -> OpenAIEmbedder:
            return OpenAIEmbedder(
                "e", base_url=server.openai_url, api_key="k", dimensions=8, cache=tmp_path
            )

        llm = OpenAILLM("m", base_url=server.openai_url, api_key="k", timeout=5.0)
        with HybridRAG(embedder=embedder(), llm=llm) as r:
            first = r.ingest(samples[0])
            ans = r.ask(f"What is the flash point of {r.documents()[0].title}?")
        assert first.usage.embedding_calls == 1 and first.usage.embedded_texts == first.chunks
        assert ans.usage.llm_calls == 1 and ans.usage.prompt_tokens > 0
        assert ans.usage.embedding_calls == 1  # the question
        with HybridRAG(embedder=embedder()) as r:  # a new store, the same response cache
            again = r.ingest(samples[0])
        assert again.usage.embedding_calls == 0 and again.usage.cache_hits >= 1
