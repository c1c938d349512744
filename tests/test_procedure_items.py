"""Procedures read from a sheet's own section when the graph holds none: the asked
section only, never an item labelled as another property, quoted to its end; irregular
verbs and a topic spelt out in brackets link their property."""

from __future__ import annotations

from hybrid_rag.ask.analysis import analyse
from hybrid_rag.ask.answer import compose_extractive
from hybrid_rag.ask.linking import SubjectIndex
from hybrid_rag.models import Passage
from hybrid_rag.ontology import load_ontology

ONTOLOGY = load_ontology("msds")
INDEX = SubjectIndex([("pear-7", ["Pear Essence 7Q"]), ("resin-x", ["Korvex Resin 40"])])


def _names(question: str) -> list[str]:
    return [p.name for p in analyse(question, index=INDEX, ontology=ONTOLOGY).properties]


def test_an_irregular_participle_links_like_its_base() -> None:
    assert "firefightingProtection" in _names("How is a fire involving Korvex Resin 40 fought?")


def test_a_topic_spelt_out_in_brackets_names_its_property() -> None:
    asked = "What does the sheet say about the long-term picture of Korvex Resin 40"
    assert _names(f"{asked}?") == []  # "picture": no property
    assert "carcinogenicity" in _names(f"{asked} (carcinogenicity)?")


_SPILL_PAGE = (
    "5. FIRE FIGHTING MEASURES\n"
    ":Extinguishing Media Use foam.\n"
    "6. ACCIDENTAL RELEASE MEASURES\n"
    ":Personal Protection Wear goggles near large spills and spills indoors, and spills\n"
    "in closed rooms.\n"
    "Maker PEARCO (PCO) 12 Some Street, phone 555 0101 PCO\n"
)
_SPILL_NEXT = (
    "Product : Pear Essence 7Q\n"
    "6. ACCIDENTAL RELEASE MEASURES\n"
    ":Procedures Shut off sources of sparks. Dike the spill and pump it back. Soak up the\n"
    "rest with sand.\n"
    "7. HANDLING AND STORAGE\n"
    ":Handling Procedures Shoes must be cleaned after work.\n"
)


def test_a_spill_procedure_is_read_from_its_own_item_and_section() -> None:
    a = analyse(
        "How is a spill of Pear Essence 7Q (PCO) cleaned up?", index=INDEX, ontology=ONTOLOGY
    )
    assert a.intent == "procedure" and a.sections == (6,)
    passages = [
        Passage(
            doc_id="pear-7",
            page=2,
            chunk_id="c2",
            text=_SPILL_PAGE,
            score=0.0,
            ranks={"section": 1},
        ),
        Passage(
            doc_id="pear-7",
            page=3,
            chunk_id="c3",
            text=_SPILL_NEXT,
            score=0.0,
            ranks={"section": 2},
        ),
    ]
    got = compose_extractive(a, [], passages)
    assert got.text is not None
    assert "Dike the spill" in got.text and "sand" in got.text
    assert "goggles" not in got.text and "Shoes" not in got.text and "PEARCO" not in got.text


def test_a_procedure_runs_on_to_the_list_under_it() -> None:
    text = (
        "4 First-aid measures\n"
        "After swallowing Rinse mouth.\n"
        "5 Fire-fighting measures\n"
        "Suitable extinguishing agents Foam or sand. Fight big fires with foam from afar.\n"
        "Special hazards arising from the substance or mixture\n"
        "In a fire this product can release:\n"
        "Sulfur oxides\n"
        "Hydrogen bromide\n"
        "6 Accidental release measures\n"
        "Sweep up.\n"
    )
    a = analyse("How should a fire of Korvex Resin 40 be fought?", index=INDEX, ontology=ONTOLOGY)
    p = Passage(doc_id="resin-x", page=2, chunk_id="r2", text=text, score=0.0, ranks={"section": 1})
    got = compose_extractive(a, [], [p])
    assert got.text is not None
    assert (
        "Hydrogen bromide" in got.text and "Rinse mouth" not in got.text and "Sweep" not in got.text
    )
