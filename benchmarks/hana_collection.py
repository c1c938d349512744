"""What a collection question sends to HANA and gets back, on the HANA double (issue 17).

The graph of an embedded ``--source`` store (its documents' named graphs, as ingest or
``collection_scale.py`` wrote them) is loaded into the double of ``SYS.SPARQL_EXECUTE``
(``hybrid_rag.testing.hana_doubles``: a real SPARQL engine behind HANA's procedure), and
``HybridRAG`` asks every question of ``qa-collection.jsonl`` unscoped with a
``HanaGraphStore`` on it (the catalog and the vectors are the source's own). Every
statement the store sends is recorded: how many per question, their size, the rows
they return. The double is not HANA: its times say nothing of HANA's; sizes and rows are
what HANA would receive and send.

Usage::

    python benchmarks/hana_collection.py --source ../collstore --out result.json

Writes ``benchmarks/results/hana_collection.json`` by default.
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
from hybrid_rag.rdf import SparqlResult  # noqa: E402
from hybrid_rag.stores.hana import HanaConnectionPool, HanaGraphStore  # noqa: E402
from hybrid_rag.testing.hana_doubles import FAKE_SETTINGS, FakeHdbcli  # noqa: E402

SHARED = HERE.parent.parent / "shared"
QA = SHARED / "eval" / "qa-collection.jsonl"
RESULTS = HERE / "results" / "hana_collection.json"


class _Recorded(HanaGraphStore):
    """A ``HanaGraphStore`` that notes the size and the rows of every statement."""

    sent: list[tuple[int, int]]

    def _select(self, sparql: str) -> SparqlResult:
        result = super()._select(sparql)
        self.sent.append((len(sparql.encode()), len(result.rows)))
        return result


def _load(source: Path, driver: FakeHdbcli) -> int:
    """Every named graph of the source's graph folder, into the double's engine."""
    from pyoxigraph import Store

    disk = Store.read_only(str(source / "graph"))
    driver.database.rdf.bulk_extend(disk.quads_for_pattern(None, None, None, None))
    return sum(1 for _ in driver.database.rdf.named_graphs())


def _pct(xs: list[int], q: float) -> int:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--source", type=Path, required=True, help="an embedded store (kept)")
    p.add_argument("--out", type=Path, default=RESULTS)
    a = p.parse_args()
    questions = [json.loads(x)["question"] for x in QA.read_text().splitlines() if x.strip()]
    driver = FakeHdbcli()
    graphs = _load(a.source, driver)
    store = _Recorded(pool=HanaConnectionPool(FAKE_SETTINGS, driver=driver))
    per_question: list[dict[str, Any]] = []
    with HybridRAG(a.source, graph=store, embedder="hashing") as rag:
        for q in questions:
            store.sent = []
            t = time.perf_counter()
            answer = rag.ask(q, mode="kg")
            sent = list(store.sent)
            per_question.append({
                "statements": len(sent),
                "largest_bytes": max((s for s, _r in sent), default=0),
                "bytes": sum(s for s, _r in sent),
                "rows": sum(r for _s, r in sent),
                "members": len({f.doc_id for f in answer.facts}),
                "double_ms": round((time.perf_counter() - t) * 1000),
            })  # fmt: skip
    largest = [x["largest_bytes"] for x in per_question]
    rows = [x["rows"] for x in per_question]
    result = {
        "graphs": graphs,
        "questions": len(questions),
        "statements_per_question": statistics.mean(x["statements"] for x in per_question),
        "largest_statement_bytes": {"p50": _pct(largest, 0.5), "max": max(largest)},
        "rows_per_question": {"p50": _pct(rows, 0.5), "p95": _pct(rows, 0.95), "max": max(rows)},
        "members_total": sum(x["members"] for x in per_question),
        "per_question": per_question,
    }
    print(json.dumps({k: v for k, v in result.items() if k != "per_question"}, indent=2))
    write_json(a.out, {"meta": meta(qa=QA.name), **result})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
