"""Conflicting sheets are shown, not resolved silently.

Issue 12's run: a planted sheet impersonating real products changed the answer in 36 of
72 unscoped asks. Here a planted PDF claims to be a shipped sample product and changes
one value; every unscoped ask about that value (extractive and LLM, kg and hybrid) must
show both values, each with its source, and say that the documents disagree. Values the
two sheets agree on get no such sentence.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from hybrid_rag import Answer, AnswerComposer, HybridRAG
from hybrid_rag.ask.conflicts import find_conflicts, involving
from hybrid_rag.models import ChatMessage, Evidence, Fact
from hybrid_rag.samples import pdf_bytes, sample_pdfs, sample_text
from hybrid_rag.testing import FunctionLLM

# (sample sheet, line as printed, line as planted, question, the true and the planted value)
PLANTS = [
    (
        "examplon-solvent-99",
        "Flash point: -18 °C (closed cup)",
        "Flash point: 35 °C (closed cup)",
        "What is the flash point of Examplon Solvent 99?",
        ("-18 °C", "35 °C"),
    ),
    (
        "samplex-acid-descaler-10",
        "pH: 1.2 at 20 °C",
        "pH: 6.5 at 20 °C",
        "What is the pH of Samplex Acid Descaler 10?",
        ("1.2", "6.5"),
    ),
    (
        "examplon-solvent-99",
        "UN number: UN1090",
        "UN number: Not regulated",
        "What is the UN number of Examplon Solvent 99?",
        ("UN1090", "Not regulated"),
    ),
    (
        "demoline-glass-cleaner",
        "Boiling point: 100 °C",
        "Boiling point: 250 °C",
        "What is the boiling point of Demoline Glass Cleaner?",
        ("100 °C", "250 °C"),
    ),
]
PLANTED = "planted-sheet"


def _model(messages: Sequence[ChatMessage]) -> str:
    """A model that trusts the planted sheet: it states and cites only that sheet's value."""
    found = re.findall(rf"^\[(\d+)\] .* - (.*?) \(stated; {PLANTED}", messages[-1].content, re.M)
    mark, said = found[0] if found else ("1", "The value is as stated")
    return f"{said} [{mark}]."


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("conflicts")
    with HybridRAG(root / "store", embedder="hashing") as rag:
        rag.ingest_many(sample_pdfs(root / "pdfs"), raise_errors=True)
    return root / "store"


@pytest.fixture(params=range(len(PLANTS)), ids=[p[0] + ":" + p[1][:10] for p in PLANTS])
def planted(store: Path, request: pytest.FixtureRequest) -> Iterator[tuple[HybridRAG, int]]:
    stem, line, fake, *_ = PLANTS[request.param]
    text = sample_text(stem)
    assert line in text
    with HybridRAG(store, embedder="hashing", llm=FunctionLLM(_model)) as rag:
        rag.ingest(pdf_bytes(text.replace(line, fake).split("\n\n")), name=f"{PLANTED}.pdf")
        yield rag, request.param
        rag.forget(PLANTED)


def _shows_both(
    answer: Answer, stem: str, values: tuple[str, str], inline: bool, *, graph: bool = True
) -> None:
    text = answer.text or ""
    assert "disagree" in text, text
    note = text[text.index("The documents disagree") :]
    true, fake = values
    assert true in note and fake in note, note
    if inline:
        assert {m for m in re.findall(r"\[([\w.-]+) p\.\d+\]", note)} == {stem, PLANTED}, note
    else:  # numbered markers index Answer.citations
        cited = {answer.citations[int(n) - 1].doc_id for n in re.findall(r"\[(\d+)\]", note)}
        assert cited == {stem, PLANTED}, note
    if graph:
        assert {f.doc_id for f in answer.facts} >= {stem, PLANTED}
    else:  # vector mode: the values are the lines the sheets print, cited from passages
        assert {c.doc_id for c in answer.citations} >= {stem, PLANTED}
        assert answer.sources == ["vector"]


@pytest.mark.parametrize("mode", ["kg", "hybrid", "vector"])
def test_unscoped_extractive_answer_shows_both_values(
    planted: tuple[HybridRAG, int], mode: str
) -> None:
    rag, i = planted
    stem, _, _, question, values = PLANTS[i]
    with rag.override(llm=None):
        answer = rag.ask(question, mode=mode)  # type: ignore[arg-type]
    _shows_both(answer, stem, values, inline=True, graph=mode != "vector")


def test_vector_mode_llm_answer_that_trusts_one_sheet_is_corrected(
    planted: tuple[HybridRAG, int],
) -> None:
    """Issue 19: vector mode showed the planted value without saying documents disagree.

    The passages give the model no stated value to copy, so its reply states none: the
    grounding check (issue 21) serves the extractive answer instead, which shows both."""
    rag, i = planted
    stem, _, _, question, values = PLANTS[i]
    answer = rag.ask(question, mode="vector")
    if answer.generation == "extractive":
        assert any(e.chain == "synthesis" for e in answer.errors), answer.errors
    _shows_both(answer, stem, values, inline=answer.generation == "extractive", graph=False)


def test_llm_answer_that_trusts_one_sheet_is_corrected(planted: tuple[HybridRAG, int]) -> None:
    rag, i = planted
    stem, _, _, question, values = PLANTS[i]
    answer = rag.ask(question)
    assert answer.generation == "llm"
    _shows_both(answer, stem, values, inline=False)
    streamed = list(rag.stream(question))
    final = streamed[-1]
    assert isinstance(final, Answer) and final.text == answer.text and final.text
    note = final.text[final.text.index(" The documents disagree") :]
    assert "".join(p.delta for p in streamed[:-1]).endswith(note)  # type: ignore[union-attr]


def test_numbered_citations_and_a_short_answer_keep_the_note(
    planted: tuple[HybridRAG, int],
) -> None:
    rag, i = planted
    stem, _, _, question, values = PLANTS[i]
    with rag.override(llm=None, composer=AnswerComposer(max_chars=80, citations="numbered")):
        answer = rag.ask(question)
    _shows_both(answer, stem, values, inline=False)


def test_a_scoped_ask_sees_one_sheet_and_no_conflict(planted: tuple[HybridRAG, int]) -> None:
    rag, i = planted
    stem, _, _, question, (true, _) = PLANTS[i]
    with rag.override(llm=None):
        answer = rag.ask(question, docs=[stem])
    assert "disagree" not in (answer.text or "") and true in (answer.text or "")


def test_values_the_sheets_agree_on_get_no_note(store: Path) -> None:
    text = sample_text("examplon-solvent-99").replace("Flash point: -18", "Flash point: 35")
    with HybridRAG(store, embedder="hashing") as rag:
        rag.ingest(pdf_bytes(text.split("\n\n")), name=f"{PLANTED}.pdf")
        try:
            answer = rag.ask("What is the boiling point of Examplon Solvent 99?")
        finally:
            rag.forget(PLANTED)
    assert {f.doc_id for f in answer.facts} == {"examplon-solvent-99", PLANTED}
    assert "disagree" not in (answer.text or "")


def _fact(doc: str, value: str, number: float | None = None, *, subject: str = "X") -> Fact:
    return Fact(
        doc_id=doc,
        subject=subject,
        subject_iri=f"urn:{doc}",
        predicate="flashPoint",
        predicate_label="Flash point",
        value=value,
        number=number,
        unit="°C" if number is not None else None,
        evidence=Evidence(doc_id=doc, page=1, quote=value),
    )


def test_what_counts_as_a_conflict() -> None:
    same_number = [_fact("a", "-18 °C (closed cup)", -18), _fact("b", "-18 °C", -18)]
    assert find_conflicts(same_number) == []
    one_sheet = [_fact("a", "10 °C", 10), _fact("a", "20 °C", 20)]
    assert find_conflicts(one_sheet) == []
    other_subject = [_fact("a", "10 °C", 10), _fact("b", "20 °C", 20, subject="Y")]
    assert find_conflicts(other_subject) == []
    text_case = [_fact("a", "Not applicable"), _fact("b", "not  applicable")]
    assert find_conflicts(text_case) == []
    three = [_fact("a", "10 °C", 10), _fact("b", "20 °C", 20), _fact("c", "10 °C", 10)]
    (conflict,) = find_conflicts(three)
    assert [(v, [f.doc_id for f in fs]) for v, fs in conflict.values] == [
        ("10 °C", ["a", "c"]),
        ("20 °C", ["b"]),
    ]


def test_two_copies_agree_in_whatever_order_their_values_come_back() -> None:
    """Two byte-identical sheets, each with two storage values: the store returned one
    copy's values in the other order, and the answer said the documents disagree."""

    def read(doc: str, value: str, position: int) -> Fact:
        return _fact(doc, value).model_copy(update={"position": position})

    copies = [
        read("a", "Keep cool.", 1),
        read("a", "Store dry.", 2),
        read("b", "Store dry.", 2),
        read("b", "Keep cool.", 1),
    ]
    assert find_conflicts(copies) == []
    planted = [*copies[:2], read("c", "Store warm.", 1)]
    assert len(find_conflicts(planted)) == 1


def test_only_conflicts_the_answer_touches_are_noted() -> None:
    conflicts = find_conflicts([_fact("a", "10 °C", 10), _fact("b", "20 °C", 20)])
    assert involving(conflicts, "Y has the lowest flash point [c p.1].", ["c"]) == []
    assert involving(conflicts, "Xylene has the lowest flash point [c p.1].", ["c"]) == []
    assert involving(conflicts, "X has the lowest flash point [c p.1].", ["c"]) == conflicts
    assert involving(conflicts, "Z has the lowest flash point [b p.1].", ["b"]) == conflicts


@pytest.mark.parametrize(
    ("question", "printed"),
    [
        ("What is the vapour pressure of Demoline Glass Cleaner?", False),
        ("What is the odour threshold of Samplex Acid Descaler 10?", False),
        ("What is the flash point of Examplon Solvent 99?", True),
        ("What is the pH of Samplex Acid Descaler 10?", True),
    ],
)
def test_vector_mode_never_calls_a_value_it_did_not_look_for_not_stated(
    store: Path, question: str, printed: bool
) -> None:
    """Issue 19: vector mode answered "flash point is not stated" where the sheet states
    it. It reads no graph, so it says what the passages print, or that they do not."""
    with HybridRAG(store, embedder="hashing") as rag:
        answer = rag.ask(question, mode="vector")
        hybrid = rag.ask(question).text or ""
    text = answer.text or ""
    assert "not stated" not in text, text
    if printed:
        assert re.search(r"\d", text) and "not found" not in text, text
    else:  # the sheet prints no such line: hybrid, which read the graph, says not stated
        assert "not stated" in hybrid and "not found in the passages read" in text, text
