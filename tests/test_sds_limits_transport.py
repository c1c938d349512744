"""The SDS pack's reading of exposure limits no agency property holds (a maker's own, a
country's) and of transport values a second line completes (a UN number's prefix
printed under another mode, the marine pollutant's name); an umbrella property's
items said only where stated."""

from __future__ import annotations

from hybrid_rag.ask.analysis import analyse
from hybrid_rag.ask.linking import SubjectIndex
from hybrid_rag.ingest.extract import extract_offline
from hybrid_rag.models import Page
from hybrid_rag.ontology import load_ontology

ONTO = load_ontology("msds")


def _facts(text: str, prop: str) -> list[tuple[str, str]]:
    """``prop``'s values and quotes read from ``text``, after the headings of the
    sections before it (a reader follows section numbers in order)."""
    first = int(text.split()[1] if text.startswith("SECTION") else text.split(".")[0])
    lead = "".join(f"SECTION {n}: Part {n}\nSome text.\n" for n in range(3, first, 3))
    ex = extract_offline([Page(number=1, text=lead + text)], ontology=ONTO)
    return [(f.value, f.quote) for f in ex.facts if f.prop == prop]


_LIMITS = (
    "8. EXPOSURE CONTROLS / PERSONAL PROTECTION\n"
    "Control Parameters\n"
    "Quellon Pharma OEL TWA-8 Hr: 15 µg/m3\n"
    "Latvia OEL - TWA 0.3 mg/m3\n"
    "ACGIH\n"
    "TWA 10 ppm\n"
    "Dust TWA 3 mg/m3 N/A OSHA Z1\n"
    "OSHA advises for dusts not otherwise regulated a TWA of 15 mg/m3\n"
    "9. PHYSICAL AND CHEMICAL PROPERTIES\n"
)


def test_a_limit_of_an_issuer_no_property_names_is_an_occupational_exposure_limit() -> None:
    other = _facts(_LIMITS, "occupationalExposureLimit")
    assert [v for v, _q in other] == [
        "Quellon Pharma OEL TWA-8 Hr: 15 µg/m3",
        "Latvia OEL - TWA 0.3 mg/m3",
    ]
    assert all(v == q for v, q in other)  # the row as printed, issuer included
    assert [v for v, _q in _facts(_LIMITS, "acgihTlvTwa")] == ["10 ppm"]  # agency: its own
    # a row naming its agency after the value is that agency's; a sentence is no row
    assert [v for v, _q in _facts(_LIMITS, "oshaPelTwa")] == ["3 mg/m3 N/A OSHA Z1"]


def test_exposure_limits_asked_bring_the_agency_limits_as_items() -> None:
    index = SubjectIndex([("tx-1", ["Tramoxil Solution"])])
    asked = "What are the exposure limits for Tramoxil Solution?"
    broad = analyse(asked, index=index, ontology=ONTO)
    names = [p.name for p in broad.properties]
    assert names[0] == "occupationalExposureLimit"
    assert {"oshaPelTwa", "acgihTlvTwa", "nioshRelTwa"} <= broad.items <= set(names)
    narrow = analyse("What is the OSHA PEL of Tramoxil Solution?", index=index, ontology=ONTO)
    assert [p.name for p in narrow.properties] == ["oshaPelTwa"] and not narrow.items


_TRANSPORT = (
    "SECTION 14  TRANSPORT INFORMATION\n"
    "LAND (DOT)\n"
    "ID Number:   2211\n"
    "Packing Group:   III\n"
    "SEA (IMDG)\n"
    "UN Number:   2211\n"
    "Marine pollutant   : yes\n"
    "Dimethyl octenyl acetate\n"
    "EmS Number : F-E\n"
    "SECTION 15  REGULATORY INFORMATION\n"
)


def test_bare_id_digits_take_the_un_prefix_the_sheet_prints_for_them() -> None:
    assert _facts(_TRANSPORT, "unNumber") == [("UN2211", "ID Number:   2211")]
    later = _TRANSPORT.replace("ID Number:   2211", "ID Number:   1993")
    assert _facts(later, "unNumber")[0] == ("1993", "ID Number:   1993")  # other digits: as printed
    first = (  # the UN label first, the bare digits after it
        "SECTION 14  TRANSPORT INFORMATION\nIATA\nUN Number: 3082\nADR\nID Number: 3082\n"
    )
    assert _facts(first, "unNumber") == [("UN3082", "UN Number: 3082")]


def test_the_name_under_marine_pollutant_yes_joins_the_value() -> None:
    value, quote = _facts(_TRANSPORT, "marinePollutant")[0]
    assert value == "yes (Dimethyl octenyl acetate)"
    assert quote == "Marine pollutant   : yes\nDimethyl octenyl acetate"  # verbatim, both lines
    label_below = _TRANSPORT.replace("Dimethyl octenyl acetate\n", "Segregation group\n: None\n")
    assert [v for v, _q in _facts(label_below, "marinePollutant")] == ["yes"]
    said_no = _TRANSPORT.replace(": yes", ": no")
    assert [v for v, _q in _facts(said_no, "marinePollutant")] == ["no"]


_SHEET = (
    "Safety Data Sheet\n"
    "SECTION 1: Identification\nProduct name: Tramoxil Solution\n"
    "SECTION 3: Composition\nTramoxil 5 %\n"
    "SECTION 5: Fire-fighting measures\nUse foam.\n"
    "SECTION 7: Handling and storage\nKeep cool.\n"
    "SECTION 8: Exposure controls/personal protection\n"
    "{own}"
    "OSHA\n"
    "TWA 5 mg/m3\n"
    "SECTION 9: Physical and chemical properties\nAppearance: clear liquid\n"
)


def test_an_umbrella_answer_says_its_stated_items_and_no_unstated_one() -> None:
    from hybrid_rag import HybridRAG

    asked = "What are the exposure limits for Tramoxil Solution?"
    with HybridRAG(embedder="hashing") as rag:
        own = "Quellon Pharma OEL TWA-8 Hr: 15 µg/m3\n"
        rag.ingest(_SHEET.format(own=own).encode(), name="t.txt")
        text = rag.ask(asked).text or ""
    assert "Quellon Pharma OEL TWA-8 Hr: 15 µg/m3" in text and "5 mg/m3" in text
    assert "not stated" not in text  # no "ACGIH TLV STEL is not stated ..." per item
    with HybridRAG(embedder="hashing") as rag:
        rag.ingest(_SHEET.format(own="").encode(), name="t.txt")
        text = rag.ask(asked).text or ""
    assert "OSHA PEL TWA 5 mg/m3" in text and "not stated" not in text  # the umbrella too


_STORAGE = (
    "7. Handling and storage\n"
    "Conditions for safe storage, including any incompatibilities\n"
    "Keep apart from oxidisers.\n"
    "\n"
    "Suitable materials for containers: stainless steel, glass\n"
    "Unsuitable containers/packing: copper, brass\n"
    "\n"
    "More advice on storage conditions: Keep out of the sun. Store below 25 °C.\n"
    "Storage stability:\n"
    "Skin IF ON SKIN: Rinse with water.\n"
    "8. Exposure controls\n"
)


def test_a_procedure_after_lead_in_words_and_the_container_materials() -> None:
    storage = [v for v, _q in _facts(_STORAGE, "storageConditions")]
    assert storage == ["Keep apart from oxidisers.", "Keep out of the sun. Store below 25 °C."]
    quote = _facts(_STORAGE, "storageConditions")[1][1]
    assert quote.startswith("More advice on storage conditions:")  # the line as printed
    assert [v for v, _q in _facts(_STORAGE, "suitableContainerMaterials")] == [
        "stainless steel, glass"
    ]
    assert [v for v, _q in _facts(_STORAGE, "unsuitableContainerMaterials")] == ["copper, brass"]
    assert _facts(_STORAGE, "firstAidSkin") == []  # a later section's item: no lead-in reading


def test_container_materials_asked_bring_both_kinds() -> None:
    index = SubjectIndex([("tx-1", ["Tramoxil Solution"])])
    a = analyse("Which container materials suit Tramoxil Solution?", index=index, ontology=ONTO)
    assert {"suitableContainerMaterials", "unsuitableContainerMaterials"} <= a.items


def _composition_sheet(name: str, rows: str) -> bytes:
    return (
        f"Safety Data Sheet\nSECTION 1: Identification\nProduct name: {name}\n"
        f"SECTION 2: Hazards identification\nFlammable liquid.\n"
        f"SECTION 3: Composition/information on ingredients\n{rows}"
        "SECTION 4: First-aid measures\nRinse with water.\n"
    ).encode()


def test_which_sheets_with_a_document_named_by_the_value_asks_over_all() -> None:
    """ "Which sheets have X as a component?" where one sheet is named X: a question over
    every sheet (the documents' own noun in the plural), never that one sheet's lookup."""
    from hybrid_rag import HybridRAG

    with HybridRAG(embedder="hashing") as rag:
        rag.ingest(_composition_sheet("Norvane", "Norvane 142-82-5 >99%\n"), name="nv.txt")
        rows = "Dexol thinner 64742-48-9 60-80%\nNorvane 142-82-5 10-20%\n"
        rag.ingest(_composition_sheet("Dexol Thinner Blend", rows), name="dx.txt")
        answer = rag.ask("Which sheets have Norvane as a component?")
    assert {f.doc_id for f in answer.facts} == {"nv", "dx"}, answer.text


def test_a_mode_heading_that_says_not_regulated_is_the_un_numbers_value() -> None:
    # "DOT (US) Not regulated." (no "UN number" label) says the sheet ships unregulated
    free = "14. TRANSPORT INFORMATION\nDOT (US) Not regulated.\nIMDG Not regulated.\n"
    assert [v for v, _q in _facts(free, "unNumber")] == ["Not regulated."]
    dangerous = "14. TRANSPORT INFORMATION\nDOT (US)\nUN-No UN1789\nHazard Class 8\n"
    assert {v for v, _q in _facts(dangerous, "unNumber")} <= {"UN1789", "UN-No UN1789"}
    # "not regulated" only in bulk: the number it ships under otherwise is the value
    bulk = (
        "14. TRANSPORT INFORMATION\nDOT (US) COMBUSTIBLE LIQUID, NOT REGULATED FOR TRANSPORT IN"
        " NON-BULK\nUN-No NA1993\n"
    )
    assert [v for v, _q in _facts(bulk, "unNumber")] == ["NA1993"]
