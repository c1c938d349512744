"""Questions about the whole collection: which documents state a value, how many, which
pass a bound, which holds the extreme; precision first (a near value is no member).

The documents (spare-part data sheets) and their plain OWL ontology are written for these
tests; ``../shared/eval/qa-collection.jsonl`` measures the same on real sheets."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from hybrid_rag import HybridRAG
from hybrid_rag.ask.linking import SubjectIndex

PARTS = """
@prefix pt: <http://example.org/parts#> .
@prefix owl: <http://www.w3.org/2002/07/owl#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
pt:SparePart a owl:Class ; rdfs:label "Spare part" .
pt:partName a owl:DatatypeProperty ; rdfs:label "Part name" ; rdfs:domain pt:SparePart .
pt:material a owl:DatatypeProperty ; rdfs:label "Material" ; rdfs:domain pt:SparePart .
pt:hazardClass a owl:DatatypeProperty ; rdfs:label "Hazard class" ;
    rdfs:domain pt:SparePart .
pt:weight a owl:DatatypeProperty ; rdfs:label "Weight" ; rdfs:domain pt:SparePart ;
    rdfs:range xsd:decimal .
pt:maker a owl:DatatypeProperty ; rdfs:label "Manufacturer" ; rdfs:domain pt:SparePart .
"""

SHEETS = {
    "gear-housing.txt": ("Gear Housing GH-40", "Cast iron", "Class 2B", "12.5 kg", "Orlen Works"),
    "valve-seat.txt": ("Valve Seat VS-7", "Stainless steel", "Class 2", "0.4 kg", "Orlen Works"),
    "pump-impeller.txt": ("Pump Impeller PI-3", "Bronze", "Class 2B", "3.2 kg", "Tarvik AB"),
    "drive-shaft.txt": ("Drive Shaft DS-90", "Stainless steel", "Class 1", "7.8 kg", "Tarvik AB"),
    "seal-kit.txt": ("Seal Kit SK-12", "Nitrile rubber", "Not classified", "0.2 kg", "Velmar"),
}


def _text(name: str, material: str, hazard: str, weight: str, maker: str) -> str:
    return (
        f"Part name: {name}\nMaterial: {material}\nHazard class: {hazard}\n"
        f"Weight: {weight}\nManufacturer: {maker}\n"
    )


@pytest.fixture(scope="module")
def rag(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HybridRAG]:
    folder = tmp_path_factory.mktemp("parts")
    (folder / "parts.ttl").write_text(PARTS)
    for file, fields in SHEETS.items():
        (folder / file).write_text(_text(*fields))
    with HybridRAG(folder / "store", ontology=folder / "parts.ttl", embedder="hashing") as r:
        r.ingest_many([folder / f for f in SHEETS], raise_errors=True)
        yield r


def _members(rag: HybridRAG, question: str) -> set[str]:
    answer = rag.ask(question)
    return {f.doc_id for f in answer.facts}


def test_a_class_filter_lists_exactly_the_documents_that_state_it(rag: HybridRAG) -> None:
    answer = rag.ask("Which of our parts are in Hazard Class 2B?")
    assert {f.doc_id for f in answer.facts} == {"gear-housing", "pump-impeller"}
    assert answer.text is not None and answer.text.startswith("2 ")
    assert "[gear-housing p.1]" in answer.text and "[pump-impeller p.1]" in answer.text
    assert answer.abstention is None


def test_a_near_code_is_no_member(rag: HybridRAG) -> None:
    # "Class 2" is not "Class 2B", and the reverse
    assert _members(rag, "Which parts are listed under Hazard Class 2?") == {"valve-seat"}


def test_a_name_in_the_question_is_a_value_to_look_for(rag: HybridRAG) -> None:
    assert _members(rag, "Which of our parts are made by Tarvik AB?") == {
        "pump-impeller",
        "drive-shaft",
    }
    assert _members(rag, "List the parts of stainless steel.") == {"valve-seat", "drive-shaft"}


def test_a_count_leads_with_the_number(rag: HybridRAG) -> None:
    answer = rag.ask("How many parts does Orlen Works make?")
    assert {f.doc_id for f in answer.facts} == {"gear-housing", "valve-seat"}
    assert answer.text is not None and answer.text.startswith("2 ")


def test_a_bound_on_a_typed_value(rag: HybridRAG) -> None:
    assert _members(rag, "Which parts have a weight above 5 kg?") == {"gear-housing", "drive-shaft"}
    assert _members(rag, "Which parts have a weight below 0.5 kg?") == {"valve-seat", "seal-kit"}


def test_the_extreme_of_a_typed_value_over_the_collection(rag: HybridRAG) -> None:
    answer = rag.ask("What is the highest weight of any part?")
    assert {f.doc_id for f in answer.facts} == {"gear-housing"}
    assert answer.text is not None and "12.5 kg" in answer.text


def test_a_value_no_document_states_is_said_so_not_guessed(rag: HybridRAG) -> None:
    answer = rag.ask("Which parts are in Hazard Class 9?")
    assert answer.facts == []
    assert answer.abstention == "not_in_documents"
    assert answer.text is not None and "9" in answer.text


def test_docs_scope_bounds_the_collection(rag: HybridRAG) -> None:
    answer = rag.ask("Which parts are in Hazard Class 2B?", docs=["gear-housing", "seal-kit"])
    assert {f.doc_id for f in answer.facts} == {"gear-housing"}


def test_two_named_documents_are_compared_not_the_collection(rag: HybridRAG) -> None:
    answer = rag.ask("Which part has the higher weight, Gear Housing GH-40 or Drive Shaft DS-90?")
    assert {f.doc_id for f in answer.facts} <= {"gear-housing", "drive-shaft"}
    assert answer.text is not None and answer.text.startswith("Gear Housing GH-40")


def test_vector_mode_says_it_cannot_answer_over_the_collection(rag: HybridRAG) -> None:
    answer = rag.ask("Which parts are in Hazard Class 2B?", mode="vector")
    assert answer.facts == [] and answer.abstention == "out_of_scope"
    assert answer.text is not None and "collection" in answer.text


def test_asking_over_the_collection_writes_nothing(rag: HybridRAG) -> None:
    before = [(d.doc_id, d.triples, d.chunks) for d in rag.documents()]
    rag.ask("Which parts are in Hazard Class 2B? Delete the others.")
    assert [(d.doc_id, d.triples, d.chunks) for d in rag.documents()] == before


# --- the real invoices --------------------------------------------------------------------

INVOICES = Path(__file__).resolve().parents[1].parent / "shared" / "corpus" / "invoices"


@pytest.fixture(scope="module")
def invoices(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HybridRAG]:
    if not INVOICES.is_dir():
        pytest.skip(f"the shared invoice corpus is not at {INVOICES}")
    store = tmp_path_factory.mktemp("invoices")
    with HybridRAG(store, ontology="invoice", embedder="hashing") as r:
        r.ingest_many(sorted(INVOICES.glob("*.pdf")), raise_errors=True)
        yield r


def test_invoices_by_currency_and_by_a_bound_in_that_currency(invoices: HybridRAG) -> None:
    in_euro = {f.doc_id for f in invoices.ask("Which of our invoices are billed in EUR?").facts}
    assert in_euro == {"QualityHosting", "coolblue1", "coolblue2", "free_fiber"}
    answer = invoices.ask("Which invoices have a total above 500 EUR?")
    # the 1939 rupees of the hotel booking are no amount in euros
    assert {f.doc_id for f in answer.facts} == {"coolblue1", "coolblue2"}
    assert answer.text is not None and "disagree" not in answer.text


EURO = {"QualityHosting", "coolblue1", "coolblue2", "free_fiber"}


def test_a_currency_by_its_name_is_its_code(invoices: HybridRAG) -> None:
    assert _members(invoices, "Which invoices are billed in euros?") == EURO
    assert _members(invoices, "How many invoices are in USD?") == {"AmazonWebServices"}
    # a country's adjective before the currency's name is part of the name
    assert _members(invoices, "Which invoices are in Indian rupees?") == {"FlipkartInvoice", "oyo"}
    assert _members(invoices, "List the invoices paid in US dollars.") == {"AmazonWebServices"}


def test_the_currencies_across_the_invoices(invoices: HybridRAG) -> None:
    answer = invoices.ask("What currencies do our invoices use?")
    assert answer.text is not None and answer.text.startswith("3 different currencies on 7")
    assert "EUR on 4 invoices" in answer.text


def test_a_bound_in_a_currency_with_no_property_is_on_the_amount(invoices: HybridRAG) -> None:
    answer = invoices.ask("List the invoices over 500 EUR.")
    assert {f.doc_id for f in answer.facts} == {"coolblue1", "coolblue2"}
    assert answer.text is not None and "total above 500 EUR" in answer.text
    # a line's unit cost is no invoice's cost: the question names no line
    assert _members(invoices, "Which invoices cost more than €500?") == {"coolblue1", "coolblue2"}


def test_the_sum_of_the_amounts_is_added_up_per_currency(invoices: HybridRAG) -> None:
    euro = invoices.ask("What is the total of all invoices in EUR?")
    assert {f.doc_id for f in euro.facts} == EURO
    assert euro.text is not None and "add up to 5687.63 EUR" in euro.text
    named = invoices.ask("What do the Coolblue invoices add up to?")
    assert {f.doc_id for f in named.facts} == {"coolblue1", "coolblue2"}
    assert named.text is not None and "5622.91 EUR" in named.text


def test_an_extreme_across_currencies_is_none_within_one_it_is(invoices: HybridRAG) -> None:
    across = invoices.ask("Which invoice has the highest total?")
    assert across.facts == [] and across.abstention == "not_in_documents"
    assert across.text is not None and "units" in across.text
    within = invoices.ask("What is the most expensive invoice in euros?")
    assert {f.doc_id for f in within.facts} == {"coolblue2"}
    assert within.text is not None and within.text.startswith("The highest total in EUR")


def test_a_count_of_the_documents_alone_is_every_document(invoices: HybridRAG) -> None:
    answer = invoices.ask("How many invoices do we hold?")
    assert len({f.doc_id for f in answer.facts}) == 7  # one has no issuer's name read
    assert answer.text is not None and answer.text.startswith("7 ")


def test_the_set_a_question_names_is_no_word_to_find(rag: HybridRAG) -> None:
    # "spares" says which documents are meant; no value prints it
    assert _members(rag, "Which of the spares are made of bronze?") == {"pump-impeller"}


# --- a name many documents share ----------------------------------------------------------

FITTINGS = {
    "brass-fitting.txt": ("Brass Fitting BF-1", "Brass", "Class 1", "0.3 kg", "Orlen Works"),
    "brass-elbow.txt": ("Brass Elbow BE-2", "Brass", "Not classified", "0.5 kg", "Tarvik AB"),
    "brass-tee.txt": ("Brass Tee BT-3", "Brass", "Class 2B", "0.7 kg", "Velmar"),
    "steel-elbow.txt": ("Steel Elbow SE-4", "Steel", "Class 2B", "1.1 kg", "Velmar"),
}


REVISED = {  # printed as each maker prints dates
    "brass-fitting.txt": "03/14/2023",
    "brass-elbow.txt": "2021-11-02",
    "brass-tee.txt": "July 5, 2023",
    "steel-elbow.txt": "12.01.2023",
}
DATED = """
pt:revisionDate a owl:DatatypeProperty ; rdfs:label "Revision date" ;
    rdfs:domain pt:SparePart ; rdfs:range xsd:date .
"""


@pytest.fixture(scope="module")
def fittings(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HybridRAG]:
    folder = tmp_path_factory.mktemp("fittings")
    (folder / "parts.ttl").write_text(PARTS + DATED)
    for file, fields in FITTINGS.items():
        (folder / file).write_text(_text(*fields) + f"Revision date: {REVISED[file]}\n")
    with HybridRAG(folder / "store", ontology=folder / "parts.ttl", embedder="hashing") as r:
        r.ingest_many([folder / f for f in FITTINGS], raise_errors=True)
        yield r


def test_a_name_many_documents_share_is_the_set_counted(fittings: HybridRAG) -> None:
    answer = fittings.ask("How many brass pieces do we keep?")
    assert {f.doc_id for f in answer.facts} == {"brass-fitting", "brass-elbow", "brass-tee"}
    assert answer.text is not None and answer.text.startswith("3 ")
    assert all(f.evidence.quote and f.evidence.page == 1 for f in answer.facts)


def test_the_other_words_filter_among_the_named_documents(fittings: HybridRAG) -> None:
    # the steel elbow is Class 2B too, but it is no brass part
    assert _members(fittings, "Which brass parts are in Class 2B?") == {"brass-tee"}
    heavy = _members(fittings, "Which brass parts have a weight above 0.4 kg?")
    assert heavy == {"brass-elbow", "brass-tee"}
    none = fittings.ask("Which brass parts are made of bronze?")
    assert not none.facts and none.text is not None and "named 'brass'" in none.text


def test_a_set_without_a_shared_name_is_read_as_before(fittings: HybridRAG) -> None:
    # "elbows" names the set itself; no name before it: the values decide, as ever
    assert _members(fittings, "Which parts are made by Velmar?") == {"brass-tee", "steel-elbow"}
    assert _members(fittings, "Which of our parts are made of steel?") == {"steel-elbow"}


def test_a_date_is_a_typed_value_to_filter_and_sort_on(fittings: HybridRAG) -> None:
    in_2023 = _members(fittings, "Which parts were revised in 2023?")
    assert in_2023 == {"brass-fitting", "brass-tee", "steel-elbow"}  # 12.01.2023: January
    assert _members(fittings, "Which brass parts were revised in July 2023?") == {"brass-tee"}
    assert _members(fittings, "Which parts were revised before 2022?") == {"brass-elbow"}
    oldest = fittings.ask("Which part has the oldest revision date?")
    assert {f.doc_id for f in oldest.facts} == {"brass-elbow"}
    assert oldest.text is not None and "earliest" in oldest.text


def test_words_set_off_after_the_set_describe_it_and_filter_nothing(
    fittings: HybridRAG,
) -> None:
    members = _members(fittings, "How many brass parts, elbows and tees alike, do we keep?")
    assert members == {"brass-fitting", "brass-elbow", "brass-tee"}


def test_the_newest_document_sorts_on_its_own_date(fittings: HybridRAG) -> None:
    # no date named: the subject's first declared date property (DocumentModel.dating)
    assert fittings.ontology.document_model().dating == "revisionDate"  # type: ignore[attr-defined]
    newest = fittings.ask("What is our newest part?")
    assert {f.doc_id for f in newest.facts} == {"brass-tee"}
    assert newest.text is not None and "latest" in newest.text


def test_the_most_recent_invoice_is_the_latest_invoice_date(invoices: HybridRAG) -> None:
    latest = invoices.ask("Which is the most recent invoice we hold?")
    assert {f.doc_id for f in latest.facts} == {"oyo"}  # 31/12/2017, not a due date
    dated = invoices.ask("Which invoices were issued in 2015?")
    assert {f.doc_id for f in dated.facts} == {"FlipkartInvoice", "free_fiber"}


def test_a_lookup_of_a_shared_name_gives_each_document_its_value(fittings: HybridRAG) -> None:
    shared = fittings.ask("What is the material of an elbow?")
    assert {f.doc_id for f in shared.facts} == {"brass-elbow", "steel-elbow"}
    assert shared.text is not None and "Brass on 1" in shared.text and "Steel on 1" in shared.text
    grouped = fittings.ask("What material is brass made of?")  # every brass part: one value
    assert grouped.text is not None and "Brass on 3" in grouped.text
    one = fittings.ask("What is the material of the Brass Elbow BE-2?")  # names one part
    assert {f.doc_id for f in one.facts} == {"brass-elbow"}
    # a name of its own besides the shared word ("Tarvik AB", printed on one sheet, names
    # no part): the question is about that one, not every elbow
    other = fittings.ask("What is the material of the elbow from Tarvik AB?")
    assert {f.doc_id for f in other.facts} == {"brass-elbow"}


def test_a_code_of_the_asked_property_decides_when_no_value_prints_the_other_words(
    rag: HybridRAG,
) -> None:
    # "main" and "rating" are printed nowhere: the hazard class's own code decides, whole
    members = _members(rag, "How many spares have a main hazard class rating of 2B?")
    assert members == {"gear-housing", "pump-impeller"}
    assert _members(rag, "How many spares have a main hazard class rating of 7?") == set()


def test_where_a_value_appears_in_our_documents_is_asked_of_all(rag: HybridRAG) -> None:
    assert _members(rag, "Where does bronze turn up in our spares?") == {"pump-impeller"}
    one = rag.ask("Where does the weight appear on the Seal Kit SK-12 sheet?")
    assert {f.doc_id for f in one.facts} == {"seal-kit"}  # one named sheet: a lookup


# --- the bundled sample sheets (the SDS pack) ---------------------------------------------


def test_a_value_named_by_its_property_label_is_the_value_alone(sample_rag: HybridRAG) -> None:
    # "signal word" names the property; "Danger" (also a class label of the pack) is the value
    danger = _members(sample_rag, "How many sheets carry the signal word Danger?")
    assert danger == {"examplon-solvent-99", "samplex-acid-descaler-10"}
    latest = _members(sample_rag, "What is our most recently revised sheet?")
    assert latest == {"samplex-acid-descaler-10"}


# --- reading many documents' values, then the members' provenance --------------------------


def test_the_members_provenance_is_read_for_the_members_only(rag: HybridRAG) -> None:
    answer = rag.ask("Which of our parts are in Hazard Class 2B?")
    (pairs,) = [s for s in answer.sparql if "DISTINCT ?prop ?value" in s.query]
    (read,) = [s for s in answer.sparql if "VALUES (?prop ?value)" in s.query]
    # the values are read once each, without provenance; the members by their values
    assert "?quote" not in pairs.query
    assert read.rows == len(answer.facts) == 2 < pairs.rows
    assert all(f.evidence.quote and f.subject for f in answer.facts)


class _Wrapped:
    """A graph store double: the real store, its ``query`` changed by a subclass."""

    def __init__(self, inner: object) -> None:
        self.inner = inner

    def __getattr__(self, name: str) -> object:
        return getattr(self.inner, name)


class _UnreadableEvidence(_Wrapped):
    """A graph store double whose queries for the members' evidence fail (the scan
    succeeds)."""

    def query(self, sparql: str, *, scope: object) -> object:
        if "?quote" in sparql:
            from hybrid_rag.errors import StoreError

            raise StoreError("connection reset")
        return self.inner.query(sparql, scope=scope)  # type: ignore[attr-defined]


def test_members_whose_evidence_cannot_be_read_are_a_failure_not_none(
    tmp_path: Path,
) -> None:
    from hybrid_rag.stores.oxigraph import OxigraphGraphStore

    (tmp_path / "parts.ttl").write_text(PARTS)
    for file, fields in SHEETS.items():
        (tmp_path / file).write_text(_text(*fields))
    graph = _UnreadableEvidence(OxigraphGraphStore())
    with HybridRAG(ontology=tmp_path / "parts.ttl", embedder="hashing", graph=graph) as r:  # type: ignore[arg-type]
        r.ingest_many([tmp_path / f for f in SHEETS], raise_errors=True)
        answer = r.ask("Which of our parts are in Hazard Class 2B?", mode="kg")
    assert answer.facts == []
    assert [e.kind for e in answer.errors] == ["StoreError"]
    assert answer.abstention is not None and answer.abstention != "not_in_documents"


def test_a_code_the_question_gives_is_looked_for_however_it_is_spaced(tmp_path: Path) -> None:
    (tmp_path / "parts.ttl").write_text(PARTS)
    sheets = {
        "battery-pack.txt": (
            "Battery Pack BP-9",
            "Lithium ion",
            "Class 9 (UN3480)",
            "2.1 kg",
            "Velmar",
        ),
        "charger.txt": ("Charger CH-2", "ABS plastic", "Not classified", "0.3 kg", "Velmar"),
    }
    for file, fields in sheets.items():
        (tmp_path / file).write_text(_text(*fields))
    with HybridRAG(tmp_path / "store", ontology=tmp_path / "parts.ttl", embedder="hashing") as r:
        r.ingest_many([tmp_path / f for f in sheets], raise_errors=True)
        for question in ("Which parts list UN3480?", "Which parts ship under UN 3480?"):
            answer = r.ask(question)
            assert {f.doc_id for f in answer.facts} == {"battery-pack"}, question
            assert answer.text is not None and answer.text.startswith("1 "), question


class _SlowGraph(_Wrapped):
    """A graph store double whose queries take longer than the question's time budget."""

    def query(self, sparql: str, *, scope: object) -> object:
        import time

        time.sleep(2.5)
        return self.inner.query(sparql, scope=scope)  # type: ignore[attr-defined]


def test_a_search_cut_at_the_time_budget_says_so_never_none(tmp_path: Path) -> None:
    from hybrid_rag.stores.oxigraph import OxigraphGraphStore

    (tmp_path / "parts.ttl").write_text(PARTS)
    for file, fields in SHEETS.items():
        (tmp_path / file).write_text(_text(*fields))
    graph = _SlowGraph(OxigraphGraphStore())
    with HybridRAG(ontology=tmp_path / "parts.ttl", embedder="hashing", graph=graph) as r:  # type: ignore[arg-type]
        r.ingest_many([tmp_path / f for f in SHEETS], raise_errors=True)
        listed = r.ask("Which of our parts are in Hazard Class 2B?", timeout=1.5)
        looked_up = r.ask("What is the hazard class of Seal Kit SK-12?", timeout=1.5, mode="kg")
    for answer in (listed, looked_up):
        assert answer.abstention == "timeout", answer.text
        assert answer.text == "No answer: the kg search ran out of time."
        assert [e.kind for e in answer.errors if e.chain == "kg"] == ["timeout"]


@contextmanager
def _store(folder: Path, ontology: str, texts: dict[str, str]) -> Iterator[HybridRAG]:
    """A store of the given files' texts under the given ontology's Turtle."""
    (folder / "parts.ttl").write_text(ontology)
    for file, text in texts.items():
        (folder / file).write_text(text)
    with HybridRAG(folder / "s", ontology=folder / "parts.ttl", embedder="hashing") as r:
        r.ingest_many([folder / f for f in texts], raise_errors=True)
        yield r


@contextmanager
def _parts_store(
    folder: Path, sheets: dict[str, str], ontology: str = PARTS
) -> Iterator[HybridRAG]:
    """A store of spare-part sheets ("name / material / hazard / weight / maker")."""
    texts = {file: _text(*fields.split(" / ")) for file, fields in sheets.items()}
    with _store(folder, ontology, texts) as r:
        yield r


def test_words_that_only_begin_alike_name_different_things(tmp_path: Path) -> None:
    # "alumina" (a ceramic) is not "aluminium" (a metal), though both start "alumi";
    # a word's derived forms still match ("sensitising" ~ "sensitizer")
    sheets = {
        "insulator.txt": "Insulator Ring IR-2 / Alumina ceramic / Sensitizer / 0.1 kg / Velmar",
        "bracket.txt": "Bracket BR-5 / Aluminium alloy 6061 / Not classified / 0.9 kg / Velmar",
        "gasket.txt": "Gasket GK-1 / Graphite / Not classified / 0.05 kg / Velmar",
    }
    with _parts_store(tmp_path, sheets) as r:
        assert _members(r, "Which of our parts are made of alumina?") == {"insulator"}
        assert _members(r, "Which of our parts are made of aluminium?") == {"bracket"}
        assert _members(r, "Which parts have a sensitising hazard class?") == {"insulator"}


def test_other_documents_than_those_named_hold_the_name_as_a_value(tmp_path: Path) -> None:
    sheets = {
        "wire.txt": "Copper Wire CW-1 / Copper / Not classified / 1.1 kg / Velmar",
        "pipe.txt": "Copper Pipe CP-2 / Copper / Not classified / 2.3 kg / Velmar",
        "fitting.txt": "Brass Fitting BF-3 / Copper alloy with zinc / Class 1 / 0.3 kg / Orlen",
        "bolt.txt": "Steel Bolt SB-4 / Carbon steel / Not classified / 0.1 kg / Orlen",
    }
    with _parts_store(tmp_path, sheets) as r:
        answer = r.ask(
            "Copper is used beyond the copper parts: what other items have it as material?"
        )
        assert {f.doc_id for f in answer.facts} == {"fitting"}
        assert answer.text is not None and "besides the 2 spare parts named 'copper'" in answer.text
        # the named documents' own other properties are no set of other documents
        again = r.ask("Which other hazard classes does the Copper Wire CW-1 have?")
        assert "besides" not in (again.text or "")


SOURCED = PARTS.replace(
    'rdfs:label "Manufacturer" ; rdfs:domain pt:SparePart .',
    'rdfs:label "Manufacturer" ; rdfs:domain pt:SparePart ;\n'
    "    <http://hybrid-rag.org/ns#namesSource> true .",
)


def test_a_set_called_by_its_makers_name_holds_the_documents_it_makes(tmp_path: Path) -> None:
    # "Orlen parts": the parts Orlen Works makes, whatever their names, and the one
    # part named "Orlen" although another company makes it
    sheets = {
        "housing.txt": "Gear Housing GH-40 / Cast iron / Class 2B / 12.5 kg / Orlen Works",
        "seat.txt": "Valve Seat VS-7 / Stainless steel / Class 2 / 0.4 kg / Orlen Works",
        "bracket.txt": "Orlen Bracket OB-1 / Steel / Class 1 / 2.0 kg / Velmar",
        "impeller.txt": "Pump Impeller PI-3 / Bronze / Class 2B / 3.2 kg / Tarvik AB",
    }
    with _parts_store(tmp_path, sheets, SOURCED) as r:
        counted = r.ask("How many Orlen parts are on file?")
        assert {f.doc_id for f in counted.facts} == {"housing", "seat", "bracket"}
        assert counted.text is not None and "named 'orlen' or from 'orlen'" in counted.text
        heavy = r.ask("Which Orlen parts have a weight above 1 kg?")
        assert {f.doc_id for f in heavy.facts} == {"housing", "bracket"}
        # a maker's name links no single part: a question about one part names the part
        one = r.ask("What is the material of the Pump Impeller PI-3?")
        assert {f.doc_id for f in one.facts} == {"impeller"}


def test_a_makers_name_calls_a_set_but_links_no_document() -> None:
    index = SubjectIndex([("a", ["Gear Housing GH-40"]), ("b", ["Valve Seat VS-7"])])
    sourced = index.with_sources([("a", "Orlen Works"), ("b", "Orlen Works")])
    assert sourced.supplied(["orlen"]) == ["a", "b"]
    assert sourced.naming(["orlen"]) == []
    assert sourced.link("What does Orlen Works make?") == []
    assert sourced.restricted(["b"]).supplied(["orlen", "works"]) == ["b"]


def test_a_hyphenated_code_matches_however_the_hyphens_are_spaced(tmp_path: Path) -> None:
    # a phone number or a grade printed "1 - 417 - 30" on one sheet, "1-417-30" on another
    sheets = {
        "tight.txt": "Flange FL-1 / Steel 1-4301-22 / Not classified / 1.0 kg / Velmar",
        "spaced.txt": "Flange FL-2 / Steel 1 - 4301 - 22 / Not classified / 1.2 kg / Velmar",
        "other.txt": "Flange FL-3 / Steel 1-4404-22 / Not classified / 1.1 kg / Velmar",
    }
    with _parts_store(tmp_path, sheets) as r:
        assert _members(r, "Which of our parts are made of steel 1-4301-22?") == {
            "tight",
            "spaced",
        }


def test_a_long_word_a_document_misspells_by_one_letter_still_matches(tmp_path: Path) -> None:
    # sheets carry typos ("Polytetrafluorethylene"); short words one letter apart are
    # different things ("chlorite" is no "chloride")
    sheets = {
        "seal-a.txt": "Seal SA-1 / Polytetrafluoroethylene / Not classified / 0.1 kg / Velmar",
        "seal-b.txt": "Seal SB-2 / Polytetrafluorethylene / Not classified / 0.1 kg / Velmar",
        "seal-c.txt": "Seal SC-3 / Polyethylene / Not classified / 0.1 kg / Velmar",
        "pad-d.txt": "Pad PD-4 / Chlorite mineral / Not classified / 0.2 kg / Velmar",
        "pad-e.txt": "Pad PE-5 / Chloride salt / Not classified / 0.2 kg / Velmar",
    }
    with _parts_store(tmp_path, sheets) as r:
        assert _members(r, "Which of our parts are made of polytetrafluoroethylene?") == {
            "seal-a",
            "seal-b",
        }
        assert _members(r, "Which of our parts are made of chlorite?") == {"pad-d"}


FORMS = PARTS + (
    'pt:form a owl:DatatypeProperty ; rdfs:label "Form" ; rdfs:domain pt:SparePart ;\n'
    "    <http://hybrid-rag.org/ns#namesKind> true .\n"
)


def test_a_set_called_by_a_kind_value_is_the_documents_of_that_kind(tmp_path: Path) -> None:
    # "Which liquids ...": the documents whose form is liquid, not every document
    sheets = {
        "coolant.txt": ("Coolant CL-5", "Glycol", "Class 3", "5.0 kg", "Velmar", "Clear liquid"),
        "grease.txt": ("Grease GR-2", "Lithium soap", "Class 3", "1.5 kg", "Velmar", "Paste"),
        "oil.txt": ("Gear Oil GO-9", "Mineral oil", "Not classified", "0.8 kg", "Orlen", "Liquid"),
        "block.txt": ("Brake Block BB-1", "Resin", "Class 3", "2.5 kg", "Orlen", "Solid"),
    }
    texts = {file: _text(*fields[:5]) + f"Form: {fields[5]}\n" for file, fields in sheets.items()}
    with _store(tmp_path, FORMS, texts) as r:
        heavy = r.ask("Which liquids have a weight above 1 kg?")
        assert {f.doc_id for f in heavy.facts} == {"coolant"}
        assert heavy.text is not None and "of the 2 spare parts whose form is liquid" in heavy.text
        classed = r.ask("Which of our liquids are in Class 3?")
        assert {f.doc_id for f in classed.facts} == {"coolant"}
        every = r.ask("Which spare parts have a weight above 1 kg?")  # no kind: all of them
        assert {f.doc_id for f in every.facts} == {"coolant", "grease", "block"}


def test_a_table_row_full_of_numbers_still_states_its_name(tmp_path: Path) -> None:
    # a composition row prints ranges and numbers around the name; British "sulphate"
    # is the same word as "sulfate"
    row = "Zinc Sulphate 5 - 7 % 7446 - 19 - 7 231 - 793 - 3 Eye Irrit. Cat 2 Skin Irrit. Cat 2"
    sheets = {
        "wash.txt": f"Wash Fluid WF-1 / {row} / Class 2 / 1.0 kg / Velmar",
        "rinse.txt": "Rinse Fluid RF-2 / Zinc sulfate solution / Class 2 / 1.0 kg / Velmar",
        "plain.txt": "Plain Fluid PF-3 / Water / Not classified / 1.0 kg / Velmar",
    }
    with _parts_store(tmp_path, sheets) as r:
        assert _members(r, "Which of our fluids contain zinc sulfate?") == {"wash", "rinse"}


def test_how_the_question_asks_is_no_word_a_value_must_print(rag: HybridRAG) -> None:
    # "flagged": the question's verb; no value in scope prints it
    assert _members(rag, "Which parts are flagged as nitrile rubber?") == {"seal-kit"}


GRADED = PARTS + (
    'pt:grade a owl:DatatypeProperty ; rdfs:label "Hazard grade" ; rdfs:domain pt:SparePart ;\n'
    '    <http://hybrid-rag.org/ns#valueKind> "category" ;\n'
    '    <http://www.w3.org/2004/02/skos/core#hiddenLabel> "oxidizer", "flammable" .\n'
    'pt:storage a owl:DatatypeProperty ; rdfs:label "Storage" ; rdfs:domain pt:SparePart .\n'
    'pt:carriage a owl:DatatypeProperty ; rdfs:label "Carriage class" ;\n'
    "    rdfs:domain pt:SparePart ;\n"
    '    <http://www.w3.org/2004/02/skos/core#hiddenLabel> "regulated for transport" .\n'
    'pt:remark a owl:DatatypeProperty ; rdfs:label "Remark" ; rdfs:domain pt:SparePart .\n'
)


def test_a_category_named_bare_is_asked_of_the_category_values(tmp_path: Path) -> None:
    # "oxidizers": what the hazard grades state, not every text that mentions oxidizers
    sheets = {
        "nitrate.txt": "Part name: Nitrate Pellet NP-1\nHazard grade: Oxidizing solid 2\n",
        "wax.txt": "Part name: Wax Block WB-2\nHazard grade: Flammable solid 1\n"
        "Storage: Keep away from strong oxidizers.\n",
        "clamp.txt": "Part name: Clamp CL-3\nStorage: Store away from oxidizers and acids.\n",
    }
    with _store(tmp_path, GRADED, sheets) as r:
        assert _members(r, "Which of our parts are oxidizers?") == {"nitrate"}
        assert _members(r, "Which parts are flammable?") == {"wax"}


def test_a_negated_label_value_is_read_in_its_own_property(tmp_path: Path) -> None:
    # "not regulated for transport": the carriage class says so; a note that mentions
    # transport and regulations elsewhere is no member
    sheets = {
        "free.txt": "Part name: Rubber Foot RF-1\nCarriage class: Not regulated\n",
        "dangerous.txt": "Part name: Fuel Cell FC-2\nCarriage class: Class 3\n"
        "Remark: Transport of this part is regulated by the carrier.\n",
        "silent.txt": "Part name: Steel Pin SP-3\nRemark: Store dry.\n",
    }
    with _store(tmp_path, GRADED, sheets) as r:
        assert _members(r, "Which parts are not regulated for transport?") == {"free"}


def test_a_plural_noun_names_the_set_its_documents_names_hold(tmp_path: Path) -> None:
    # "Which linings ...": the sheets named "... Lining ...", not every part above 1 kg
    sheets = {
        "lining-front.txt": "Brake Lining BL-1 / Resin / Class 2 / 1.4 kg / Velmar",
        "lining-rear.txt": "Brake Lining BL-2 / Resin / Class 2 / 0.9 kg / Velmar",
        "disc.txt": "Brake Disc BD-3 / Cast iron / Class 2 / 6.0 kg / Velmar",
        "block.txt": "Damper Block DB-4 / Resin / Class 2 / 2.0 kg / Velmar",
    }
    with _parts_store(tmp_path, sheets) as r:
        assert _members(r, "Which linings have a weight above 1 kg?") == {"lining-front"}
        # a filter: the set's members first, then the others that state it, said apart
        resin = r.ask("Which linings are made of resin?")
        assert resin.text is not None
        assert resin.text.startswith("2 of the 2 spare parts named 'lining' state")
        assert "1 other spare part states it too: Damper Block DB-4" in resin.text


def test_an_extreme_of_a_name_several_documents_share_is_among_them(tmp_path: Path) -> None:
    sheets = {
        "housing.txt": "Gear Housing GH-40 / Cast iron / Class 2B / 12.5 kg / Orlen Works",
        "wheel.txt": "Gear Wheel GW-2 / Steel / Class 2 / 3.0 kg / Orlen Works",
        "impeller.txt": "Pump Impeller PI-3 / Bronze / Class 2B / 20.0 kg / Tarvik AB",
    }
    with _parts_store(tmp_path, sheets) as r:
        answer = r.ask("What is the highest weight of a gear part?")
        assert {f.doc_id for f in answer.facts} == {"housing"}
        assert answer.text is not None and "of the 2 spare parts named 'gear'" in answer.text


def test_sources_read_while_the_catalog_changes_are_not_kept() -> None:
    from hybrid_rag.ask.supervisor import SubjectIndexCache

    cache = SubjectIndexCache()
    cache.load_sources(lambda: [("a", "Orlen Works")])
    assert cache.sources_loaded()

    def read_during_an_ingest() -> list[tuple[str, str]]:
        cache.invalidate()  # a document was ingested while the names were read
        return [("a", "Orlen Works")]

    cache.load_sources(read_during_an_ingest)
    assert not cache.sources_loaded()
