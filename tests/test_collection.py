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
    scan, provenance = answer.sparql
    assert "?quote" not in scan.query.split("WHERE")[0]  # the scan reads values, not quotes
    assert "VALUES ?fact" in provenance.query
    assert provenance.rows == len(answer.facts) == 2 < scan.rows
    assert all(f.evidence.quote and f.subject for f in answer.facts)


class _Wrapped:
    """A graph store double: the real store, its ``query`` changed by a subclass."""

    def __init__(self, inner: object) -> None:
        self.inner = inner

    def __getattr__(self, name: str) -> object:
        return getattr(self.inner, name)


class _UnreadableEvidence(_Wrapped):
    """A graph store double whose queries for given facts fail (the scan succeeds)."""

    def query(self, sparql: str, *, scope: object) -> object:
        if "VALUES ?fact" in sparql:
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
def _parts_store(folder: Path, sheets: dict[str, str]) -> Iterator[HybridRAG]:
    """A store of spare-part sheets ("name / material / hazard / weight / maker")."""
    (folder / "parts.ttl").write_text(PARTS)
    for file, fields in sheets.items():
        (folder / file).write_text(_text(*fields.split(" / ")))
    with HybridRAG(folder / "s", ontology=folder / "parts.ttl", embedder="hashing") as r:
        r.ingest_many([folder / f for f in sheets], raise_errors=True)
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
