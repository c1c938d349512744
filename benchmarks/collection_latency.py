"""Latency of questions about the whole collection on the 434-sheet store (issue 17).

Ingests ``../shared/corpus/sds/laballey`` and ``libman`` into ``--store`` (kept between
runs; an unchanged document is not ingested again), then asks every question of
``qa-collection.jsonl`` unscoped, offline: once to warm the store (the first query over
many documents loads the in-memory mirror), then ``--repeats`` times. Reports p50 / p95 /
max per pass and how many members the answers list.

Usage::

    python benchmarks/collection_latency.py --store ../collstore --repeats 2

Writes ``benchmarks/results/collection_latency.json``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _bench import meta, write_json  # noqa: E402

from hybrid_rag import HybridRAG  # noqa: E402

SHARED = HERE.parent.parent / "shared"
QA = SHARED / "eval" / "qa-collection.jsonl"
CORPUS = SHARED / "corpus" / "sds"
RESULTS = HERE / "results" / "collection_latency.json"


def _pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return round(xs[min(len(xs) - 1, int(q * len(xs)))], 1)


def _pass(rag: HybridRAG, questions: list[str]) -> dict[str, Any]:
    ms: list[float] = []
    members: list[int] = []
    for q in questions:
        t = time.perf_counter()
        answer = rag.ask(q)
        ms.append((time.perf_counter() - t) * 1000)
        members.append(len({f.doc_id for f in answer.facts}))
    return {
        "p50_ms": round(statistics.median(ms), 1),
        "p95_ms": _pct(ms, 0.95),
        "max_ms": round(max(ms), 1),
        "members_total": sum(members),
    }


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--store", type=Path, required=True)
    p.add_argument("--repeats", type=int, default=2)
    p.add_argument("--out", type=Path, default=RESULTS)
    a = p.parse_args()
    if not QA.exists():
        print(f"needs {QA} (the shared eval folder)", file=sys.stderr)
        return 2
    questions = [json.loads(x)["question"] for x in QA.read_text().splitlines() if x.strip()]
    files = sorted((CORPUS / "laballey").glob("*.pdf")) + sorted((CORPUS / "libman").glob("*.pdf"))
    with HybridRAG(a.store, embedder="hashing") as rag:
        t = time.perf_counter()
        rag.ingest_many([str(f) for f in files])
        ingest_s = round(time.perf_counter() - t, 1)
        cold = _pass(rag, questions)
        warm = [_pass(rag, questions) for _ in range(a.repeats)]
        documents = len(rag.documents())
    result = {"documents": documents, "questions": len(questions), "ingest_s": ingest_s,
              "cold": cold, "warm": warm}  # fmt: skip
    print(json.dumps(result, indent=2))
    write_json(a.out, {"meta": meta(qa=QA.name), **result})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
