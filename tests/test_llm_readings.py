"""Names the documents do not print, read by a model: the library links the documents
the reading names with its own linking, says so in the answer (``Answer.readings`` and
a sentence), and abstains when the reading links none or several different things.

End to end over real Safety Data Sheets (skipped when the corpus is absent) with the
model behind a loopback OpenAI-compatible server; the router-level tests use plain
indexes of another domain's names, so nothing here is particular to one domain.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from hybrid_rag import HybridRAG
from hybrid_rag.ask.analysis import ScopeView
from hybrid_rag.ask.linking import SubjectIndex
from hybrid_rag.ask.llm_route import LLMRouter
from hybrid_rag.ask.route import OfflineRouter
from hybrid_rag.models import Answer
from hybrid_rag.ontology import load_ontology
from hybrid_rag.rag import StreamDelta
from hybrid_rag.testing import FunctionLLM
from hybrid_rag.testing.llm_server import FakeLLMServer

SHEETS = [
    "calcium-carbonate-powder-acsusp-grade-6750b737ba4b7",
    "calcium-carbonate-powder-uspfccfood-grade-kosher-6750b9db9746d",
    "calcium-chloride-flakes-lab-grade-6847157ad5ebc",
    "calcium-hydroxide-powder-acs-grade-67570e6c4e182",
    "calcium-oxide-powder-acs-reagent-grade-6866d24d49046",
    "mercuric-chloride-powder-granular-995-acs-reagent-grade-6757549ac82e6",
    "mercurous-chloride-purified-66bf647f3d6a5",
    "mercury-metal-9999-lab-grade-670534a6c5146",
    "sodium-chloride-granular-usp-grade-kosher-67338094ba119",
    "sodium-hydroxide-beads-lab-grade-670d5589d3be0",
    "sodium-sulfate-anhydrous-lab-grade-fine-granular-680bcfd5e546e",
    "sulfuric-acid-1n-solution-reagent-grade-67168ca147391",
    "sulfuric-acid-96-solution-semiconductorelectronic-grade-6734f5bea1332",
]
LIME = "calcium-hydroxide-powder-acs-grade-67570e6c4e182"


def _routing(names: list[tuple[str, str]], **extra: Any) -> str:
    reply = {"intent": "lookup", "documents": [], "properties": [], "filter_terms": [],
             "reason": None, "standalone": None,
             "names": [{"said": s, "means": m} for s, m in names], **extra}  # fmt: skip
    return json.dumps(reply)


class Model:
    """A model on the loopback server: a routing reply for routing requests (those
    with a JSON schema titled ``routing``), else ``answer``."""

    def __init__(self, names: list[tuple[str, str]], answer: str = "No answer.") -> None:
        self.names, self.answer = names, answer
        self.routing_requests: list[Mapping[str, Any]] = []

    def __call__(self, body: Mapping[str, Any]) -> str:
        fmt = body.get("response_format") or {}
        if (fmt.get("json_schema") or {}).get("name") == "routing" or "routing" in str(fmt):
            self.routing_requests.append(body)
            return _routing(self.names)
        return self.answer


@pytest.fixture(scope="module")
def store(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    missing = [n for n in SHEETS if not (corpus / "laballey" / f"{n}.pdf").exists()]
    if missing:
        pytest.skip(f"corpus sheets missing: {missing[:2]}")
    path = tmp_path_factory.mktemp("readings") / "store"
    with HybridRAG(path=path, embedder="hashing") as rag:
        reports = rag.ingest_many([corpus / "laballey" / f"{n}.pdf" for n in SHEETS])
        assert {r.status for r in reports} == {"ingested"}
    return path


def _ask(store: Path, model: Model, question: str, *, synthesis: bool = False) -> Any:
    from hybrid_rag.providers import OpenAILLM

    with FakeLLMServer(chat=model) as server:
        llm = OpenAILLM("gpt-test", base_url=server.openai_url, api_key="k", max_retries=0)
        extra = {"llm": llm} if synthesis else {}
        with HybridRAG(path=store, embedder="hashing", router=LLMRouter(llm), **extra) as rag:
            return rag.ask(question)


QUESTION = "Slaked lime: what pH does its sheet give?"


def test_offline_the_question_names_none_of_the_sheets(store: Path) -> None:
    with HybridRAG(path=store, embedder="hashing") as rag:
        ans = rag.ask(QUESTION)
    assert ans.abstention == "out_of_scope" and "names none of the 13" in (ans.text or "")


def test_a_name_no_sheet_prints_is_linked_by_the_models_reading_and_said(store: Path) -> None:
    from hybrid_rag.models import NameReading

    model = Model([("slaked lime", "calcium hydroxide")])
    ans = _ask(store, model, QUESTION)
    assert len(model.routing_requests) == 1
    schema = json.dumps(model.routing_requests[0]["response_format"])
    assert '"names"' in schema  # the reply schema asks for readings
    assert ans.readings == [
        NameReading(said="Slaked lime", read_as="calcium hydroxide", doc_ids=[LIME])
    ]
    assert ans.text is not None and ans.text.startswith(
        "The name 'Slaked lime' was read as calcium hydroxide (the model's reading; "
        "no sheet is named 'Slaked lime')."
    )
    assert ans.facts and {f.doc_id for f in ans.facts} == {LIME}
    assert "12.4" in ans.text and ans.abstention is None


@pytest.mark.parametrize(
    ("reading", "says"),
    [
        # printed by no sheet at all
        ("burnt lime", "no sheet in scope is called burnt lime"),
        # one sheet prints it ("Mercury(I) Chloride Purified"), but the library's linking
        # reads it as the mercury(II) sheet: not the reading's, and nothing else is
        ("mercury(I) chloride", "only matches the names of sheets that do not print it"),
        # a name of several different products
        ("sodium", "matches the names of sheets of different products"),
    ],
)
def test_a_reading_that_links_none_or_several_things_is_not_answered(
    store: Path, reading: str, says: str
) -> None:
    ans = _ask(store, Model([("slaked lime", reading)]), QUESTION)
    assert ans.abstention == "out_of_scope" and not ans.facts and not ans.passages
    assert ans.text is not None and ans.text.startswith("Not answered: the name 'Slaked lime'")
    assert says in ans.text
    assert [r.read_as for r in ans.readings] == [reading] and ans.readings[0].doc_ids == []


def test_a_reading_of_a_name_many_sheets_share_keeps_only_those_that_print_it(
    store: Path,
) -> None:
    # "sulfuric acid" also links the sodium sulfate sheet (synonym "Sulfuric acid,
    # disodium salt"): the answer is from the two sulfuric acid sheets only
    ans = _ask(store, Model([("oil of vitriol", "sulfuric acid")]), "Oil of vitriol: UN number?")
    docs = {f.doc_id for f in ans.facts}
    assert docs and all(d.startswith("sulfuric-acid-") for d in docs)
    assert set(ans.readings[0].doc_ids) == docs


def test_the_streamed_answer_opens_with_the_reading_and_the_synthesis_is_kept(
    store: Path,
) -> None:
    from hybrid_rag.providers import OpenAILLM

    model = Model(
        [("slaked lime", "calcium hydroxide")],
        answer="Calcium hydroxide has a pH of 12.4 as a saturated solution [1].",
    )
    with FakeLLMServer(chat=model) as server:
        llm = OpenAILLM("gpt-test", base_url=server.openai_url, api_key="k", max_retries=0)
        with HybridRAG(path=store, embedder="hashing", llm=llm, router=LLMRouter(llm)) as rag:
            parts = list(rag.stream(QUESTION))
    *deltas, ans = parts
    assert isinstance(ans, Answer) and all(isinstance(d, StreamDelta) for d in deltas)
    pieces = [d.delta for d in deltas if isinstance(d, StreamDelta)]
    assert pieces[0].startswith("The name 'Slaked lime' was read as calcium hydroxide")
    assert ans.generation == "llm" and ans.text == "".join(pieces)
    assert ans.readings[0].doc_ids == [LIME]


# --- the router, over another domain's names --------------------------------------------

NAMES = [
    "Meta Platforms Ireland", "Alphabet Services", "Contoso Ltd", "Fabrikam GmbH",
    "Northwind Traders", "Tailspin Toys", "Wide World Importers", "Adventure Works",
    "Litware Inc", "Proseware Inc", "Woodgrove Bank", "Lucerne Publishing",
]  # fmt: skip
COMPANIES = SubjectIndex([(f"inv{i}", [f"Invoice from {name}"]) for i, name in enumerate(NAMES)])


def _scope(index: SubjectIndex = COMPANIES) -> ScopeView:
    return ScopeView(tuple(index.doc_ids()), index, load_ontology("invoice"), False, index)


def _router(names: list[tuple[str, str]], **extra: Any) -> tuple[LLMRouter, FunctionLLM]:
    llm = FunctionLLM(lambda _m: _routing(names, **extra))
    return LLMRouter(llm), llm


def test_a_former_company_name_is_read_as_the_current_one() -> None:
    from hybrid_rag.ask._readings import reading_note
    from hybrid_rag.types import Reading

    question = "What was the total of the invoice from Facebook?"
    offline = OfflineRouter().route_sync(question, scope=_scope())
    assert offline.intent == "out_of_scope"
    router, llm = _router([("Facebook", "Meta Platforms")])
    a = asyncio.run(router.route(question, scope=_scope()))
    assert len(llm.calls) == 1 and a.question == question
    assert [s.doc_id for s in a.subjects] == ["inv0"]
    assert a.readings == (Reading("Facebook", "Meta Platforms", ("inv0",)),)
    assert reading_note(a.readings, "invoice") == (
        "The name 'Facebook' was read as Meta Platforms (the model's reading; "
        "no invoice is named 'Facebook')."
    )


@pytest.mark.parametrize(
    "names",
    [
        [("Instagram", "Meta Platforms")],  # a name the question does not give
        [("Facebook", "Facebook")],  # no reading
        [("Facebook", "x" * 200)],  # a sentence, not a name
    ],
)
def test_a_reading_that_does_not_fit_the_question_is_not_used(
    names: list[tuple[str, str]],
) -> None:
    question = "What was the total of the invoice from Facebook?"
    router, _llm = _router(names)
    a = asyncio.run(router.route(question, scope=_scope()))
    assert not a.readings and not a.subjects


def test_a_name_a_document_is_named_by_is_not_read_again() -> None:
    from hybrid_rag.ask._readings import reread_question

    # "Contoso" links by the library's own linking; the model's reading is not used
    said = "What did the invoice from Contoso Ltd charge?"
    assert reread_question(said, [("Contoso Ltd", "Fabrikam")], _scope()) is None


@pytest.mark.parametrize(
    "question",
    [
        "What was the total charged by Facebook?",  # inv5 is not even listed
        "What did the toys cost on the Facebook invoice?",  # listed: "Tailspin Toys"
    ],
)
def test_a_bare_document_id_never_links_a_name_no_document_has(question: str) -> None:
    # the question names nothing the documents are named by; an id the model writes,
    # listed or not, links nothing: only a reading can say why it is that document
    # (a 1.5B model answered a pH question with a listed "pH 7.2" buffer's id)
    router, llm = _router([], documents=["inv5"])
    a = asyncio.run(router.route(question, scope=_scope()))
    assert len(llm.calls) == 1
    assert a.intent == "out_of_scope" and not a.subjects
