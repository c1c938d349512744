"""Latency of the first and second question in a fresh process on an existing store.

    python benchmarks/first_question.py --store DIR --question "What is the flash point of X?"

A CLI call (`hybrid-rag ask`) pays the first-question cost every time: opening the
stores, loading the ontology and the saved BM25 index. Build the store first, e.g.
``hybrid-rag ingest ../shared/corpus/sds --store DIR --embedder hashing``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--store", type=Path, required=True)
    p.add_argument("--question", required=True)
    p.add_argument("--embedder", default="auto", help="'auto' uses the store's own embedder")
    a = p.parse_args()
    t0 = time.perf_counter()
    from hybrid_rag import HybridRAG

    with HybridRAG(a.store, embedder=a.embedder) as rag:
        t1 = time.perf_counter()
        rag.ask(a.question)
        t2 = time.perf_counter()
        rag.ask(a.question)
        t3 = time.perf_counter()
    print(
        json.dumps(
            {
                "import_and_open_s": round(t1 - t0, 3),
                "first_ask_s": round(t2 - t1, 3),
                "second_ask_s": round(t3 - t2, 3),
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
