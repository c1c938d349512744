from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hybrid_rag.errors import OntologyError
from hybrid_rag.ontology import TurtleOntology, load_ontology, slugify
from hybrid_rag.protocols import Ontology
from hybrid_rag.rdf import iri, literal
from hybrid_rag.testing.contracts import OntologyContract

MSDS = "http://hybrid-rag.org/msds#"
SAFE = re.compile(r"[A-Za-z][A-Za-z0-9_-]*")


@pytest.fixture(scope="module")
def onto() -> TurtleOntology:
    o = load_ontology("msds")
    assert isinstance(o, TurtleOntology)
    return o


def test_bundled_ontology_loads_and_satisfies_protocol(onto: TurtleOntology) -> None:
    assert isinstance(onto, Ontology)
    assert onto.namespace == MSDS
    names = {p.name for p in onto.properties()}
    for required in (
        "causes",
        "affects",
        "requiresMeasure",
        "hasHazard",
        "hasEffect",
        "hasPrecaution",
        "hasProperty",
        "hasCode",
        "containedIn",
        "hasClassification",
        "flashPoint",
        "unNumber",
        "signalWord",
        "pH",
        "casNumber",
        "oshaPelTwa",
        "acgihTlvStel",
    ):
        assert required in names
    objects = [p for p in onto.properties() if p.kind == "object"]
    assert len(objects) >= 13
    classes = {c.name for c in onto.classes()}
    assert {"Product", "Chemical", "Hazard", "HazardClassification", "PPE", "Organ"} <= classes
    for term in [*onto.properties(), *onto.classes()]:
        assert SAFE.fullmatch(term.name), term.name


def test_property_lookup_and_units(onto: TurtleOntology) -> None:
    fp = onto.property("flashPoint")
    assert fp is onto.property(MSDS + "flashPoint") is onto.property("msds:flashPoint")
    assert fp.unit == "°C" and fp.kind == "datatype"
    assert "Flashpoint" in fp.alt_labels
    assert "UN-no" in onto.property("unNumber").alt_labels
    assert "CAUSES" in onto.property("causes").alt_labels
    with pytest.raises(OntologyError, match="unknown property"):
        onto.property("noSuchThing")


def test_load_ontology_passthrough_and_errors(onto: TurtleOntology, tmp_path: Path) -> None:
    assert load_ontology(onto) is onto
    with pytest.raises(OntologyError, match="not found"):
        load_ontology(tmp_path / "missing.ttl")
    bad = tmp_path / "bad.ttl"
    bad.write_text("@prefix ex: <http://x/> . ex:a ex:b", encoding="utf-8")
    with pytest.raises(OntologyError, match="invalid Turtle"):
        load_ontology(bad)
    empty = tmp_path / "empty.ttl"
    empty.write_text(
        "@prefix owl: <http://www.w3.org/2002/07/owl#> . <http://x/A> a owl:Class .",
        encoding="utf-8",
    )
    with pytest.raises(OntologyError, match="no properties"):
        load_ontology(str(empty))
    with pytest.raises(OntologyError, match="no bundled ontology"):
        load_ontology("nosuchbundle")


_TWO_ORDERS = """@prefix ex: <http://example.org/o#> .
@prefix owl: <http://www.w3.org/2002/07/owl#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix skos: <http://www.w3.org/2004/02/skos/core#> .
ex:Boat a owl:Class ; rdfs:label "Boat" .
ex:hullRepair a owl:DatatypeProperty ; rdfs:label "Hull repair" ; skos:altLabel "Repair hull" .
"""


def test_spread_label_words_match_whatever_the_hash_seed(tmp_path: Path) -> None:
    """A label written in two word orders matched a question spreading its words in one
    order only under some hash seeds (the index kept whichever order a set gave first)."""
    ttl = tmp_path / "boats.ttl"
    ttl.write_text(_TWO_ORDERS, encoding="utf-8")
    code = (
        "import sys; from hybrid_rag.ontology import load_ontology;"
        f"o = load_ontology({str(ttl)!r});"
        "print([p.name for p, _ in o.match_properties(sys.argv[1])])"
    )
    for seed in ("0", "1", "2", "3", "4", "5"):
        for asked in ("How is the hull of a boat like this repaired?", "Repair the old hull?"):
            out = subprocess.run(
                [sys.executable, "-c", code, asked],
                env={**os.environ, "PYTHONHASHSEED": seed},
                capture_output=True,
                text=True,
                check=True,
            ).stdout
            assert "hullRepair" in out, (seed, asked, out)


def test_a_spread_label_yields_to_a_label_printed_in_its_gap(tmp_path: Path) -> None:
    ttl = tmp_path / "shop.ttl"
    ttl.write_text(
        _TWO_ORDERS
        + 'ex:clientNumber a owl:DatatypeProperty ; rdfs:label "Client number" .\n'
        + 'ex:taxId a owl:DatatypeProperty ; rdfs:label "Tax ID" ; skos:altLabel "VAT number" .\n'
        + 'ex:lowPrice a owl:DatatypeProperty ; rdfs:label "Lowest sale price" .\n'
        + 'ex:highPrice a owl:DatatypeProperty ; rdfs:label "High sale price" .\n',
        encoding="utf-8",
    )
    o = load_ontology(ttl)

    def names(asked: str) -> list[str]:
        return [p.name for p, _ in o.match_properties(asked)]

    assert names("What is the client's VAT number?") == ["taxId"]  # not the client number
    assert "clientNumber" in names("Which number does the client have?")  # a spread alone
    assert {"lowPrice", "highPrice"} <= set(names("Give the high and lowest sale price"))


def test_user_ontology_from_file(tmp_path: Path) -> None:
    ttl = tmp_path / "mine.ttl"
    ttl.write_text(
        """@prefix ex: <http://example.org/o#> .
@prefix owl: <http://www.w3.org/2002/07/owl#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix skos: <http://www.w3.org/2004/02/skos/core#> .
ex:Thing a owl:Class ; rdfs:label "Thing" .
ex:weight a owl:DatatypeProperty ; rdfs:label "Weight" ; skos:altLabel "Mass" .
""",
        encoding="utf-8",
    )
    o = load_ontology(ttl)
    assert o.namespace == "http://example.org/o#"
    assert o.property("weight").alt_labels == ("Mass",)


@pytest.mark.parametrize(
    ("label", "expected"),
    [
        ("Acetone, HPLC Grade", "Acetone-HPLC-Grade"),
        ("Methanol ≥99.8% Réagent", "Methanol-99-8-Reagent"),
        ("1,4-Dioxane", "n1-4-Dioxane"),
        ("  --x--  ", "x"),
    ],
)
def test_slugify(label: str, expected: str) -> None:
    assert slugify(label) == expected


def test_mint_iri_safe_unique_and_rejects_empty(onto: TurtleOntology) -> None:
    base = "http://hybrid-rag.org/id/"
    long_a = "Sodium " * 40 + "A"
    long_b = "Sodium " * 40 + "B"
    a, b = onto.mint_iri(long_a, base=base), onto.mint_iri(long_b, base=base)
    assert a != b and len(a) - len(base) <= 80
    for value in (a, b, onto.mint_iri("2-Propanone", base=base)):
        assert SAFE.fullmatch(value[len(base) :])
    with pytest.raises(OntologyError):
        onto.mint_iri("°°°", base=base)


def test_validate_reports_unknown_terms(onto: TurtleOntology) -> None:
    s = iri("http://hybrid-rag.org/id/acetone")
    good = [
        (s, iri("http://www.w3.org/1999/02/22-rdf-syntax-ns#type"), iri(MSDS + "Product")),
        (s, iri(MSDS + "flashPoint"), literal("-20 °C")),
    ]
    assert onto.validate(good) == []
    bad = [
        (s, iri(MSDS + "flashpoint"), literal("x")),
        (s, iri("http://www.w3.org/1999/02/22-rdf-syntax-ns#type"), iri(MSDS + "Gadget")),
        (iri("http://hybrid-rag.org/id/bad name"), iri(MSDS + "pH"), literal("7")),
    ]
    problems = onto.validate(bad)
    assert any("unknown property" in p for p in problems)
    assert any("unknown class" in p for p in problems)
    assert any("HANA-safe" in p for p in problems)


def test_vocabulary_is_compact_and_complete(onto: TurtleOntology) -> None:
    text = onto.vocabulary()
    assert "msds:flashPoint" in text and "msds:HazardClassification" in text
    assert "°C" in text
    assert len(text) < 20000


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("Flash point of the acetone sheet, please", "flashPoint"),
        ("Auto-ignition temperature of X, please", "autoignitionTemperature"),
        ("What is the autoignition temp of X?", "autoignitionTemperature"),
        ("Give the UN-no of X", "unNumber"),
        ("What is the UN number of X?", "unNumber"),
        ("OSHA permissible exposure limit (TWA) for formic acid", "oshaPelTwa"),
        ("ACGIH short-term exposure limit (STEL) for methanol", "acgihTlvStel"),
        ("Which DOT hazard class and packing group apply?", "hazardClass"),
        ("What is the pH of bleach?", "pH"),
        ("Which materials are incompatible with bleach?", "incompatibleMaterials"),
        ("What are the odours?", "odor"),
        ("Which products are classified as Flammable Liquids Category 2", "hasClassification"),
    ],
)
def test_match_properties(onto: TurtleOntology, question: str, expected: str) -> None:
    found = [p.name for p, _ in onto.match_properties(question)]
    assert found[0] == expected


def test_match_properties_longer_label_wins(onto: TurtleOntology) -> None:
    found = onto.match_properties("What is the odor threshold?")
    assert found[0][0].name == "odorThreshold"
    assert all(p.name != "odor" for p, _ in found)
    assert onto.match_properties("Tell me a joke") == []
    two = [p.name for p, _ in onto.match_properties("signal word and UN number")]
    assert set(two) == {"signalWord", "unNumber"}


def test_match_properties_is_fast(onto: TurtleOntology) -> None:
    onto.match_properties("warm up")
    t0 = time.perf_counter()
    for _ in range(200):
        onto.match_properties("Give me the flash point and the UN number of the ethanol product")
    assert (time.perf_counter() - t0) / 200 < 0.002


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("At what temperature does Gallium Metal melt?", "meltingPoint"),
        ("When does water freeze?", "meltingPoint"),
        ("At what temperature does X boil?", "boilingPoint"),
        ("How does X smell?", "odor"),
        ("What does X look like?", "appearance"),
        ("Does X dissolve in water?", "solubility"),
        ("Is X soluble in water?", "solubility"),
        ("If X is breathed in, what should be done?", "firstAidInhalation"),
        ("What if someone inhaled X?", "firstAidInhalation"),
        ("What should I do if X gets on my skin?", "firstAidSkin"),
        ("A splash got in the eyes: what to do?", "firstAidEyes"),
        ("My child swallowed X, what now?", "firstAidIngestion"),
        ("How should waste X be disposed of?", "disposalMethods"),
        ("How do I clean up a spill of X?", "spillCleanup"),
        ("How should X be stored?", "storageConditions"),
        ("How do I fight a fire involving X?", "firefightingProtection"),
        ("What is the oral LD50 of X?", "ld50Oral"),
        ("Does X cause cancer?", "carcinogenicity"),
        ("What EINECS number does X have?", "ecNumber"),
        ("Is X listed under Proposition 65?", "prop65"),
    ],
)
def test_match_properties_reads_search_labels(
    onto: TurtleOntology, question: str, expected: str
) -> None:
    found = [p.name for p, _ in onto.match_properties(question)]
    assert found and found[0] == expected, found


def test_search_labels_come_from_the_ontology_not_code() -> None:
    ttl = """
    @prefix ex: <http://example.org/v#> .
    @prefix owl: <http://www.w3.org/2002/07/owl#> .
    @prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
    @prefix skos: <http://www.w3.org/2004/02/skos/core#> .
    ex:topSpeed a owl:DatatypeProperty ; rdfs:label "Top speed" ; skos:hiddenLabel "how fast" .
    ex:lapTime a owl:DatatypeProperty ; rdfs:label "Lap time" ; ex:lowerWhenMore "quick" .
    ex:colour a owl:DatatypeProperty ; rdfs:label "Paint" ;
        ex:readFrom ex:topSpeed ; ex:section 3 ; ex:valueKind "procedure" .
    """
    o = TurtleOntology.from_turtle(ttl)
    assert [p.name for p, _ in o.match_properties("How fast does it go?")] == ["topSpeed"]
    assert o.match_properties("At what temperature does it boil?") == []  # not in this TTL
    assert o.search_labels("topSpeed") == ("how fast",)
    assert "how fast" not in o.property("topSpeed").labels  # search-only: never displayed
    assert (o.read_from("colour"), o.section("colour"), o.value_kind("colour")) == (
        ("topSpeed",),
        3,
        "procedure",
    )
    assert (o.read_from("nope"), o.section("nope"), o.value_kind("nope")) == ((), None, "text")
    assert o.lower_when_more("lapTime") == ("quick",) and o.lower_when_more("topSpeed") == ()


def test_turtle_ontology_offers_matching_protocol(onto: TurtleOntology) -> None:
    from hybrid_rag.protocols import OntologyMatching

    assert isinstance(onto, OntologyMatching)
    assert onto.section("firstAidEyes") == 4 and onto.value_kind("firstAidEyes") == "procedure"
    assert "appearance" in onto.read_from("color")


def test_equal_matches_go_to_the_property_named_elsewhere_too(onto: TurtleOntology) -> None:
    # "contained" is a word of both the spill clean-up and the components; "spill" and
    # "cleaned up" name the clean-up as well, so the shared word is read as the clean-up
    found = [p.name for p, _ in onto.match_properties("How is a spill contained and cleaned up?")]
    assert found == ["spillCleanup"]
    alone = [p.name for p, _ in onto.match_properties("What does the product contain?")]
    assert alone == ["hasComponent"]


def test_ghs_hazard_class_and_category_is_the_classification(onto: TurtleOntology) -> None:
    found = [p.name for p, _ in onto.match_properties("Which GHS hazard class and category?")]
    assert found[0] == "hasClassification" and "hazardClass" not in found
    assert onto.search_labels("unNumber") and onto.search_labels("nonexistent") == ()


def test_a_label_matches_when_the_question_spreads_its_words(onto: TurtleOntology) -> None:
    spread = [p.name for p, _ in onto.match_properties("What hazard class has it got under GHS?")]
    assert spread[0] == "hasClassification" and "hazardClass" not in spread
    # coordinated labels share their head words ("lower and upper ... limits")
    both = {p.name for p, _ in onto.match_properties("Give the upper and lower explosion limits")}
    assert {"lowerExplosionLimit", "upperExplosionLimit"} <= both
    # a phrase-shaped label ("appearance and odor") is not spread over another property's word
    found = {p.name for p, _ in onto.match_properties("What odor and what appearance?")}
    assert {"odor", "appearance"} <= found
    # too far apart: no match
    far = "GHS is a system; what does the label of the drum call its class and hazard?"
    assert "hasClassification" not in {p.name for p, _ in onto.match_properties(far)}


def test_sub_properties_are_read_from_the_turtle(onto: TurtleOntology) -> None:
    assert set(onto.narrower("personalProtection")) == {
        "eyeProtection",
        "handProtection",
        "skinProtection",
        "respiratoryProtection",
    }
    assert onto.narrower("flashPoint") == () and onto.narrower("nonexistent") == ()


def test_a_shared_displayed_label_matches_both_properties(onto: TurtleOntology) -> None:
    found = {p.name for p, _ in onto.match_properties("What are the hazard statements?")}
    assert found == {"hasHazardStatement", "hazardStatement"}
    # a search-only word shared by two properties still goes to one
    assert [p.name for p, _ in onto.match_properties("What does it contain?")] == ["hasComponent"]


# --- the document model: standard vocabulary first, hr: annotations second --------------

_PLAIN = """
@prefix ex: <http://example.org/fleet#> .
@prefix owl: <http://www.w3.org/2002/07/owl#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix skos: <http://www.w3.org/2004/02/skos/core#> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
ex:Vehicle a owl:Class ; rdfs:label "Vehicle"@en, "Fahrzeug"@de .
ex:Tyre a owl:Class ; rdfs:label "Tyre" .
ex:Garage a owl:Class ; rdfs:label "Garage" .
ex:modelName a owl:DatatypeProperty ; rdfs:label "Modellname"@de, "Model name"@en ;
    rdfs:domain ex:Vehicle ; rdfs:range xsd:string .
ex:plateNumber a owl:DatatypeProperty ; rdfs:label "Plate" ; rdfs:domain ex:Vehicle .
ex:firstRegistration a owl:DatatypeProperty ; rdfs:label "First registration" ;
    rdfs:domain ex:Vehicle ; rdfs:range xsd:date .
ex:mass a owl:DatatypeProperty ; rdfs:label "Mass" ; skos:altLabel "Gewicht"@de ;
    rdfs:domain ex:Vehicle ; rdfs:range xsd:decimal .
ex:hasTyre a owl:ObjectProperty ; rdfs:domain ex:Vehicle ; rdfs:range ex:Tyre .
ex:tyreSize a owl:DatatypeProperty ; rdfs:label "Tyre size" ; rdfs:domain ex:Tyre .
ex:servicedAt a owl:ObjectProperty ; rdfs:domain ex:Vehicle ; rdfs:range ex:Garage .
"""


def test_a_plain_owl_ontology_gets_a_document_model_from_defaults() -> None:
    o = TurtleOntology.from_turtle(_PLAIN)
    m = o.document_model()
    assert m.subject_class == "Vehicle"  # most datatype properties, pointed to by none
    assert m.naming == ("modelName",)  # the word "name" in its local name or label
    assert m.identifying == ("plateNumber",)  # by naming convention: ...Number
    assert m.parts == (("hasTyre", "Tyre"),)  # a class with properties of its own
    assert m.part_classes() == ("Tyre",)
    assert m.document_noun == "vehicle"


def test_labels_in_several_languages_show_the_english_one_and_read_them_all() -> None:
    o = TurtleOntology.from_turtle(_PLAIN)
    name = o.property("modelName")
    assert name.label == "Model name" and "Modellname" in name.alt_labels
    assert "Gewicht" in o.property("mass").labels
    vehicle = next(c for c in o.classes() if c.name == "Vehicle")
    assert (vehicle.label, vehicle.alt_labels) == ("Vehicle", ("Fahrzeug",))


def test_value_kinds_default_from_the_range() -> None:
    o = TurtleOntology.from_turtle(_PLAIN)
    kinds = {n: o.value_kind(n) for n in ("mass", "firstRegistration", "plateNumber", "tyreSize")}
    assert kinds == {
        "mass": "number",
        "firstRegistration": "date",
        "plateNumber": "identifier",
        "tyreSize": "text",
    }
    assert o.value_kind("hasTyre") == "text" and o.value_kind("unknown") == "text"


def test_hr_annotations_override_the_defaults() -> None:
    ttl = (
        _PLAIN
        + """
    @prefix hr: <http://hybrid-rag.org/ns#> .
    ex:Garage hr:documentSubject true ; hr:documentNoun "workshop record" .
    ex:garageName a owl:DatatypeProperty ; rdfs:label "Garage" ; rdfs:domain ex:Garage ;
        hr:namesSubject 2 .
    ex:owner a owl:DatatypeProperty ; rdfs:label "Owner" ; rdfs:domain ex:Garage ;
        hr:namesSubject 1 .
    ex:licence a owl:DatatypeProperty ; rdfs:label "Licence" ; rdfs:domain ex:Garage ;
        hr:identifiesSubject true ; hr:valueKind "text" .
    ex:bay a owl:DatatypeProperty ; rdfs:domain ex:Garage ; hr:unit "m" .
    """
    )
    m = TurtleOntology.from_turtle(ttl).document_model()
    assert m.subject_class == "Garage" and m.document_noun == "workshop record"
    assert m.naming == ("owner", "garageName")  # ranked: 1 before 2
    assert m.identifying == ("licence",)
    o = TurtleOntology.from_turtle(ttl)
    assert o.value_kind("licence") == "text"  # the annotation wins over "identifier"
    assert (o.value_kind("bay"), o.property("bay").unit) == ("number", "m")


def test_marked_names_turn_off_the_identifier_guess() -> None:
    ttl = _PLAIN.replace(
        "rdfs:domain ex:Vehicle ; rdfs:range xsd:string .",
        "rdfs:domain ex:Vehicle ; rdfs:range xsd:string ; "
        "<http://hybrid-rag.org/ns#namesSubject> true .",
    )
    m = TurtleOntology.from_turtle(ttl).document_model()
    assert m.naming == ("modelName",) and m.identifying == ()


def test_names_and_keys_from_standard_vocabulary() -> None:
    ttl = (
        _PLAIN
        + """
    ex:callSign a owl:DatatypeProperty ; rdfs:subPropertyOf rdfs:label ; rdfs:domain ex:Vehicle .
    ex:vin a owl:DatatypeProperty ; rdfs:domain ex:Vehicle .
    ex:Vehicle owl:hasKey ( ex:vin ) .
    """
    )
    m = TurtleOntology.from_turtle(ttl).document_model()
    assert m.naming == ("callSign",) and m.identifying == ("vin",)


def test_an_ontology_without_a_subject_class_has_an_empty_model() -> None:
    ttl = """
    @prefix ex: <http://example.org/n#> .
    @prefix owl: <http://www.w3.org/2002/07/owl#> .
    ex:note a owl:DatatypeProperty .
    """
    m = TurtleOntology.from_turtle(ttl).document_model()
    assert (m.subject_class, m.naming, m.identifying, m.parts) == (None, (), (), ())
    assert m.document_noun == "document"


def test_the_prompt_vocabulary_uses_the_ontologys_own_prefix() -> None:
    text = TurtleOntology.from_turtle(_PLAIN).vocabulary()
    assert "PREFIX ex: <http://example.org/fleet#>" in text and "ex:mass" in text
    assert "msds:" not in text


def test_the_bundled_ontologies_declare_their_subjects() -> None:
    sds = load_ontology("msds").document_model()
    assert (sds.subject_class, sds.naming, sds.document_noun) == (
        "Product",
        ("productName", "synonym"),
        "sheet",
    )
    invoice = load_ontology("invoice").document_model()
    assert invoice.subject_class == "Invoice"
    assert invoice.naming[0] == "issuerName" and "invoiceNumber" in invoice.identifying
    assert invoice.parts == (("hasLineItem", "LineItem"),)


# --- the Ontology contract, for every bundled ontology and a plain one -------------------


class TestSdsOntologyContract(OntologyContract):
    @pytest.fixture
    def ontology(self) -> Ontology:
        return load_ontology("msds")


class TestInvoiceOntologyContract(OntologyContract):
    @pytest.fixture
    def ontology(self) -> Ontology:
        return load_ontology("invoice")


class TestPlainOntologyContract(OntologyContract):
    @pytest.fixture
    def ontology(self) -> Ontology:
        return TurtleOntology.from_turtle(_PLAIN)


def test_a_reading_label_finds_values_but_links_no_question() -> None:
    ttl = """
    @prefix ex: <http://example.org/v#> .
    @prefix hr: <http://hybrid-rag.org/ns#> .
    @prefix owl: <http://www.w3.org/2002/07/owl#> .
    @prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
    @prefix skos: <http://www.w3.org/2004/02/skos/core#> .
    ex:Kit a owl:Class ; rdfs:label "Kit" .
    ex:footwear a owl:DatatypeProperty ; rdfs:label "Safety footwear" ; rdfs:domain ex:Kit ;
        hr:readingLabel "Feet" .
    ex:footCare a owl:DatatypeProperty ; rdfs:label "Foot care" ; rdfs:domain ex:Kit ;
        skos:hiddenLabel "feet" .
    """
    o = TurtleOntology.from_turtle(ttl)
    assert o.reading_labels("footwear") == ("Feet",) and o.reading_labels("footCare") == ()
    assert [p.name for p, _ in o.match_properties("What about the feet?")] == ["footCare"]
    assert "Feet" not in o.property("footwear").labels
    from hybrid_rag.ingest.extract import extract_offline
    from hybrid_rag.models import Page

    ex = extract_offline([Page(number=1, text="Feet: steel-capped boots\n")], ontology=o)
    assert {(f.prop, f.value) for f in ex.facts} >= {("footwear", "steel-capped boots")}


def test_the_subjects_source_and_kind_properties() -> None:
    # a maker's name calls a set of documents ("Velmar vehicles") without naming one;
    # by the local name when the ontology marks its names, or by hr:namesSource
    ttl = _PLAIN.replace(
        "rdfs:domain ex:Vehicle ; rdfs:range xsd:string .",
        "rdfs:domain ex:Vehicle ; rdfs:range xsd:string ; "
        "<http://hybrid-rag.org/ns#namesSubject> true .",
    ) + (
        'ex:makerName a owl:DatatypeProperty ; rdfs:label "Built by" ; rdfs:domain ex:Vehicle .\n'
        'ex:bodyType a owl:DatatypeProperty ; rdfs:label "Body" ; rdfs:domain ex:Vehicle ;\n'
        "    <http://hybrid-rag.org/ns#namesKind> true .\n"
    )
    m = TurtleOntology.from_turtle(ttl).document_model()
    assert m.naming == ("modelName",) and m.sources == ("makerName",)
    assert m.kinds == ("bodyType",)
    marked = ttl.replace(
        'rdfs:label "Body" ;', 'rdfs:label "Body" ; <http://hybrid-rag.org/ns#namesSource> true ;'
    )
    assert TurtleOntology.from_turtle(marked).document_model().sources == ("bodyType",)
    plain = TurtleOntology.from_turtle(_PLAIN).document_model()
    assert plain.sources == () and plain.kinds == ()
