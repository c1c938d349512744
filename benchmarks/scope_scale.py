"""SPARQL latency on the embedded graph store as the question's scope grows.

Builds an on-disk :class:`~hybrid_rag.stores.oxigraph.OxigraphGraphStore` of ``--triples``
triples (SDS-shaped documents of ~250 triples, ``benchmarks/sparql_scale.py``), then times
the cross-document query (minimum flash point, ``CROSS_MIN``) and the KG chain's fact
template (``hybrid_rag.ask.kg.fact_query`` for the flash point) scoped to 1, 10, 100,
1,000 documents and all of them, three ways in the same run, on the same files:

* ``mirror``: ``store.query`` as it is now: from 8 documents the query reads the
  in-memory mirror of the store (loaded once in the background, then kept current by
  writes): the whole store on its union graph, a partial scope on a copy of its graphs
  taken from the mirror. ``first_ms`` is the first query on a scope (it makes the copy),
  the p50 the repeats (the copy is reused until a write);
* ``disk``: the same store opened with ``mirror=False`` (the plan before the mirror):
  partial scopes copied from the disk, the whole store on the on-disk union graph;
* ``per_graph``: the plan before that, the dataset's default graph given as the list of
  the scope's graphs (oxigraph: one lookup per graph per pattern), for partial scopes up
  to ``--old-plan-max`` documents (it grows ~N^2: larger ones would take hours).

Every result is checked against the other plans'. The mirror's load time and the
process's memory before and after it are recorded.

Usage::

    python benchmarks/scope_scale.py --triples 1000000 --plot
    python benchmarks/scope_scale.py --plot-only

Writes ``benchmarks/results/scope_scale.json``; ``--plot`` draws ``docs/scope_scale.png``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
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
from hybrid_rag.stores.oxigraph import OxigraphGraphStore  # noqa: E402

RESULTS = HERE / "results" / "scope_scale.json"
PLOT = HERE.parent / "docs" / "scope_scale.png"
QUERIES = {"cross_min": CROSS_MIN, "fact_template": fact_query([MSDS + "flashPoint"])}


def _timed(store: Any, scope: list[str], sparql: str, repeat: int) -> tuple[dict[str, Any], list]:
    rows: list[Any] = []
    first = _ms(lambda: rows.extend(store.query(sparql, scope=scope).rows))
    again = [_ms(lambda: store.query(sparql, scope=scope)) for _ in range(repeat)]
    timing = {"first_ms": round(first, 2), "p50_ms": round(statistics.median(again), 2)}
    return timing, sorted(map(str, rows))


def _per_graph(store: Any, scope: list[str], sparql: str, repeat: int) -> tuple[float, list]:
    graphs = [store.graph_iri(d) for d in scope]
    rows: list[Any] = []
    times = [
        _ms(lambda: rows.extend(oxigraph._execute(store._db(), sparql, graphs).rows))
        for _ in range(max(1, repeat // 3 if len(scope) <= 100 else 1))
    ]
    return round(statistics.median(times), 2), sorted(map(str, rows[: len(rows) // len(times)]))


def _rss_mb() -> float:
    with open("/proc/self/statm") as fh:
        return round(int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6, 1)


def _scopes(docs: list[str], sizes: list[int]) -> dict[int, list[str]]:
    rng = random.Random(3)
    return {n: docs if n >= len(docs) else rng.sample(docs, n) for n in [*sizes, len(docs)]}


def run(triples: int, repeat: int, sizes: list[int], old_max: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="scope_scale_") as tmp:
        built, docs, info = _build(Path(tmp) / "kg", triples, seed=7)
        built.close()
        scopes = _scopes(docs, sizes)
        out: dict[str, Any] = {**info, "scopes": {str(n): {} for n in scopes}}
        expected: dict[tuple[int, str], list] = {}
        with OxigraphGraphStore(Path(tmp) / "kg", mirror=False) as disk:
            disk.query(CROSS_MIN, scope=docs[:1])  # warm the validation cache
            for n, scope in scopes.items():
                for name, sparql in QUERIES.items():
                    timing, expected[n, name] = _timed(disk, scope, sparql, repeat)
                    cell = out["scopes"][str(n)].setdefault(name, {"rows": len(expected[n, name])})
                    cell["disk"] = timing
                    if n <= old_max and n < len(docs):
                        cell["per_graph"], rows = _per_graph(disk, scope, sparql, repeat)
                        assert rows == expected[n, name], "per-graph plan disagrees"
                print(n, "disk", json.dumps(out["scopes"][str(n)]), flush=True)
        with OxigraphGraphStore(Path(tmp) / "kg") as store:
            store.query(CROSS_MIN, scope=docs[:1])
            before = _rss_mb()
            start = time.perf_counter()
            store.query(CROSS_MIN, scope=docs)  # starts the mirror's load
            assert store._mirror is not None and store._mirror.wait(3600)
            out["mirror_load_s"] = round(time.perf_counter() - start, 2)
            out["rss_mb_before_after_mirror"] = [before, _rss_mb()]
            for n, scope in scopes.items():
                for name, sparql in QUERIES.items():
                    timing, rows = _timed(store, scope, sparql, repeat)
                    assert rows == expected[n, name], "mirror and disk disagree"
                    out["scopes"][str(n)][name]["mirror"] = timing
                print(n, "mirror", json.dumps(out["scopes"][str(n)]), flush=True)
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
        ax.plot(xs, [scopes[s][name]["mirror"]["p50_ms"] for s in scopes], "o-",
                label=f"{name}: now (mirror), repeated p50")  # fmt: skip
        ax.plot(xs, [scopes[s][name]["disk"]["p50_ms"] for s in scopes], "s--",
                label=f"{name}: mirror=False, repeated p50")  # fmt: skip
        pts = [(int(s), v[name]["per_graph"]) for s, v in scopes.items()
               if v[name].get("per_graph")]  # fmt: skip
        ax.plot(*zip(*pts, strict=True), "x:", label=f"{name}: per-graph dataset (older)")
    big = [int(s) for s in scopes if int(s) >= 10]  # 1 document: fixed costs dominate
    rate = max(scopes[str(n)]["fact_template"]["mirror"]["p50_ms"] / n for n in big)
    ax.plot(big, [rate * x for x in big], color="grey", lw=0.8,
            label=f"linear, {rate:.3f} ms per document")  # fmt: skip
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
