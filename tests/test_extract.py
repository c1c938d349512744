from __future__ import annotations

from pathlib import Path

import pytest

from hybrid_rag.ingest.extract import (
    ExtractedFact,
    Extraction,
    extract_offline,
    parse_quantity,
)
from hybrid_rag.models import Chunk, Page
from hybrid_rag.ontology import load_ontology
from hybrid_rag.packs.sds._reader import _formula_name
from hybrid_rag.protocols import Ontology

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "sds"

LABALLEY_P1 = """Laballey.com Page 1 of 11
www.laballey.com
512-668-9918
Acetone, HPLC Grade
SAFETY DATA SHEET
SECTION 1: Identification of the substance/mixture and of the company/undertaking
1.1 Product identifiers
Product name Acetone
CAS number 67-64-1
Synonyms Dimethyl ketone; 2-Propanone; Methyl ketone
1.2 Relevant identified uses of the substance or mixture and uses advised against
Identified uses Laboratory chemicals.
1.4 Emergency telephone
Emergency Phone # US & Canada: 1-800-535-5053 INFOTRAC
SECTION 2: Hazards identification
2.1 Classification of the substance or mixture
GHS Classification in accordance with 29 CFR 1910 (OSHA HCS)
Serious Eye Damage/Eye Irritation Category 2A
Flammable Liquids Category 2
Specific Target Organ Toxicity - repeated exposure Category 2
       Target Organ(s) - Kidney, Liver
"""
LABALLEY_P2 = """Laballey.com Page 2 of 11
Signal Word
Danger
SECTION 5: Firefighting measures
Flash Point -20 °C / -4 °F (Closed cup)
Autoignition Temperature No information available.
SECTION 8: Exposure controls/personal protection
US. OSHA Table Z-1 Limits for Air Contaminants (29 CFR 1910.1000)
Component Type Value
Acetone
(Vacated) TWA 750 ppm 1800 mg/m3
TWA 1000 ppm 2400 mg/m3
US. ACGIH Threshold Limit Values
STEL 500 ppm
SECTION 9: Physical and chemical properties
Odor Sweet, Alcohol-like
Odor Threshold No information available
pH 11-13
Boiling Point/Range 170.6 °F (77 °C)
Melting Point/Range 109.6°F
Molecular Formula C3H6O
Autoignition Temp 465 °C (869°F)
SECTION 14: Transport information
UN-no UN1090
Hazard Class 3
Packing Group II
"""
# libman sheets: split words, "LABEL :" separators, trailing spaces
LIBMAN_P1 = "  \n".join(
    [
        "SAFETY DATA SHEET",
        "The Libman C ompany                LIBMAN TOILET BOWL CLEANER ITEM # 2070",
        "SECTION 1 . PRODUCT IDENTIFICATION",
        "1.1 TRADE NAME (AS LABELED) :       Libman Toilet Bowl Cleaner  I tem #2 070",
        "SYNONYMS :   N/A",
        "1.4 EMERGENCY PHONE NUMBERS :      1 - 877 - 818 - 3380",
        "SECTION 2. HAZARD IDENTIFICATION",
        "Signal Word:  Danger",
        "Serious Eye  Irritation  Cat egory 2 A",
        "H31 6 : Causes mild skin  irritation",
        " pH:  8 - 9.5",
        " AUTO - IGNITION TEMPERATURE: Not A vailable",
        " RE LATIVE DENSITY: Not Available",
    ]
)


@pytest.fixture(scope="module")
def onto() -> Ontology:
    return load_ontology("msds")


def _pages(*texts: str) -> list[Page]:
    return [Page(number=i + 1, text=t) for i, t in enumerate(texts)]


def _one(ex: Extraction, prop: str) -> ExtractedFact:
    found = [f for f in ex.facts if f.prop == prop]
    assert found, f"no {prop} in {[f.prop for f in ex.facts]}"
    return found[0]


@pytest.fixture(scope="module")
def laballey(onto: Ontology) -> Extraction:
    return extract_offline(_pages(LABALLEY_P1, LABALLEY_P2), ontology=onto)


def test_every_quote_is_verbatim(laballey: Extraction) -> None:
    texts = {1: LABALLEY_P1, 2: LABALLEY_P2}
    assert laballey.facts
    for f in laballey.facts:
        assert f.quote in texts[f.page], f


def test_product_name_and_aliases(laballey: Extraction) -> None:
    assert laballey.subject == "Acetone, HPLC Grade"
    assert "Acetone" in laballey.aliases and "2-Propanone" in laballey.aliases
    assert laballey.warnings == ()


def test_temperatures_are_typed_in_celsius(laballey: Extraction) -> None:
    fp = _one(laballey, "flashPoint")
    assert fp.value == "-20 °C / -4 °F (Closed cup)"
    assert fp.quote == "Flash Point -20 °C / -4 °F (Closed cup)"
    assert (fp.number, fp.unit, fp.page) == (-20.0, "°C", 2)
    assert _one(laballey, "boilingPoint").number == 77.0
    assert _one(laballey, "meltingPoint").number == pytest.approx(43.11, abs=0.01)


def test_stated_value_beats_unavailable(laballey: Extraction) -> None:
    # section 5 says "No information available", section 9 "465 °C": the value is what a
    # lookup reads; the denial of a quantity is kept beside it (a bound or an extreme
    # over many documents does not rest on a value its document denies)
    ai = [f for f in laballey.facts if f.prop == "autoignitionTemperature"]
    assert [(f.status, f.number) for f in ai if f.status == "stated"] == [("stated", 465.0)]
    assert [f.status for f in ai if f.status != "stated"] == ["unavailable"]
    ot = _one(laballey, "odorThreshold")
    assert ot.status == "unavailable" and ot.value == "No information available"


def test_identifiers_and_text(laballey: Extraction) -> None:
    assert _one(laballey, "unNumber").value == "UN1090"
    assert _one(laballey, "hazardClass").value == "3"
    assert _one(laballey, "packingGroup").value == "II"
    assert _one(laballey, "casNumber").value == "67-64-1"
    assert _one(laballey, "odor").value == "Sweet, Alcohol-like"
    assert _one(laballey, "molecularFormula").value == "C3H6O"
    assert "1-800-535-5053" in _one(laballey, "emergencyPhone").value
    ph = _one(laballey, "pH")
    assert (ph.value, ph.number) == ("11-13", 11.0)  # range: lower bound


def test_value_on_next_line(laballey: Extraction) -> None:
    sw = _one(laballey, "signalWord")
    assert sw.value == "Danger" and sw.quote == "Signal Word\nDanger"


def test_numbered_subsection_titles_are_not_values(laballey: Extraction) -> None:
    uses = [f.value for f in laballey.facts if f.prop == "recommendedUse"]
    assert uses == ["Laboratory chemicals."]


def test_classifications_and_organs(laballey: Extraction) -> None:
    labels = [f.object_label for f in laballey.facts if f.prop == "hasClassification"]
    assert "Flammable Liquids Category 2" in labels
    assert "Serious Eye Damage/Eye Irritation Category 2A" in labels
    assert all(
        f.object_class == "HazardClassification"
        for f in laballey.facts
        if f.prop == "hasClassification"
    )
    organs = {f.object_label for f in laballey.facts if f.prop == "hasTargetOrgan"}
    assert organs == {"Kidney", "Liver"}


def test_exposure_limits_by_agency(laballey: Extraction) -> None:
    osha = _one(laballey, "oshaPelTwa")
    assert (osha.number, osha.unit) == (1000.0, "ppm")  # vacated limit skipped
    assert _one(laballey, "acgihTlvStel").number == 500.0


def test_libman_split_words(onto: Ontology) -> None:
    ex = extract_offline(_pages(LIBMAN_P1), ontology=onto)
    assert ex.subject == "Libman Toilet Bowl Cleaner"
    assert _one(ex, "signalWord").value == "Danger"
    assert _one(ex, "emergencyPhone").value == "1 - 877 - 818 - 3380"
    assert _one(ex, "autoignitionTemperature").status == "unavailable"
    assert _one(ex, "relativeDensity").status == "unavailable"
    assert _one(ex, "synonym").status == "unavailable"
    assert _one(ex, "pH").number == 8.0
    cls = _one(ex, "hasClassification")
    assert cls.object_label == "Serious Eye Irritation Category 2A"
    h = _one(ex, "hasHazardStatement")
    assert h.object_label is not None and h.object_label.startswith("H316")
    for f in ex.facts:
        assert f.quote in LIBMAN_P1


def test_chunk_ids_cover_quotes(onto: Ontology) -> None:
    text = LABALLEY_P2
    cut = text.index("SECTION 9")
    chunks = [
        Chunk(chunk_id="c1", doc_id="d", page=1, start=0, end=cut, text=text[:cut]),
        Chunk(chunk_id="c2", doc_id="d", page=1, start=cut, end=len(text), text=text[cut:]),
    ]
    ex = extract_offline(_pages(text), ontology=onto, chunks=chunks)
    assert _one(ex, "flashPoint").chunk_id == "c1"
    assert _one(ex, "unNumber").chunk_id == "c2"


def test_fallback_name_from_source(onto: Ontology) -> None:
    ex = extract_offline(
        _pages("nothing useful here"),
        ontology=onto,
        source_name="laballey/sodium-chloride-10-solution-6732361021b8a.pdf",
    )
    assert ex.subject == "Sodium Chloride 10 Solution"
    assert any("no name found" in w for w in ex.warnings)
    assert extract_offline([], ontology=onto).subject == "Untitled document"


@pytest.mark.parametrize(
    ("value", "kind", "unit", "expected"),
    [
        ("463°C (867°F)", "temperature", "°C", (463.0, "°C")),
        ("109.6°F (43.1°C)", "temperature", "°C", (43.1, "°C")),
        (">= 100 °C", "temperature", "°C", (100.0, "°C")),
        ("2 - 8 °C", "temperature", "°C", (2.0, "°C")),
        ("212 °F", "temperature", "°C", (100.0, "°C")),
        # another quantity first: the temperature is its condition, no value of this one
        ("120 hPa (50°C)", "temperature", "°C", (None, None)),
        ("3.2 kPa at 20 °C", "temperature", "°C", (None, None)),
        ("> 13", "range", None, (13.0, None)),
        ("245.3 hPa (184.0 mmHg) at 20.0 °C", "number", "mmHg", (184.0, "mmHg")),
        ("5 ppm 9 mg/m3", "number", "ppm", (5.0, "ppm")),
        ("Soluble", "text", None, (None, None)),
    ],
)
def test_parse_quantity(
    value: str, kind: str, unit: str | None, expected: tuple[float | None, str | None]
) -> None:
    assert parse_quantity(value, kind=kind, unit=unit) == expected


# ---------------------------------------------------------------- real corpus

CORPUS_DOCS = {
    "laballey/acetone-hplc-grade-6732361021b8a.pdf": {
        "flashPoint": "-20 °C / -4 °F (Closed cup)",
        "unNumber": "UN1090",
        "signalWord": "Danger",
    },
    "laballey/hydrofluoric-acid-49-solution-electroniccleanroom-grade-673b6a82d80db.pdf": {
        "unNumber": "UN1790",
    },
    "laballey/acetic-acid-glacial-99-lab-grade-673759a3b2c08.pdf": {
        "autoignitionTemperature": "463°C (867°F)",
    },
    "libman/aire_master_libman_toilet_bowl_cleaner_ghs_sds_09_01_2023.pdf": {
        "signalWord": "Danger",
    },
}


def _load_pdf(path: Path) -> list[Page]:
    import pypdf

    reader = pypdf.PdfReader(str(path))
    return [Page(number=i + 1, text=p.extract_text() or "") for i, p in enumerate(reader.pages)]


@pytest.mark.skipif(not CORPUS.is_dir(), reason=f"SDS corpus not present at {CORPUS}")
def test_real_corpus_sample(onto: Ontology) -> None:
    sample = sorted(CORPUS.glob("laballey/*.pdf"))[:4] + sorted(CORPUS.glob("libman/*.pdf"))[:3]
    paths = {CORPUS / rel for rel in CORPUS_DOCS} | set(sample)
    assert len(paths) >= 10
    for path in sorted(paths):
        pages = _load_pdf(path)
        ex = extract_offline(pages, ontology=onto, source_name=path.name)
        texts = {p.number: p.text for p in pages}
        for f in ex.facts:
            assert f.quote in texts[f.page], (path.name, f)
        rel = path.relative_to(CORPUS).as_posix()
        for prop, want in CORPUS_DOCS.get(rel, {}).items():
            assert want in [f.value for f in ex.facts if f.prop == prop], (rel, prop)
        if rel.startswith("laballey/acetone-hplc"):
            fp = _one(ex, "flashPoint")
            assert fp.number == -20.0 and fp.page == 4
            assert ex.subject == "Acetone, HPLC Grade"


SECTIONS_P1 = """Laballey.com Page 1 of 3
SECTION 1: Identification
Emergency Phone # US & Canada: 1-800-535-5053 INFOTRAC
International 1-352-323-3500 INFOTRAC
SECTION 2: Hazards identification
Hazard statements Highly flammable liquid and vapor.
Harmful if swallowed.
Precautionary statements
IF INHALED: Remove person to fresh air.
SECTION 3: Composition
Chemical name CAS number EC number Concentration
SECTION 4: First aid measures
4.1 Description of first-aid measures
If inhaled Remove victim to fresh air and keep at rest in a position comfortable for
breathing. Call a poison center.
In case of skin contact                     :Take off immediately all contaminated clothing.
Rinse skin with water.
In case of eye contact                      :Immediately flush eyes with plenty of water.
If swallowed Rinse mouth.
4.2 Most important symptoms and effects, both acute and delayed
Nausea, vomiting.
SECTION 5: Firefighting measures
5.2 Specific hazards arising from the substance or mixture
"""
SECTIONS_P2 = """Laballey.com Page 2 of 3
Vapors may form explosive mixtures with air.
5.3 Special protective equipment and precautions for firefighters
Wear self-contained breathing apparatus.
SECTION 6: Accidental release measures
6.3 Methods and materials for containment and cleaning up
Absorb with sand. Place into a container for disposal.
SECTION 7: Handling and storage
7.1 Precautions for safe handling
Avoid contact with eyes.
7.2 Conditions for safe storage, including any incompatibilities
Store in a cool place. Keep at 2-8 °C.
SECTION 9: Physical and chemical properties
Appearance Clear, colorless liquid
Color No information available
SECTION 11: Toxicological information
Acute toxicity
Component LD50 Oral LD50 Dermal LC50 Inhalation
Acetonitrile 617 mg/kg - 3587 ppm, 4h
SECTION 13: Disposal considerations
13.1 Waste Disposal Methods
Dispose of in accordance with local regulations.
SECTION 15: Regulatory information
CERCLA Hazardous Substance List (40 CFR 302.4)
Listed, Acetonitrile (CAS #75-05-8), RQ: 5000 lb.
California Proposition 65
Not listed.
"""


@pytest.fixture(scope="module")
def sections(onto: Ontology) -> Extraction:
    return extract_offline(_pages(SECTIONS_P1, SECTIONS_P2), ontology=onto)


def test_first_aid_is_split_by_route(sections: Extraction) -> None:
    inh = _one(sections, "firstAidInhalation")
    assert inh.value == (
        "Remove victim to fresh air and keep at rest in a position comfortable for "
        "breathing. Call a poison center."
    )  # a wrapped line in lower case continues; the "IF INHALED" of section 2 is no route
    assert inh.page == 1 and inh.quote.startswith("If inhaled") and inh.quote in SECTIONS_P1
    assert _one(sections, "firstAidSkin").value == (
        "Take off immediately all contaminated clothing. Rinse skin with water."
    )
    assert _one(sections, "firstAidEyes").value == "Immediately flush eyes with plenty of water."
    assert _one(sections, "firstAidIngestion").value == "Rinse mouth."
    assert _one(sections, "symptoms").value == "Nausea, vomiting."


def test_procedures_are_cut_at_the_next_item(sections: Extraction) -> None:
    # a heading at the end of a page continues on the next page (without its header line)
    spec = _one(sections, "specificHazards")
    assert (spec.value, spec.page) == ("Vapors may form explosive mixtures with air.", 2)
    assert (
        _one(sections, "firefightingProtection").value == "Wear self-contained breathing apparatus."
    )
    assert _one(sections, "spillCleanup").value.startswith("Absorb with sand.")
    assert _one(sections, "handlingPrecautions").value == "Avoid contact with eyes."
    assert _one(sections, "storageConditions").value == "Store in a cool place. Keep at 2-8 °C."
    assert (
        _one(sections, "disposalMethods").value
        == "Dispose of in accordance with local regulations."
    )
    assert _one(sections, "hazardStatement").value == (
        "Highly flammable liquid and vapor. Harmful if swallowed."
    )
    texts = {1: SECTIONS_P1, 2: SECTIONS_P2}
    assert all(f.quote in texts[f.page] for f in sections.facts)


def test_values_printed_inside_other_lines_are_found(sections: Extraction) -> None:
    temp = _one(sections, "storageTemperature")
    assert (temp.value, temp.number, temp.unit) == ("Keep at 2-8 °C.", 2.0, "°C")
    assert temp.quote == _one(sections, "storageConditions").quote
    colour = [f for f in sections.facts if f.prop == "color"]
    assert [(f.status, f.value) for f in colour] == [("stated", "Clear, colorless liquid")]


def test_toxicity_table_and_regulatory_lines(sections: Extraction) -> None:
    oral = _one(sections, "ld50Oral")
    assert (oral.value, oral.number, oral.unit) == ("617 mg/kg", 617.0, "mg/kg")
    assert oral.quote == "Acetonitrile 617 mg/kg - 3587 ppm, 4h"
    assert not [f for f in sections.facts if f.prop == "ld50Dermal"]  # "-": not stated
    assert _one(sections, "lc50Inhalation").value == "3587 ppm, 4h"
    assert _one(sections, "cerclaStatus").value.startswith("Listed, Acetonitrile")
    assert _one(sections, "prop65").value == "Not listed."
    intl = _one(sections, "emergencyPhoneInternational")
    assert intl.value == "1-352-323-3500 INFOTRAC"
    assert "535-5053" in _one(sections, "emergencyPhone").value


def test_a_range_before_the_unit_keeps_its_lower_bound() -> None:
    assert parse_quantity("3500 - 4700 mg/kg (Rat)", kind="number", unit="mg/kg") == (
        3500.0,
        "mg/kg",
    )
    assert parse_quantity("617 mg/kg", kind="number", unit="mg/kg") == (617.0, "mg/kg")


PPE_PAGE = """SECTION 1: Identification
SECTION 4: First-aid measures
SECTION 7: Handling and storage
SECTION 8: Exposure controls/personal protection
8.2 Exposure controls
Personal protective equipment
Eye/face protection
Chemical goggles are recommended.
Skin protection
Wear appropriate chemical resistant gloves. Laminate gloves are recommended.
Other suitable gloves can be recommended by the glove supplier. Be aware that
the liquid may penetrate the gloves.
Body Protection
Flame retardant antistatic protective clothing.
Respiratory protection
If engineering controls do not maintain airborne concentrations below limits, an approved
respirator must be worn.
Respirator type: Chemical respirator with organic vapor cartridge.
Control of environmental exposure
Do not allow product to enter drains.
"""


def test_protective_equipment_is_read_whole_and_gloves_from_skin_protection(
    onto: Ontology,
) -> None:
    ex = extract_offline(_pages(PPE_PAGE), ontology=onto)
    skin = [f.value for f in ex.facts if f.prop == "skinProtection"]
    assert skin[0].startswith("Wear appropriate chemical resistant gloves.")
    assert skin[0].endswith("the liquid may penetrate the gloves.")
    assert skin[1] == "Flame retardant antistatic protective clothing."  # body protection
    hand = _one(ex, "handProtection")  # no line of its own: the glove sentences of skin
    assert hand.value == (
        "Wear appropriate chemical resistant gloves. Laminate gloves are recommended. "
        "Other suitable gloves can be recommended by the glove supplier."
    )
    assert hand.quote in PPE_PAGE
    resp = _one(ex, "respiratoryProtection").value
    assert "approved respirator must be worn" in resp and "organic vapor cartridge" in resp
    assert _one(ex, "eyeProtection").value == "Chemical goggles are recommended."


def test_emergency_response_provider_labels_the_emergency_number(onto: Ontology) -> None:
    page = "1. Identification\nProduct Name Sodium carbonate\nInfoTrac: 800-535-5053\n"
    assert (
        "800-535-5053" in _one(extract_offline(_pages(page), ontology=onto), "emergencyPhone").value
    )


def test_identifier_glued_to_the_next_column_is_cut_at_its_end(onto: Ontology) -> None:
    page = "1. Identification\nProduct Name Sodium carbonate\nInfoTrac: 800-535-5053Lab Alley LLC\n"
    fact = _one(extract_offline(_pages(page), ontology=onto), "emergencyPhone")
    assert fact.value == "800-535-5053" and fact.quote in page


def test_product_name_without_column_labels_and_never_a_placeholder(onto: Ontology) -> None:
    two_columns = (
        "SAFETY DATA SHEET (SDS)\nSection 1: Identification\n"
        "Product Name Shine Glass & Mirror Cleaner Company\nProduct number 1493 The Cleaning Co\n"
    )
    ex = extract_offline(_pages(two_columns), ontology=onto)
    assert ex.subject == "Shine Glass & Mirror Cleaner"
    assert "Shine Glass & Mirror Cleaner Company" not in ex.aliases
    empty = (
        "1.1 Product identifiers\nProduct name\nSynonyms None.\nSECTION 1: Identification\nNone.\n"
    )
    named = extract_offline(
        _pages(empty), ontology=onto, source_name="potassium-phosphate-monobasic-66b39ece21cd5.pdf"
    )
    assert named.subject == "Potassium Phosphate Monobasic"
    assert "None" not in named.aliases


def test_a_sentence_under_the_section_heading_is_no_title(onto: Ontology) -> None:
    page = (
        "Safety Data Sheet\n1.1. Product Identifier\nTrade Name or Designation:\n"
        "Indigo Stock Solution\n  SECTION 1: Identification\n"
        "For the full text of the Hazard and Precautionary Statements listed below, see "
        "Section 16.\n"
    )
    assert extract_offline(_pages(page), ontology=onto).subject == "Indigo Stock Solution"


@pytest.mark.parametrize(
    ("printed", "name"),
    [
        ("H2SO4", "H2SO4"),
        ("K N O3", "KNO3"),
        ("C10 H12 O2", "C10H12O2"),
        ("CoN2O6 . 6 H2O", "CoN2O6"),  # water of hydration left out
        ("NaOH", "NaOH"),
        ("Mixture", None),
        ("(C6 H10 O5)n", None),
        ("MW", None),  # not element symbols
        ("Na", None),  # one bare symbol is no name
    ],
)
def test_a_printed_molecular_formula_becomes_a_product_name(printed: str, name: str | None) -> None:
    assert _formula_name(printed) == name


def test_numbered_revisions_keep_the_latest(onto: Ontology) -> None:
    page = (
        "SECTION 16: Other information\nIssue date: 08/08/2018\nRevision 1: 08/01/2023\n"
        "Revision 2: 11/12/2024\nSECTION 17: Disclaimer\n"
    )
    ex = extract_offline(_pages(page), ontology=onto)
    revision = _one(ex, "revisionDate")
    assert revision.value == "11/12/2024" and revision.quote in page
    assert [f.prop for f in ex.facts].count("revisionDate") == 1
    assert _one(ex, "issueDate").value == "08/08/2018"


SECTIONS_2_AND_4 = (
    "SECTION 2: Hazard(s) identification\nResponse\nSkin\n"
    "IF ON SKIN (or hair): Take off immediately all contaminated clothing. Rinse skin\n"
    "Brush off loose particles from skin. Immerse in cool water\nEyes\n"
    "IF IN EYES: Rinse cautiously with water for several minutes.\n"
    "IF SWALLOWED: Rinse mouth. Do NOT induce vomiting.\n"
    "Fire: In case of fire: Use CO2, dry chemical, or foam for extinction\n"
    "SECTION 3: Composition/information on ingredients\n"
    "SECTION 4: First-aid measures\n"
    "Skin Contact Wash off immediately with plenty of water for at least 15 minutes.\n"
    "Eye Contact Rinse immediately with plenty of water.\n"
    "SECTION 5: Firefighting measures\n"
)


def test_hazard_section_response_statements_are_first_aid_after_section_4(
    onto: Ontology,
) -> None:
    ex = extract_offline(_pages(SECTIONS_2_AND_4), ontology=onto)
    skin = [f.value for f in ex.facts if f.prop == "firstAidSkin"]
    assert skin[0].startswith("Wash off immediately")  # the first-aid section's own text first
    assert "Brush off loose particles" in skin[1] and "Eyes" not in skin[1]
    eyes = [f.value for f in ex.facts if f.prop == "firstAidEyes"]
    assert eyes[0].startswith("Rinse immediately") and eyes[1].startswith("Rinse cautiously")
    swallowed = [f.value for f in ex.facts if f.prop == "firstAidIngestion"]
    assert swallowed == ["Rinse mouth. Do NOT induce vomiting."]  # "Fire:" starts another group
    for f in ex.facts:
        assert f.quote in SECTIONS_2_AND_4


@pytest.mark.parametrize(
    ("printed", "mmhg"),
    [
        ("24 mmHg @ 20 °C", 24.0),
        ("104 mbar @ 20 °C", 78.0064),
        ("3.6 hPa", 2.7002),
        ("0.129 kPa", 0.9676),
        ("1.3 mm Hg", 1.3),
        ("No data available", None),
    ],
)
def test_a_pressure_in_another_unit_is_stored_in_the_canonical_one(
    printed: str, mmhg: float | None
) -> None:
    number, unit = parse_quantity(printed, kind="number", unit="mmHg")
    assert number == mmhg and unit == (None if mmhg is None else "mmHg")


def _named(texts: list[str], source: str = "sheet_7.pdf") -> Extraction:
    from hybrid_rag.packs import reader_for

    onto = load_ontology("msds")
    pages = [Page(number=i + 1, text=t) for i, t in enumerate(texts)]
    return extract_offline(pages, ontology=onto, source_name=source, reader=reader_for(onto))


def test_the_regulations_wording_of_the_product_identifier_names_the_product() -> None:
    page = (
        "Safety Data Sheet\nVorlan Resin 40 \nRevision date : 2021/03/04 Page: 1/9\n \n"
        "1. Identification \nProduct identifier used on the label \n \nVORLAN RESIN 40 BK7 \n \n"
        "Recommended use of the chemical and restriction on use \n"
    )
    ex = _named([page])
    assert ex.subject == "Vorlan Resin 40 BK7"  # words capitalised, the code as printed


def test_a_header_line_with_a_date_does_not_name_the_product() -> None:
    page = (
        "Page 1/5\nPrinting date 03/14/2019\nReviewed on 01/02/2018\nSafety Data Sheet\n"
        "1 Identification\nProduct identifier\nProduct name: \u25cf Potassium Bromate\n"
    )
    assert _named([page]).subject == "Potassium Bromate"


def test_a_running_header_names_a_sheet_that_prints_no_name_label() -> None:
    head = "SAFETY DATA SHEET\nOrchard Peach Flavour N&A\nVersion 2.0 Revision Date 01.02.2020\n"
    pages = [head + "SECTION 1. PRODUCT AND COMPANY IDENTIFICATION\nSales No. : 11-22"]
    pages += [head + f"SECTION {n}. MORE\nNo data available" for n in range(2, 6)]
    ex = _named(pages, source="maker_3.pdf")
    assert ex.subject == "Orchard Peach Flavour N&A"
    assert not any("no name found" in w for w in ex.warnings)


def test_a_composition_row_may_print_the_cas_number_first_and_the_name_last() -> None:
    page = (
        "Product name: Polyamide Q7\n3. Composition / Information on Ingredients\n"
        "CAS Number Weight % Chemical name\n"
        "65997-17-3  >= 25.0 - < 40.0% Glass, oxide, chemicals\n"
        "1309-64-4  >= 1.0 - <= 7.0% diantimony trioxide\n"
        "4. First-Aid Measures\n"
    )
    ex = _named([page])
    parts = {f.object_label: f for f in ex.facts if f.prop == "hasComponent"}
    assert set(parts) == {"Glass, oxide, chemicals", "diantimony trioxide"}
    conc = [f.value for f in ex.facts if f.prop == "concentration"]
    assert conc[:1] == [">= 25.0 - < 40.0%"]


def test_a_page_that_stacks_its_labels_is_read_in_layout_too(corpus: Path) -> None:
    from hybrid_rag.ingest.formats.pdf import _stacked
    from hybrid_rag.ingest.load import parse_document
    from hybrid_rag.packs import reader_for

    # drawn in two layers: pypdf's plain order gives the labels, then the values
    pdf = corpus / "laballey" / "ceric-ammonium-nitrate-pure-100-grams-66aba37464ee9.pdf"
    doc = parse_document(pdf.read_bytes(), name=pdf.name, source=str(pdf))
    assert any(p.layout for p in doc.pages) and len(doc.pages) > 3
    onto = load_ontology("msds")
    ex = extract_offline(doc.pages, ontology=onto, source_name=pdf.name, reader=reader_for(onto))
    found = [f for f in ex.facts if f.prop == "incompatibleMaterials"]
    assert found and "cyanides" in found[0].value
    assert found[0].quote in doc.pages[found[0].page - 1].text  # verbatim, wrapped as printed
    prose = "Product name: Acetone\nKeep away from heat.\nFlash point -20 °C\nColor Clear"
    stack = "Storage conditions\nIncompatibilities\n8.1 Exposure limits\nEye protection\n"
    assert not _stacked(prose) and _stacked(stack + "Hand protection\nRespiratory protection")


def test_a_page_read_across_two_columns_takes_its_values_from_the_layout() -> None:
    head = (
        "1. Identification\nProduct name: Examplon Syrup\n2. Hazards identification\n"
        "Not classified.\n3. Composition\nWater 7732-18-5 90%\n4. First-aid measures\n"
    )
    plain = head + (
        "Move to fresh air. Call a physician if symptoms persist.Inhalation\n"
        "Wash skin with soap and water for several minutes.\nSkin contact\n"
        "Rinse eyes with water for 15 minutes.\nEye contact\n5. Fire-fighting measures\n"
    )
    layout = head + (
        "Inhalation        Move to fresh air. Call a physician if symptoms persist.\n"
        "Skin contact      Wash skin with soap and water for several minutes.\n"
        "Eye contact       Rinse eyes with water for 15 minutes.\n5. Fire-fighting measures\n"
    )
    onto = load_ontology("msds")
    ex = extract_offline([Page(number=1, text=plain, layout=layout)], ontology=onto)
    said = {f.prop: f for f in ex.facts if f.prop.startswith("firstAid")}
    assert said["firstAidSkin"].value == "Wash skin with soap and water for several minutes."
    assert said["firstAidEyes"].value == "Rinse eyes with water for 15 minutes."
    assert all(f.quote in plain for f in said.values())
    # what only the plain reading reads the ontology's way stays: "not available" too
    plain_ph = plain.replace("5. Fire-fighting measures\n", "9. Properties\npH Not available.\n")
    laid_ph = layout.replace(
        "5. Fire-fighting measures\n", "9. Properties\npH     Not available.\n"
    )
    ex = extract_offline([Page(number=1, text=plain_ph, layout=laid_ph)], ontology=onto)
    assert [(f.prop, f.status) for f in ex.facts if f.prop == "pH"] == [("pH", "unavailable")]


def test_two_labels_on_a_line_after_a_value_that_says_there_is_none() -> None:
    page = (
        "1. Identification\nProduct Name \u25cf Examplon Salt\n"
        "9. Physical and chemical properties\n"
        "Boiling Point Data lacking Melting Point Data lacking\n"
        "Decomposition Temperature Data lacking pH 11.2\n10. Stability and reactivity\n"
    )
    ex = _named([page])
    got = {f.prop: (f.status, f.value) for f in ex.facts}
    assert got["pH"] == ("stated", "11.2")
    assert got["meltingPoint"] == ("unavailable", "Data lacking")
    assert got["boilingPoint"] == ("unavailable", "Data lacking")
    assert ex.subject == "Examplon Salt"


def test_a_label_with_a_footnote_mark_or_a_qualifier_before_its_colon() -> None:
    page = (
        "1. Identification\nProduct name: Examplon Resin\n"
        "Recommended use of the chemical and restriction on use\n"
        "Recommended use*: coating additive\n"
        "5. Fire-Fighting Measures\nUnsuitable extinguishing media for safety reasons: \n"
        "    water jet\n \n14. Transport Information\nID number: UN 3082\n"
    )
    got = {f.prop: f.value for f in _named([page]).facts}
    assert got["recommendedUse"] == "coating additive"
    assert got["unsuitableExtinguishingMedia"] == "water jet"
    assert got["unNumber"].replace(" ", "") == "UN3082"


@pytest.mark.parametrize(
    ("line", "prop", "value"),
    [
        ("b) Odour Odourless", "odor", "Odourless"),
        ("(c) Colour white", "color", "white"),
        ("m) Relative density 5.610 g/cm3", "relativeDensity", "5.610 g/cm3"),
        (
            "\u00b7 Density at 20 \u00b0C: 0.964 g/cm\u00b3",
            "relativeDensity",
            "0.964 g/cm\u00b3 at 20 \u00b0C",
        ),
        (
            "Melting point/freezing point Melting point/range: 801 \u00b0C",
            "meltingPoint",
            "801 \u00b0C",
        ),
        ("Flash points    : Closed cup: 61 \u00b0C.", "flashPoint", "Closed cup: 61 \u00b0C."),
        ("Odour threshold of the product : not determined", "odorThreshold", "not determined"),
    ],
)
def test_labels_after_letters_bullets_and_with_a_condition(
    line: str, prop: str, value: str
) -> None:
    page = (
        "1. Identification\nProduct name: Examplon Salt\n"
        f"9. Physical and chemical properties\n{line}\n10. Stability and reactivity\n"
    )
    found = [f for f in _named([page]).facts if f.prop == prop]
    assert [f.value for f in found] == [value] and found[0].quote in page


def test_sections_numbered_without_a_dot_bind_their_items() -> None:
    heads = [
        "1 Identification",
        "Product name: Examplon Metal",
        "2 Hazard(s) identification",
        "3 Composition/information on ingredients",
        "4 First-aid measures",
        "5 Fire-fighting measures",
        "6 Accidental release measures",
        "7 Handling and storage",
        "Storage",
        "Requirements to be met by storerooms: Keep dry.",
        "Store under argon.",
        "8 Exposure controls/personal protection",
    ]
    ex = _named(["\n".join(heads) + "\n"])
    store = [f.value for f in ex.facts if f.prop == "storageConditions"]
    assert store and "Store under argon." in store[0]


def test_a_toxicity_record_names_its_route_and_kind_on_lines_of_their_own() -> None:
    heads = [f"{n}. Heading {n}" for n in range(2, 11)]
    record = [
        "11. Toxicological Information",
        "Acute toxicity",
        "Assessment of acute toxicity: Of high toxicity after single ingestion.",
        "Oral",
        "Type of value: LD50",
        "Species: rat (male/female)",
        "Value:  120 mg/kg  (OECD Guideline 401)",
        "Dermal",
        "Type of value: LD50",
        "Species: rabbit",
        "Value:  > 2,000 mg/kg",
        "12. Ecological Information",
    ]
    page = "\n".join(["Product name: Examplon Ester", *heads, *record])
    got = {f.prop: f.value for f in _named([page]).facts}
    assert got["ld50Oral"].startswith("120 mg/kg") and got["ld50Dermal"] == "> 2,000 mg/kg"


def test_a_name_read_from_the_title_is_a_fact_with_its_line(onto: Ontology) -> None:
    # no "Product name" field: the name is the heading; it still gets a quote and a page
    p1 = (
        "Page 1 of 2\nNorthwind Degreaser XT\nSAFETY DATA SHEET\nSECTION 1: Identification\n"
        "Recommended use Degreasing of metal parts\nSECTION 2: Hazards identification\n"
        "Signal word Warning\n"
    )
    ex = extract_offline([Page(number=1, text=p1)], ontology=onto)
    assert ex.subject == "Northwind Degreaser XT"
    named = [f for f in ex.facts if f.prop == "productName"]
    assert [(f.value, f.page) for f in named] == [("Northwind Degreaser XT", 1)]
    assert named[0].quote in p1
    # a labelled field already names it: no second name fact
    labelled = extract_offline([Page(number=1, text=LABALLEY_P1)], ontology=onto)
    assert [f.value for f in labelled.facts if f.prop == "productName"] == ["Acetone"]


def test_a_composition_row_printed_over_several_lines_is_one_component() -> None:
    page = (
        "Product name : Garden Mint Base 12\nSECTION 3: Composition/information on ingredients\n"
        "Ingredient name Identifiers % Classification\n"
        "glycerol EC : 200-289-5 \nCAS : 56-81-5 \n \n>= 40 - <= 60 Not classified. \n"
        "menthol EC : 218-690-9 \nCAS : 2216-51-5 \nIndex : 612-002-\n00-7 \n"
        ">= 5 - < 10 Skin Irrit. 2, H315 \n"
        "SECTION 4: First aid measures\n"
    )
    ex = _named([page])
    parts = {f.object_label: f for f in ex.facts if f.prop == "hasComponent"}
    assert set(parts) == {"glycerol", "menthol"}
    assert "56-81-5" in parts["glycerol"].value and ">= 40 - <= 60" in parts["glycerol"].value
    assert parts["glycerol"].quote in page  # from the name's line to the concentration's
    assert "00-7" in parts["menthol"].value  # a broken index number is no concentration
    conc = [f for f in ex.facts if f.prop == "concentration"]
    assert [(f.value, f.number, f.unit) for f in conc[:1]] == [(">= 40 - <= 60", 40.0, "%")]


def test_a_spread_row_without_a_percent_column_or_cas_number_is_no_component() -> None:
    page = (
        "Product name : Garden Mint Base 12\nSECTION 3: Composition/information on ingredients\n"
        "Ingredient name Identifiers Classification\n"
        "glycerol EC : 200-289-5 \nCAS : 56-81-5 \n12 - 15 Not classified. \n"
        "menthol EC : 218-690-9 \n>= 5 - < 10 % Skin Irrit. 2, H315 \n"
        "SECTION 4: First aid measures\n"
    )
    ex = _named([page])
    assert not [f for f in ex.facts if f.prop == "hasComponent"]


def test_a_un_number_printed_as_digits_under_a_un_label_is_written_un() -> None:
    onto = load_ontology("msds")
    said = "SECTION 14: Transport information\nUN-Number : 1263\n"
    ex = extract_offline([Page(number=1, text=said)], ontology=onto)
    fact = next(f for f in ex.facts if f.prop == "unNumber")
    assert (fact.value, fact.quote) == ("UN1263", "UN-Number : 1263")  # the quote as printed
    either = "SECTION 14: Transport information\nID Number: 1993\n"  # UN or NA: as printed
    ex = extract_offline([Page(number=1, text=either)], ontology=onto)
    assert [f.value for f in ex.facts if f.prop == "unNumber"] == ["1993"]
