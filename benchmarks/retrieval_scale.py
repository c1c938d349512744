"""Retrieval latency and memory of the embedded vector store as the chunk count grows.

For each size ``N`` (default 10k, 100k, 1M chunks) a child process builds an on-disk
:class:`~hybrid_rag.stores.local_vectors.LocalVectorStore` through its real write path
(``replace`` per document, ``--chunks-per-doc`` chunks each, like an SDS sheet), with
synthetic 384-d vectors (one gaussian cluster per document, L2-normalised) and synthetic
text (Zipf-distributed words from a fixed vocabulary, plus a CAS-like code per chunk).
It then measures p50/p95 of:

* ``dense``: top-10 over the whole store (exact scan below the store's ``ann_threshold``,
  HNSW above it; the first search pays the lazy index build, reported as ``first_ms``);
* ``dense_doc1`` / ``dense_doc10``: top-10 restricted to 1 / 10 random documents;
* ``bm25``: top-10 keyword search (the first search builds the index: ``first_ms``);
* ``bm25_doc1``: the same restricted to one document;

and the child's peak RSS (``ru_maxrss``) and the store's size on disk. SPARQL at 100k and
1M triples is measured by ``benchmarks/sparql_scale.py``; ``--plot`` draws both (needs
matplotlib, only for ``--plot``).

Usage::

    python benchmarks/retrieval_scale.py --sizes 10000 100000 1000000
    python benchmarks/retrieval_scale.py --plot-only      # redraw docs/retrieval_scale.png

Writes ``benchmarks/results/retrieval_scale.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "retrieval_scale.json"
SPARQL = HERE / "results" / "sparql_scale.json"
PLOT = HERE.parent / "docs" / "retrieval_scale.png"
DIM = 384
VOCAB = 30_000


def _args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    p.add_argument("--chunks-per-doc", type=int, default=25)
    p.add_argument("--words", type=int, default=60, help="words per synthetic chunk")
    p.add_argument("--queries", type=int, default=200)
    p.add_argument("--ann-threshold", type=int, default=None, help="store default if omitted")
    p.add_argument("--out", type=Path, default=RESULTS)
    p.add_argument("--plot", action="store_true", help=f"also draw {PLOT} (needs matplotlib)")
    p.add_argument("--plot-only", action="store_true", help="only redraw the plot from --out")
    p.add_argument("--child", type=int, help=argparse.SUPPRESS)
    return p.parse_args()


# --- data ----------------------------------------------------------------------------------


def _words(rng: np.random.Generator, n: int) -> list[str]:
    ranks = np.minimum(rng.zipf(1.2, n), VOCAB) - 1
    return [f"w{r}" for r in ranks]


def _doc(rng: np.random.Generator, d: int, k: int, words: int) -> tuple[list[Any], np.ndarray]:
    from hybrid_rag.models import Chunk

    did = f"doc{d:07d}"
    chunks = []
    for i in range(k):
        text = " ".join(_words(rng, words)) + f" cas {d % 99991}-{i % 97}-{d % 7}"
        chunks.append(
            Chunk(chunk_id=f"{did}#c{i}", doc_id=did, page=1 + i // 5, start=0, end=len(text),
                  text=text)
        )  # fmt: skip
    centre = rng.standard_normal(DIM, dtype=np.float32)
    vecs = centre + 0.8 * rng.standard_normal((k, DIM), dtype=np.float32)
    return chunks, vecs / np.linalg.norm(vecs, axis=1, keepdims=True)


def _build(store: Any, n: int, per_doc: int, words: int) -> tuple[int, float]:
    rng = np.random.default_rng(7)
    docs = max(1, n // per_doc)
    t = time.perf_counter()
    for d in range(docs):
        store.replace(f"doc{d:07d}", *_doc(rng, d, per_doc, words))
    return docs, time.perf_counter() - t


# --- timing --------------------------------------------------------------------------------


def _stats(samples: list[float]) -> dict[str, float]:
    s = sorted(samples)
    return {
        "p50_ms": round(statistics.median(s), 3),
        "p95_ms": round(s[min(len(s) - 1, int(0.95 * len(s)))], 3),
        "n": len(s),
    }


def _time(fn: Callable[[int], object], n: int) -> list[float]:
    out = []
    for i in range(n):
        t = time.perf_counter()
        fn(i)
        out.append((time.perf_counter() - t) * 1000)
    return out


def _measure(store: Any, docs: int, queries: int) -> dict[str, Any]:
    rng = np.random.default_rng(11)
    qv = rng.standard_normal((queries, DIM), dtype=np.float32)
    pick = rng.integers(0, docs, size=(queries, 10))
    terms = [" ".join(_words(rng, 3)) for _ in range(queries)]
    ids = [[f"doc{d:07d}" for d in row] for row in pick]
    res: dict[str, Any] = {}
    first = _time(lambda i: store.search(qv[i], k=10), 1)
    res["dense"] = {**_stats(_time(lambda i: store.search(qv[i], k=10), queries)),
                    "first_ms": round(first[0], 1)}  # fmt: skip
    res["dense_doc1"] = _stats(
        _time(lambda i: store.search(qv[i], k=10, doc_ids=ids[i][:1]), queries)
    )
    res["dense_doc10"] = _stats(_time(lambda i: store.search(qv[i], k=10, doc_ids=ids[i]), queries))
    first = _time(lambda i: store.keyword_search(terms[i], k=10), 1)
    res["bm25"] = {**_stats(_time(lambda i: store.keyword_search(terms[i], k=10), queries)),
                   "first_ms": round(first[0], 1)}  # fmt: skip
    res["bm25_doc1"] = _stats(
        _time(lambda i: store.keyword_search(terms[i], k=10, doc_ids=ids[i][:1]), queries)
    )
    return res


def _disk_mb(path: Path) -> float:
    return round(sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) / 2**20, 1)


def child(n: int, a: argparse.Namespace) -> dict[str, Any]:
    """Build one store of ``n`` chunks and measure it (run in a fresh process)."""
    from hybrid_rag.stores.local_vectors import LocalVectorStore

    tmp = Path(tempfile.mkdtemp(prefix="retrieval_scale_"))
    kw = {} if a.ann_threshold is None else {"ann_threshold": a.ann_threshold}
    try:
        store = LocalVectorStore(tmp / "vectors", dim=DIM, **kw)
        docs, build_s = _build(store, n, a.chunks_per_doc, a.words)
        rss_build = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        queries = _measure(store, docs, a.queries)
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        store.close()
        return {
            "chunks": docs * a.chunks_per_doc,
            "docs": docs,
            "build_s": round(build_s, 1),
            "chunks_per_s": round(docs * a.chunks_per_doc / build_s),
            "queries": queries,
            "peak_rss_mb_after_build": round(rss_build),
            "peak_rss_mb": round(rss),
            "disk_mb": _disk_mb(tmp),
        }
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _run_child(n: int, a: argparse.Namespace) -> dict[str, Any]:
    cmd = [sys.executable, __file__, "--child", str(n), "--queries", str(a.queries),
           "--chunks-per-doc", str(a.chunks_per_doc), "--words", str(a.words)]  # fmt: skip
    if a.ann_threshold is not None:
        cmd += ["--ann-threshold", str(a.ann_threshold)]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True)
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


# --- plot ----------------------------------------------------------------------------------


def plot(results: dict[str, Any], target: Path = PLOT) -> None:
    """Latency vs size: vector/BM25 (left, chunks) and SPARQL (right, triples), log-log."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as exc:  # pragma: no cover - optional
        raise SystemExit("--plot needs matplotlib: pip install matplotlib") from exc
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
    rows = results["results"]
    xs = [r["chunks"] for r in rows]
    for key, label in [("dense", "dense top-10 (all)"), ("dense_doc1", "dense, 1-doc filter"),
                       ("dense_doc10", "dense, 10-doc filter"), ("bm25", "BM25 (all)"),
                       ("bm25_doc1", "BM25, 1-doc filter")]:  # fmt: skip
        line = left.plot(xs, [r["queries"][key]["p50_ms"] for r in rows], "o-", label=label)
        left.plot(xs, [r["queries"][key]["p95_ms"] for r in rows], ":", color=line[0].get_color())
    _axes(left, "chunks in the store", "LocalVectorStore (solid p50, dotted p95)")
    if SPARQL.is_file():
        sp = json.loads(SPARQL.read_text())["results"]
        tx = [r["triples"] for r in sp]
        for key in ("doc_template", "cross_3", "cross_30", "cross_all"):
            line = right.plot(tx, [r["queries"][key]["p50_ms"] for r in sp], "o-", label=key)
            right.plot(tx, [r["queries"][key]["p95_ms"] for r in sp], ":",
                       color=line[0].get_color())  # fmt: skip
    _axes(right, "triples in the store", "Oxigraph SPARQL (solid p50, dotted p95)")
    fig.tight_layout()
    target.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(target, dpi=110)


def _axes(ax: Any, xlabel: str, title: str) -> None:
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel("latency ms")
    ax.set_title(title, fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)


def main() -> int:
    a = _args()
    if a.child is not None:
        print(json.dumps(child(a.child, a)))
        return 0
    if a.plot_only:
        plot(json.loads(a.out.read_text()))
        return 0
    results = []
    for n in a.sizes:
        r = _run_child(n, a)
        print(json.dumps(r), flush=True)
        results.append(r)
    payload = {
        "meta": {
            "when": datetime.now(UTC).isoformat(timespec="seconds"),
            "machine": f"{platform.machine()} python {platform.python_version()}",
            "cpus": os.cpu_count(),
            "dim": DIM,
            "chunks_per_doc": a.chunks_per_doc,
            "words_per_chunk": a.words,
            "note": "shared 2-core machine: another engineer's jobs ran concurrently",
        },
        "results": results,
    }
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps(payload, indent=1) + "\n")
    if a.plot:
        plot(payload)
    return 0


if __name__ == "__main__":
    sys.exit(main())
