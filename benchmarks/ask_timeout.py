"""Wall time of ``ask(timeout=T)`` when an LLM writes a valid but runaway SPARQL query.

    python benchmarks/ask_timeout.py [--asks 6] [--out benchmarks/results/ask_timeout.json]

The fake model answers the KG chain's SPARQL prompt with a four-way join of the sample
sheets' facts whose every row is filtered out: it passes ``check_generated`` and runs for
minutes in-process. Each ask must come back within ``T + 1`` s with a ``timeout`` chain
error. Also measured: the cost of the killable path on an ordinary query (the child's
start and copy, then per query) against the in-process query.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from _bench import meta, ms, stats, write_json

from hybrid_rag import HybridRAG
from hybrid_rag._vocab import HR
from hybrid_rag.models import ChatMessage
from hybrid_rag.samples import sample_pdfs
from hybrid_rag.testing import FunctionLLM

RUNAWAY = (
    f"SELECT ?fact WHERE {{ ?fact <{HR}status> ?s . ?f2 <{HR}status> ?s . "
    f'?f3 <{HR}status> ?s . ?f4 <{HR}status> ?s . FILTER(STR(?f4) = "nope") }}'
)
ORDINARY = f"SELECT ?fact WHERE {{ ?fact <{HR}property> ?p }} LIMIT 1000"
QUESTION = "Which product has the highest flash point?"  # no product named: LLM SPARQL


def _model(messages: Sequence[ChatMessage]) -> str:
    if "SPARQL" in messages[0].content:
        return f"```sparql\n{RUNAWAY}\n```"
    return "No answer."


def _walls(root: Path, timeout: float, asks: int) -> dict[str, object]:
    llm = FunctionLLM(_model)
    with HybridRAG(root / f"t{timeout:g}", embedder="hashing", llm=llm, timeout=timeout) as rag:
        rag.ingest_many(sample_pdfs(root / "pdfs"), raise_errors=True)
        walls = []
        for i in range(asks):
            t = time.perf_counter()
            answer = rag.ask(QUESTION, mode="kg" if i % 2 else "hybrid")
            walls.append(time.perf_counter() - t)
            if not any(e.kind == "timeout" for e in answer.errors):
                raise SystemExit(f"ask {i} reported no timeout: {answer.errors}")
    return {"timeout_s": timeout, "max_wall_s": round(max(walls), 3), "walls_s": walls}


def _overhead(root: Path) -> dict[str, object]:
    with HybridRAG(root / "t3", embedder="hashing") as rag:
        graph = rag.graph
        docs = [d.doc_id for d in rag.documents()]
        bounded = getattr(graph, "query_bounded")  # noqa: B009 - the Oxigraph store's extra

        def killable() -> object:
            return bounded(ORDINARY, scope=docs, timeout=30, max_rows=1000)

        first = ms(killable)
        return {
            "first_killable_ms": round(first, 1),
            "killable": stats([ms(killable) for _ in range(20)]),
            "in_process": stats([ms(lambda: graph.query(ORDINARY, scope=docs)) for _ in range(20)]),
        }


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--asks", type=int, default=6)
    p.add_argument("--out", type=Path, default=Path("benchmarks/results/ask_timeout.json"))
    a = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        runs = [_walls(root, t, a.asks) for t in (3.0, 10.0)]
        overhead = _overhead(root)
    for r in runs:
        walls = r["walls_s"]
        assert isinstance(walls, list)
        median = statistics.median(walls)
        print(f"timeout={r['timeout_s']}: max {r['max_wall_s']} s, median {median:.3f} s")
    print(f"killable query: {overhead}")
    write_json(a.out, {"meta": meta(), "runs": runs, "overhead": overhead})
    return 0


if __name__ == "__main__":
    sys.exit(main())
