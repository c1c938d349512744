"""Questions about the whole collection on a store of 10,000 documents (issue 17).

The 434 real sheets of ``../shared/corpus/sds/laballey`` and ``libman`` are ingested
once into ``--source`` (kept between runs, as ``collection_latency.py`` does), then
copied ``ceil(--documents / 434)`` times under new ids into a fresh ``--store`` (kept
with ``--reuse`` when a former run built it whole): each
copy's graph, chunks (with their vectors) and catalog entry, the ids rewritten
(``<id>-c01`` ...), every value, quote and page as they were. The copies are written
straight to the three stores (no journal: a benchmark store, thrown away). Every
question of ``qa-collection.jsonl`` is then asked unscoped, offline, once cold (the
first query over the whole store loads its in-memory mirror) and ``--repeats`` times
warm, and the same on the 434-sheet source in the same run, side by side.

As a check on the answers, not only their speed: with every sheet copied the same
number of times, each question's members at scale (last warm pass) are that many times
its members on the source (``members_ratio_ok``; ``members_off`` lists the others).
The source's graphs are copied with the term index added where they lack it
(``hybrid_rag.ingest.triples.with_term_index``); the source's own documents keep their
catalog entries, so an ingest of its files skips them.

Usage::

    python benchmarks/collection_scale.py --source ../collstore --store /tmp/coll10k

Writes ``benchmarks/results/collection_scale.json``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import resource
import shutil
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _bench import meta, stats, write_json  # noqa: E402

from hybrid_rag import HybridRAG  # noqa: E402
from hybrid_rag.ingest._writes import graph_triples  # noqa: E402
from hybrid_rag.ingest.triples import doc_local_name, with_term_index  # noqa: E402
from hybrid_rag.models import Chunk  # noqa: E402
from hybrid_rag.rdf import Term, Triple  # noqa: E402

SHARED = HERE.parent.parent / "shared"
QA = SHARED / "eval" / "qa-collection.jsonl"
CORPUS = SHARED / "corpus" / "sds"
RESULTS = HERE / "results" / "collection_scale.json"
_HR = "http://hybrid-rag.org/ns#"
_BY_ID = (_HR + "doc", _HR + "chunk")  # literals that hold the doc id


def _renamed_triples(triples: list[Triple], old: str, new: str) -> list[Triple]:
    """The triples with the document's id replaced wherever it is spelled."""
    was, now = doc_local_name(old), doc_local_name(new)

    def term(t: Term, pred: str | None = None) -> Term:
        if t.kind == "iri" and was in t.value:
            return Term(t.value.replace(was, now), "iri")
        if t.kind == "literal" and pred in _BY_ID and t.value.startswith(old):
            return Term(new + t.value[len(old) :], "literal", t.datatype, t.lang)
        return t

    return [(term(s), term(p), term(o, p.value)) for s, p, o in triples]


def _renamed_chunks(chunks: list[Chunk], old: str, new: str) -> list[Chunk]:
    return [
        c.model_copy(update={"doc_id": new, "chunk_id": new + c.chunk_id[len(old) :]})
        for c in chunks
    ]


def _copy(src: HybridRAG, dst: HybridRAG, copies: int) -> dict[str, Any]:
    """Write every source document ``copies`` times into ``dst`` (the first under its
    own id)."""
    t = time.perf_counter()
    docs = src.documents()
    for info in docs:
        triples = with_term_index(info.doc_id, graph_triples(src.graph, info.doc_id))
        chunks, vectors = src.vectors.export(info.doc_id)  # type: ignore[attr-defined]
        for k in range(copies):
            new = info.doc_id if k == 0 else f"{info.doc_id}-c{k:02d}"
            dst.graph.replace(new, _renamed_triples(triples, info.doc_id, new))
            dst.vectors.replace(new, _renamed_chunks(list(chunks), info.doc_id, new), vectors)
            if k == 0:  # the source's own entry: an ingest of its file skips it
                dst.catalog.put(info)
                continue
            digest = hashlib.sha256(f"{info.content_hash}{k}".encode()).hexdigest()
            update = {"doc_id": new, "content_hash": digest, "source": f"{info.source}#copy{k}"}
            dst.catalog.put(info.model_copy(update=update))
    return {"documents": len(docs) * copies, "copy_s": round(time.perf_counter() - t, 1)}


def _pass(rag: HybridRAG, questions: list[str]) -> tuple[dict[str, Any], list[int]]:
    samples: list[float] = []
    members: list[int] = []
    for q in questions:
        t = time.perf_counter()
        answer = rag.ask(q)
        samples.append((time.perf_counter() - t) * 1000)
        members.append(len({f.doc_id for f in answer.facts}))
    return {**stats(samples, 1), "members_total": sum(members)}, members


def _measure(rag: HybridRAG, questions: list[str], repeats: int) -> dict[str, Any]:
    """A cold pass and ``repeats`` warm ones; the members of the last (a cold question
    whose graph chain ran past the time budget while the mirror loaded lists none)."""
    cold, members = _pass(rag, questions)
    warm = []
    for _ in range(repeats):
        stats_, members = _pass(rag, questions)
        warm.append(stats_)
    return {"documents": len(rag.documents()), "cold": cold, "warm": warm, "members": members}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--source", type=Path, required=True, help="the 434-sheet store (kept)")
    p.add_argument("--store", type=Path, required=True, help="the copies' store")
    p.add_argument("--reuse", action="store_true", help="keep a store a former run built")
    p.add_argument("--documents", type=int, default=10_000)
    p.add_argument("--repeats", type=int, default=2)
    p.add_argument("--out", type=Path, default=RESULTS)
    a = p.parse_args()
    if not QA.exists():
        print(f"needs {QA} (the shared eval folder)", file=sys.stderr)
        return 2
    questions = [json.loads(x)["question"] for x in QA.read_text().splitlines() if x.strip()]
    files = sorted((CORPUS / "laballey").glob("*.pdf")) + sorted((CORPUS / "libman").glob("*.pdf"))
    if not a.reuse:
        shutil.rmtree(a.store, ignore_errors=True)
    with HybridRAG(a.source, embedder="hashing") as src:
        src.ingest_many([str(f) for f in files])
        copies = math.ceil(a.documents / len(src.documents()))
        small = _measure(src, questions, a.repeats)
        with HybridRAG(a.store, embedder="hashing") as dst:
            done = a.reuse and len(dst.documents()) == copies * len(src.documents())
            built = {"documents": copies * len(src.documents()), "copy_s": None} if done else {}
            built = built or _copy(src, dst, copies)
            large = _measure(dst, questions, a.repeats)
    ratio_ok = all(m * copies == n for m, n in zip(small["members"], large["members"], strict=True))
    result = {
        "copies": copies,
        **built,
        "source": {k: v for k, v in small.items() if k != "members"},
        "scaled": {k: v for k, v in large.items() if k != "members"},
        "members_ratio_ok": ratio_ok,
        "members_off": [
            {"question": q, "source": m, "scaled": n}
            for q, m, n in zip(questions, small["members"], large["members"], strict=True)
            if m * copies != n
        ],
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
    }
    print(json.dumps(result, indent=2))
    write_json(a.out, {"meta": meta(qa=QA.name), **result})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
