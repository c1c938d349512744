"""Crash safety: after a kill -9 at any point of an ingest, reopening the store recovers.

Issue 12's run: a kill -9 during ingest (4 of 5 runs) left graphs and chunks without a
catalog entry; unscoped asks cited them and ``forget`` could not remove them. Now:

* an unscoped ask never serves a document the catalog does not list (the vector chain
  searches again within the catalogued documents when an orphan shows up);
* a ``HybridRAG`` that owns its embedded stores undoes, before its first flow, every
  write the journal records as unfinished (its OS locks say no other writer is half-way
  through one); nothing without such a record is deleted (``test_adv_replace.py``);
* every catalogued document is exactly one whole version (the old or the new one), and
  ingesting the same files again converges exactly to a clean build.

The kill -9 suite runs a child process that ingests real SDS PDFs from
``../shared/corpus/sds`` (two at a time, first into an empty store, then replacing every
document with another sheet) and kills it at a random moment. The default run tries a
few moments; ``pytest -m slow tests/adversarial/test_adv_crash.py`` tries many.
"""

from __future__ import annotations

import asyncio
import json
import random
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from hybrid_rag import HybridRAG
from hybrid_rag.samples import sample_pdfs

CHILD = """
import asyncio, json, sys
from hybrid_rag import HybridRAG

plan = json.loads(sys.argv[2])
rag = HybridRAG(sys.argv[1], embedder="hashing", processes=False)
rag.documents()
print("open", flush=True)

async def main():
    sem = asyncio.Semaphore(2)
    async def one(doc_id, path):
        async with sem:
            await rag.aingest(path, doc_id=doc_id)
    await asyncio.gather(*(one(d, p) for d, p in plan))

asyncio.run(main())
rag.close()
print("finished", flush=True)
"""

Plan = list[tuple[str, str]]
DocState = tuple[Any, ...]


def _doc_state(rag: HybridRAG, doc_id: str) -> DocState:
    """Everything stored for one document, timestamps aside."""
    info = rag.catalog.get(doc_id)
    entry = None
    if info is not None:
        entry = (info.content_hash, info.pages, info.chunks, info.triples, info.title)
    return entry, rag.graph.dump(doc_id), rag.vectors.chunks(doc_id)  # type: ignore[attr-defined]


def _stored_ids(rag: HybridRAG) -> set[str]:
    return {*rag.graph.doc_ids(), *rag.vectors.doc_ids()}  # type: ignore[attr-defined]


def _vectors_match(rag: HybridRAG, doc_id: str) -> bool:
    """Every chunk's stored vector is the embedding of its own text."""
    chunks = rag.vectors.chunks(doc_id)
    vecs = asyncio.run(rag.embedder.embed_documents([c.text for c in chunks]))
    for chunk, vec in zip(chunks, vecs, strict=True):
        best = rag.vectors.search(vec, k=1, doc_ids=[doc_id])[0]
        if best.chunk.chunk_id != chunk.chunk_id or best.score < 0.999:
            return False
    return True


@dataclass
class Reference:
    """Clean builds of both plans, and how long one takes."""

    files: list[Path]
    ids: list[str]
    first: dict[str, DocState]
    second: dict[str, DocState]
    seconds: float

    def plan(self, which: int) -> Plan:
        shift = 0 if which == 0 else 1  # the second plan gives every id another sheet
        n = len(self.files)
        return [(d, str(self.files[(i + shift) % n])) for i, d in enumerate(self.ids)]


def _build(store: Path, plan: Plan) -> tuple[dict[str, DocState], float]:
    t = time.perf_counter()
    with HybridRAG(store, embedder="hashing", processes=False) as rag:
        for doc_id, path in plan:
            rag.ingest(path, doc_id=doc_id)
        took = time.perf_counter() - t
        return {d: _doc_state(rag, d) for d, _ in plan}, took


@pytest.fixture(scope="module")
def reference(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> Reference:
    folder = corpus / "laballey"
    files = sorted(folder.glob("*-grade-*.pdf"), key=lambda p: (p.stat().st_size, p.name))[:6]
    ids = [f"doc-{i}" for i in range(len(files))]
    ref = Reference(files, ids, {}, {}, 0.0)
    root = tmp_path_factory.mktemp("crash-ref")
    ref.first, took = _build(root / "a", ref.plan(0))
    ref.second, _ = _build(root / "b", ref.plan(1))
    ref.seconds = took
    assert ref.first != ref.second
    return ref


def _run_child(store: Path, plan: Plan, delay: float | None) -> bool:
    """Run the ingest child; kill -9 it ``delay`` s after it opened. True if killed."""
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(store), json.dumps(plan)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "open"
        if delay is None:
            assert child.wait(timeout=300) == 0, child.stderr.read() if child.stderr else ""
            return False
        time.sleep(delay)
        killed = child.poll() is None
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=60)
        return killed
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()


def _check_recovered(ref: Reference, store: Path, allowed: Sequence[dict[str, DocState]]) -> int:
    """Reopened after a kill: nothing uncatalogued served or kept, each doc one version.

    Returns:
        How many writes the kill left unfinished (their journal records; undone on open).
    """
    from hybrid_rag.stores._journal import Journal

    unfinished = len(Journal(store / "journal").pending())
    with HybridRAG(store, embedder="hashing", processes=False) as rag:
        catalogued = {d.doc_id for d in rag.documents()}  # the first flow recovers
        answer = rag.ask("What is the flash point?", mode="vector")  # unscoped
        assert {p.doc_id for p in answer.passages} <= catalogued
        assert _stored_ids(rag) <= catalogued, "orphans survived reopening"
        for doc_id in catalogued:
            state = _doc_state(rag, doc_id)
            assert any(state == versions[doc_id] for versions in allowed), doc_id
            assert _vectors_match(rag, doc_id), doc_id
    assert Journal(store / "journal").pending() == []
    return unfinished


def _check_converges(ref: Reference, store: Path, which: int) -> None:
    """Ingesting the plan again gives exactly the clean build."""
    expected = ref.first if which == 0 else ref.second
    with HybridRAG(store, embedder="hashing", processes=False) as rag:
        for doc_id, path in ref.plan(which):
            rag.ingest(path, doc_id=doc_id)
        assert {d.doc_id for d in rag.documents()} == set(expected)
        assert _stored_ids(rag) == {d for d, s in expected.items() if s[1] or s[2]}
        for doc_id, state in expected.items():
            assert _doc_state(rag, doc_id) == state, doc_id
            assert _vectors_match(rag, doc_id), doc_id
        hits = rag.vectors.keyword_search("flash point", k=10)  # type: ignore[attr-defined]
        assert {h.chunk.doc_id for h in hits} <= set(expected)


def _kill_rounds(
    ref: Reference, root: Path, rounds: int, seed: int, span: float = 1.2
) -> tuple[int, int]:
    """Each round: kill a first ingest, recover, finish; kill a replacing ingest, recover.

    Each kill comes at a random moment within ``span`` times the reference build's time.

    Returns:
        Kills that landed while the child still worked, and kills that left a write
        unfinished.
    """
    rng = random.Random(seed)
    killed = unfinished = 0
    for r in range(rounds):
        store = root / f"round-{r}"
        longest = ref.seconds * span
        for which, allowed in ((0, [ref.first]), (1, [ref.first, ref.second])):
            killed += _run_child(store, ref.plan(which), rng.uniform(0, longest))
            unfinished += _check_recovered(ref, store, allowed) > 0
            _check_converges(ref, store, which)
    return killed, unfinished


def test_kill_9_during_ingest_recovers(reference: Reference, tmp_path: Path) -> None:
    killed = 0
    for attempt in range(3):  # two kills a round; if both came after the child finished
        # (it ran faster than the reference build, e.g. the machine got quieter), the
        # next round kills sooner
        k, _ = _kill_rounds(reference, tmp_path / f"try-{attempt}", rounds=1, seed=12 + attempt,
                            span=1.2 / 2**attempt)  # fmt: skip
        killed += k
        if killed:
            break
    assert killed >= 1


@pytest.mark.slow
def test_kill_9_during_ingest_recovers_long(reference: Reference, tmp_path: Path) -> None:
    killed, unfinished = _kill_rounds(reference, tmp_path, rounds=15, seed=1212)
    print(f"kills that landed while the child worked: {killed} of 30; left a write unfinished: "
          f"{unfinished}")  # fmt: skip
    assert killed >= 20
    assert unfinished >= 3  # the suite does reach the moments that leave a write half done


# -- orphans on stores shared with other writers: never served ----------------------------


@pytest.fixture()
def orphaned(tmp_path: Path) -> Iterator[tuple[HybridRAG, str]]:
    """Three sample sheets; one lost its catalog entry (its graph and chunks remain)."""
    with HybridRAG(embedder="hashing") as rag:  # in memory: no cleaning on open
        rag.ingest_many(sample_pdfs(tmp_path / "pdfs"), raise_errors=True)
        orphan = "examplon-solvent-99"
        assert rag.catalog.delete(orphan)
        yield rag, orphan


@pytest.mark.parametrize(
    "question",
    [
        "What is the flash point of Examplon Solvent 99?",
        "Examplon Solvent 99 flash point boiling point",
        "What should I do after eye contact with Examplon Solvent 99?",
        "Which product has the lowest flash point?",
    ],
)
@pytest.mark.parametrize("mode", ["hybrid", "vector", "kg"])
def test_unscoped_asks_never_serve_an_orphan(
    orphaned: tuple[HybridRAG, str], question: str, mode: Any
) -> None:
    rag, orphan = orphaned
    assert orphan in rag.graph.doc_ids()
    answer = rag.ask(question, mode=mode)
    served = {p.doc_id for p in answer.passages} | {f.doc_id for f in answer.facts}
    served |= {c.doc_id for c in answer.citations}
    assert orphan not in served
    assert "examplon" not in (answer.text or "").lower() or answer.abstention is not None


def test_forget_removes_an_orphan_from_every_store(orphaned: tuple[HybridRAG, str]) -> None:
    rag, orphan = orphaned
    rag.forget(orphan)
    assert orphan not in rag.graph.doc_ids()
    assert rag.vectors.chunks(orphan) == []
