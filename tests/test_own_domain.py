"""Any domain, any ontology: the generic reader, typed values, parts, text-linked names,
and stores that remember their ontology. Documents here are written for these tests
(an order, a bill, a statement); the real invoices of the shared corpus are read at the
end, under the bundled invoice ontology and under a plain OWL/SKOS one."""

from __future__ import annotations

from pathlib import Path

import pytest

from hybrid_rag import HybridRAG
from hybrid_rag.errors import ConfigurationError
from hybrid_rag.ingest.extract import extract_offline
from hybrid_rag.ingest.reading._typed import currency_of, parse_amount, parse_date, to_number
from hybrid_rag.models import Page
from hybrid_rag.ontology import TurtleOntology, load_ontology

ROOT = Path(__file__).resolve().parent.parent
INVOICES = ROOT.parent / "shared" / "corpus" / "invoices"
PLAIN = ROOT / "examples" / "ontologies" / "billing.ttl"

ORDERS = """
@prefix o: <http://example.org/orders#> .
@prefix owl: <http://www.w3.org/2002/07/owl#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix skos: <http://www.w3.org/2004/02/skos/core#> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
o:PurchaseOrder a owl:Class ; rdfs:label "Purchase order" ; skos:altLabel "Order" .
o:OrderLine a owl:Class ; rdfs:label "Order line" .
o:supplierName a owl:DatatypeProperty ; rdfs:label "Supplier" ; skos:altLabel "Lieferant"@de ;
    rdfs:domain o:PurchaseOrder ; rdfs:range xsd:string .
o:poNumber a owl:DatatypeProperty ; rdfs:label "PO number" ; skos:altLabel "Bestellnr."@de ;
    rdfs:domain o:PurchaseOrder ; rdfs:range xsd:string .
o:deliveryDate a owl:DatatypeProperty ; rdfs:label "Delivery date" ;
    skos:altLabel "Liefertermin"@de ; rdfs:domain o:PurchaseOrder ; rdfs:range xsd:date .
o:orderValue a owl:DatatypeProperty ; rdfs:label "Order value" ; skos:altLabel "Gesamt"@de ;
    rdfs:domain o:PurchaseOrder ; rdfs:range xsd:decimal .
o:freight a owl:DatatypeProperty ; rdfs:label "Freight" ; rdfs:domain o:PurchaseOrder ;
    rdfs:range xsd:decimal .
o:hasLine a owl:ObjectProperty ; rdfs:domain o:PurchaseOrder ; rdfs:range o:OrderLine .
o:article a owl:DatatypeProperty ; rdfs:label "Article" ; rdfs:domain o:OrderLine .
o:pieces a owl:DatatypeProperty ; rdfs:label "Pieces" ; rdfs:domain o:OrderLine ;
    rdfs:range xsd:decimal .
o:linePrice a owl:DatatypeProperty ; rdfs:label "Price" ; rdfs:domain o:OrderLine ;
    rdfs:range xsd:decimal .
"""

ORDER_4711 = (
    "Bestellung\n"
    "Lieferant: Kranwerk Süd GmbH\n"
    "4711Bestellnr.:\n"
    "Liefertermin: 14. März 2025\n"
    "Article Pieces Price\n"
    "Hydraulic hose DN10 4 € 1.250,40\n"
    "Seal kit M8 12 € 96,00\n"
    "Freight € 35,00 Gesamt € 1.381,40\n"
)


@pytest.fixture(scope="module")
def orders() -> TurtleOntology:
    return TurtleOntology.from_turtle(ORDERS, source="orders.ttl")


def _read(text: str, ontology: TurtleOntology, name: str = "order.txt"):  # type: ignore[no-untyped-def]
    return extract_offline([Page(number=1, text=text)], ontology=ontology, source_name=name)


def _values(extraction, prop: str) -> list[str]:  # type: ignore[no-untyped-def]
    return [f.value for f in extraction.facts if f.prop == prop]


# --- typed values ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("printed", "expected"),
    [
        ("€ 1.250,40", (1250.4, "EUR")),
        ("USD 3,120.75", (3120.75, "USD")),
        ("12,50 € incl. tax", (12.5, "EUR")),
        ("due on May 2, 2024 $19.99", (19.99, "USD")),
        ("Rs -12.00 discount", (-12.0, "INR")),
        ("4 pieces", None),
    ],
)
def test_amounts_are_read_with_their_currency(printed: str, expected: object) -> None:
    assert parse_amount(printed) == expected


def test_numbers_keep_their_printed_separators() -> None:
    assert [to_number(x) for x in ("1.250,40", "1,250.40", "0,125", "1,234", "7")] == [
        1250.4,
        1250.4,
        0.125,
        1234.0,
        7.0,
    ]
    assert currency_of("prices in GBP") == "GBP" and currency_of("no money here") is None


@pytest.mark.parametrize(
    ("printed", "iso"),
    [
        ("14. März 2025", "2025-03-14"),
        ("le 3 janvier 2024", "2024-01-03"),
        ("12 oktober 2023", "2023-10-12"),
        ("June 9, 2022", "2022-06-09"),
        ("28.02.23", "2023-02-28"),
        ("2021-11-30", "2021-11-30"),
        ("30/04/2020", "2020-04-30"),
        ("Revision date 19-Jun-2023", "2023-06-19"),
        ("14-April-2023", "2023-04-14"),
    ],
)
def test_dates_are_read_in_their_printed_forms(printed: str, iso: str) -> None:
    from datetime import date, timedelta

    found = parse_date(printed)
    assert found is not None
    assert (date(1970, 1, 1) + timedelta(days=found[0])).isoformat() == iso
    assert found[1] in printed


def test_a_number_glued_to_about_and_a_temperatures_thousands_are_read() -> None:
    from hybrid_rag.ingest.reading._values import parse_quantity

    about = parse_quantity("ca.1.35 g/cm3 at 20 °C (68 °F)", kind="number", unit=None)
    assert about[0] == 1.35  # not the 20 of the condition
    assert parse_quantity("ca.158 °C ca.316 °F", kind="temperature", unit="°C") == (158.0, "°C")
    hot = parse_quantity("1,330 °C (2,426 °F)", kind="temperature", unit="°C")
    assert hot == (1330.0, "°C")


def test_version_numbers_and_phone_numbers_are_no_dates() -> None:
    assert parse_date("firmware 2.4.1") is None and parse_date("call 800-555-0199") is None


# --- the generic reader under a plain ontology ------------------------------------------------


def test_a_plain_ontology_reads_labels_in_its_languages_and_types_values(orders) -> None:  # type: ignore[no-untyped-def]
    ex = _read(ORDER_4711, orders)
    assert _values(ex, "supplierName") == ["Kranwerk Süd GmbH"]
    assert _values(ex, "poNumber") == ["4711"]  # printed before its label
    date = next(f for f in ex.facts if f.prop == "deliveryDate")
    assert (date.value, date.unit) == ("14. März 2025", "date")
    total = next(f for f in ex.facts if f.prop == "orderValue")
    assert (total.number, total.unit) == (1381.4, "EUR")  # two labels on one line
    freight = next(f for f in ex.facts if f.prop == "freight")
    assert (freight.number, freight.unit) == (35.0, "EUR")
    assert ex.subject == "Kranwerk Süd GmbH" and "4711" in ex.aliases
    page = ORDER_4711
    assert all(f.quote in page for f in ex.facts)


def test_the_rows_of_a_part_table_are_parts_of_their_own(orders) -> None:  # type: ignore[no-untyped-def]
    ex = _read(ORDER_4711, orders)
    lines = {}
    for f in ex.facts:
        if f.part is not None:
            lines.setdefault(f.part, {})[f.prop] = f.value
    assert lines == {
        1: {"article": "Hydraulic hose DN10", "pieces": "4", "linePrice": "€ 1.250,40"},
        2: {"article": "Seal kit M8", "pieces": "12", "linePrice": "€ 96,00"},
    }


def test_a_wrapped_sentence_is_no_label(orders) -> None:  # type: ignore[no-untyped-def]
    text = "Supplier: Acme Tools\nThe freight paid by the buyer is listed separately.\n"
    ex = _read(text, orders)
    assert _values(ex, "freight") == []  # "freight paid by ..." is prose, not a value


def test_a_typed_value_a_few_lines_under_its_label(orders) -> None:  # type: ignore[no-untyped-def]
    text = "Liefertermin\nBestellnr.9001\n5. Mai 2026\n"
    ex = _read(text, orders)
    assert _values(ex, "deliveryDate") == ["5. Mai 2026"]


def test_a_document_without_a_name_is_named_from_its_file(orders) -> None:  # type: ignore[no-untyped-def]
    assert _read("Order value € 12,00\n", orders, "AcmeTools7.pdf").subject == "AcmeTools 7"
    assert _read("Order value € 12,00\n", orders, "acme-tools_q3.pdf").subject == "Acme Tools Q3"


# --- asking under an ontology of one's own -----------------------------------------------------


@pytest.fixture(scope="module")
def order_rag(tmp_path_factory: pytest.TempPathFactory, orders):  # type: ignore[no-untyped-def]
    path = tmp_path_factory.mktemp("orders") / "orders.ttl"
    path.write_text(ORDERS, encoding="utf-8")
    second = ORDER_4711.replace("4711", "4712").replace("Kranwerk Süd GmbH", "Hafenlogistik AG")
    second = second.replace("14. März 2025", "2. Februar 2025").replace("1.381,40", "980,00")
    with HybridRAG(ontology=str(path), embedder="hashing") as rag:
        rag.ingest(ORDER_4711.encode(), name="kranwerk-order.txt")
        rag.ingest(second.encode(), name="hafen-order.txt")
        rag.ingest(b"Delivery terms\nGoods travel at the buyer's risk.\n", name="terms.txt")
        yield rag


def test_a_question_naming_a_code_links_its_document(order_rag) -> None:  # type: ignore[no-untyped-def]
    answer = order_rag.ask("What was the order value of purchase order 4712?")
    assert "980,00" in (answer.text or "") and "1.381,40" not in (answer.text or "")
    assert {f.doc_id for f in answer.facts} == {"hafen-order"}


def test_dates_compare_as_earlier_and_later(order_rag) -> None:  # type: ignore[no-untyped-def]
    answer = order_rag.ask("Which delivery date comes first: order 4711 or order 4712?")
    assert (answer.text or "").startswith("Hafenlogistik AG")
    assert "earlier" in (answer.text or "")


def test_a_name_printed_in_a_document_links_it(order_rag) -> None:  # type: ignore[no-untyped-def]
    answer = order_rag.ask("What does the Delivery terms document say about risk?")
    assert "buyer's risk" in (answer.text or "")
    nowhere = order_rag.ask("What is the order value of the Zebulon Freight order?")
    assert nowhere.abstention == "out_of_scope" and "Zebulon" in (nowhere.text or "")


def test_a_store_refuses_another_ontology(tmp_path: Path) -> None:
    with HybridRAG(tmp_path, ontology="invoice", embedder="hashing") as rag:
        rag.ingest(b"Invoice number: 77\nTotal: EUR 5,00\n", name="tiny.txt")
    with (
        pytest.raises(ConfigurationError, match="ontology") as err,
        HybridRAG(tmp_path, ontology="msds", embedder="hashing") as other,
    ):
        other.ask("What is the total of invoice 77?")
    assert "invoice" in str(err.value)
    with HybridRAG(tmp_path, ontology="invoice", embedder="hashing") as rag:
        assert [d.doc_id for d in rag.documents()] == ["tiny"]


# --- the real invoices -------------------------------------------------------------------------

needs_invoices = pytest.mark.skipif(
    not INVOICES.is_dir(), reason=f"invoice corpus not found at {INVOICES} (../shared)"
)


def _invoice_rag(ontology: str):  # type: ignore[no-untyped-def]
    rag = HybridRAG(ontology=ontology, embedder="hashing")
    rag.ingest_many(sorted(INVOICES.glob("*.pdf")))
    return rag


@needs_invoices
@pytest.mark.parametrize("ontology", ["invoice", str(PLAIN)])
def test_real_invoices_answer_under_either_ontology(ontology: str) -> None:
    with _invoice_rag(ontology) as rag:
        coolblue = rag.ask("How much did Coolblue invoice 992288600 come to in total?")
        assert "4.904,94" in (coolblue.text or "")
        assert {f.doc_id for f in coolblue.facts} <= {"coolblue2"}
        line = rag.ask("What did the Nintendo AC-adapter cost on Coolblue invoice 993548900?")
        assert "14,99" in (line.text or "") and "399,00" not in (line.text or "")
        seller = rag.ask("Who is the seller on invoice 42183017?")
        assert "Amazon Web Services" in (seller.text or "")
        due = rag.ask("When is payment due for the QualityHosting invoice?")
        assert "21.05.14" in (due.text or "")
        currency = rag.ask(
            "Are the QualityHosting and Amazon Web Services invoices billed in the same currency?"
        )
        assert (currency.text or "").startswith("No")


@needs_invoices
def test_the_plain_ontology_carries_no_annotations_of_ours() -> None:
    text = PLAIN.read_text(encoding="utf-8")
    assert "hybrid-rag.org" not in text
    model = load_ontology(str(PLAIN)).document_model()
    assert model.subject_class == "BillingDocument" and model.naming[0] == "sellerName"
