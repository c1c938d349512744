"""Throughput of the embedded default under load: 32 concurrent asks, with and without ingests.

Builds (or reuses, ``--store``) an on-disk embedded store of the whole SDS corpus with the
offline hashing embedder, then in one process:

1. ``asks``: ``--concurrency`` (default 32) tasks ask questions at once (the questions of
   both public QA sets, round robin, whole store, hybrid mode, offline) until
   ``--asks`` answers have come back;
2. ``asks_with_ingests``: the same while ``--ingests`` (default 8) tasks keep ingesting
   corpus PDFs under new document ids (``load-<n>-<name>``: real new documents, not
   skipped re-ingests) until the asks are done.

Reports p50/p95 latency per ask, questions per second, ingests completed and every error
(an exception, or a chain failure reported in ``Answer.errors``; a chain that found
nothing is not an error). The load documents are
removed at the end, so ``--store`` can be reused.

Usage::

    python benchmarks/concurrent_load.py --corpus ../shared/corpus/sds --store /tmp/corpus-store

Writes ``benchmarks/results/concurrent_load.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import re
import resource
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _bench import meta, stats, write_json  # noqa: E402

RESULTS = HERE / "results" / "concurrent_load.json"
_NOT_FOUND = {"empty", "empty_scope", "no_template"}  # a chain found nothing: no failure
SHARED = HERE.parent.parent / "shared"


def _questions() -> list[str]:
    out = []
    for name in ("qa-public.jsonl", "qa-public-2.jsonl"):
        for line in (SHARED / "eval" / name).read_text().splitlines():
            out.append(json.loads(line)["question"])
    return out


async def _asks(rag: Any, questions: list[str], total: int, concurrency: int) -> dict[str, Any]:
    todo = itertools.count()
    latencies: list[float] = []
    errors: list[str] = []

    async def worker() -> None:
        while (i := next(todo)) < total:
            t = time.perf_counter()
            try:
                answer = await rag.aask(questions[i % len(questions)])
            except Exception as exc:
                errors.append(f"{type(exc).__name__}: {exc}")
                continue
            latencies.append((time.perf_counter() - t) * 1000)
            errors.extend(f"{e.chain} {e.kind}: {e.message}" for e in answer.errors
                          if e.kind not in _NOT_FOUND)  # fmt: skip

    start = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    wall = time.perf_counter() - start
    return {
        "asks": len(latencies), "concurrency": concurrency, "wall_s": round(wall, 1),
        "questions_per_s": round(len(latencies) / wall, 2), **stats(latencies, 1),
        "errors": len(errors), "error_samples": errors[:5],
    }  # fmt: skip


async def _ingests(rag: Any, files: list[Path], stop: asyncio.Event, n: int) -> dict[str, Any]:
    counter = itertools.count()
    done: list[str] = []
    errors: list[str] = []

    async def worker() -> None:
        while not stop.is_set():
            i = next(counter)
            path = files[i % len(files)]
            doc_id = re.sub(r"[^A-Za-z0-9_.-]", "_", f"load-{i}-{path.stem}")[:128]
            try:
                report = await rag.aingest(path, doc_id=doc_id)
            except Exception as exc:
                errors.append(f"{type(exc).__name__}: {exc}")
                continue
            done.append(report.doc_id)

    await asyncio.gather(*(worker() for _ in range(n)))
    return {"ingests": len(done), "ingest_tasks": n, "errors": len(errors),
            "error_samples": errors[:5], "doc_ids": done}  # fmt: skip


async def run(a: argparse.Namespace) -> dict[str, Any]:
    from hybrid_rag import HybridRAG
    from hybrid_rag.ingest.load import iter_files

    files = iter_files(a.corpus)
    questions = _questions()
    out: dict[str, Any] = {}
    async with HybridRAG(path=a.store, embedder="hashing") as rag:
        t = time.perf_counter()
        reports = await rag.aingest_many(files, concurrency=4)
        out["corpus"] = {
            "documents": len(rag.documents()), "ingest_s": round(time.perf_counter() - t, 1),
            "failed": sum(r.status == "failed" for r in reports),
        }  # fmt: skip
        await rag.aask(questions[0])  # open the stores and indexes
        out["asks"] = await _asks(rag, questions, a.asks, a.concurrency)
        print(json.dumps(out), flush=True)
        stop = asyncio.Event()
        load = asyncio.create_task(_ingests(rag, files, stop, a.ingests))
        await asyncio.sleep(1.0)  # let the ingests get going
        out["asks_with_ingests"] = await _asks(rag, questions, a.asks, a.concurrency)
        stop.set()
        ingests = await load
        for doc in ingests.pop("doc_ids"):
            await rag.aforget(doc)
        out["asks_with_ingests"]["ingests"] = ingests
    out["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    return out


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--corpus", type=Path, default=SHARED / "corpus" / "sds")
    p.add_argument("--store", type=Path, required=True)
    p.add_argument("--asks", type=int, default=320)
    p.add_argument("--concurrency", type=int, default=32)
    p.add_argument("--ingests", type=int, default=8)
    p.add_argument("--out", type=Path, default=RESULTS)
    a = p.parse_args()
    result = asyncio.run(run(a))
    payload = {"meta": meta(), "result": result}
    write_json(a.out, payload)
    print(json.dumps(payload["result"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
