"""The term index of the values (``hr:term``) and what a collection question asks the
store: written by ingest, kept by re-ingest and forget, the same members with and
without it (a store written before it), distinct values rather than every document's
copy, and the numbers of candidate documents only."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from hybrid_rag import HybridRAG
from hybrid_rag._terms import INDEX_VERSION, TERM, TERM_INDEX, scan_strings, value_terms
from hybrid_rag.models import Answer

ONTOLOGY = """
@prefix lab: <http://example.org/lab#> .
@prefix owl: <http://www.w3.org/2002/07/owl#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
lab:Instrument a owl:Class ; rdfs:label "Instrument" .
lab:instrumentName a owl:DatatypeProperty ; rdfs:label "Instrument name" ;
    rdfs:domain lab:Instrument .
lab:housing a owl:DatatypeProperty ; rdfs:label "Housing" ; rdfs:domain lab:Instrument .
lab:protection a owl:DatatypeProperty ; rdfs:label "Protection rating" ;
    rdfs:domain lab:Instrument .
lab:mass a owl:DatatypeProperty ; rdfs:label "Mass" ; rdfs:domain lab:Instrument ;
    rdfs:range xsd:decimal .
"""

INSTRUMENTS = {
    "scale-a.txt": ("Bench Scale BS-1", "Anodised aluminium", "Splash proof, rating 4X", "6.5 kg"),
    "scale-b.txt": ("Bench Scale BS-2", "Anodised aluminium", "Splash proof, rating 4X", "7.1 kg"),
    "meter.txt": ("Conductivity Meter CM-3", "Polycarbonate", "Dust tight, rating 6", "0.8 kg"),
    "probe.txt": ("Oxygen Probe OP-9", "Sulphone polymer", "Submersible, rating 8", "0.3 kg"),
    "oven.txt": ("Drying Oven DO-2", "Powder-coated steel", "Not rated", "41 kg"),
    "stirrer.txt": ("Magnetic Stirrer MS-5", "Ceramic top", "Splash proof, rating 4X", "2.2 kg"),
}

QUESTIONS = (
    "Which instruments are splash proof?",
    "Which instruments have a rating 4X?",
    "Which of our instruments have an anodised aluminium housing?",
    "Which instruments have a sulfone polymer housing?",
    "Which instruments have a mass above 5 kg?",
    "Which instrument has the highest mass?",
    "Which instrument has the lowest mass?",
)


def _text(name: str, housing: str, protection: str, mass: str) -> str:
    return (
        f"Instrument name: {name}\nHousing: {housing}\nProtection rating: {protection}\n"
        f"Mass: {mass}\n"
    )


def _write(folder: Path, files: dict[str, tuple[str, str, str, str]]) -> list[Path]:
    (folder / "lab.ttl").write_text(ONTOLOGY)
    for file, fields in files.items():
        (folder / file).write_text(_text(*fields))
    return [folder / f for f in files]


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, HybridRAG]]:
    """The same instruments in three stores: indexed (as ingest writes now), old (every
    graph written before the index) and mixed (half of them)."""
    out: dict[str, HybridRAG] = {}
    for name in ("indexed", "old", "mixed"):
        folder = tmp_path_factory.mktemp(name)
        files = _write(folder, INSTRUMENTS)
        rag = HybridRAG(folder / "store", ontology=folder / "lab.ttl", embedder="hashing")
        rag.ingest_many(files, raise_errors=True)
        docs = sorted(d.doc_id for d in rag.documents())
        _without_index(rag, docs if name == "old" else docs[::2] if name == "mixed" else [])
        out[name] = rag
    yield out
    for rag in out.values():
        rag.close()


def _members(rag: HybridRAG, question: str) -> set[str]:
    return {f.doc_id for f in rag.ask(question).facts}


def _without_index(rag: HybridRAG, docs: list[str]) -> None:
    """Write ``docs``' graphs as a store made before the index holds them."""
    for doc in docs:
        triples = rag.graph.triples(doc)  # type: ignore[attr-defined]
        rag.graph.replace(doc, [t for t in triples if t[1].value not in (TERM, TERM_INDEX)])


def _lookups(answer: Answer) -> list[str]:
    return [s.query for s in answer.sparql]


def test_value_terms_are_stems_of_words_digit_runs_and_numbers() -> None:
    assert value_terms("Eye Irritation Category 2B") == {"eye", "irrit", "categ", "2"}
    assert value_terms("UN 3265; CAS 50-00-0; Class 5.1") >= {"3265", "50", "00", "5.1"}
    assert value_terms("irritating, IRRITANT") == {"irrit"}  # a word by its stem, any case
    assert value_terms("Sulphate") == value_terms("sulfates") == {"sulfa"}
    # a store without the index is scanned for strings every value with the term holds
    assert set(scan_strings(["sulfa", "body", "3265"])) == {
        "sulfa",
        "sulpha",
        "body",
        "bodie",
        "3265",
    }


def test_ingest_writes_the_terms_of_each_value_and_marks_the_graph(
    stores: dict[str, HybridRAG],
) -> None:
    rag = stores["indexed"]
    triples = rag.graph.triples("probe")  # type: ignore[attr-defined]
    marks = [o.value for _s, p, o in triples if p.value == TERM_INDEX]
    assert marks == [INDEX_VERSION]
    by_fact: dict[str, set[str]] = {}
    for s, p, o in triples:
        if p.value == TERM:
            by_fact.setdefault(s.value, set()).add(o.value)
    values = {s.value: o.value for s, p, o in triples if p.value.endswith("#value")}
    assert by_fact and all(by_fact[f] == value_terms(v) for f, v in values.items() if v.strip())
    assert {"sulfo", "polym"} in [{t for t in ts if t.isalpha()} for ts in by_fact.values()]


def test_a_store_without_the_index_or_with_part_of_it_answers_the_same(
    stores: dict[str, HybridRAG],
) -> None:
    for question in QUESTIONS:
        found = {name: _members(rag, question) for name, rag in stores.items()}
        assert found["indexed"], question
        assert found["old"] == found["mixed"] == found["indexed"], question
    assert _members(stores["old"], QUESTIONS[0]) == {"scale-a", "scale-b", "stirrer"}
    assert _members(stores["indexed"], QUESTIONS[3]) == {"probe"}  # "sulfone" is "Sulphone"
    assert _members(stores["indexed"], QUESTIONS[4]) == {"scale-a", "scale-b", "oven"}
    assert _members(stores["indexed"], QUESTIONS[5]) == {"oven"}
    assert _members(stores["indexed"], QUESTIONS[6]) == {"probe"}


def test_an_indexed_store_looks_values_up_and_an_old_one_scans_them(
    stores: dict[str, HybridRAG],
) -> None:
    indexed = _lookups(stores["indexed"].ask(QUESTIONS[0]))
    old = _lookups(stores["old"].ask(QUESTIONS[0]))
    assert any(f"<{TERM}> ?term" in q for q in indexed)
    assert not any("CONTAINS" in q for q in indexed)
    assert any("CONTAINS" in q for q in old) and not any(f"<{TERM}> ?term" in q for q in old)


def test_the_members_are_read_by_their_distinct_values(stores: dict[str, HybridRAG]) -> None:
    # three instruments print "Splash proof, rating 4X": the value is read once, the
    # members' facts (with their provenance) by it
    answer = stores["indexed"].ask(QUESTIONS[0])
    (pairs,) = [s for s in answer.sparql if "DISTINCT ?prop ?value" in s.query]
    (read,) = [s for s in answer.sparql if "VALUES (?prop ?value)" in s.query]
    assert pairs.rows == 1 and read.rows == len(answer.facts) == 3
    assert answer.text is not None and answer.text.startswith("3 ")


def test_a_bound_reads_the_numbers_of_the_documents_that_may_pass_it(
    stores: dict[str, HybridRAG],
) -> None:
    answer = stores["indexed"].ask(QUESTIONS[4])
    near, *_ = [s for s in answer.sparql if "?number >= " in s.query]
    assert near.rows == 3 < len(INSTRUMENTS)  # not every document's mass
    top = stores["indexed"].ask(QUESTIONS[5])
    assert any("ORDER BY DESC(?number) LIMIT" in s.query for s in top.sparql)


def test_reingest_and_forget_keep_the_index(tmp_path: Path) -> None:
    files = _write(tmp_path, INSTRUMENTS)
    with HybridRAG(tmp_path / "s", ontology=tmp_path / "lab.ttl", embedder="hashing") as rag:
        rag.ingest_many(files, raise_errors=True)
        assert _members(rag, "Which instruments are dust tight?") == {"meter"}
        (tmp_path / "meter.txt").write_text(
            _text("Conductivity Meter CM-3", "Polycarbonate", "Splash proof, rating 4X", "0.8 kg")
        )
        rag.ingest(tmp_path / "meter.txt")  # a new version: its old terms go with it
        assert _members(rag, "Which instruments are dust tight?") == set()
        assert "meter" in _members(rag, QUESTIONS[0])
        rag.forget("scale-a")
        assert _members(rag, QUESTIONS[0]) == {"scale-b", "stirrer", "meter"}
        assert not any(p.value == TERM for _s, p, _o in rag.graph.triples("scale-a"))  # type: ignore[attr-defined]
