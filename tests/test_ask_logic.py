"""Unit tests of the pure ask logic: fusion, linking, analysis, extractive composition."""

from __future__ import annotations

import pytest

from hybrid_rag.ask.analysis import analyse
from hybrid_rag.ask.answer import compose_extractive
from hybrid_rag.ask.fusion import reciprocal_rank_fusion
from hybrid_rag.ask.linking import SubjectIndex
from hybrid_rag.models import Evidence, Fact, Passage
from hybrid_rag.ontology import load_ontology
from hybrid_rag.text import content_tokens, sentences, stem, tokens

ONTOLOGY = load_ontology("msds")
INDEX = SubjectIndex(
    [
        ("acetone-hplc", ["Acetone, HPLC Grade", "Acetone"]),
        ("acetone-acs", ["Acetone ACS Grade", "Acetone"]),
        ("h2o2-25", ["Hydrogen Peroxide 25% Solution, Lab Grade"]),
        ("h2o2-34", ["Hydrogen Peroxide 34% Solution, Lab Grade"]),
        ("ipa-91", ["Isopropyl Alcohol 91% Lab Grade"]),
        ("cleaner", ["Libman All Purpose Cleaner"]),
        ("glass", ["Libman Concentrated Glass Cleaner"]),
    ]
)


def test_rrf_scores_and_ranks() -> None:
    fused = reciprocal_rank_fusion({"dense": ["a", "b", "c"], "bm25": ["b", "d", "b"]}, k=60)
    assert [f.key for f in fused] == ["b", "a", "d", "c"]
    b = fused[0]
    assert b.ranks == {"dense": 2, "bm25": 1}
    assert b.score == pytest.approx(1 / 62 + 1 / 61)


def test_linking_prefers_the_full_name_over_a_shared_alias() -> None:
    got = INDEX.link("Tell me the flashpoint of the Acetone, HPLC Grade product.")
    assert [m.doc_id for m in got] == ["acetone-hplc"]


def test_linking_keeps_both_products_that_differ_by_a_number() -> None:
    q = "Do Hydrogen Peroxide 25% Solution, Lab Grade and Hydrogen Peroxide 34% Solution share?"
    assert {m.doc_id for m in INDEX.link(q)} == {"h2o2-25", "h2o2-34"}


def test_linking_a_generic_name_returns_every_tied_product() -> None:
    assert {m.doc_id for m in INDEX.link("flash point of acetone?")} == {
        "acetone-hplc",
        "acetone-acs",
    }


def test_linking_matches_percent_variants_and_ignores_unrelated() -> None:
    assert [m.doc_id for m in INDEX.link("pH of isopropyl alcohol 91 lab grade")] == ["ipa-91"]
    assert INDEX.link("What is the capital of France?") == []
    assert INDEX.restricted(["glass"]).link("Libman All Purpose Cleaner pH") == []


@pytest.mark.parametrize(
    ("question", "intent", "prop"),
    [
        (
            "Which has the lowest flash point: Acetone, HPLC Grade or Isopropyl Alcohol 91% "
            "Lab Grade?",
            "min",
            "flashPoint",
        ),
        (
            "Which of these has the most alkaline (highest) pH: Libman All Purpose Cleaner, "
            "Libman Concentrated Glass Cleaner?",
            "max",
            "pH",
        ),
        (
            "Is the UN number of Hydrogen Peroxide 25% Solution, Lab Grade the same as that of "
            "Hydrogen Peroxide 34% Solution, Lab Grade?",
            "same",
            "unNumber",
        ),
        (
            "Which of these carry the signal word 'Warning' (rather than 'Danger'): Acetone, HPLC "
            "Grade; Isopropyl Alcohol 91% Lab Grade?",
            "filter",
            "signalWord",
        ),
        ("What is the UN number of Isopropyl Alcohol 91% Lab Grade?", "lookup", "unNumber"),
    ],
)
def test_analysis_intent_and_property(question: str, intent: str, prop: str) -> None:
    a = analyse(question, index=INDEX, ontology=ONTOLOGY)
    assert a.intent == intent
    assert prop in [p.name for p in a.properties]
    if intent == "filter":
        assert a.filter_terms == ("Warning",)


def test_topic_drops_the_product_name() -> None:
    a = analyse(
        "What should you do if Libman All Purpose Cleaner gets into your eyes?",
        index=INDEX,
        ontology=ONTOLOGY,
    )
    assert "Libman" not in a.topic and "eyes" in a.topic


def test_stemming_and_sentences() -> None:
    assert stem("inhaled") == stem("inhales") == stem("inhalation") == "inhal"
    assert stem("eyes") == "eye" and stem("1090") == "1090"
    assert content_tokens("What should you do if it gets into your eyes?") == ["eye"]
    text = "First sentence. Second one!\nA line"
    assert [text[s:e] for s, e in sentences(text)] == ["First sentence.", "Second one!", "A line"]


def _fact(
    doc: str,
    name: str,
    prop: str,
    value: str,
    number: float | None = None,
    status: str = "stated",
    page: int = 4,
) -> Fact:
    return Fact(
        doc_id=doc,
        subject=name,
        subject_iri=f"urn:{doc}",
        predicate=prop,
        predicate_label=prop,
        value=value,
        number=number,
        status=status,  # type: ignore[arg-type]
        evidence=Evidence(
            doc_id=doc, page=page, chunk_id=f"{doc}#p{page}c0", quote=f"{prop} {value}"
        ),
    )


def test_ranked_answer_names_the_winner_first() -> None:
    a = analyse(
        "Which has the lowest flash point: Acetone, HPLC Grade or Isopropyl Alcohol 91% Lab Grade?",
        index=INDEX,
        ontology=ONTOLOGY,
    )
    facts = [
        _fact("acetone-hplc", "Acetone", "flashPoint", "-20 °C", -20.0),
        _fact("ipa-91", "IPA", "flashPoint", "18 °C", 18.0),
    ]
    out = compose_extractive(a, facts, [])
    assert out.text is not None and out.text.startswith("Acetone, HPLC Grade has the lowest")
    assert "[acetone-hplc p.4]" in out.text and len(out.citations) == 2


def test_unavailable_value_is_said_not_dropped() -> None:
    a = analyse(
        "What is the flash point of Isopropyl Alcohol 91% Lab Grade?",
        index=INDEX,
        ontology=ONTOLOGY,
    )
    facts = [_fact("ipa-91", "IPA", "flashPoint", "No information available", status="unavailable")]
    out = compose_extractive(a, facts, [])
    assert out.text is not None and "not available" in out.text


def test_label_line_needs_the_label_as_words_and_prefers_a_value_with_digits() -> None:
    a = analyse(
        "What is the CAS number of Isopropyl Alcohol 91% Lab Grade?", index=INDEX, ontology=ONTOLOGY
    )
    passages = [
        Passage(
            doc_id="ipa-91",
            page=2,
            chunk_id="c1",
            score=0.1,
            text="Chemical name CAS number Concentration\nUpper No data available",
        ),
        Passage(
            doc_id="ipa-91",
            page=1,
            chunk_id="c0",
            score=0.05,
            text="Product name Isopropyl alcohol\nCAS number 67-63-0",
        ),
    ]
    out = compose_extractive(a, [], passages)
    assert out.text is not None and "67-63-0" in out.text and "Concentration" not in out.text


def test_a_value_the_sheet_says_is_not_available_is_not_taken_from_mid_line_text() -> None:
    a = analyse(
        "What is the CAS number of Isopropyl Alcohol 91% Lab Grade?", index=INDEX, ontology=ONTOLOGY
    )
    listing = "US. EPCRA Section 313\nListed, Diethanolamine (CAS #111-42-2)."
    passages = [Passage(doc_id="ipa-91", page=9, chunk_id="c9", score=0.1, text=listing)]
    na = [_fact("ipa-91", "IPA", "casNumber", "N/A", status="unavailable")]
    out = compose_extractive(a, na, passages)
    assert out.text is not None and "111-42-2" not in out.text.split(".")[0]
    assert "not available" in out.text and out.abstention == "not_stated"
    table = "Component Type Value\nIsopropyl alcohol CAS number 67-63-0"  # no fact: a row
    row = compose_extractive(
        a, [], [Passage(doc_id="ipa-91", page=1, chunk_id="c0", score=0.1, text=table)]
    )
    assert row.text is not None and "67-63-0" in row.text


def test_a_column_header_is_read_with_its_row_and_told_once() -> None:
    a = analyse(
        "Which dermal and oral LD50 does Isopropyl Alcohol 91% Lab Grade have?",
        index=INDEX,
        ontology=ONTOLOGY,
    )
    table = (
        "Acute toxicity\nIngredient LD50 Oral LD50 Dermal\nisopropanol 5045 mg/kg (rat) 12800 mg/kg"
    )
    passages = [Passage(doc_id="ipa-91", page=7, chunk_id="c7", score=0.1, text=table)]
    out = compose_extractive(a, [], passages)
    assert out.text is not None and "5045 mg/kg" in out.text and "12800 mg/kg" in out.text
    assert out.text.count("Ingredient LD50 Oral") == 1
    assert any("\nisopropanol 5045" in c.quote for c in out.citations)  # verbatim, both lines


def test_every_value_of_a_property_is_listed_with_its_page() -> None:
    a = analyse(
        "What GHS classification does Isopropyl Alcohol 91% Lab Grade have?",
        index=INDEX,
        ontology=ONTOLOGY,
    )
    classes = ["Flammable liquids Category 2", "Eye irritation Category 2A", "STOT SE Category 3"]
    facts = [
        _fact(
            "ipa-91", "Isopropyl Alcohol 91% Lab Grade", "hasClassification", v, page=1 + (i == 2)
        )
        for i, v in enumerate(classes)
    ]
    out = compose_extractive(a, facts, [])
    assert out.text is not None and all(v in out.text for v in classes)
    assert "[ipa-91 p.1]" in out.text and "[ipa-91 p.2]" in out.text


def test_nothing_relevant_in_passages_is_an_abstention() -> None:
    a = analyse(
        "What is the half-life of Libman All Purpose Cleaner?", index=INDEX, ontology=ONTOLOGY
    )
    passages = [
        Passage(
            doc_id="cleaner",
            page=1,
            chunk_id="c",
            score=0.1,
            text="Keep out of reach of children. Store in a cool place.",
        )
    ]
    out = compose_extractive(a, [], passages)
    assert out.text is not None and out.text.startswith("Not stated") and not out.citations


def test_bm25_tokens_are_mildly_stemmed_but_codes_are_not() -> None:
    from hybrid_rag.text import keyword_tokens as tokenize

    assert {"stor"} <= set(tokenize("Store it")) & set(tokenize("storage")) & set(
        tokenize("stored")
    )
    toks = tokenize("CAS 67-64-1, UN1090, H225 and hydrofluoric hydroxide")
    assert {"67-64-1", "un1090", "h225", "hydrofluoric", "hydroxid"} <= set(toks)


def test_enumerated_heading_is_one_sentence() -> None:
    text = "sensitizers). \n \n4. FIRST-AID MEASURES \nEYE CONTACT: Rinse. Version 12. Ok"
    got = [text[s:e] for s, e in sentences(text)]
    assert got == [
        "sensitizers).",
        "4. FIRST-AID MEASURES",
        "EYE CONTACT: Rinse.",
        "Version 12. Ok",
    ]


def test_which_of_these_are_phrase_becomes_a_filter() -> None:
    a = analyse(
        "Which of these are corrosive to metals: Acetone, HPLC Grade; Isopropyl Alcohol 91% "
        "Lab Grade?",
        index=INDEX,
        ontology=ONTOLOGY,
    )
    # "corrosive to metals" names a GHS hazard class: its words are what a class must say
    assert a.intent == "filter" and a.filter_terms == ("corrosive", "metals")
    assert [p.name for p in a.properties] == ["hasClassification"]
    from hybrid_rag.ask.kg import _template

    sparql = _template(a)
    assert sparql is not None and '"corrosive"' in sparql and '"metal"' in sparql
    assert '"to"' not in sparql


def test_filter_by_a_search_label_keeps_no_words_and_reports_the_negatives() -> None:
    a = analyse(
        "Which of these is a dangerous good in DOT transport: Acetone, HPLC "
        "Grade; Isopropyl Alcohol 91% Lab Grade; Libman All Purpose Cleaner?",
        index=INDEX,
        ontology=ONTOLOGY,
    )
    assert a.intent == "filter" and [p.name for p in a.properties] == ["unNumber"]
    assert a.filter_terms == ()  # every word names the property: any positive value matches
    facts = [
        _fact("acetone-hplc", "Acetone", "unNumber", "UN1090"),
        _fact("ipa-91", "IPA", "unNumber", "Not regulated"),
    ]
    out = compose_extractive(a, facts, [])
    assert out.text is not None and out.text.startswith("Acetone, HPLC Grade matches")
    assert "Not for Isopropyl Alcohol 91% Lab Grade (Not regulated [ipa-91 p.4])" in out.text
    assert "No matching statement for Libman All Purpose Cleaner" in out.text
    assert len(out.citations) == 2


def test_long_procedure_is_quoted_from_the_part_the_question_asks_about() -> None:
    a = analyse(
        "How should a large spill of Acetone, HPLC Grade be cleaned up?",
        index=INDEX,
        ontology=ONTOLOGY,
    )
    assert a.intent == "procedure"
    small = "Small Spills: Absorb with earth, sand or other non-combustible material. " * 16
    value = f"Eliminate all ignition sources. {small}Large Spills: Dike the spilled material."
    out = compose_extractive(a, [_fact("acetone-hplc", "Acetone", "spillCleanup", value)], [])
    assert out.text is not None
    assert "Large Spills: Dike the spilled material." in out.text
    assert "Eliminate all ignition sources" not in out.text
    short = "Eliminate all ignition sources. Large Spills: Dike the spilled material."
    whole = compose_extractive(a, [_fact("acetone-hplc", "Acetone", "spillCleanup", short)], [])
    assert whole.text is not None and "Eliminate all ignition sources" in whole.text
    assert whole.text.index("Large Spills") < whole.text.index("Eliminate")  # asked part first


def test_a_procedures_parts_are_told_in_the_order_the_reader_read_them() -> None:
    a = analyse(
        "Which first aid applies after skin contact with Acetone, HPLC Grade?",
        index=INDEX,
        ontology=ONTOLOGY,
    )
    response = _fact("acetone-hplc", "Acetone", "firstAidSkin", "Rinse skin with water/shower.")
    response = response.model_copy(update={"position": 14})  # read after the section's own
    own = _fact("acetone-hplc", "Acetone", "firstAidSkin", "Wash off with plenty of water.")
    own = own.model_copy(update={"position": 9})
    out = compose_extractive(a, [response, own], [])  # the store lists page order
    assert out.text is not None
    assert out.text.index("Wash off with plenty") < out.text.index("Rinse skin with water")


def test_a_long_answer_ends_at_a_whole_sentence() -> None:
    a = analyse(
        "How should a large spill of Acetone, HPLC Grade be cleaned up?",
        index=INDEX,
        ontology=ONTOLOGY,
    )
    step = "Soak up the liquid with an inert absorbent and shovel it into a drum. "
    out = compose_extractive(
        a, [_fact("acetone-hplc", "Acetone", "spillCleanup", step * 30)], [], max_chars=400
    )
    assert out.text is not None and len(out.text) <= 440
    assert "drum. [acetone-hplc p.4]" in out.text and "…" not in out.text


def test_procedure_from_passages_quotes_the_whole_paragraph() -> None:
    a = analyse(
        "Under what conditions should Acetone, HPLC Grade be stored?",
        index=INDEX,
        ontology=ONTOLOGY,
    )
    text = (
        "Use only under a chemical fume hood. Wear personal protective equipment. Keep away\n"
        "from open flames, hot surfaces and sources of ignition. Keep away from acids.\n"
        "Handle in accordance with good industrial hygiene.\n"
        "Keep in a dry, cool and well-ventilated place. Keep container tightly closed. Keep\n"
        "away from direct sunlight. Corrosives area. Store under an inert atmosphere. Store\n"
        "refrigerated.\n"
    )
    passage = Passage(
        doc_id="acetone-hplc", page=4, chunk_id="acetone-hplc#p4c1", text=text, score=1.0
    )
    out = compose_extractive(a, [], [passage])
    assert out.text is not None
    assert out.text.startswith("Keep in a dry, cool and well-ventilated place.")
    assert "Store under an inert atmosphere" in out.text and "hygiene" not in out.text


def test_a_property_named_only_in_a_circumstance_comes_second() -> None:
    a = analyse(
        "What gloves should I wear when handling Acetone, HPLC Grade?",
        index=INDEX,
        ontology=ONTOLOGY,
    )
    assert [p.name for p in a.properties] == ["handProtection", "handlingPrecautions"]
    b = analyse(
        "What precautions are needed for handling Acetone, HPLC Grade?",
        index=INDEX,
        ontology=ONTOLOGY,
    )
    assert "handlingPrecautions" in [p.name for p in b.properties]
    c = analyse(
        "What should I wear when handling Acetone, HPLC Grade?", index=INDEX, ontology=ONTOLOGY
    )
    names = [p.name for p in c.properties]
    assert {"eyeProtection", "handProtection"} <= set(names[:5])  # what to wear: PPE items
    assert names.index("handlingPrecautions") > names.index("handProtection")


@pytest.mark.parametrize(
    ("question", "prop"),
    [
        ("How toxic is Acetone, HPLC Grade if inhaled?", "lc50Inhalation"),  # split by the name
        ("How toxic is Acetone, HPLC Grade if swallowed?", "ld50Oral"),
        ("Who manufactures Acetone, HPLC Grade?", "supplierName"),
        ("What is the ACGIH exposure limit for Acetone, HPLC Grade?", "acgihTlvTwa"),
        ("What are the OSHA exposure limits for Acetone, HPLC Grade?", "oshaPelTwa"),
        ("Which organs does Acetone, HPLC Grade damage with repeated exposure?", "stotRepeated"),
        ("What organs are affected after a single exposure to Acetone, HPLC Grade?", "stotSingle"),
    ],
)
def test_the_asked_property_comes_first(question: str, prop: str) -> None:
    a = analyse(question, index=INDEX, ontology=ONTOLOGY)
    assert a.properties[0].name == prop


def test_an_umbrella_property_asks_its_items() -> None:
    a = analyse("What PPE is required for Acetone, HPLC Grade?", index=INDEX, ontology=ONTOLOGY)
    names = [p.name for p in a.properties]
    assert "personalProtection" in names and a.intent == "procedure"
    items = {"eyeProtection", "handProtection", "skinProtection", "respiratoryProtection"}
    assert items <= set(names)
    facts = [
        _fact("acetone-hplc", "Acetone", "eyeProtection", "Chemical goggles."),
        _fact("acetone-hplc", "Acetone", "handProtection", "Nitrile gloves."),
        _fact("acetone-hplc", "Acetone", "respiratoryProtection", "Not required."),
    ]
    out = compose_extractive(a, facts, [])
    assert out.text is not None and "Chemical goggles." in out.text
    assert "Nitrile gloves." in out.text and "Not required." in out.text
    named = analyse(
        "What gloves and eye protection does Acetone, HPLC Grade need?",
        index=INDEX,
        ontology=ONTOLOGY,
    )
    valued = {p.name for p in named.properties if p.kind == "datatype"}
    assert valued == {"handProtection", "eyeProtection"}  # named items: no umbrella


def test_linking_drops_a_sheet_whose_matched_words_another_names_and_more() -> None:
    index = SubjectIndex(
        [
            ("h2so4-2n", ["Sulfuric Acid 2N Solution, Reagent Grade"]),
            ("h2so4-70", ["Sulfuric Acid 70% Solution, Reagent Grade, 4 Liters"]),
            ("h3po4-85", ["Phosphoric Acid 85% Semiconductor/Electronic Grade"]),
        ]
    )
    found = index.link(
        "Which has a higher boiling point: Sulfuric Acid 70% Solution, Reagent Grade or "
        "Phosphoric Acid 85% Semiconductor/Electronic Grade?"
    )
    assert sorted(m.doc_id for m in found) == ["h2so4-70", "h3po4-85"]


def test_linking_counts_every_name_of_a_sheet() -> None:
    # the short alias wins on coverage, but the long name holds the other words too
    index = SubjectIndex(
        [
            ("h2so4-2n", ["Sulfuric Acid 2N Solution, Reagent Grade"]),
            (
                "h2so4-70",
                ["Sulfuric Acid 70% Solution, Reagent Grade, 4 Liters", "Sulfuric acid 70%"],
            ),
        ]
    )
    found = index.link("What is the hazard class of Sulfuric Acid 70% Solution, Reagent Grade?")
    assert [m.doc_id for m in found] == ["h2so4-70"]


@pytest.mark.parametrize(
    ("question", "terms"),
    [
        ("Is Isopropyl Alcohol 91% Lab Grade flammable?", ("flammable",)),
        ("Is Acetone, HPLC Grade corrosive to metals?", ("corrosive", "metals")),
        ("Is Acetone, HPLC Grade an oxidizer?", ("oxidizer",)),
        ("Is Acetone, HPLC Grade classified as flammable under GHS?", ("flammable",)),
    ],
)
def test_yes_no_hazard_adjective_asks_the_ghs_classes(question: str, terms: tuple[str]) -> None:
    a = analyse(question, index=INDEX, ontology=ONTOLOGY)
    assert a.intent == "filter" and a.polar and a.filter_terms == terms
    assert [p.name for p in a.properties] == ["hasClassification"]
    from hybrid_rag.ask.kg import _template

    sparql = _template(a)  # every class of the product, so a "no" can say which it has
    assert sparql is not None and "CONTAINS" not in sparql


def test_yes_no_about_a_plain_property_stays_a_lookup() -> None:
    a = analyse("Is Acetone, HPLC Grade soluble in water?", index=INDEX, ontology=ONTOLOGY)
    assert a.intent == "lookup" and not a.polar
    assert [p.name for p in a.properties] == ["solubility"]


def test_yes_no_category_answer_says_yes_or_no_with_the_classes() -> None:
    classes = [
        _fact("ipa-91", "IPA", "hasClassification", "Flammable Liquids Category 2"),
        _fact("ipa-91", "IPA", "hasClassification", "Eye Irritation Category 2A"),
    ]
    yes = analyse("Is Isopropyl Alcohol 91% Lab Grade flammable?", index=INDEX, ontology=ONTOLOGY)
    out = compose_extractive(yes, classes, [])
    assert out.text is not None and out.text.startswith("Yes: ")
    assert "Flammable Liquids Category 2 [ipa-91 p.4]" in out.text and "Eye" not in out.text
    no = analyse(
        "Is Isopropyl Alcohol 91% Lab Grade corrosive to metals?", index=INDEX, ontology=ONTOLOGY
    )
    out = compose_extractive(no, classes, [])
    assert out.text is not None and out.text.startswith("No: ")
    assert "'corrosive to metals'" in out.text and "Eye Irritation Category 2A" in out.text
    passages = [
        Passage(
            doc_id="ipa-91", page=2, chunk_id="c", score=0.1, text="Flammable liquid and vapour."
        )
    ]
    out = compose_extractive(yes, [], passages)  # no classes stated: the sheet's own words
    assert out.text is not None and not out.text.startswith(("Yes", "No"))


SOLVENTS = SubjectIndex(
    [
        ("cyclohexane", ["Cyclohexane 99% ACS Grade", "Cyclohexane"]),
        ("hexanes", ["Hexanes 99.9% Semiconductor/Electronic Grade", "Hexane"]),
        ("mek", ["Methyl Ethyl Ketone (MEK), Lab Grade", "Methyl Ethyl Ketone", "MEK"]),
        ("daa", ["Diacetone Alcohol", "2-Methyl-2-pentanol-4-one"]),
        ("methanol", ["Methanol 99% Lab Grade", "Methanol", "Methyl alcohol"]),
        ("pyridine", ["Pyridine Analytical Reagent Grade", "Pyridine"]),
        ("h2o2", ["Hydrogen Peroxide 30% Solution, Lab Grade"]),
        ("agno3", ["Silver Nitrate, Lab", "Silver Nitrate"]),
    ]
)


def test_a_plural_name_links_the_sheet_named_in_the_singular() -> None:
    found = SOLVENTS.link("Do Cyclohexane and Hexanes share the same transport hazard class?")
    assert {m.doc_id for m in found} == {"cyclohexane", "hexanes"}


def test_a_name_whose_words_are_said_apart_inside_other_names_is_not_linked() -> None:
    q = "Which boils lowest: Cyclohexane 99%, Methyl Ethyl Ketone, or Diacetone Alcohol?"
    assert {m.doc_id for m in SOLVENTS.link(q)} == {"cyclohexane", "mek", "daa"}
    said = SOLVENTS.link("Which boils lower, Methyl alcohol or Methyl Ethyl Ketone?")
    assert {m.doc_id for m in said} == {"methanol", "mek"}  # said together, it is named


@pytest.mark.parametrize(
    ("question", "intent", "polar"),
    [
        ("Which is denser, Pyridine or Methanol?", "max", False),
        ("Is Pyridine heavier than Methanol?", "max", True),
        ("Which of Pyridine and Methanol is the densest?", "max", False),
    ],
)
def test_an_inflected_comparative_of_a_property_adjective_compares(
    question: str, intent: str, polar: bool
) -> None:
    a = analyse(question, index=SOLVENTS, ontology=ONTOLOGY)
    assert (a.intent, a.polar) == (intent, polar)
    assert [p.name for p in a.properties] == ["relativeDensity"]


def test_a_comparison_with_a_value_without_a_number_shows_the_values_side_by_side() -> None:
    a = analyse("Which is less volatile, Pyridine or Methanol?", index=SOLVENTS, ontology=ONTOLOGY)
    assert a.intent == "min" and a.properties[0].name == "vaporPressure"
    facts = [
        _fact("methanol", "Methanol", "vaporPressure", "97 mmHg", 97.0),
        _fact("pyridine", "Pyridine", "vaporPressure", "20 mbar @ 20 °C"),  # not typed
    ]
    out = compose_extractive(a, facts, [])
    assert out.text is not None and out.abstention is None
    assert "20 mbar" in out.text and "97 mmHg" in out.text
    assert "lower" not in out.text and "not stated" not in out.text  # no winner, no "missing"


def test_a_comparison_asks_the_plain_values_of_products_without_a_typed_one() -> None:
    from hybrid_rag.ask.kg import KGResult, _unranked

    a = analyse("Which is less volatile, Pyridine or Methanol?", index=SOLVENTS, ontology=ONTOLOGY)
    one = KGResult(facts=[_fact("methanol", "Methanol", "vaporPressure", "97 mmHg", 97.0)])
    sparql = _unranked(a, one)
    assert sparql is not None and "vaporPressure" in sparql and "BOUND(?number)" not in sparql
    both = KGResult(facts=[*one.facts, _fact("pyridine", "Pyridine", "vaporPressure", "18", 18.0)])
    assert _unranked(a, both) is None


def test_filter_words_match_a_value_by_their_stem() -> None:
    from hybrid_rag.ask.kg import _template

    a = analyse(
        "Which of the following are oxidizers: Hydrogen Peroxide 30%; Silver Nitrate; Pyridine?",
        index=SOLVENTS,
        ontology=ONTOLOGY,
    )
    sparql = _template(a)
    assert a.intent == "filter" and sparql is not None
    assert '"oxidiz"' in sparql and '"oxidizers"' not in sparql  # "Oxidizing Liquids" holds it


@pytest.mark.parametrize(
    ("methanol", "head"),
    [
        ("8", "No, the hazard classes differ"),  # the plural of the property
        ("3 (6.1)", "Yes, they share the same hazard class"),  # class 3, subsidiary 6.1
    ],
)
def test_same_or_different_compares_the_values_outside_parentheses(
    methanol: str, head: str
) -> None:
    a = analyse(
        "Do Pyridine and Methanol have the same hazard class?", index=SOLVENTS, ontology=ONTOLOGY
    )
    facts = [
        _fact("pyridine", "Pyridine", "hazardClass", "3"),
        _fact("methanol", "Methanol", "hazardClass", methanol),
    ]
    facts = [f.model_copy(update={"predicate_label": "hazard class"}) for f in facts]
    out = compose_extractive(a, facts, [])
    assert out.text is not None and out.text.startswith(head)
    assert methanol in out.text  # the subsidiary class is still shown


@pytest.mark.parametrize(
    ("question", "asked"),
    [
        ("What does the Kestrel invoice say about disputes over the amount?", set()),
        ("What does the Kestrel invoice say about complaints regarding the total?", set()),
        ("What does the Kestrel invoice say about the payment terms?", {"paymentTerms"}),
        ("What does the Kestrel invoice say about the due date of payment?", {"dueDate"}),
    ],
)
def test_a_topic_whose_head_word_the_ontology_lacks_names_no_property(
    question: str, asked: set[str]
) -> None:
    # "disputes over the amount" is about disputes: "amount" only qualifies the head word,
    # so no amount is the answer; a topic headed by a word of the ontology keeps its property
    index = SubjectIndex([("kestrel", ["Kestrel Supplies GmbH"])])
    a = analyse(question, index=index, ontology=load_ontology("invoice"))
    names = {p.name for p in a.properties}
    assert names == asked if not asked else asked <= names


def test_a_trade_mark_sign_does_not_glue_itself_to_the_name() -> None:
    # NFKC alone turns "™" into "TM": "Varnol™" would be the word "varnoltm"
    assert tokens("Varnol™ Hexane Fluid 80") == ["varnol", "hexane", "fluid", "80"]
    assert tokens("Varnol® Solvent") == tokens("VARNOL SOLVENT")
    index = SubjectIndex([("x1", ["Varnol™ Hexane Fluid 80"]), ("x2", ["Varnol® Solvent 12"])])
    assert [m.doc_id for m in index.link("Is Varnol Solvent 12 flammable?")] == ["x2"]


def test_the_value_the_question_names_is_listed_first() -> None:
    a = analyse(
        "How much zinc oxide is in Isopropyl Alcohol 91% Lab Grade?", index=INDEX, ontology=ONTOLOGY
    )
    rows = ["67-63-0 >= 90 - < 92% isopropanol", "1314-13-2 >= 0.3 - < 1.0% Zinc oxide"]
    facts = [_fact("ipa-91", "Isopropyl Alcohol 91% Lab Grade", "hasComponent", v) for v in rows]
    out = compose_extractive(a, facts, [])
    assert out.text is not None and out.text.index("Zinc oxide") < out.text.index("isopropanol")


def test_a_text_value_is_not_taken_from_the_line_under_a_longer_label() -> None:
    a = analyse(
        "What is the odor of Isopropyl Alcohol 91% Lab Grade?", index=INDEX, ontology=ONTOLOGY
    )
    text = "Odor Sharp, alcoholic\nOdor Threshold No information available\npH 7.7-8.0"
    passages = [Passage(doc_id="ipa-91", page=6, chunk_id="c6", score=0.1, text=text)]
    out = compose_extractive(a, [], passages)
    assert out.text is not None and "Sharp, alcoholic" in out.text and "7.7" not in out.text


_DEVICE_TTL = """
@prefix dev: <http://example.org/device#> .
@prefix owl: <http://www.w3.org/2002/07/owl#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix skos: <http://www.w3.org/2004/02/skos/core#> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
dev:Device a owl:Class ; rdfs:label "Device" .
dev:Standard a owl:Class ; rdfs:label "Standard" .
dev:modelName a owl:DatatypeProperty ; rdfs:label "Model name" ;
    rdfs:domain dev:Device ; rdfs:range xsd:string .
dev:intendedUse a owl:DatatypeProperty ; rdfs:label "Intended use" ;
    rdfs:domain dev:Device ; rdfs:range xsd:string .
dev:certifiedTo a owl:ObjectProperty ; rdfs:label "has certification" ;
    skos:altLabel "certification" ; rdfs:domain dev:Device ; rdfs:range dev:Standard .
dev:meetsStandard a owl:ObjectProperty ; rdfs:label "meets" ; skos:altLabel "standard" ;
    rdfs:domain dev:Device ; rdfs:range dev:Standard .
dev:voltage a owl:DatatypeProperty ; rdfs:label "Rated voltage" ;
    rdfs:domain dev:Device ; rdfs:range xsd:string .
"""


@pytest.fixture(scope="module")
def device_ontology(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    from pathlib import Path

    path = Path(tmp_path_factory.mktemp("onto")) / "device.ttl"
    path.write_text(_DEVICE_TTL, encoding="utf-8")
    return load_ontology(path)


_DEVICES = SubjectIndex([("hub", ["Zentra Hub 4"]), ("lamp", ["Orla Desk Lamp"])])


def test_a_participle_before_for_asks_the_purpose_its_use_label_names(device_ontology) -> None:  # type: ignore[no-untyped-def]
    a = analyse("What is the Zentra Hub 4 intended for?", index=_DEVICES, ontology=device_ontology)
    assert [m.doc_id for m in a.subjects] == ["hub"]
    assert [p.name for p in a.properties] == ["intendedUse"]


def test_a_participle_names_the_relation_labelled_by_its_noun(device_ontology) -> None:  # type: ignore[no-untyped-def]
    q = "Which standard is the Orla Desk Lamp certified under?"
    a = analyse(q, index=_DEVICES, ontology=device_ontology)
    assert [p.name for p in a.properties][:2] == ["certifiedTo", "meetsStandard"]


def test_a_named_field_with_values_keeps_the_question_from_its_verb(device_ontology) -> None:  # type: ignore[no-untyped-def]
    q = "What rated voltage is the Orla Desk Lamp certified for?"
    a = analyse(q, index=_DEVICES, ontology=device_ontology)
    assert [p.name for p in a.properties] == ["voltage"]  # the voltage, not a purpose
    q = "What is the Orla Desk Lamp's model name?"
    assert [p.name for p in analyse(q, index=_DEVICES, ontology=device_ontology).properties] == [
        "modelName"
    ]


def test_the_same_compares_the_codes_short_values_print() -> None:
    a = analyse(
        "Do Acetone ACS Grade and Isopropyl Alcohol 91% Lab Grade ship under the same UN number?",
        index=INDEX,
        ontology=ONTOLOGY,
    )
    assert a.intent == "same"
    same = [
        _fact("acetone-acs", "Acetone", "unNumber", "ADR, RID, ADN UN1090"),
        _fact("ipa-91", "IPA", "unNumber", "UN 1090"),
    ]
    out = compose_extractive(a, same, [])
    assert out.text is not None and out.text.startswith("Yes")
    other = [same[0], _fact("ipa-91", "IPA", "unNumber", "UN1219")]
    out = compose_extractive(a, other, [])
    assert out.text is not None and out.text.startswith("No")
    prose = [  # a sentence is compared as text, not by the number it mentions
        _fact(
            "acetone-acs",
            "Acetone",
            "unNumber",
            "Not regulated for transport within 10 km of the plant",
        ),
        _fact(
            "ipa-91",
            "IPA",
            "unNumber",
            "Regulated as UN 10 when shipped by rail in closed tank cars",
        ),
    ]
    out = compose_extractive(a, prose, [])
    assert out.text is not None and out.text.startswith("No")


def test_a_bracket_giving_a_sheets_code_names_the_sheet_not_a_field() -> None:
    index = SubjectIndex(
        [("na-metal", ["Sodium", "10336"]), ("na-sticks", ["Sodium sticks, coated in oil"])]
    )
    a = analyse(
        "Do Sodium (stock number 10336) and Sodium sticks, coated in oil share a flash point?",
        index=index,
        ontology=ONTOLOGY,
    )
    assert {s.doc_id for s in a.subjects} == {"na-metal", "na-sticks"}
    assert [p.name for p in a.properties][:1] == ["flashPoint"]


def test_a_passage_printing_the_values_quote_adds_nothing_to_the_lookup() -> None:
    a = analyse(
        "If we send Acetone ACS Grade by truck, which UN number goes on the papers?",
        index=INDEX,
        ontology=ONTOLOGY,
    )
    fact = _fact("acetone-acs", "Acetone", "unNumber", "UN1090", page=9)
    fact = fact.model_copy(
        update={"evidence": fact.evidence.model_copy(update={"quote": "UN Number 1090"})}
    )
    table = "14.1 UN number\nUN Number 1090\nProper shipping name Acetone\nHazard class 3"
    passages = [Passage(doc_id="acetone-acs", page=9, chunk_id="c9", score=0.2, text=table)]
    out = compose_extractive(a, [fact], passages)
    assert out.text == "Acetone ACS Grade: UN number UN1090 [acetone-acs p.9]."
