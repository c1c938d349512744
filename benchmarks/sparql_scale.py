"""SPARQL latency of the embedded graph store as the knowledge graph grows.

Builds an on-disk :class:`~hybrid_rag.stores.oxigraph.OxigraphGraphStore` holding ``N``
triples spread over documents shaped like real SDS graphs (~250 triples per document:
one product with labels and direct property triples, plus ``hr:Fact`` nodes carrying
value, page, chunk, quote and, for quantities, a typed number and unit; see
``hybrid_rag/_vocab.py``). Every document is written with ``replace`` (the real ingest
path), then it measures p50/p95 latency of:

* ``doc_template``: one document's facts for one property (the deterministic template
  the KG chain runs), scope = one random document;
* ``cross_3``: the minimum flash point over three scoped documents;
* ``cross_30``: the same over 30 documents (a partial scope: oxigraph evaluates a
  multi-graph default graph with one lookup per graph, so cost grows ~ scope^2);
* ``cross_all``: the minimum flash point over every document in the store (the store
  switches to the union default graph when the scope covers every graph).

Each query is timed through ``store.query`` (validation + engine + conversion). The
validation result is cached per query text, so ``*_cold`` rows add one query whose text
was never seen (rdflib parse included).

Usage::

    python benchmarks/sparql_scale.py --triples 100000 1000000
    python benchmarks/sparql_scale.py --triples 20000 --repeat 50 --out /tmp/x.json

Writes ``benchmarks/results/sparql_scale.json``.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import platform
import random
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from hybrid_rag._vocab import DATA, HR, RDF_TYPE, RDFS_LABEL, SKOS_ALT
from hybrid_rag.rdf import Term, Triple, iri, literal
from hybrid_rag.stores.oxigraph import OxigraphGraphStore

__all__ = ["build_doc", "main"]

MSDS = "http://hybrid-rag.org/ontology/msds#"
RESULTS = Path(__file__).parent / "results" / "sparql_scale.json"
QUANTITIES = [
    ("flashPoint", "°C", -60.0, 250.0),
    ("boilingPoint", "°C", -40.0, 400.0),
    ("meltingPoint", "°C", -120.0, 300.0),
    ("autoIgnitionTemperature", "°C", 150.0, 600.0),
    ("pH", "", 0.0, 14.0),
    ("density", "g/cm³", 0.5, 3.0),
    ("vaporPressure", "hPa", 0.01, 500.0),
    ("lowerExplosionLimit", "%", 0.5, 15.0),
    ("upperExplosionLimit", "%", 5.0, 80.0),
    ("waterSolubility", "g/L", 0.0, 1000.0),
]
TEXTS = [
    "casNumber", "unNumber", "hazardStatement", "precautionaryStatement", "signalWord",
    "appearance", "odor", "supplier", "emergencyPhone", "hazardClass",
]  # fmt: skip
FACT_TRIPLES_TEXT = 10  # type, subject, property, value, status, doc, page, chunk, quote, +1
FACT_TRIPLES_QTY = 12


def build_doc(doc_id: str, rng: random.Random, *, facts: int = 20) -> list[Triple]:
    """A document graph shaped like an extracted SDS (~250 triples for 20 facts)."""
    subject = iri(f"{DATA}{doc_id}/product")
    out: list[Triple] = [
        (subject, iri(RDF_TYPE), iri(MSDS + "Product")),
        (subject, iri(RDFS_LABEL), literal(f"Product {doc_id}, HPLC Grade")),
        (subject, iri(SKOS_ALT), literal(f"Product {doc_id}")),
    ]
    props = rng.sample(QUANTITIES, 8) + rng.sample([(t, None, 0.0, 0.0) for t in TEXTS], 10)
    for n in range(facts):
        name, unit, low, high = props[n % len(props)]
        number = round(rng.uniform(low, high), 1) if unit is not None else None
        value = f"{number} {unit}".strip() if number is not None else f"{name} text {n} of {doc_id}"
        out += _fact(doc_id, n, subject, name, value, number, unit, rng)
    return out


def _fact(
    doc_id: str,
    n: int,
    subject: Term,
    name: str,
    value: str,
    number: float | None,
    unit: str | None,
    rng: random.Random,
) -> list[Triple]:
    node = iri(f"{DATA}{doc_id}/fact/{n}")
    page = rng.randint(1, 12)
    prop = iri(MSDS + name)
    triples: list[Triple] = [
        (subject, prop, literal(value)),
        (node, iri(RDF_TYPE), iri(HR + "Fact")),
        (node, iri(HR + "subject"), subject),
        (node, iri(HR + "property"), prop),
        (node, iri(HR + "value"), literal(value)),
        (node, iri(HR + "status"), literal("stated")),
        (node, iri(HR + "doc"), literal(doc_id)),
        (node, iri(HR + "page"), literal(page)),
        (node, iri(HR + "chunk"), literal(f"{doc_id}#p{page}c{n % 5}")),
        (node, iri(HR + "quote"), literal(f"{name}: {value} (section 9, line {n})")),
        (node, iri(HR + "extractor"), literal("offline-patterns")),
    ]
    if number is not None:
        triples.append((node, iri(HR + "number"), literal(number)))
        triples.append((node, iri(HR + "unit"), literal(unit or "")))
    return triples


DOC_TEMPLATE = f"""PREFIX hr: <{HR}>
PREFIX msds: <{MSDS}>
SELECT ?fact ?value ?number ?unit ?page ?chunk ?quote WHERE {{
  ?fact a hr:Fact ; hr:property msds:flashPoint ; hr:value ?value ;
        hr:page ?page ; hr:chunk ?chunk ; hr:quote ?quote .
  OPTIONAL {{ ?fact hr:number ?number ; hr:unit ?unit }}
}}"""

CROSS_MIN = f"""PREFIX hr: <{HR}>
PREFIX msds: <{MSDS}>
SELECT ?doc ?number ?unit ?page WHERE {{
  ?fact hr:property msds:flashPoint ; hr:number ?number ; hr:unit ?unit ;
        hr:doc ?doc ; hr:page ?page .
}} ORDER BY ASC(?number) LIMIT 1"""


_FRESH = itertools.count()  # makes query texts the validation cache has not seen


def _time(fn: Callable[[], object], repeat: int) -> dict[str, float]:
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1000)
    samples.sort()
    return {
        "p50_ms": round(statistics.median(samples), 3),
        "p95_ms": round(samples[min(len(samples) - 1, int(len(samples) * 0.95))], 3),
        "max_ms": round(samples[-1], 3),
        "n": repeat,
    }


def _build(
    path: Path, triples: int, seed: int
) -> tuple[OxigraphGraphStore, list[str], dict[str, Any]]:
    rng = random.Random(seed)
    store = OxigraphGraphStore(path)
    doc_ids: list[str] = []
    written, start = 0, time.perf_counter()
    while written < triples:
        doc_id = f"sds-{len(doc_ids):06d}"
        written += store.replace(doc_id, build_doc(doc_id, rng))
        doc_ids.append(doc_id)
    seconds = time.perf_counter() - start
    info = {
        "docs": len(doc_ids),
        "triples": written,
        "build_s": round(seconds, 2),
        "triples_per_s": round(written / seconds),
        "replace_ms_per_doc": round(seconds * 1000 / len(doc_ids), 3),
    }
    return store, doc_ids, info


def run_size(triples: int, *, repeat: int, seed: int, workdir: Path) -> dict[str, Any]:
    """Build a store of ``triples`` triples and time the queries."""
    path = workdir / f"kg-{triples}"
    shutil.rmtree(path, ignore_errors=True)
    store, docs, record = _build(path, triples, seed)
    rng = random.Random(seed + 1)
    store.query(DOC_TEMPLATE, scope=[docs[0]])  # warm the validation cache and the engine

    def doc_template() -> object:
        return store.query(DOC_TEMPLATE, scope=[rng.choice(docs)]).rows

    def cross_3() -> object:
        return store.query(CROSS_MIN, scope=rng.sample(docs, 3)).rows

    def cross_30() -> object:
        return store.query(CROSS_MIN, scope=rng.sample(docs, min(30, len(docs) - 1))).rows

    def cross_all() -> object:
        return store.query(CROSS_MIN, scope=docs).rows

    def doc_template_cold() -> object:  # a text never seen: rdflib parse + engine
        query = DOC_TEMPLATE + f"\nLIMIT {1000 + next(_FRESH)}"
        return store.query(query, scope=[rng.choice(docs)]).rows

    rows = len(store.query(DOC_TEMPLATE, scope=[docs[0]]).rows)
    record["queries"] = {
        "doc_template": {**_time(doc_template, repeat), "rows": rows},
        "doc_template_cold": _time(doc_template_cold, max(10, repeat // 10)),
        "cross_3": _time(cross_3, repeat),
        "cross_30": _time(cross_30, max(10, repeat // 10)),
        "cross_all": _time(cross_all, max(5, repeat // 20)),
    }
    store.close()
    size = sum(f.stat().st_size for f in path.rglob("*") if f.is_file())
    record["disk_mb"] = round(size / 2**20, 1)
    shutil.rmtree(path, ignore_errors=True)
    return record


def main(argv: list[str] | None = None) -> int:
    """Command line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--triples", type=int, nargs="+", default=[100_000, 1_000_000],
        help="store sizes in triples (default: 100000 1000000)",
    )  # fmt: skip
    parser.add_argument("--repeat", type=int, default=200, help="timed runs per query")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--workdir", type=Path, default=None, help="where stores are built")
    parser.add_argument("--out", type=Path, default=RESULTS, help="JSON output file")
    args = parser.parse_args(argv)
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="sparql-scale-"))
    results = []
    for size in args.triples:
        record = run_size(size, repeat=args.repeat, seed=args.seed, workdir=workdir)
        print(json.dumps(record))
        results.append(record)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    meta = {
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": f"{platform.machine()} python {platform.python_version()}",
        "cpus": os.cpu_count(),
        "store": "OxigraphGraphStore on disk (pyoxigraph/RocksDB)",
    }
    args.out.write_text(json.dumps({"meta": meta, "results": results}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
