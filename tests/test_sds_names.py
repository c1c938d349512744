"""A salt's two names: the classical ("Cupric Sulfate") and the Stock notation
("Copper(II) Sulfate"), so a question by either finds the sheet (SDS pack)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hybrid_rag import HybridRAG
from hybrid_rag.packs.sds._reader import stock_names


@pytest.mark.parametrize(
    ("name", "other"),
    [
        ("Ferrous Sulphate Heptahydrate", "Iron(II) Sulphate Heptahydrate"),
        ("Stannic Chloride, anhydrous", "Tin(IV) Chloride, anhydrous"),
        ("Cobalt(II) nitrate hexahydrate", "Cobaltous nitrate hexahydrate"),
        ("Copper (II) chloride", "Cupric chloride"),
        ("Mercury(I) Nitrate", "Mercurous Nitrate"),
    ],
)
def test_a_salts_classical_and_stock_names_give_each_other(name: str, other: str) -> None:
    assert stock_names(name) == [other]
    assert stock_names(other) == [name.replace(" (", "(")]


@pytest.mark.parametrize(
    "name", ["Chromic Acid 5%", "Ferric Brand Cleaner", "Zinc (II) Bromide", "Copper Wire"]
)
def test_names_that_are_no_salt_of_a_named_cation_stay_as_they_are(name: str) -> None:
    assert stock_names(name) == []


def _sheet(name: str, cas: str) -> str:
    return (
        "SAFETY DATA SHEET\n1. Identification\n"
        f"Product name: {name}\nRecommended use: Laboratory chemicals\n"
        "2. Hazard(s) identification\nSignal word: Warning\n"
        f"3. Composition\nCAS number: {cas}\n"
    )


def test_a_set_asked_in_one_notation_holds_the_sheets_named_in_the_other(tmp_path: Path) -> None:
    sheets = {
        "ferrous-sulphate.txt": _sheet("Ferrous Sulphate Heptahydrate", "7782-63-0"),
        "iron-ii-chloride.txt": _sheet("Iron(II) Chloride Tetrahydrate", "13478-10-9"),
        "ferric-nitrate.txt": _sheet("Ferric Nitrate Nonahydrate", "7782-61-8"),
    }
    for file, text in sheets.items():
        (tmp_path / file).write_text(text)
    with HybridRAG(tmp_path / "s", embedder="hashing") as r:
        r.ingest_many([tmp_path / f for f in sheets], raise_errors=True)
        aliases = {d.doc_id: d.aliases for d in r.documents()}
        assert "Iron(II) Sulphate Heptahydrate" in aliases["ferrous-sulphate"]
        answer = r.ask("How many iron(II) salts do we have sheets for?")
        assert {f.doc_id for f in answer.facts} == {"ferrous-sulphate", "iron-ii-chloride"}
        assert answer.text is not None and answer.text.startswith("2 ")
