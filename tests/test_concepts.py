"""Concepts: values an ontology names (``skos:Concept`` with the patterns documents print
them by) and collection questions that ask for one ("Which parts are waterproof?",
"Which products are corrosive?").

The parts ontology and documents are written for these tests (any domain); the real
Safety Data Sheets check the SDS pack's GHS concepts, where a class name alone says
little ("Skin Corrosion/Irritation Category 2" is an irritant, not corrosive)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from hybrid_rag import HybridRAG
from hybrid_rag.ask._concepts import (
    concepts_of,
    holds_codes,
    link_concepts,
    printed_code,
    stating,
)
from hybrid_rag.errors import OntologyError
from hybrid_rag.ontology import TurtleOntology, load_ontology

PARTS = r"""
@prefix pt: <http://example.org/parts#> .
@prefix hr: <http://hybrid-rag.org/ns#> .
@prefix owl: <http://www.w3.org/2002/07/owl#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix skos: <http://www.w3.org/2004/02/skos/core#> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
pt:Part a owl:Class ; rdfs:label "Part" .
pt:partName a owl:DatatypeProperty ; rdfs:label "Part name" ; rdfs:domain pt:Part .
pt:enclosure a owl:DatatypeProperty ; rdfs:label "Enclosure rating" ; rdfs:domain pt:Part .
pt:notes a owl:DatatypeProperty ; rdfs:label "Notes" ; rdfs:domain pt:Part .
pt:weight a owl:DatatypeProperty ; rdfs:label "Weight" ; rdfs:domain pt:Part ;
    rdfs:range xsd:decimal .
pt:maker a owl:DatatypeProperty ; rdfs:label "Manufacturer" ; rdfs:domain pt:Part .

pt:WaterResistant a skos:Concept ; skos:prefLabel "Water resistant" ;
    skos:altLabel "Protected against water" ;
    skos:definition "an enclosure rated IP x4 or higher against water" ;
    hr:valueOf pt:enclosure ; skos:narrower pt:Waterproof, pt:SplashProof .
pt:Waterproof a skos:Concept ; skos:prefLabel "Waterproof" ;
    skos:altLabel "Submersible", "Watertight" ;
    skos:definition "an enclosure rated IP67 or IP68 (immersion)" ;
    hr:valuePattern "\\bIP\\s?" ; hr:category "67", "68" .
pt:SplashProof a skos:Concept ; skos:prefLabel "Splash-proof" ; skos:broader pt:WaterResistant ;
    hr:valuePattern "\\bIP\\s?" ; hr:category "54", "55", "65", "66" .
"""

PARTS_DOCS = {
    "pump-housing.txt": (
        "Pump Housing PH-2",
        "IP68",
        "Keep away from strong acids.",
        "12.5 kg",
        "Orlen Works",
    ),
    "sensor-head.txt": ("Sensor Head SH-9", "IP 67", "Calibrate yearly.", "0.3 kg", "Tarvik AB"),
    "control-box.txt": (
        "Control Box CB-1",
        "IP54",
        "Waterproof gaskets are sold apart.",
        "4.0 kg",
        "Tarvik AB",
    ),
    "fan-unit.txt": ("Fan Unit FU-4", "IP20", "Indoor use only.", "2.2 kg", "Velmar"),
    "junction.txt": ("Junction JB-3", "IP66", "Outdoor use.", "1.1 kg", "Orlen Works"),
}


def _part(name: str, enclosure: str, notes: str, weight: str, maker: str) -> str:
    return (
        f"Part name: {name}\nEnclosure rating: {enclosure}\nNotes: {notes}\n"
        f"Weight: {weight}\nManufacturer: {maker}\n"
    )


@pytest.fixture(scope="module")
def parts(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HybridRAG]:
    folder = tmp_path_factory.mktemp("parts")
    (folder / "parts.ttl").write_text(PARTS)
    for file, fields in PARTS_DOCS.items():
        (folder / file).write_text(_part(*fields))
    with HybridRAG(folder / "store", ontology=folder / "parts.ttl", embedder="hashing") as r:
        r.ingest_many([folder / f for f in PARTS_DOCS], raise_errors=True)
        yield r


def _members(rag: HybridRAG, question: str) -> set[str]:
    return {f.doc_id for f in rag.ask(question).facts}


# ---------------------------------------------------------------- any domain


def test_a_concept_is_read_by_its_pattern_and_category(parts: HybridRAG) -> None:
    answer = parts.ask("Which of our parts are waterproof?")
    assert {f.doc_id for f in answer.facts} == {"pump-housing", "sensor-head"}
    assert answer.text is not None and answer.text.startswith("2 ")
    assert "IP67 or IP68" in answer.text  # what 'waterproof' was read as


def test_a_word_in_free_text_is_no_member(parts: HybridRAG) -> None:
    # the control box's notes say "Waterproof gaskets": its IP54 enclosure is not
    assert "control-box" not in _members(parts, "Which parts are watertight?")


def test_a_broader_concept_holds_its_narrower_ones(parts: HybridRAG) -> None:
    assert _members(parts, "List every water resistant part.") == {
        "pump-housing",
        "sensor-head",
        "control-box",
        "junction",
    }


def test_a_concept_and_a_bound(parts: HybridRAG) -> None:
    # four parts weigh more than 1 kg; one of them is waterproof
    assert _members(parts, "Which waterproof parts have a weight above 1 kg?") == {"pump-housing"}


def test_a_concept_and_another_value(parts: HybridRAG) -> None:
    assert _members(parts, "Which submersible parts are made by Tarvik AB?") == {"sensor-head"}


def test_a_count_of_a_concept(parts: HybridRAG) -> None:
    answer = parts.ask("How many splash-proof parts do we have?")
    assert answer.text is not None and answer.text.startswith("2 ")


def test_an_ontology_without_concepts_has_none() -> None:
    plain = TurtleOntology.from_turtle(PARTS.split("pt:WaterResistant")[0])
    assert plain.concepts() == ()
    assert concepts_of(plain) == ()


@pytest.mark.parametrize(
    ("wrong", "named"),
    [
        ('hr:valuePattern "IP(" ; hr:valueOf pt:enclosure .', "not a regular expression"),
        ('hr:valuePattern "IP" ; hr:valueOf pt:colour .', "pt:colour"),
        ("skos:narrower pt:Nothing .", "Nothing"),
    ],
)
def test_a_broken_concept_is_a_typed_error(wrong: str, named: str) -> None:
    text = PARTS + f'pt:Broken a skos:Concept ; skos:prefLabel "Broken" ; {wrong}\n'
    with pytest.raises(OntologyError, match="Broken") as err:
        TurtleOntology.from_turtle(text)
    assert named.split(":")[-1] in str(err.value)


# ---------------------------------------------------------------- the reading rules


@pytest.mark.parametrize(
    ("value", "pattern", "code"),
    [
        ("Skin Corrosion/Irritation Category 1B", "Skin Corrosion/Irritation", "1b"),
        ("Skin Corrosion/Irritation Category 1  B", "Skin Corrosion/Irritation", "1b"),
        ("Serious eye damage : Category 1", "Serious eye damage", "1"),
        ("Acute toxicity, Oral (Category 4), H302", "Acute toxicity", "4"),
        ("Skin Corr. 1A (H314)", "Skin Corr.", "1a"),
        ("Category 2ASerious eye damage/eye irritation", "Serious eye damage", "2a"),
        ("Flammable liquids Category 1 Acute toxicity", "Flammable liquids", "1"),
        ("Serious eye damage, H318", "Serious eye damage", None),
    ],
)
def test_the_code_printed_with_a_pattern(value: str, pattern: str, code: str | None) -> None:
    start = value.index(pattern)
    assert printed_code(value, start, start + len(pattern)) == code


def test_labels_link_longest_first_and_across_small_words() -> None:
    every = concepts_of(load_ontology("msds"))
    links = link_concepts("Which may be fatal if swallowed and enter the airways?", every)
    assert [link.concept.name for link in links] == ["AspirationHazard"]
    links = link_concepts("Which of these are skin irritants, category 3?", every)
    assert [(link.concept.name, link.codes) for link in links] == [("SkinIrritation", ("3",))]


def test_a_code_no_category_has_is_another_schemes() -> None:
    every = concepts_of(load_ontology("msds"))
    toxic = next(c for c in every if c.name == "Toxic")
    assert holds_codes(toxic, every, ["3"])
    assert not holds_codes(toxic, every, ["6.1"])  # a transport class, not a category


@pytest.mark.parametrize(
    ("concept", "value", "states"),
    [
        ("Corrosive", "Skin Corrosion/Irritation Category 1B", True),
        ("Corrosive", "Skin Corrosion/Irritation Category 2", False),
        ("Corrosive", "Corrosive to Metals Category 1 H290 P234, P390, P406", True),
        ("SkinIrritation", "Skin Corrosion/Irritation Category 3", True),
        ("SkinIrritation", "Skin Corrosion/Irritation Category 1A", False),
        ("SeriousEyeDamage", "Serious Eye Damage/Eye Irritation Category 1", True),
        ("SeriousEyeDamage", "Serious Eye Damage/Eye Irritation Category 2A", False),
        (
            "Carcinogenicity",
            "The table below indicates whether each agency has listed any "
            "ingredient as a carcinogen.",
            False,
        ),
        ("FlammableLiquid", "Flam. Liq. 2, H225", True),
        ("ToxicIfSwallowed", "H301+H311 Toxic if swallowed or in contact with skin", True),
        ("FatalIfSwallowed", "Acute oral toxicity: Category 2", True),
        ("FatalIfSwallowed", "Acute oral toxicity Category 3", False),
        # a statement's text states it too, but not inside a longer statement
        ("H372", "Causes damage to organs through prolonged or repeated exposure.", True),
        ("H370", "Causes damage to organs through prolonged or repeated exposure.", False),
        ("FatalIfSwallowed", "May be fatal if swallowed and enters airways.", False),
        ("AspirationHazard", "May be fatal if swallowed and enters airways.", True),
        ("SkinCorrosion", "Causes severe skin burns and eye damage.", True),
    ],
)
def test_ghs_concepts_as_sheets_print_them(concept: str, value: str, states: bool) -> None:
    every = concepts_of(load_ontology("msds"))
    c = next(x for x in every if x.name == concept)
    props = ("hasClassification", "hazardStatement")
    assert any(stating(c, every, predicate=p, value=value) for p in props) is states


# ---------------------------------------------------------------- real Safety Data Sheets

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "sds" / "laballey"
SHEETS = {
    "11-hydrochloric-acid-solution-669e93f644151": "Skin corrosion 1B, corrosive to metals",
    "12dichloroethane-lab-grade-6866d5544dd6c": "Skin Corrosion/Irritation Category 2",
    "acetone-hplc-grade-6732361021b8a": "flammable liquid, eye irritant",
    "nitric-acid-3-in-methanol-6537d3e640889": "classes in an unreadable table, H301 ...",
    "sodium-hydroxide-2n-solution-6707eb0f56b48": "Skin Corrosion Category 1A",
    "cyclohexane-99-acs-grade-67bf948eaf6a5": "eye irritation 2, and the text of H320 (2B)",
    "cupric-acetate-monohydrate-acs-grade-66e3335f38d49": "aquatic acute 1, oral 4",
    "caffeine-powder-uspfccfood-grade-kosher-66fda8c498615": "aquatic acute 3, oral 3",
    "mercuric-chloride-lab-grade-50-grams-6695348d72ebd": "acute oral toxicity 2",
}


@pytest.fixture(scope="module")
def sheets(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HybridRAG]:
    if not CORPUS.is_dir():
        pytest.skip(f"the shared corpus is not at {CORPUS}")
    files = [CORPUS / f"{doc}.pdf" for doc in SHEETS]
    with HybridRAG(tmp_path_factory.mktemp("ghs") / "store", embedder="hashing") as r:
        r.ingest_many(files, raise_errors=True)
        yield r


def test_corrosive_is_skin_corrosion_or_corrosive_to_metals_not_irritation(
    sheets: HybridRAG,
) -> None:
    members = _members(sheets, "Which of the chemicals we keep are corrosive?")
    assert "12dichloroethane-lab-grade-6866d5544dd6c" not in members  # Category 2: irritant
    assert {
        "11-hydrochloric-acid-solution-669e93f644151",
        "sodium-hydroxide-2n-solution-6707eb0f56b48",
        "nitric-acid-3-in-methanol-6537d3e640889",  # by its H314 / H290
    } <= members


def test_irritants_are_category_two_or_three(sheets: HybridRAG) -> None:
    members = _members(sheets, "List the skin irritants among our products.")
    assert "12dichloroethane-lab-grade-6866d5544dd6c" in members
    assert "sodium-hydroxide-2n-solution-6707eb0f56b48" not in members  # corrosive, 1A


def test_a_statement_code_states_its_class_and_category(sheets: HybridRAG) -> None:
    answer = sheets.ask("How many of our products are toxic if swallowed?")
    assert "nitric-acid-3-in-methanol-6537d3e640889" in {f.doc_id for f in answer.facts}
    assert "acetone-hplc-grade-6732361021b8a" not in {f.doc_id for f in answer.facts}


def test_a_category_beside_the_class_narrows_it(sheets: HybridRAG) -> None:
    members = _members(sheets, "Which products are classified Skin Corrosion Category 1A?")
    assert members == {"sodium-hydroxide-2n-solution-6707eb0f56b48"}


def test_a_statement_of_the_asked_category_yields_to_a_class_line_of_another(
    sheets: HybridRAG,
) -> None:
    # a sheet whose class line says eye irritation 2 is no 2B member by a statement text
    answer = sheets.ask("Which of our products carry Eye Irritation Category 2B?")
    assert "cyclohexane-99-acs-grade-67bf948eaf6a5" not in {f.doc_id for f in answer.facts}
    answer = sheets.ask("Which of our products carry Eye Irritation Category 2?")
    assert "cyclohexane-99-acs-grade-67bf948eaf6a5" in {f.doc_id for f in answer.facts}


def test_a_route_after_a_class_names_the_route_and_its_category_follows(
    sheets: HybridRAG,
) -> None:
    # "acutely toxic if swallowed, Category 2": oral toxicity of category 2, no other route
    # or category ("Acute Oral Toxicity Category 4" of cupric acetate is no member)
    members = _members(sheets, "Which of our chemicals are acutely toxic if swallowed, Category 2?")
    assert members == {"mercuric-chloride-lab-grade-50-grams-6695348d72ebd"}


def test_very_toxic_to_aquatic_life_is_the_statement_not_any_aquatic_hazard(
    sheets: HybridRAG,
) -> None:
    very = _members(sheets, "Which items are very toxic to aquatic life?")
    assert "cupric-acetate-monohydrate-acs-grade-66e3335f38d49" in very  # Aquatic Acute 1
    assert "caffeine-powder-uspfccfood-grade-kosher-66fda8c498615" not in very  # Acute 3
    harmful = _members(sheets, "Which items are harmful to aquatic life?")
    assert "caffeine-powder-uspfccfood-grade-kosher-66fda8c498615" in harmful
    assert "cupric-acetate-monohydrate-acs-grade-66e3335f38d49" not in harmful


def test_a_statement_asked_by_its_code_is_read_as_its_concept(sheets: HybridRAG) -> None:
    # sheets that print the class line and not the code carry the statement too
    answer = sheets.ask("Which of our sheets carry H314?")
    members = {f.doc_id for f in answer.facts}
    assert {
        "11-hydrochloric-acid-solution-669e93f644151",
        "sodium-hydroxide-2n-solution-6707eb0f56b48",
    } <= members
    assert "12dichloroethane-lab-grade-6866d5544dd6c" not in members  # Category 2
    assert answer.text is not None and "'H314', read as the hazard statement H314" in answer.text


def test_a_member_is_shown_by_the_statement_of_the_asked_category() -> None:
    # a list of statements names dermal category 3 (H311) before oral category 4 (H302):
    # a member of "Acute Toxicity Category 4" is shown by the H302 sentence
    from hybrid_rag.ask._collection import collection_answer
    from hybrid_rag.ask.analysis import analyse
    from hybrid_rag.ask.linking import SubjectIndex
    from hybrid_rag.models import Evidence, Fact

    msds = load_ontology("msds")
    a = analyse(
        "Which of our chemicals are classified Acute Toxicity Category 4?",
        index=SubjectIndex([]),
        ontology=msds,
    )
    value = "H227 Combustible liquid. H311 Toxic in contact with skin. H302 Harmful if swallowed."
    fact = Fact(
        doc_id="d1",
        subject="Imidazole X",
        subject_iri="urn:d1",
        predicate="hazardStatement",
        predicate_label="Hazard statement",
        value=value,
        evidence=Evidence(doc_id="d1", page=2, quote=value),
    )
    text = collection_answer(a, [fact], 2000).text
    assert "H302 Harmful if swallowed." in text and "H311" not in text
