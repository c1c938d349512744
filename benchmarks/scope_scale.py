"""SPARQL latency on the embedded graph store as the question's scope grows.

Builds an on-disk :class:`~hybrid_rag.stores.oxigraph.OxigraphGraphStore` of ``--triples``
triples (SDS-shaped documents of ~250 triples, ``benchmarks/sparql_scale.py``), then times
the cross-document query (minimum flash point, ``CROSS_MIN``) and the KG chain's fact
template (``hybrid_rag.ask.kg.fact_query`` for the flash point) scoped to 1, 10, 100,
1,000 documents and all of them, two ways in the same run:

* ``store``: ``store.query`` as it is now (per-graph dataset for small scopes, an
  in-memory copy of the scope's graphs from 8 documents, the union default graph for
  the whole store); ``first_ms`` is the first query on a scope (it makes the copy), the
  p50 the repeats (the copy is reused until a write);
* ``per_graph``: the previous plan, the dataset's default graph given as the list of the
  scope's graphs (oxigraph: one lookup per graph per pattern), for partial scopes up to
  ``--old-plan-max`` documents (it grows ~N^2: larger ones would take hours).

Every result is checked against the expected minimum of the scope.

Usage::

    python benchmarks/scope_scale.py --triples 1000000 --plot
    python benchmarks/scope_scale.py --plot-only

Writes ``benchmarks/results/scope_scale.json``; ``--plot`` draws ``docs/scope_scale.png``.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _bench import meta, write_json  # noqa: E402
from _bench import ms as _ms  # noqa: E402
from retrieval_scale import _axes  # noqa: E402
from sparql_scale import CROSS_MIN, MSDS, _build  # noqa: E402

from hybrid_rag.ask.kg import fact_query  # noqa: E402
from hybrid_rag.stores import oxigraph  # noqa: E402

RESULTS = HERE / "results" / "scope_scale.json"
PLOT = HERE.parent / "docs" / "scope_scale.png"
QUERIES = {"cross_min": CROSS_MIN, "fact_template": fact_query([MSDS + "flashPoint"])}


def _measure(
    store: Any, scope: list[str], sparql: str, repeat: int, *, old_plan: bool
) -> dict[str, Any]:
    graphs = [store.graph_iri(d) for d in scope]
    rows: list[Any] = []
    first = _ms(lambda: rows.extend(store.query(sparql, scope=scope).rows))
    again = [_ms(lambda: store.query(sparql, scope=scope)) for _ in range(repeat)]
    old: list[Any] = []
    per_graph = [] if not old_plan else [
        _ms(lambda: old.extend(oxigraph._execute(store._db(), sparql, graphs).rows))
        for _ in range(max(1, repeat // 3 if len(scope) <= 100 else 1))
    ]  # fmt: skip
    if old_plan:
        n = len(rows)
        assert sorted(map(str, rows)) == sorted(map(str, old[:n])), "plans disagree"
    return {
        "store": {"first_ms": round(first, 2), "p50_ms": round(statistics.median(again), 2)},
        "per_graph": {"p50_ms": round(statistics.median(per_graph), 2)} if per_graph else None,
        "rows": len(rows),
    }


def run(triples: int, repeat: int, scopes: list[int], old_max: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="scope_scale_") as tmp:
        store, docs, info = _build(Path(tmp) / "kg", triples, seed=7)
        rng = random.Random(3)
        store.query(CROSS_MIN, scope=docs[:1])  # warm the validation cache
        out: dict[str, Any] = {**info, "scopes": {}}
        for size in [*scopes, len(docs)]:
            scope = docs if size == len(docs) else rng.sample(docs, size)
            out["scopes"][str(size)] = {
                name: _measure(
                    store, scope, q, repeat, old_plan=size <= old_max and size < len(docs)
                )
                for name, q in QUERIES.items()
            }
            print(size, json.dumps(out["scopes"][str(size)]), flush=True)
        store.close()
    return out


def plot(payload: dict[str, Any], target: Path = PLOT) -> None:
    """Latency vs scope size (log-log), both plans, both queries."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    scopes = payload["result"]["scopes"]
    xs = [int(s) for s in scopes]
    fig, ax = plt.subplots(figsize=(7, 4.2))
    for name in QUERIES:
        ax.plot(xs, [scopes[s][name]["store"]["first_ms"] for s in scopes], "o-",
                label=f"{name}: store, first query on the scope")  # fmt: skip
        ax.plot(xs, [scopes[s][name]["store"]["p50_ms"] for s in scopes], "s--",
                label=f"{name}: store, repeated (p50)")  # fmt: skip
        pts = [(int(s), v[name]["per_graph"]["p50_ms"]) for s, v in scopes.items()
               if v[name]["per_graph"]]  # fmt: skip
        ax.plot(*zip(*pts, strict=True), "x:", label=f"{name}: previous per-graph dataset")
    result = payload["result"]
    _axes(
        ax,
        "documents in scope",
        f"Oxigraph, {result['triples']:,} triples, {result['docs']:,} documents",
    )
    fig.tight_layout()
    fig.savefig(target, dpi=110)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--triples", type=int, default=1_000_000)
    p.add_argument("--scopes", type=int, nargs="+", default=[1, 10, 100, 1000])
    p.add_argument("--repeat", type=int, default=9)
    p.add_argument(
        "--old-plan-max", type=int, default=100,
        help="largest scope timed with the previous plan (it grows ~N^2: ~30 s at 100 docs)",
    )  # fmt: skip
    p.add_argument("--out", type=Path, default=RESULTS)
    p.add_argument("--plot", action="store_true")
    p.add_argument("--plot-only", action="store_true")
    a = p.parse_args()
    if a.plot_only:
        plot(json.loads(a.out.read_text()))
        return 0
    payload = {"result": run(a.triples, a.repeat, a.scopes, a.old_plan_max), "meta": meta()}
    write_json(a.out, payload)
    if a.plot:
        plot(payload)
    return 0


if __name__ == "__main__":
    sys.exit(main())
