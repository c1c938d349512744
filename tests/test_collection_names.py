"""Names and values a collection or lookup question gives, read precisely: a synonym list
that separates names by commas, a name "<noun> of <name>" that no document prints, a
property whose values say yes or no, a value its document denies elsewhere."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from hybrid_rag import HybridRAG
from hybrid_rag.packs.sds._reader import comma_names

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "sds" / "laballey"


@pytest.mark.parametrize(
    ("listed", "names"),
    [
        ("Magnesium Hydrate, Milk of Magnesia.", ["Magnesium Hydrate", "Milk of Magnesia"]),
        ("Formalin, Formol", ["Formalin", "Formol"]),
        ("Hexanes, Normal Hexane, n-Hexane", ["Hexanes", "Normal Hexane", "n-Hexane"]),
        # an index name keeps its comma: the inverted part qualifies the one before
        ("Acetic acid, sodium salt", []),
        ("Sulfuric acid, iron(3+) salt (3:2), hydrate", []),
        (
            "Potassium bichromate, Dichromic acid, Dipotassium salt",
            ["Potassium bichromate", "Dichromic acid, Dipotassium salt"],
        ),
        ("Lead(II,IV) oxide", []),  # a comma inside parentheses
    ],
)
def test_a_comma_separated_synonym_list_gives_each_name(listed: str, names: list[str]) -> None:
    assert comma_names(listed) == names


def _sheets(*docs: str) -> list[Path]:
    if not CORPUS.is_dir():
        pytest.skip(f"the shared corpus is not at {CORPUS}")
    return [CORPUS / f"{d}.pdf" for d in docs]


@pytest.fixture(scope="module")
def rag(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HybridRAG]:
    files = _sheets(
        "lead-acetate-acsanalytical-reagent-grade-671805314bcab",
        "lead-nitrate-crystal-acs-grade-6758bd8f1e258",
        "magnesium-hydroxide-powder-lab-grade-6537a08dd53f7",
        "silver-nitrate-crystal-lab-grade-681875e00ec17",
        "acetone-hplc-grade-6732361021b8a",
        "acetone-100-lab-grade-66fff5ce68481",
    )
    with HybridRAG(tmp_path_factory.mktemp("names") / "store", embedder="hashing") as r:
        r.ingest_many(files, raise_errors=True)
        yield r


def test_a_name_from_a_comma_list_links_its_sheet(rag: HybridRAG) -> None:
    answer = rag.ask("What pH does our milk of magnesia have?")
    assert {f.doc_id for f in answer.facts} == {
        "magnesium-hydroxide-powder-lab-grade-6537a08dd53f7"
    }


def test_a_noun_of_a_shared_name_that_no_sheet_prints_is_not_answered(rag: HybridRAG) -> None:
    # "lead" names two sheets; "sugar of lead" names neither of them
    answer = rag.ask("What is the melting point of sugar of lead?")
    assert answer.facts == []
    assert answer.text is not None and "sugar of lead" in answer.text


def test_a_quantity_of_a_name_asks_about_the_name(rag: HybridRAG) -> None:
    answer = rag.ask("What flash point applies to a drum of acetone?")
    assert {f.doc_id for f in answer.facts} == {
        "acetone-hplc-grade-6732361021b8a",
        "acetone-100-lab-grade-66fff5ce68481",
    }


def test_a_property_that_says_yes_or_no(rag: HybridRAG) -> None:
    # silver nitrate prints "Marine pollutant : yes" in one transport block
    answer = rag.ask("Which of the stored chemicals count as marine pollutants?")
    assert {f.doc_id for f in answer.facts} == {"silver-nitrate-crystal-lab-grade-681875e00ec17"}


RATED = """
@prefix pt: <http://example.org/parts#> .
@prefix owl: <http://www.w3.org/2002/07/owl#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix hr: <http://hybrid-rag.org/ns#> .
pt:Part a owl:Class ; rdfs:label "Part" .
pt:partName a owl:DatatypeProperty ; rdfs:label "Part name" ; rdfs:domain pt:Part .
pt:ratedTemperature a owl:DatatypeProperty ; rdfs:label "Rated temperature" ;
    hr:valueKind "temperature" ; rdfs:domain pt:Part .
pt:notes a owl:DatatypeProperty ; rdfs:label "Notes" ; rdfs:domain pt:Part .
"""

RATED_DOCS = {
    # says both: no rating is available, and a rating further down
    "hose.txt": "Part name: Hose H-1\nRated temperature: No information available\n"
    "Notes: Keep coiled.\nRated temperature: 40 °C\n",
    "clamp.txt": "Part name: Clamp C-2\nRated temperature: 60 °C\nNotes: Steel.\n",
    "valve.txt": "Part name: Valve V-3\nRated temperature: 120 °C\nNotes: Brass.\n",
    "gasket.txt": "Part name: Gasket G-4\nNotes: Rubber.\n",
}


@pytest.fixture(scope="module")
def rated(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HybridRAG]:
    folder = tmp_path_factory.mktemp("rated")
    (folder / "parts.ttl").write_text(RATED)
    for name, text in RATED_DOCS.items():
        (folder / name).write_text(text)
    with HybridRAG(folder / "store", ontology=folder / "parts.ttl", embedder="hashing") as r:
        r.ingest_many([folder / n for n in RATED_DOCS], raise_errors=True)
        yield r


def test_a_bound_does_not_rest_on_a_value_its_document_denies(rated: HybridRAG) -> None:
    answer = rated.ask("Which parts have a rated temperature below 100 °C?")
    assert {f.doc_id for f in answer.facts} == {"clamp"}
    assert answer.text is not None
    assert "1 more part prints a rated temperature that would count" in answer.text
    assert "1 part does not state a rated temperature" in answer.text


def test_an_extreme_does_not_rest_on_a_value_its_document_denies(rated: HybridRAG) -> None:
    answer = rated.ask("Which part has the lowest rated temperature?")
    assert {f.doc_id for f in answer.facts} == {"clamp"}
