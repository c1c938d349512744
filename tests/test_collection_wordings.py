"""Collection questions in other wordings: a value given by its code right after its
label ("class 8", "grade I"), a kind in the singular ("Which liquid has ..."), bounds in
other units (kPa, K, °F, g/mL), ranges, "What's ...".

The documents (spare-part data sheets) and their ontology are written for these tests;
``../shared/eval/qa-collection.jsonl`` measures the same on real sheets."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from hybrid_rag import HybridRAG
from hybrid_rag.ask._collection_words import over_collection

HR = "http://hybrid-rag.org/ns#"
CLASS = r"(?i)\\b\\d(?:\\.\\d)?\\b|not\\s*regulated"
GRADE = r"(?i)\\b(?:III|II|I)\\b"

ONTOLOGY = f"""
@prefix pt: <http://example.org/parts#> .
@prefix hr: <{HR}> .
@prefix owl: <http://www.w3.org/2002/07/owl#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix skos: <http://www.w3.org/2004/02/skos/core#> .
pt:SparePart a owl:Class ; rdfs:label "Spare part" .
pt:partName a owl:DatatypeProperty ; rdfs:label "Part name" ; rdfs:domain pt:SparePart ;
    hr:namesSubject true .
pt:shippingClass a owl:DatatypeProperty ; rdfs:label "Shipping class" ;
    rdfs:domain pt:SparePart ; skos:hiddenLabel "carriage class" ;
    hr:valueKind "identifier" ; hr:valuePattern "{CLASS}" .
pt:grade a owl:DatatypeProperty ; rdfs:label "Packing grade" ; rdfs:domain pt:SparePart ;
    hr:valueKind "identifier" ; hr:valuePattern "{GRADE}" .
pt:form a owl:DatatypeProperty ; rdfs:label "Form" ; rdfs:domain pt:SparePart ;
    hr:namesKind true .
pt:boilingPoint a owl:DatatypeProperty ; rdfs:label "Boiling point" ;
    rdfs:domain pt:SparePart ; hr:valueKind "temperature" ; hr:unit "°C" ;
    skos:hiddenLabel "boil" .
pt:vapourPressure a owl:DatatypeProperty ; rdfs:label "Vapour pressure" ;
    rdfs:domain pt:SparePart ; hr:valueKind "number" ; hr:unit "mmHg" .
pt:density a owl:DatatypeProperty ; rdfs:label "Density" ; rdfs:domain pt:SparePart ;
    hr:valueKind "number" ; skos:hiddenLabel "dense" .
pt:maker a owl:DatatypeProperty ; rdfs:label "Manufacturer" ; rdfs:domain pt:SparePart ;
    hr:namesSource true .
pt:pictogram a owl:DatatypeProperty ; rdfs:label "Pictogram" ; rdfs:domain pt:SparePart ;
    hr:valueKind "identifier" ; hr:valuePattern "(?i)flame|skull|corrosion" .
pt:remark a owl:DatatypeProperty ; rdfs:label "Remark" ; rdfs:domain pt:SparePart .
pt:revised a owl:DatatypeProperty ; rdfs:label "Revision date" ; rdfs:domain pt:SparePart ;
    hr:valueKind "date" .
"""
# the other columns of each sheet: pictogram / remark / revision date
MORE = {
    "coolant": "Flame / Keep cool / 2021-11-02",
    "etchant": "None / May cause corrosion of metals / 03/14/2023",
    "peroxide": "None / Keep from Brass fittings / July 5, 2023",
    "pellet": "None / None / 12-Jan-2023",
    "slag": "None / None / None",
    "powder": "None / None / None",
    "filler": "None / None / None",
    "grit": "None / None / None",
}

# name / shipping class / grade / form / boiling point / vapour pressure / density / maker
SHEETS = {
    "coolant": "Coolant CL-5 / 3 / III / Liquid / 197 °C / 0.1 kPa / 1.11 / Velmar's Foundry",
    "etchant": "Etchant ET-2 / 8 (5.1) / I / Liquid / 120 °C / 20 kPa / 1.4 - 1.6 / Orlen Works",
    "peroxide": "Oxidiser OX-3 / 5.1, 8 / II / Clear liquid / 150 °C (302 °F) / 2 mmHg / 1.2 g/mL"
    " / Velmar's Foundry",
    "pellet": "Brass Pellet BP-4 / Not regulated / None / Solid / 1,150 °C (2,102 °F) / None"
    " / 8.5 / Tarvik AB",
    "slag": "Brass Slag BS-5 / 9 / III / Solid / 2,230 °C / None / 2.9 g/cm3 / Tarvik AB",
    "powder": "Iron Powder IP-6 / None / None / Powder / None / None / 1530 kg/m3 / Tarvik AB",
    "filler": "Filler Paste FP-7 / None / None / Paste / None / None / Same as water ±5%"
    " / Orlen Works",
    "grit": "Steel Grit SG-8 / None / None / Grit / None / None / 33-80 lbs. / ft3 (bulk)"
    " / Orlen Works",
}
LABELS = (
    "Part name", "Shipping class", "Packing grade", "Form", "Boiling point", "Vapour pressure",
    "Density", "Manufacturer", "Pictogram", "Remark", "Revision date",
)  # fmt: skip


@contextmanager
def _built(folder: Path, ontology: str, texts: dict[str, str]) -> Iterator[HybridRAG]:
    """A store of ``{doc id: text}`` under the ontology's Turtle."""
    (folder / "parts.ttl").write_text(ontology)
    for name, text in texts.items():
        (folder / f"{name}.txt").write_text(text)
    with HybridRAG(folder / "store", ontology=folder / "parts.ttl", embedder="hashing") as r:
        r.ingest_many(sorted(folder.glob("*.txt")), raise_errors=True)
        yield r


@pytest.fixture(scope="module")
def rag(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HybridRAG]:
    texts = {
        name: "".join(f"{k}: {v}\n" for k, v in zip(LABELS, values, strict=True))
        for name, fields in SHEETS.items()
        for values in [re.split(r" / (?!ft3)", f"{fields} / {MORE[name]}")]
    }
    with _built(tmp_path_factory.mktemp("wordings"), ONTOLOGY, texts) as r:
        yield r


def _members(rag: HybridRAG, question: str) -> set[str]:
    return {f.doc_id for f in rag.ask(question).facts}


def test_a_code_after_its_label_is_the_value_the_first_code_states(rag: HybridRAG) -> None:
    # "8 (5.1)" is class 8 with a subsidiary 5.1; "5.1, 8" is class 5.1
    answer = rag.ask("Which parts ship as carriage class 8?")
    assert {f.doc_id for f in answer.facts} == {"etchant"}
    assert answer.text is not None and answer.text.startswith("1 ")
    assert "shipping class 8" in answer.text
    assert _members(rag, "How many parts have shipping class 5.1?") == {"peroxide"}
    assert _members(rag, "Which parts are in shipping class 7?") == set()


def test_a_roman_numeral_after_its_label_is_a_code_not_a_word(rag: HybridRAG) -> None:
    assert _members(rag, "Which parts are carried under packing grade I?") == {"etchant"}
    assert _members(rag, "Which parts are in packing grade III?") == {"coolant", "slag"}
    assert _members(rag, "Which parts are in packing grade I or II?") == {"etchant", "peroxide"}


def test_a_kind_in_the_singular_bounds_an_extreme(rag: HybridRAG) -> None:
    answer = rag.ask("Which liquid has the highest boiling point?")
    assert {f.doc_id for f in answer.facts} == {"coolant"}  # not the slag, a solid
    assert answer.text is not None and "whose form is liquid" in answer.text
    assert _members(rag, "What is the lowest boiling point of any solid?") == {"pellet"}


def test_a_kind_alone_is_counted(rag: HybridRAG) -> None:
    answer = rag.ask("How many liquids do we have?")
    assert {f.doc_id for f in answer.facts} == {"coolant", "etchant", "peroxide"}
    assert answer.text is not None and answer.text.startswith("3 ")


def test_a_comma_before_three_digits_groups_a_temperatures_thousands(rag: HybridRAG) -> None:
    # "2,230 °C" is 2230 °C, not 2.23
    assert _members(rag, "Which part has the highest boiling point?") == {"slag"}
    assert _members(rag, "Which part has the lowest boiling point?") == {"etchant"}


def test_a_bound_in_another_unit_is_converted(rag: HybridRAG) -> None:
    assert _members(rag, "Which parts have a vapour pressure above 1 kPa?") == {"etchant"}
    assert _members(rag, "Which parts boil above 700 K?") == {"pellet", "slag"}
    assert _members(rag, "Which parts have a boiling point below 400 °F?") == {
        "coolant",
        "etchant",
        "peroxide",
    }


def test_a_bare_density_is_on_the_scale_of_grams_per_millilitre(rag: HybridRAG) -> None:
    # a relative density prints no unit; "2.9 g/cm3" is 2.9 g/mL
    assert _members(rag, "Which parts have a density above 2 g/mL?") == {"pellet", "slag"}


def test_a_range_is_below_a_bound_only_as_a_whole(rag: HybridRAG) -> None:
    # "1.4 - 1.6" is not below 1.5; it is above 1.3
    assert _members(rag, "Which parts have a density below 1.5?") == {"coolant", "peroxide"}
    assert "etchant" in _members(rag, "Which parts have a density above 1.3?")


def test_a_bound_between_two_numbers_holds_a_range_inside_it(rag: HybridRAG) -> None:
    between = rag.ask("Which parts have a boiling point between 100 and 160 °C?")
    assert {f.doc_id for f in between.facts} == {"etchant", "peroxide"}
    assert between.text is not None and "between 100 and 160" in between.text
    assert _members(rag, "Which parts have a density between 1.3 and 1.7?") == {"etchant"}


def test_a_number_in_another_unit_of_its_scale_is_no_bare_number(rag: HybridRAG) -> None:
    # "1530 kg/m3" is 1.53 g/cm3, "33-80 lbs. / ft3" no g/cm3, "±5%" a tolerance: none is
    # above 3, nor the densest
    assert _members(rag, "Which parts have a density above 3?") == {"pellet"}
    assert _members(rag, "Which part is the densest?") == {"pellet"}


def test_a_kind_the_question_ends_on_is_read_of_a_named_set(rag: HybridRAG) -> None:
    answer = rag.ask("Which Tarvik parts are solids?")
    assert {f.doc_id for f in answer.facts} == {"pellet", "slag"}
    assert answer.text is not None and "the form solid" in answer.text


def test_whether_documents_state_a_quantity_at_all(rag: HybridRAG) -> None:
    stated = _members(rag, "Which parts state a vapour pressure?")
    assert stated == {"coolant", "etchant", "peroxide"}
    none = {"pellet", "slag", "powder", "filler", "grit"}
    assert _members(rag, "Which parts have no vapour pressure?") == none


def test_only_the_asked_property_holds_a_maker_or_a_patterned_value(rag: HybridRAG) -> None:
    # "Brass" names parts and a remark, no maker; "corrosion" is in a remark, no pictogram
    assert _members(rag, "Which parts name Brass as their manufacturer?") == set()
    assert _members(rag, "Which parts carry the corrosion pictogram?") == set()
    assert _members(rag, "Which parts carry the flame pictogram?") == {"coolant"}


def test_whether_documents_state_a_coded_value_at_all(rag: HybridRAG) -> None:
    listed = _members(rag, "Which parts list a packing grade?")
    assert listed == {"coolant", "etchant", "peroxide", "slag"}


def test_first_at_the_end_of_a_clause_is_the_earliest(rag: HybridRAG) -> None:
    assert _members(rag, "Which part was revised first?") == {"coolant"}
    assert _members(rag, "Which parts were revised in January 2023?") == {"pellet"}


def test_a_negated_comparative_is_the_other_side_and_meets_the_number(rag: HybridRAG) -> None:
    # "no higher than 150 °C" is at most 150 °C: the 150 °C oxidiser too
    answer = rag.ask("Which parts have a boiling point no higher than 150 °C?")
    assert {f.doc_id for f in answer.facts} == {"etchant", "peroxide"}
    assert answer.text is not None and "at most 150" in answer.text


def test_a_temperature_unit_in_words_is_converted(rag: HybridRAG) -> None:
    hot = _members(rag, "Which parts boil above 300 degrees Fahrenheit?")  # 148.9 °C
    assert hot == {"coolant", "peroxide", "pellet", "slag"}


def test_dates_between_two_years_span_both(rag: HybridRAG) -> None:
    revised = rag.ask("Which parts were revised between 2022 and 2023?")
    assert {f.doc_id for f in revised.facts} == {"etchant", "peroxide", "pellet"}
    assert revised.text is not None and "between 2022 and 2023" in revised.text


def test_each_constraint_of_a_question_holds_for_its_members(rag: HybridRAG) -> None:
    # a code and a bound, a code and a date span: members meet both
    assert _members(rag, "Which parts in shipping class 3 boil above 150 °C?") == {"coolant"}
    both = rag.ask("Which parts in shipping class 8 were revised in 2023?")
    assert {f.doc_id for f in both.facts} == {"etchant"}  # "5.1, 8" is class 5.1
    assert both.text is not None and "2023 and the shipping class 8" in both.text


def test_the_values_a_property_takes_across_the_collection(rag: HybridRAG) -> None:
    classes = rag.ask("What shipping classes do our parts have?")
    assert classes.text is not None
    assert classes.text.startswith("4 different shipping classes on 4 spare parts")
    assert "5.1 on 1 spare part: Oxidiser OX-3" in classes.text  # "5.1, 8": its first code
    makers = rag.ask("How many different manufacturers are there?")
    assert makers.text is not None and makers.text.startswith("3 different manufacturers")
    assert len({f.doc_id for f in makers.facts}) == 8


def test_an_extreme_asked_for_several_lists_as_many(rag: HybridRAG) -> None:
    top = rag.ask("Which two parts have the highest boiling points?")
    assert {f.doc_id for f in top.facts} == {"slag", "pellet"}
    assert top.text is not None and top.text.startswith("The 2 highest boiling points")
    # a count is no name: "2" of "Etchant ET-2" calls no set
    assert _members(rag, "Which 2 parts were revised most recently?") == {"peroxide", "etchant"}


def test_an_extreme_among_the_documents_a_constraint_keeps(rag: HybridRAG) -> None:
    # the lowest boiling point of packing grade III (the coolant's), not of every part
    lowest = rag.ask("Which part in packing grade III has the lowest boiling point?")
    assert {f.doc_id for f in lowest.facts} == {"coolant"}
    assert lowest.text is not None and "that state the packing grade III" in lowest.text


def test_a_clitic_s_names_no_set(rag: HybridRAG) -> None:
    # "What's": no name "s" that "Velmar's Foundry" holds; the brass parts are the set
    answer = rag.ask("What's the shipping class of brass?")
    assert {f.doc_id for f in answer.facts} == {"pellet", "slag"}
    assert answer.text is not None and "named 'brass'" in answer.text


NAMED = f"""
@prefix pt: <http://example.org/parts#> .
@prefix hr: <{HR}> .
@prefix owl: <http://www.w3.org/2002/07/owl#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
pt:SparePart a owl:Class ; rdfs:label "Spare part" .
pt:partName a owl:DatatypeProperty ; rdfs:label "Part name" ; rdfs:domain pt:SparePart ;
    hr:namesSubject true .
pt:synonym a owl:DatatypeProperty ; rdfs:label "Synonyms" ; rdfs:domain pt:SparePart ;
    hr:namesSubject true .
pt:weight a owl:DatatypeProperty ; rdfs:label "Weight" ; rdfs:domain pt:SparePart ;
    hr:valueKind "number" ; hr:unit "kg" .
"""


def test_a_lookup_of_a_shared_name_asks_every_document_named_so(tmp_path: Path) -> None:
    # "brass fitting": the three fittings, not the bolt whose alias in index form
    # ("Brass fitting, hexagonal") links too, nor a nut whose name only holds it
    sheets = {
        "fit-1": "Part name: Brass Fitting BF-1\nWeight: 0.3 kg\n",
        "fit-2": "Part name: Brass Fitting BF-2\nWeight: 0.3 kg\n",
        "fit-3": "Part name: Brass Fitting Long BF-3\nWeight: 0.5 kg\n",
        "bolt": "Part name: Hex Bolt HB-1\nSynonyms: Brass fitting, hexagonal\nWeight: 0.1 kg\n",
        "nut": "Part name: Nut for Brass Fitting NB-4\nWeight: 0.05 kg\n",  # for one: no fitting
    }
    with _built(tmp_path, NAMED, sheets) as r:
        answer = r.ask("What is the weight of a brass fitting?")
        assert {f.doc_id for f in answer.facts} == {"fit-1", "fit-2", "fit-3"}
        assert answer.text is not None and "named 'brass fitting'" in answer.text


def test_two_codes_each_after_its_own_label_both_hold(rag: HybridRAG) -> None:
    # class 3 alone is coolant; with packing grade II nothing, with III the coolant
    assert _members(rag, "Which parts ship as carriage class 3, packing grade III?") == {"coolant"}
    assert _members(rag, "Which parts are shipping class 3 and packing grade II?") == set()
    both = rag.ask("How many parts are in packing grade I with shipping class 8?")
    assert {f.doc_id for f in both.facts} == {"etchant"}
    assert both.text is not None and "packing grade I" in both.text and "class 8" in both.text


def test_what_and_the_documents_noun_asks_over_the_collection(rag: HybridRAG) -> None:
    assert _members(rag, "What parts do we have in packing grade III?") == {"coolant", "slag"}
    assert _members(rag, "What spare parts are made by Tarvik AB?") == {
        "pellet", "slag", "powder"
    }  # fmt: skip


def test_a_label_ending_in_y_is_asked_for_in_its_ies_plural(tmp_path: Path) -> None:
    ontology = ONTOLOGY.replace('rdfs:label "Form"', 'rdfs:label "Form" ; skos:altLabel "Body"')
    ontology = ontology.replace(
        "pt:remark a owl:DatatypeProperty",
        'pt:country a owl:DatatypeProperty ; rdfs:label "Country of origin" ; '
        'skos:altLabel "Country" ; rdfs:domain pt:SparePart .\npt:remark a owl:DatatypeProperty',
    )
    texts = {
        "a": "Part name: Gasket GA-1\nCountry: Norway\n",
        "b": "Part name: Bolt BO-2\nCountry: Chile\n",
        "c": "Part name: Washer WA-3\nCountry: Norway\n",
    }
    with _built(tmp_path, ontology, texts) as r:
        answer = r.ask("Which countries do our parts come from?")
        assert answer.text is not None and answer.text.startswith("2 different countries")
        assert "Norway on 2 spare parts" in answer.text


@pytest.mark.parametrize(
    ("question", "over"),
    [
        ("What products do we ship under UN1789?", True),
        ("What sheets list formaldehyde as a component?", True),
        ("What items does our store carry in class 8?", True),
        ("What products does acetone form when it burns?", False),  # asked of one
        ("What combustion products does the coolant give off?", False),
    ],
)
def test_what_and_a_plural_noun_asks_over_the_collection(question: str, over: bool) -> None:
    assert over_collection(question, "sheet") is over


@pytest.mark.parametrize(
    ("question", "members"),
    [
        ("Which parts were revised in the first half of 2023?", {"etchant", "pellet"}),
        ("Which parts had their revision in Q3 2023?", {"peroxide"}),
        ("Which parts were revised between January and March 2023?", {"etchant", "pellet"}),
        ("Which parts have not been revised since 2023?", {"coolant"}),
        ("Which parts were not revised after 2021?", {"coolant"}),
        ("Which part sheets are older than 2022?", {"coolant"}),
        ("Which parts were revised later than March 2023?", {"peroxide"}),
    ],
)
def test_spans_of_time_in_other_words(rag: HybridRAG, question: str, members: set[str]) -> None:
    assert _members(rag, question) == members


def test_a_denied_bound_on_a_date_is_said_as_the_other_side(rag: HybridRAG) -> None:
    answer = rag.ask("Which parts have not been revised since 2023?")
    assert answer.text is not None and "revision date before 2023" in answer.text


def test_a_named_set_with_their_values_lists_each_members_value(rag: HybridRAG) -> None:
    # not a filter on the words "revision dates": each brass part's own date, or none
    answer = rag.ask("List the brass parts with their revision dates.")
    assert {f.doc_id for f in answer.facts if f.status == "stated"} == {"pellet"}
    assert answer.text is not None and "revision date of the 2 spare parts named" in answer.text
    assert "1 spare part does not state one" in answer.text


def test_a_set_called_by_its_maker_after_the_noun(rag: HybridRAG) -> None:
    # "<noun> [made] by|from <maker>": the maker's parts only, whatever else is asked
    assert _members(rag, "Which parts from Tarvik AB were revised in 2023?") == {"pellet"}
    graded = rag.ask("Which parts made by Tarvik AB are in packing grade III?")
    assert {f.doc_id for f in graded.facts} == {"slag"}
    assert graded.text is not None and graded.text.startswith("1 of the 3 spare parts")
    # a verb after the maker's name is no kind of part: the concept words stay asked
    assert _members(rag, "Which parts supplied by Orlen Works ship as carriage class 8?") == {
        "etchant"
    }


def test_a_name_written_as_one_word_or_two_is_the_same_name(rag: HybridRAG) -> None:
    # the sheets print "Orlen Works"; people write "OrlenWorks" too
    assert _members(rag, "How many parts from OrlenWorks were revised in 2023?") == {"etchant"}
    newest = rag.ask("What is the most recently revised OrlenWorks part?")
    assert {f.doc_id for f in newest.facts} == {"etchant"}


def test_an_extreme_sorts_by_the_property_after_its_word_among_a_span(rag: HybridRAG) -> None:
    # the highest boiling point of the parts revised in 2023 (pellet), not of every part
    answer = rag.ask("What is the highest boiling point of any part revised in 2023?")
    assert {f.doc_id for f in answer.facts} == {"pellet"}
    assert answer.text is not None and answer.text.startswith("The highest boiling point")


def test_an_extreme_over_a_name_no_set_is_called_by_is_not_answered(tmp_path: Path) -> None:
    # "Halvorsen" is printed in a remark, but calls no set: the highest of all parts
    # would answer another question
    texts = {
        "a": "Part name: Gasket GA-1\nBoiling point: 120 °C\nRemark: tested by Halvorsen\n",
        "b": "Part name: Bolt BO-2\nBoiling point: 300 °C\nRemark: none\n",
    }
    with _built(tmp_path, ONTOLOGY, texts) as r:
        answer = r.ask("What is the highest boiling point of the Halvorsen parts?")
        assert answer.facts == [] and answer.abstention == "out_of_scope"
        assert answer.text is not None and "halvorsen" in answer.text.lower()
        assert {f.doc_id for f in r.ask("What is the highest boiling point?").facts} == {"b"}
