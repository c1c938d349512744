"""Concurrency through the public API: 8 ingests and 32 asks at once, same-id races included.

Issue 12's run: two ingests of one id at once left the union of both versions in the
graph (13 of 20 rounds). Each round here starts 8 ingests (4 new documents, 4 versions of
one id) and 32 asks on one store, all at once on one event loop, and checks:

* no call raises, no answer carries a chain error;
* asks about documents nobody writes answer exactly as they did before the round;
* asks about a document being written answer with one whole version's value (the one
  before the round or one being written) or abstain, never a mix or two values;
* the last writer of the raced id wins entirely: catalog hash, chunks and graph facts
  are all its version.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections.abc import Iterator
from typing import Any

import pytest

from hybrid_rag import Answer, HybridRAG
from hybrid_rag.samples import sample_pdfs

ROUNDS = 5
RACED = "race-oil"
SAMPLE_QUESTIONS = [
    ("What is the flash point of Examplon Solvent 99?", "examplon-solvent-99"),
    ("What is the pH of Samplex Acid Descaler 10?", "samplex-acid-descaler-10"),
    ("What is the boiling point of Examplon Solvent 99?", "examplon-solvent-99"),
    ("What should I do after eye contact with Demoline Glass Cleaner?", "demoline-glass-cleaner"),
]


def _sheet(subject: str, flash: int) -> bytes:
    return f"{subject}\nSECTION 9\nFlash point: {flash} \u00b0C\n".encode()


@pytest.fixture(scope="module")
def rag(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HybridRAG]:
    root = tmp_path_factory.mktemp("concurrency")
    with HybridRAG(root / "store", embedder="hashing", max_threads=4) as r:
        r.ingest_many(sample_pdfs(root / "pdfs"), raise_errors=True)
        yield r


def _signature(answer: Answer) -> Any:
    """What must not change while other documents are written.

    Passages may be ranked differently (BM25 weighs words by the whole collection, which
    grows during the round), so only the documents they come from are compared.
    """
    facts = sorted((f.doc_id, f.predicate, f.value) for f in answer.facts)
    return answer.text, answer.abstention, facts, {p.doc_id for p in answer.passages}


def _baseline(rag: HybridRAG) -> dict[tuple[str, str, bool], Any]:
    """Each sample question, scoped and unscoped, in kg and hybrid mode, asked alone."""
    out = {}
    for question, doc in SAMPLE_QUESTIONS:
        for mode in ("kg", "hybrid"):
            for scoped in (True, False):
                docs = [doc] if scoped else None
                out[question, mode, scoped] = rag.ask(question, mode=mode, docs=docs)
    return out


@pytest.mark.parametrize("round_no", range(ROUNDS))
def test_8_ingests_and_32_asks_at_once(rag: HybridRAG, round_no: int) -> None:
    base = _baseline(rag)
    before = {f.value for f in rag.ask("What is the flash point of Race Oil?", mode="kg").facts}
    raced = [_sheet("Race Oil", 100 + 10 * round_no + i) for i in range(4)]
    fresh = [_sheet(f"Gadget Fluid R{round_no}N{i}", 200 + i) for i in range(4)]
    finished: list[tuple[float, bytes]] = []
    answers: list[tuple[str, Any, Answer]] = []

    async def ingest_raced(data: bytes) -> None:
        await rag.aingest(data, name=f"{RACED}.txt")
        finished.append((time.perf_counter(), data))

    async def ask(kind: str, key: Any, question: str, **kw: Any) -> None:
        answers.append((kind, key, await rag.aask(question, **kw)))

    async def race() -> None:
        jobs = [ingest_raced(v) for v in raced]
        jobs += [rag.aingest(d, name=f"gadget-r{round_no}n{i}.txt") for i, d in enumerate(fresh)]
        for (question, mode, scoped), _ in base.items():  # 16 asks on untouched sheets
            docs = [doc for q, doc in SAMPLE_QUESTIONS if q == question] if scoped else None
            jobs.append(ask("sample", (question, mode, scoped), question, mode=mode, docs=docs))
        for i in range(8):  # 8 asks on the raced id
            q = "What is the flash point of Race Oil?"
            jobs.append(ask("raced", None, q, mode="kg" if i % 2 else "hybrid"))
        for i in range(8):  # 8 asks on documents being added
            q = f"What is the flash point of Gadget Fluid R{round_no}N{i % 4}?"
            jobs.append(ask("fresh", 200 + i % 4, q, mode="kg"))
        assert len(jobs) == 8 + 32
        await asyncio.gather(*jobs)

    asyncio.run(race())
    assert len(answers) == 32
    versions = {f"{100 + 10 * round_no + i} \u00b0C" for i in range(4)} | before
    for kind, key, answer in answers:
        expected_errors = set() if kind == "sample" else {"empty"}  # "empty": not written yet
        assert {e.kind for e in answer.errors} <= expected_errors, answer.errors
        values = {f.value for f in answer.facts if f.predicate == "flashPoint"}
        if kind == "sample":
            assert _signature(answer) == _signature(base[key]), key
        elif kind == "raced":
            assert len(values) <= 1 and values <= versions, values
        else:
            assert values <= {f"{key} \u00b0C"}, values
            assert all(f.doc_id.startswith(f"gadget-r{round_no}n") for f in answer.facts)
    _check_last_writer_won(rag, max(finished)[1])


def _check_last_writer_won(rag: HybridRAG, last: bytes) -> None:
    info = rag.catalog.get(RACED)
    assert info is not None and info.content_hash == hashlib.sha256(last).hexdigest()
    text = "\n".join(c.text for c in rag.vectors.chunks(RACED))
    assert text.strip() == last.decode().strip()
    facts = rag.ask("What is the flash point of Race Oil?", mode="kg", docs=[RACED]).facts
    assert [f.value for f in facts] == [last.decode().split("Flash point: ")[1].strip()]
    triples = rag.graph.dump(RACED)  # type: ignore[attr-defined]
    flash = {o.value for _, p, o in triples if p.value.endswith("#value") and "\u00b0C" in o.value}
    assert flash == {facts[0].value}
