"""Chunking: offsets, page boundaries, overlap, break points, ids and sections."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hybrid_rag.errors import ConfigurationError
from hybrid_rag.ingest.chunk import chunk_pages, find_headings
from hybrid_rag.models import Page

PARA = "Flash point: -18 °C (closed cup). Boiling point: 56 °C. " * 3


def _pages(*texts: str) -> list[Page]:
    return [Page(number=i, text=t) for i, t in enumerate(texts, start=1)]


def _check_invariants(pages: list[Page], size: int, overlap: int) -> None:
    chunks = chunk_pages(pages, doc_id="d", size=size, overlap=overlap)
    by_page = {p.number: p.text for p in pages}
    for c in chunks:
        assert by_page[c.page][c.start : c.end] == c.text
        assert 0 < len(c.text) <= size and c.text.strip()
    # every non-whitespace character is covered by some chunk of its page
    for page in pages:
        covered = set()
        for c in chunks:
            if c.page == page.number:
                covered.update(range(c.start, c.end))
        assert all(i in covered for i, ch in enumerate(page.text) if not ch.isspace())


@settings(max_examples=150, deadline=None)
@given(
    texts=st.lists(
        st.text(alphabet=st.sampled_from("ab cd.\n\n\t,é#S"), max_size=600), min_size=1, max_size=3
    ),
    size=st.integers(min_value=1, max_value=200),
    data=st.data(),
)
def test_offsets_and_coverage_property(texts: list[str], size: int, data: st.DataObject) -> None:
    overlap = data.draw(st.integers(min_value=0, max_value=size - 1))
    _check_invariants(_pages(*texts), size, overlap)


@settings(max_examples=50, deadline=None)
@given(text=st.text(max_size=3000))
def test_offsets_property_any_unicode(text: str) -> None:
    _check_invariants(_pages(text), 800, 120)


def test_short_page_is_one_chunk_with_stable_id() -> None:
    chunks = chunk_pages(_pages("  hello world  "), doc_id="acetone")
    assert [(c.chunk_id, c.text, c.start) for c in chunks] == [("acetone#p1c0", "hello world", 2)]
    assert chunks[0].doc_id == "acetone" and chunks[0].page == 1


def test_chunks_never_cross_pages_and_ids_count_per_page() -> None:
    chunks = chunk_pages(_pages(PARA * 10, PARA * 10), doc_id="x", size=300, overlap=50)
    pages = {c.page for c in chunks}
    assert pages == {1, 2}
    for page in pages:
        ids = [c.chunk_id for c in chunks if c.page == page]
        assert ids == [f"x#p{page}c{i}" for i in range(len(ids))]
    assert chunk_pages(_pages(PARA * 10, PARA * 10), doc_id="x", size=300, overlap=50) == chunks


def test_consecutive_chunks_overlap() -> None:
    chunks = chunk_pages(_pages(PARA * 20), doc_id="x", size=400, overlap=100)
    assert len(chunks) > 3
    for a, b in itertools.pairwise(chunks):
        assert b.start < a.end  # shared text
        assert a.end - b.start <= 100 + 1
        assert b.start > a.start


def test_no_overlap_when_zero() -> None:
    chunks = chunk_pages(_pages(PARA * 20), doc_id="x", size=400, overlap=0)
    for a, b in itertools.pairwise(chunks):
        assert b.start >= a.end


def test_prefers_paragraph_then_line_breaks() -> None:
    text = "A" * 300 + "\n\n" + "B" * 50 + "\n" + "C" * 300
    chunks = chunk_pages(_pages(text), doc_id="x", size=400, overlap=0)
    assert chunks[0].text == "A" * 300
    lines = "\n".join(["word " * 15] * 20)
    for c in chunk_pages(_pages(lines), doc_id="x", size=200, overlap=0):
        assert c.text.startswith("word") and c.text.endswith("word")


def test_prefers_sentence_end_over_mid_word() -> None:
    text = ("This is a sentence about acetone. " * 30).strip()
    for c in chunk_pages(_pages(text), doc_id="x", size=200, overlap=40)[:-1]:
        assert c.text.endswith(".")
        assert c.text.startswith("This")


def test_hard_cut_without_any_break() -> None:
    chunks = chunk_pages(_pages("x" * 1000), doc_id="x", size=300, overlap=0)
    assert [len(c.text) for c in chunks] == [300, 300, 300, 100]


def test_whitespace_only_pages_give_no_chunks() -> None:
    chunks = chunk_pages(_pages("   \n\n ", "", "text"), doc_id="x")
    assert [(c.page, c.text) for c in chunks] == [(3, "text")]


@pytest.mark.parametrize(("size", "overlap"), [(0, 0), (100, 100), (100, -1), (10, 50)])
def test_bad_options(size: int, overlap: int) -> None:
    with pytest.raises(ConfigurationError, match="overlap"):
        chunk_pages(_pages("x"), doc_id="x", size=size, overlap=overlap)


def test_sds_sections_carry_across_pages() -> None:
    p1 = "SECTION 4: First-aid measures\nRinse with water.\nSECTION 5: Firefighting measures\n"
    p1 += "Use foam. " * 60
    p2 = "Water spray is unsuitable. " * 5 + "\nSECTION 6 . ACCIDENTAL RELEASE MEASURES\n"
    p2 += "Sweep up. " * 30
    chunks = chunk_pages(_pages(p1, p2), doc_id="x", size=200, overlap=20)
    assert chunks[0].section == "SECTION 4: First-aid measures"
    assert chunks[1].section == "SECTION 5: Firefighting measures"
    assert next(c.section for c in chunks if c.page == 2) == "SECTION 5: Firefighting measures"
    assert chunks[-1].section == "SECTION 6: ACCIDENTAL RELEASE MEASURES"


def test_subsection_numbers_place_text_before_misordered_heading() -> None:
    # pypdf often emits the "SECTION n" heading after that section's content
    p1 = "intro\nSECTION 2: Hazards identification\nDanger\n"
    p2 = "2.3 Other hazards\nNone known.\n" + "filler text. " * 30
    chunks = chunk_pages(_pages(p1, p2), doc_id="x", size=120, overlap=0)
    assert next(c.section for c in chunks if c.page == 2) == "SECTION 2: Hazards identification"
    assert chunks[0].section == "SECTION 2: Hazards identification"  # first heading inside


def test_markdown_headings() -> None:
    text = "# Guide\n\nintro\n\n## Storage ##\n\n" + "Keep cool. " * 40
    chunks = chunk_pages(_pages(text), doc_id="x", size=120, overlap=0)
    assert chunks[0].section == "Guide"
    assert chunks[-1].section == "Storage"


def test_no_headings_gives_none() -> None:
    assert chunk_pages(_pages("plain text"), doc_id="x")[0].section is None


def test_find_headings() -> None:
    text = "x\nSECTION 9: Physical and chemical properties  \nSection 10 - Stability\n# Md"
    assert [t for _, t in find_headings(text)] == [
        "SECTION 9: Physical and chemical properties",
        "SECTION 10: Stability",
        "Md",
    ]


def test_a_sentence_wrapped_onto_a_line_is_no_heading() -> None:
    text = (
        "SECTION 7: Handling and storage\nAvoid contact. For protection see\n"
        "Section 8. Smoking, eating, and drinking should be prohibited in the area.\n"
        "Section 13, Disposal Considerations, for additional information.\n"
        "SECTION 8. Exposure controls/personal protection\n"
    )
    assert [t for _, t in find_headings(text)] == [
        "SECTION 7: Handling and storage",
        "SECTION 8: Exposure controls/personal protection",
    ]
