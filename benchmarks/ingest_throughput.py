"""Ingest throughput over a PDF corpus: hybrid_rag vs pypdf's raw text extraction, same run.

    python benchmarks/ingest_throughput.py --corpus ../shared/corpus/sds

For each round the raw pass (pypdf ``PdfReader`` + ``extract_text`` of every page) and the
full ingest (parse, chunk, extract, embed, write graph + vectors + catalog into a fresh
on-disk store) run on the same files back to back; a re-ingest of the unchanged corpus
follows. The machine's speed drifts between passes, so each round pairs one raw pass with
the ingests right after it; the summary gives the median ratio over the rounds. Writes
JSON to ``--out``.
"""

from __future__ import annotations

import argparse
import json
import logging
import platform
import resource
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from hybrid_rag import HybridRAG


def _args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--corpus", type=Path, required=True, help="folder searched for *.pdf")
    p.add_argument("--limit", type=int, default=0, help="only the first N files (0 = all)")
    p.add_argument("--rounds", type=int, default=1, help="raw/ours pairs to run")
    p.add_argument("--concurrency", type=int, default=4, help="ingest_many concurrency")
    p.add_argument("--embedder", default="hashing")
    p.add_argument(
        "--ocr",
        choices=("off", "auto"),
        default="off",
        help="off: pages without text stay empty (the throughput target); auto: OCR them",
    )
    p.add_argument(
        "--modes",
        nargs="+",
        choices=("processes", "threads"),
        default=["processes", "threads"],
        help="how ingest parses: worker processes (batches, the default) and/or threads",
    )
    p.add_argument("--out", type=Path, default=Path("benchmarks/results/ingest_throughput.json"))
    return p.parse_args()


def raw_pass(files: list[Path]) -> dict[str, float]:
    """pypdf alone: read every file and extract every page's text."""
    import pypdf

    logging.getLogger("pypdf").setLevel(logging.ERROR)
    t0 = time.perf_counter()
    pages = 0
    for f in files:
        try:
            reader = pypdf.PdfReader(f)
            for page in reader.pages:
                page.extract_text()
                pages += 1
        except Exception:
            continue
    dt = time.perf_counter() - t0
    return {"seconds": round(dt, 2), "pages": pages, "pages_per_s": round(pages / dt, 2)}


def ours(
    files: list[Path], *, concurrency: int, embedder: str, processes: bool, ocr: bool = False
) -> dict[str, Any]:
    """Full ingest into a fresh on-disk store, then a re-ingest of the same files."""
    store = Path(tempfile.mkdtemp(prefix="hr-bench-"))
    try:
        with HybridRAG(store, embedder=embedder, processes=processes, ocr=ocr) as rag:
            t0 = time.perf_counter()
            reports = rag.ingest_many(files, concurrency=concurrency)
            first = time.perf_counter() - t0
            t0 = time.perf_counter()
            again = rag.ingest_many(files, concurrency=concurrency)
            second = time.perf_counter() - t0
    finally:
        shutil.rmtree(store, ignore_errors=True)
    ok = [r for r in reports if r.status != "failed"]
    pages = sum(r.pages for r in ok)
    chunks = sum(r.chunks for r in ok)
    return {
        "seconds": round(first, 2),
        "documents": len(ok),
        "pages": pages,
        "chunks": chunks,
        "triples": sum(r.triples for r in ok),
        "pages_per_s": round(pages / first, 2),
        "chunks_per_s": round(chunks / first, 2),
        "failed": {r.source: r.error for r in reports if r.status == "failed"},
        "reingest_seconds": round(second, 3),
        "reingest_skipped": sum(r.status == "skipped" for r in again),
        "reingest_vs_first": round(second / first, 4),
    }


def main() -> int:
    a = _args()
    files = sorted(a.corpus.rglob("*.pdf"))
    if a.limit:
        files = files[: a.limit]
    rounds = []
    for i in range(a.rounds):
        raw = raw_pass(files)
        row: dict[str, Any] = {"raw": raw}
        for label in a.modes:
            procs = label == "processes"
            mine = ours(
                files,
                concurrency=a.concurrency,
                embedder=a.embedder,
                processes=procs,
                ocr=a.ocr == "auto",
            )
            ratio = round(mine["pages_per_s"] / raw["pages_per_s"], 3)
            row[label] = mine | {"ratio_vs_raw": ratio}
            print(
                f"round {i + 1} [{label}]: raw {raw['pages_per_s']} pages/s, ours "
                f"{mine['pages_per_s']} pages/s ({mine['chunks_per_s']} chunks/s), ratio "
                f"{ratio}, re-ingest {mine['reingest_vs_first']:.1%} of first",
                file=sys.stderr,
            )
        rounds.append(row)
    medians = {m: statistics.median(r[m]["ratio_vs_raw"] for r in rounds) for m in a.modes}
    result = {
        "files": len(files),
        "median_ratio_vs_raw": medians,
        "concurrency": a.concurrency,
        "embedder": a.embedder,
        "ocr": a.ocr,
        "machine": {
            "python": platform.python_version(),
            "cpus": _cpus(),
            "processor": platform.processor() or platform.machine(),
        },
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "rounds": rounds,
        "date": time.strftime("%Y-%m-%d"),
    }
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps(result, indent=1))
    print(
        json.dumps(
            {k: v for k, v in result.items() if k != "rounds"} | {"last": rounds[-1]}, indent=1
        )
    )
    return 0


def _cpus() -> int:
    import os

    return os.cpu_count() or 1


if __name__ == "__main__":
    sys.exit(main())
