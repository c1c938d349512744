"""Doc ids mint injective, HANA-safe IRIs (issue 12: ``coll.a`` and ``coll-a`` merged)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hybrid_rag.errors import InvalidDocIdError
from hybrid_rag.ingest.extract import ExtractedFact, Extraction
from hybrid_rag.ingest.triples import build_triples, doc_local_name, subject_iri
from hybrid_rag.ontology import load_ontology

DOC_IDS = st.text(
    alphabet="ABCXYZabcxyz0189_.-", min_size=1, max_size=128
)  # the id alphabet, with its separators over-represented
ANY_IDS = st.from_regex(r"[A-Za-z0-9_.-]{1,128}", fullmatch=True)
HANA_SAFE = re.compile(r"[A-Za-z][A-Za-z0-9_-]*")
ONTOLOGY = load_ontology()


def _local(iri: str) -> str:
    return re.split(r"[/#]", iri)[-1]


@settings(max_examples=400)
@given(a=DOC_IDS, b=DOC_IDS)
def test_different_ids_never_share_a_product_iri(a: str, b: str) -> None:
    if a != b:
        assert subject_iri(a, ontology=ONTOLOGY) != subject_iri(b, ontology=ONTOLOGY)


@settings(max_examples=300)
@given(doc_id=ANY_IDS)
def test_minted_names_are_hana_safe_and_decodable(doc_id: str) -> None:
    name = doc_local_name(doc_id)
    assert HANA_SAFE.fullmatch(name)
    assert HANA_SAFE.fullmatch(_local(subject_iri(doc_id, ontology=ONTOLOGY)))
    decoded = re.sub(r"_(.)", lambda m: "_" if m.group(1) == "_" else ".", name[4:])
    assert decoded == doc_id  # a decodable encoding is injective


@pytest.mark.parametrize(
    ("a", "b"), [("coll.a", "coll-a"), ("x-1.5", "x-1-5"), ("a_b", "a-b"), ("a--b", "a-b")]
)
def test_reported_collisions_mint_disjoint_subjects(a: str, b: str) -> None:
    extraction = Extraction(
        subject="Same Product",
        aliases=(),
        facts=(ExtractedFact(prop="flashPoint", value="-20 °C", page=1, quote="-20 °C"),),
    )
    subjects = [
        {s.value for s, _, _ in build_triples(d, extraction, ontology=ONTOLOGY)} for d in (a, b)
    ]
    assert subjects[0].isdisjoint(subjects[1])


def test_invalid_id_is_a_typed_error() -> None:
    with pytest.raises(InvalidDocIdError):
        doc_local_name("a b")
