"""Reading what forms print in columns, and questions whose question word decides.

The documents and the ontology here are written for these tests (bills of a workshop,
under a plain OWL/SKOS ontology with one annotation of ours): a value found by its shape
with no label, a label whose "%" matters, a subject's value printed as a column of the
line items, a short PDF's layout reading filling what its plain text scrambled, a date
printed after the document's number, and "who", "when" and "how many" choosing the kind
of value asked for.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hybrid_rag import HybridRAG
from hybrid_rag.ask.analysis import analyse
from hybrid_rag.ask.linking import SubjectIndex
from hybrid_rag.ingest.extract import extract_offline
from hybrid_rag.ingest.load import parse_document
from hybrid_rag.models import Page
from hybrid_rag.ontology import TurtleOntology
from hybrid_rag.samples import sample_pdfs

BILLS = r"""
@prefix b: <http://example.org/workshop#> .
@prefix hr: <http://hybrid-rag.org/ns#> .
@prefix owl: <http://www.w3.org/2002/07/owl#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix skos: <http://www.w3.org/2004/02/skos/core#> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
b:Bill a owl:Class ; rdfs:label "Bill" .
b:Position a owl:Class ; rdfs:label "Position" .
b:workshop a owl:DatatypeProperty ; rdfs:label "Workshop" ; skos:altLabel "Repairer" ;
    rdfs:domain b:Bill ; rdfs:range xsd:string .
b:clientNumber a owl:DatatypeProperty ; rdfs:label "Client no." ; rdfs:domain b:Bill ;
    rdfs:range xsd:string .
b:billNumber a owl:DatatypeProperty ; rdfs:label "Bill no." ; rdfs:domain b:Bill ;
    rdfs:range xsd:string .
b:billDate a owl:DatatypeProperty ; rdfs:label "Bill date" ; rdfs:domain b:Bill ;
    rdfs:range xsd:date .
b:collectionDate a owl:DatatypeProperty ; rdfs:label "Collection date" ;
    skos:altLabel "Collected on" ; rdfs:domain b:Bill ; rdfs:range xsd:date .
b:vatRate a owl:DatatypeProperty ; rdfs:label "VAT (%)" ; rdfs:domain b:Bill ;
    rdfs:range xsd:decimal .
b:amountDue a owl:DatatypeProperty ; rdfs:label "Amount due" ; rdfs:domain b:Bill ;
    rdfs:range xsd:decimal .
b:settledWith a owl:DatatypeProperty ; rdfs:label "Settled with" ; rdfs:domain b:Bill ;
    rdfs:range xsd:string ;
    hr:findPattern "(?<!\\w)(?P<value>PayPal|Twint|Girocard)(?!\\w)" .
b:hasPosition a owl:ObjectProperty ; rdfs:domain b:Bill ; rdfs:range b:Position .
b:work a owl:DatatypeProperty ; rdfs:label "Work" ; rdfs:domain b:Position .
b:quantity a owl:DatatypeProperty ; rdfs:label "Quantity" ; rdfs:domain b:Position ;
    rdfs:range xsd:decimal .
b:price a owl:DatatypeProperty ; rdfs:label "Price" ; rdfs:domain b:Position ;
    rdfs:range xsd:decimal .
"""


@pytest.fixture(scope="module")
def bills() -> TurtleOntology:
    return TurtleOntology.from_turtle(BILLS, source="workshop.ttl")


def _read(pages: list[Page], ontology: TurtleOntology):  # type: ignore[no-untyped-def]
    return extract_offline(pages, ontology=ontology, source_name="bill.txt")


def _values(extraction, prop: str) -> list[str]:  # type: ignore[no-untyped-def]
    return [f.value for f in extraction.facts if f.prop == prop]


# --- values with no label, labels whose symbols count ---------------------------------------


def test_a_value_found_by_its_shape_is_the_pattern_group_quoted_with_its_line(bills) -> None:  # type: ignore[no-untyped-def]
    text = "Repairer: Velowerk Ost\nThank you for paying with Twint on 3 May 2026.\n"
    ex = _read([Page(number=1, text=text)], bills)
    fact = next(f for f in ex.facts if f.prop == "settledWith")
    assert fact.value == "Twint"
    assert fact.quote == "Thank you for paying with Twint on 3 May 2026."


def test_a_percent_in_a_label_must_be_printed(bills) -> None:  # type: ignore[no-untyped-def]
    text = "Repairer: Velowerk Ost\nVAT no. CHE-114.532.8\nVAT (%) 8.1\n"
    ex = _read([Page(number=1, text=text)], bills)
    assert _values(ex, "vatRate") == ["8.1"]
    wrong = _read([Page(number=1, text="Repairer: Velowerk Ost\nVAT: CHE-114 phone 0441\n")], bills)
    assert _values(wrong, "vatRate") == []  # "VAT (%)" is not any "VAT"


# --- a subject's value in a column of the line items ------------------------------------------

_TABLE = (
    "Repairer: Velowerk Ost\n"
    "Work Quantity Price VAT (%)\n"
    "Brake pads replaced 2 48.00 {a}\n"
    "Chain cleaned 1 15.50 {b}\n"
    "Amount due 111.50\n"
)


def test_a_column_every_line_agrees_on_gives_the_subject_value(bills) -> None:  # type: ignore[no-untyped-def]
    ex = _read([Page(number=1, text=_TABLE.format(a="8.1%", b="8.1%"))], bills)
    assert _values(ex, "vatRate") == ["8.1%"]
    assert [f.part for f in ex.facts if f.prop == "vatRate"] == [None]
    assert sorted(_values(ex, "work")) == ["Brake pads replaced", "Chain cleaned"]


def test_a_column_the_lines_disagree_on_gives_no_subject_value(bills) -> None:  # type: ignore[no-untyped-def]
    ex = _read([Page(number=1, text=_TABLE.format(a="8.1%", b="2.6%"))], bills)
    assert _values(ex, "vatRate") == []
    assert len(_values(ex, "price")) == 2


# --- the layout reading of a short PDF --------------------------------------------------------

_PLAIN = "Velowerk Ost\nRepairer:\nClient no.70415\nAmount due 111.50\nBill no.\n"
_LAID = (
    "Repairer:     Velowerk Ost\n"
    "Bill no.            70415                 Client no.        5521\n"
    "Amount due 111.50\n"
)


def test_the_layout_reading_fills_what_the_plain_order_scrambled(bills) -> None:  # type: ignore[no-untyped-def]
    plain_only = _read([Page(number=1, text=_PLAIN)], bills)
    ex = _read([Page(number=1, text=_PLAIN, layout=_LAID)], bills)
    assert _values(ex, "billNumber") == ["70415"]
    assert _values(ex, "amountDue") == _values(plain_only, "amountDue") == ["111.50"]
    fact = next(f for f in ex.facts if f.prop == "billNumber")
    assert fact.quote in _PLAIN and "Client no." not in fact.quote  # not the wrong label
    assert all(f.quote in _PLAIN for f in ex.facts)  # quotes come from the plain text


def test_a_value_the_plain_text_does_not_print_is_not_taken_from_the_layout(bills) -> None:  # type: ignore[no-untyped-def]
    laid = "Repairer:     Velowerk Ost\nBill no.     99999\n"
    ex = _read([Page(number=1, text="Repairer: Velowerk Ost\n", layout=laid)], bills)
    assert _values(ex, "billNumber") == []


def test_short_pdfs_carry_their_layout_reading_and_it_can_be_switched_off(tmp_path: Path) -> None:
    pdf = sample_pdfs(tmp_path)[0]
    data = pdf.read_bytes()
    doc = parse_document(data, name=pdf.name, source=str(pdf))
    assert all(p.layout for p in doc.pages if p.text.strip())
    off = parse_document(data, name=pdf.name, source=str(pdf), pdf_layout_pages=0)
    assert all(p.layout is None for p in off.pages)
    assert [p.text for p in off.pages] == [p.text for p in doc.pages]


# --- a date printed after the document's number -----------------------------------------------


def test_the_first_date_is_read_after_the_documents_own_number(bills) -> None:  # type: ignore[no-untyped-def]
    assert bills.read_from("billDate") == ("billNumber",)
    assert bills.read_from("collectionDate") == ()
    text = "Repairer: Velowerk Ost\nBill no. 2026-118 of 12 March 2026\nClient no. 70415\n"
    ex = _read([Page(number=1, text=text)], bills)
    date = next(f for f in ex.facts if f.prop == "billDate")
    assert (date.value, date.unit) == ("12 March 2026", "date")


# --- the question word chooses the kind of value -----------------------------------------------


def _asked(question: str, ontology: TurtleOntology) -> list[str]:
    a = analyse(question, index=SubjectIndex([]), ontology=ontology)
    return [p.name for p in a.properties]


@pytest.mark.parametrize(
    ("question", "first"),
    [
        ("Who repaired the bike on bill 2026-118?", "workshop"),  # repaired -> repairer
        ("When was the bike collected?", "collectionDate"),
        ("By when was bill 2026-118 collected?", "collectionDate"),
        ("On what date was bill 2026-118 collected?", "collectionDate"),
    ],
)
def test_who_and_when_ask_for_a_party_and_a_date(bills, question: str, first: str) -> None:  # type: ignore[no-untyped-def]
    assert _asked(question, bills)[:1] == [first]


def test_how_many_asks_for_the_count_of_what_is_named(bills) -> None:  # type: ignore[no-untyped-def]
    asked = _asked("How many brake pads were fitted, and at what price?", bills)
    assert asked[:2] == ["quantity", "price"]
    assert "quantity" not in _asked("How many days after the bill date is the amount due?", bills)


# --- two copies of one document are one name ---------------------------------------------------


def test_a_pair_question_naming_two_copies_of_one_document_looks_for_the_other_name(
    bills, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "workshop.ttl"
    path.write_text(BILLS, encoding="utf-8")
    one = "Repairer: Velowerk Ost\nBill no. 2026-118\nAmount due CHF 111.50\n"
    other = "Repairer: Radhaus Nord\nBooked through Pedalportal\nBill no. 77\nAmount due EUR 9.00\n"
    with HybridRAG(ontology=str(path), embedder="hashing") as rag:
        rag.ingest(one.encode(), name="velowerk.txt")
        rag.ingest(one.encode(), name="velowerk-scan.txt")  # the same bill, scanned
        rag.ingest(other.encode(), name="radhaus.txt")
        answer = rag.ask("Do the Velowerk bill and the Pedalportal bill state the same amount due?")
    text = answer.text or ""
    assert text.startswith("No"), text
    assert "radhaus" in {f.doc_id for f in answer.facts}


# --- a value below its label: sentences one per line, or a name over an address -----------

CARE = r"""
@prefix c: <http://example.org/care#> .
@prefix owl: <http://www.w3.org/2002/07/owl#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
c:Appliance a owl:Class ; rdfs:label "Appliance" .
c:cleaning a owl:DatatypeProperty ; rdfs:label "Cleaning" ; rdfs:domain c:Appliance ;
    rdfs:range xsd:string .
c:notToUse a owl:DatatypeProperty ; rdfs:label "Do not use" ; rdfs:domain c:Appliance ;
    rdfs:range xsd:string .
c:servicedBy a owl:DatatypeProperty ; rdfs:label "Serviced by" ; rdfs:domain c:Appliance ;
    rdfs:range xsd:string .
"""


def test_sentences_below_a_label_are_its_value_up_to_the_blank_line() -> None:
    care = TurtleOntology.from_turtle(CARE, source="care.ttl")
    text = (
        "Cleaning:\nWipe the drum with a damp cloth after each use.\n"
        "Descale the water tank once a month with citric acid.\n\n"
        "Do not use:\nBleach or abrasive pads on the steel front.\n"
    )
    ex = extract_offline([Page(number=1, text=text)], ontology=care, source_name="care.txt")
    assert _values(ex, "cleaning") == [
        "Wipe the drum with a damp cloth after each use. "
        "Descale the water tank once a month with citric acid."
    ]
    assert _values(ex, "notToUse") == ["Bleach or abrasive pads on the steel front."]


def test_a_name_below_its_label_keeps_the_address_lines_out() -> None:
    care = TurtleOntology.from_turtle(CARE, source="care.ttl")
    text = "Serviced by:\nKessler Haustechnik GmbH.\nAm Hang 12, 6020 Innsbruck\nAT\n\n"
    ex = extract_offline([Page(number=1, text=text)], ontology=care, source_name="care.txt")
    assert _values(ex, "servicedBy") == ["Kessler Haustechnik GmbH."]


def _care_with_cleaning_procedure() -> TurtleOntology:
    """The care ontology with its cleaning instructions read as a procedure."""
    return TurtleOntology.from_turtle(
        CARE.replace(
            'rdfs:label "Cleaning" ;', 'rdfs:label "Cleaning" ; hr:valueKind "procedure" ;'
        ).replace("@prefix c:", "@prefix hr: <http://hybrid-rag.org/ns#> .\n@prefix c:"),
        source="care.ttl",
    )


def test_the_rest_of_a_longer_label_is_no_procedure() -> None:
    care = _care_with_cleaning_procedure()
    text = "Cleaning intervals:\nServiced by: Kessler Haustechnik\n"
    ex = extract_offline([Page(number=1, text=text)], ontology=care, source_name="care.txt")
    assert _values(ex, "cleaning") == []  # "intervals:" is the rest of a longer label
    assert _values(ex, "servicedBy") == ["Kessler Haustechnik"]


def test_a_procedure_that_ends_a_page_skips_the_next_pages_running_header() -> None:
    care = _care_with_cleaning_procedure()
    header = "Care Guide\nKessler KX-2 Dryer\n"
    pages = [
        Page(number=1, text=header + "\nServiced by: Kessler Haustechnik\n\nCleaning:\n"),
        Page(number=2, text=header + "\nWipe the drum with a damp cloth after each use.\n"),
    ]
    ex = extract_offline(pages, ontology=care, source_name="care.txt")
    assert _values(ex, "cleaning") == ["Wipe the drum with a damp cloth after each use."]
