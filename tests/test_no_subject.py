"""Documents the ontology knows nothing about (a manual, an annual report) are answered
from their passages: titles from the first-page line their file name spells, terms their
text prints are no unknown names, and a name ends where its sentence or list item ends.

The documents and the ontology (job postings: nothing here is one) are written for these
tests; ``benchmarks/no_subject.py`` measures the same on real documents."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from hybrid_rag import HybridRAG
from hybrid_rag.ask.analysis import ScopeView
from hybrid_rag.ask.linking import SubjectIndex
from hybrid_rag.ask.route import OfflineRouter
from hybrid_rag.ontology import TurtleOntology

JOBS = """
@prefix job: <http://example.org/jobs#> .
@prefix owl: <http://www.w3.org/2002/07/owl#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
job:JobPosting a owl:Class ; rdfs:label "Job posting" .
job:salary a owl:DatatypeProperty ; rdfs:label "Salary" ; rdfs:domain job:JobPosting ;
    rdfs:range xsd:decimal .
job:contractType a owl:DatatypeProperty ; rdfs:label "Contract type" ;
    rdfs:domain job:JobPosting .
job:applicationDeadline a owl:DatatypeProperty ; rdfs:label "Application deadline" ;
    rdfs:domain job:JobPosting ; rdfs:range xsd:date .
"""

MANUAL = (
    "Vantor K2-40 Sump Pump, 2.5 bar\n"
    "Installation and operating instructions\n"
    "Read these instructions before the pump is installed.\n"
    "\f"
    "Installation\n"
    "Mount the pump on a level base and connect a discharge hose of 32 mm.\n"
    "The float switch must be free to move in the sump.\n"
    "\f"
    "Approvals\n"
    "The pump carries an NSF listing for drinking water components.\n"
    "Its motor is sealed for continuous submersion.\n"
)
REPORT = (
    "Brenwick Holdings plc, trading as Kestrel Retail\n"
    "Annual report for the year 2023\n"
    "\f"
    "Results\n"
    "Group revenue rose to 412 million USD, up 6 per cent on the year before.\n"
    "The operating margin was eleven per cent.\n"
    "\f"
    "Shops\n"
    "Brenwick opened fourteen shops and closed three during the year.\n"
)
FILES = {
    "vantor-k2-40-sump-pump-2-5-bar.txt": MANUAL,
    "brenwick-holdings-annual-report-2023.txt": REPORT,
}


@pytest.fixture(scope="module")
def rag(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HybridRAG]:
    folder = tmp_path_factory.mktemp("unrelated")
    (folder / "jobs.ttl").write_text(JOBS)
    for name, text in FILES.items():
        (folder / name).write_text(text)
    with HybridRAG(folder / "store", ontology=folder / "jobs.ttl", embedder="hashing") as r:
        r.ingest_many([folder / name for name in FILES], raise_errors=True)
        yield r


def _doc(rag: HybridRAG, prefix: str) -> str:
    return next(d.doc_id for d in rag.documents() if d.doc_id.startswith(prefix))


def test_a_document_without_a_stated_name_is_titled_as_page_one_prints_its_file_name(
    rag: HybridRAG,
) -> None:
    titles = {d.doc_id: d.title for d in rag.documents()}
    assert titles[_doc(rag, "vantor")] == "Vantor K2-40 Sump Pump, 2.5 bar"
    # no line of page 1 spells "brenwick holdings annual report 2023": the file's words
    assert titles[_doc(rag, "brenwick")] == "Brenwick Holdings Annual Report 2023"


def test_the_printed_name_links_with_its_own_numbers(rag: HybridRAG) -> None:
    answer = rag.ask("How wide is the discharge hose of the Vantor K2-40 Sump Pump, 2.5 bar?")
    assert answer.abstention != "out_of_scope"
    assert answer.passages and {p.doc_id for p in answer.passages} == {_doc(rag, "vantor")}
    assert any("32 mm" in p.text for p in answer.passages)


def test_a_term_the_documents_print_is_no_unknown_name(rag: HybridRAG) -> None:
    # "USD" (page 2) is a term of the report; "Kestrel Retail" names it on page 1
    answer = rag.ask("How much revenue in USD did Kestrel Retail report?")
    assert answer.abstention != "out_of_scope", answer.text
    hits = [(p.doc_id, p.page) for p in answer.passages if "412 million" in p.text]
    assert (_doc(rag, "brenwick"), 2) in hits


def test_a_term_no_document_prints_is_still_out_of_scope(rag: HybridRAG) -> None:
    answer = rag.ask("Which ZORBLAT figure does Kestrel Retail report?")
    assert answer.abstention == "out_of_scope" and not answer.passages
    assert "ZORBLAT" in (answer.text or "")


def test_an_unknown_product_the_text_does_not_print_is_out_of_scope(rag: HybridRAG) -> None:
    answer = rag.ask("What is the delivery head of the Quorvex Heater 3000?")
    assert answer.abstention == "out_of_scope"
    assert "Quorvex Heater 3000" in (answer.text or "")


# --- where a name ends -------------------------------------------------------------------

ONTOLOGY = TurtleOntology.from_turtle(JOBS)
NAMES = SubjectIndex([("pump", ["Vantor K2-40 Sump Pump"]), ("report", ["Brenwick Annual Report"])])
SCOPE = ScopeView(tuple(NAMES.doc_ids()), NAMES, ONTOLOGY, False, NAMES)


@pytest.mark.parametrize(
    ("question", "missing"),
    [
        ("Someone dropped a Quorvex Heater 3000. What now?", "Quorvex Heater 3000"),
        ("Which is heavier: Quorvex Heater; Zentrix Boiler?", "Quorvex Heater"),
        ("Is the Quorvex Heater (Model 7) louder?", "Quorvex Heater"),
    ],
)
def test_a_name_ends_with_its_sentence_or_list_item(question: str, missing: str) -> None:
    a = OfflineRouter().route_sync(question, scope=SCOPE)
    assert a.intent == "out_of_scope" and a.missing == (missing,) and a.unlinked == (missing,)


def test_words_the_documents_print_are_known_to_the_router() -> None:
    question = "Which NSF listing does the Kestrel Retail report give?"
    unknown = OfflineRouter().route_sync(question, scope=SCOPE)
    assert unknown.intent == "out_of_scope" and unknown.unlinked == ("NSF",)
    printed = ScopeView(SCOPE.doc_ids, NAMES, ONTOLOGY, False, NAMES, printed=frozenset({"nsf"}))
    known = OfflineRouter().route_sync(question, scope=printed)  # the next name is looked up
    assert known.intent == "out_of_scope" and known.unlinked == ("Kestrel Retail",)


def test_a_namesake_is_looked_up_in_the_documents_before_it_is_out_of_scope() -> None:
    a = OfflineRouter().route_sync("How loud is the Vantor K2-90 Sump Pump?", scope=SCOPE)
    assert a.intent == "out_of_scope" and a.unlinked == a.missing and a.missing
