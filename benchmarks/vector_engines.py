"""Compare embedded vector-search engines for the local vector store.

Synthetic but structured data: a gaussian mixture in a low-rank latent space projected
to ``--dim`` dimensions plus isotropic noise, L2-normalised (real sentence embeddings are
anisotropic and clustered, uniform noise is not). Queries are perturbed data points.

For each size and engine it measures build time, memory (RSS growth and persisted size),
p50/p95 single-query top-10 latency, recall@10 against an exact float32 scan, and the
single-document filtered search (exact scan over one document's ~1000 rows).

Usage::

    python benchmarks/vector_engines.py --sizes 100000 1000000 --dim 384 --queries 200
    python benchmarks/vector_engines.py --sizes 1000000 --engines exact usearch-f32 usearch-f16

Results are merged into ``benchmarks/results/vector_engines.json`` (one record per
size/engine/setting).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["main"]

K = 10
RESULTS = Path(__file__).parent / "results" / "vector_engines.json"
ALL_ENGINES = [
    "exact",
    "exact-f16-rerank",
    "hnswlib",
    "usearch-f32",
    "usearch-f16",
    "usearch-i8",
    "usearch-exact-i8",
    "faiss-hnsw",
    "faiss-ivf",
    "faiss-sq8-rerank",
]

Searcher = Callable[[np.ndarray], np.ndarray]


def rss_mb() -> float:
    """Resident set size of this process in MiB."""
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def make_data(n: int, dim: int, n_queries: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Clustered, anisotropic, normalised vectors and perturbed-point queries."""
    rng = np.random.default_rng(seed)
    latent, clusters = 96, max(64, n // 1000)
    proj = rng.standard_normal((latent, dim)).astype(np.float32) / np.sqrt(latent)
    centers = rng.standard_normal((clusters, latent)).astype(np.float32)
    data = np.empty((n, dim), dtype=np.float32)
    step = 100_000
    for lo in range(0, n, step):
        hi = min(n, lo + step)
        lab = rng.integers(0, clusters, hi - lo)
        z = centers[lab] + 0.7 * rng.standard_normal((hi - lo, latent)).astype(np.float32)
        x = z @ proj + 0.25 * rng.standard_normal((hi - lo, dim)).astype(np.float32)
        data[lo:hi] = x / np.linalg.norm(x, axis=1, keepdims=True)
    idx = rng.choice(n, n_queries, replace=False)
    q = data[idx] + 0.08 * rng.standard_normal((n_queries, dim)).astype(np.float32)
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    return data, q.astype(np.float32)


def exact_truth(data: np.ndarray, queries: np.ndarray) -> np.ndarray:
    """Exact top-K ids per query (float32 inner product on normalised vectors)."""
    out = np.empty((len(queries), K), dtype=np.int64)
    for lo in range(0, len(queries), 50):
        s = queries[lo : lo + 50] @ data.T
        top = np.argpartition(-s, K, axis=1)[:, :K]
        order = np.take_along_axis(s, top, axis=1).argsort(axis=1)[:, ::-1]
        out[lo : lo + 50] = np.take_along_axis(top, order, axis=1)
    return out


def topk(scores: np.ndarray, k: int) -> np.ndarray:
    """Indices of the k largest scores, best first."""
    k = min(k, len(scores))
    top = np.argpartition(-scores, k - 1)[:k]
    return top[np.argsort(-scores[top])]


def measure(search: Searcher, queries: np.ndarray, truth: np.ndarray) -> dict[str, float]:
    """p50/p95 latency (ms) and mean recall@K of single-query search."""
    for q in queries[:5]:
        search(q)
    lat, hits = [], 0
    for q, t in zip(queries, truth, strict=True):
        t0 = time.perf_counter()
        ids = search(q)
        lat.append((time.perf_counter() - t0) * 1000)
        hits += len(set(np.asarray(ids).tolist()) & set(t.tolist()))
    return {
        "p50_ms": round(float(np.percentile(lat, 50)), 3),
        "p95_ms": round(float(np.percentile(lat, 95)), 3),
        "recall": round(hits / (K * len(queries)), 4),
    }


def dir_size_mb(path: str) -> float:
    """Total size of a file or folder in MiB."""
    p = Path(path)
    files = [p] if p.is_file() else [f for f in p.rglob("*") if f.is_file()]
    return sum(f.stat().st_size for f in files) / 2**20


def build_exact(data: np.ndarray, tmp: str) -> tuple[list[tuple[str, Searcher]], str]:
    np.save(f"{tmp}/x.npy", data)

    def search(q: np.ndarray) -> np.ndarray:
        return topk(data @ q, K)

    return [("", search)], f"{tmp}/x.npy"


def build_exact_f16(data: np.ndarray, tmp: str) -> tuple[list[tuple[str, Searcher]], str]:
    """float16 storage scanned block-wise in float32, exact re-rank of candidates."""
    half = data.astype(np.float16)
    np.save(f"{tmp}/x16.npy", half)
    block = 65_536

    def search(q: np.ndarray) -> np.ndarray:
        cands = []
        for lo in range(0, len(half), block):
            s = half[lo : lo + block].astype(np.float32) @ q
            cands.append(lo + topk(s, 4 * K))
        c = np.concatenate(cands)
        return c[topk(data[c] @ q, K)]

    return [("block=65536", search)], f"{tmp}/x16.npy"


def build_hnswlib(data: np.ndarray, tmp: str) -> tuple[list[tuple[str, Searcher]], str]:
    import hnswlib

    index = hnswlib.Index(space="ip", dim=data.shape[1])
    index.init_index(max_elements=len(data), M=16, ef_construction=100)
    index.add_items(data, np.arange(len(data)), num_threads=os.cpu_count() or 1)
    index.save_index(f"{tmp}/h.bin")
    out = []
    for ef in (32, 64, 128, 256):

        def search(q: np.ndarray, ef: int = ef) -> np.ndarray:
            index.set_ef(ef)
            labels, _ = index.knn_query(q, k=K, num_threads=1)
            return labels[0]

        out.append((f"M=16 efC=100 ef={ef}", search))
    return out, f"{tmp}/h.bin"


def _build_usearch(dtype: str) -> Callable[..., tuple[list[tuple[str, Searcher]], str]]:
    """usearch HNSW (M=16, efC=100); settings: plain top-K, and the store's mode (fetch
    4K candidates, re-rank them exactly from the float32 matrix)."""

    def build(data: np.ndarray, tmp: str) -> tuple[list[tuple[str, Searcher]], str]:
        from usearch.index import Index

        index = Index(
            ndim=data.shape[1], metric="ip", dtype=dtype, connectivity=16, expansion_add=100
        )
        index.add(np.arange(len(data)), data, threads=os.cpu_count() or 1)
        index.save(f"{tmp}/u.usearch")
        out = []
        for ef in (32, 64, 128, 256):

            def search(q: np.ndarray, ef: int = ef) -> np.ndarray:
                index.expansion_search = ef
                return index.search(q, K, threads=1).keys

            out.append((f"{dtype} M=16 efC=100 ef={ef}", search))
        for ef in (64, 128, 256):

            def rerank(q: np.ndarray, ef: int = ef) -> np.ndarray:
                index.expansion_search = ef
                c = index.search(q, 4 * K, threads=1).keys.astype(np.int64)
                return c[topk(data[c] @ q, K)]

            out.append((f"{dtype} M=16 efC=100 ef={ef} rerank 40", rerank))
        return out, f"{tmp}/u.usearch"

    return build


def build_usearch_exact_i8(data: np.ndarray, tmp: str) -> tuple[list[tuple[str, Searcher]], str]:
    """usearch SIMD brute force over int8 vectors, exact float32 re-rank of top 4K."""
    from usearch.index import search as brute

    q8 = np.clip(np.round(data * 127 / np.abs(data).max()), -127, 127).astype(np.int8)
    np.save(f"{tmp}/x8.npy", q8)
    scale = 127 / float(np.abs(data).max())

    def search(q: np.ndarray) -> np.ndarray:
        qq = np.clip(np.round(q * scale), -127, 127).astype(np.int8)
        m = brute(q8, qq, 4 * K, "ip", exact=True, threads=os.cpu_count() or 1)
        c = m.keys.astype(np.int64)
        return c[topk(data[c] @ q, K)]

    return [("ip exact, rerank 40", search)], f"{tmp}/x8.npy"


def build_faiss_hnsw(data: np.ndarray, tmp: str) -> tuple[list[tuple[str, Searcher]], str]:
    import faiss

    index = faiss.IndexHNSWFlat(data.shape[1], 16, faiss.METRIC_INNER_PRODUCT)
    index.hnsw.efConstruction = 100
    index.add(data)
    faiss.write_index(index, f"{tmp}/f.index")
    out = []
    for ef in (32, 64, 128, 256):

        def search(q: np.ndarray, ef: int = ef) -> np.ndarray:
            index.hnsw.efSearch = ef
            _, ids = index.search(q[None, :], K)
            return ids[0]

        out.append((f"M=16 efC=100 ef={ef}", search))
    return out, f"{tmp}/f.index"


def build_faiss_ivf(data: np.ndarray, tmp: str) -> tuple[list[tuple[str, Searcher]], str]:
    import faiss

    nlist = int(4 * np.sqrt(len(data)))
    quant = faiss.IndexFlatIP(data.shape[1])
    index = faiss.IndexIVFFlat(quant, data.shape[1], nlist, faiss.METRIC_INNER_PRODUCT)
    rng = np.random.default_rng(1)
    index.train(data[rng.choice(len(data), min(len(data), 50 * nlist), replace=False)])
    index.add(data)
    faiss.write_index(index, f"{tmp}/ivf.index")
    out = []
    for nprobe in (8, 16, 32, 64):

        def search(q: np.ndarray, nprobe: int = nprobe) -> np.ndarray:
            index.nprobe = nprobe
            _, ids = index.search(q[None, :], K)
            return ids[0]

        out.append((f"nlist={nlist} nprobe={nprobe}", search))
    return out, f"{tmp}/ivf.index"


def build_faiss_sq8(data: np.ndarray, tmp: str) -> tuple[list[tuple[str, Searcher]], str]:
    """faiss int8 scalar-quantised flat scan, exact float32 re-rank of top 4K."""
    import faiss

    index = faiss.IndexScalarQuantizer(
        data.shape[1], faiss.ScalarQuantizer.QT_8bit, faiss.METRIC_INNER_PRODUCT
    )
    index.train(data[:100_000])
    index.add(data)
    faiss.write_index(index, f"{tmp}/sq8.index")

    def search(q: np.ndarray) -> np.ndarray:
        _, c = index.search(q[None, :], 4 * K)
        c = c[0]
        return c[topk(data[c] @ q, K)]

    return [("QT_8bit, rerank 40", search)], f"{tmp}/sq8.index"


BUILDERS: dict[str, Callable[..., tuple[list[tuple[str, Searcher]], str]]] = {
    "exact": build_exact,
    "exact-f16-rerank": build_exact_f16,
    "hnswlib": build_hnswlib,
    "usearch-f32": _build_usearch("f32"),
    "usearch-f16": _build_usearch("f16"),
    "usearch-i8": _build_usearch("i8"),
    "usearch-exact-i8": build_usearch_exact_i8,
    "faiss-hnsw": build_faiss_hnsw,
    "faiss-ivf": build_faiss_ivf,
    "faiss-sq8-rerank": build_faiss_sq8,
}


def filtered_search(data: np.ndarray, queries: np.ndarray, docs: int = 1000) -> dict[str, float]:
    """Single-document search: exact scan of one document's rows (fancy-indexed)."""
    rng = np.random.default_rng(2)
    owner = rng.integers(0, docs, len(data))
    rows = [np.flatnonzero(owner == d) for d in range(docs)]
    lat = []
    for i, q in enumerate(queries):
        r = rows[i % docs]
        t0 = time.perf_counter()
        s = data[r] @ q
        _ = r[topk(s, K)]
        lat.append((time.perf_counter() - t0) * 1000)
    return {
        "rows_per_doc": round(len(data) / docs),
        "p50_ms": round(float(np.percentile(lat, 50)), 3),
        "p95_ms": round(float(np.percentile(lat, 95)), 3),
    }


def run_engine(
    name: str, data: np.ndarray, queries: np.ndarray, truth: np.ndarray
) -> list[dict[str, Any]]:
    """Build one engine, measure every setting, return result records."""
    gc.collect()
    before = rss_mb()
    with tempfile.TemporaryDirectory(dir=os.environ.get("BENCH_TMP")) as tmp:
        t0 = time.perf_counter()
        settings, saved = BUILDERS[name](data, tmp)
        build_s = time.perf_counter() - t0
        mem = rss_mb() - before
        disk = dir_size_mb(saved)
        records = []
        for label, search in settings:
            rec: dict[str, Any] = {
                "engine": name,
                "setting": label,
                "n": len(data),
                "dim": data.shape[1],
                "build_s": round(build_s, 2),
                "rss_growth_mb": round(mem, 1),
                "disk_mb": round(disk, 1),
            }
            rec.update(measure(search, queries, truth))
            print(json.dumps(rec), flush=True)
            records.append(rec)
        del settings
    return records


def machine() -> dict[str, Any]:
    """Machine description for the report."""
    model = "unknown"
    with open("/proc/cpuinfo") as fh:
        for line in fh:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    return {
        "nproc": os.cpu_count(),
        "cpu": model,
        "python": platform.python_version(),
        "numpy": np.__version__,
    }


def save(records: list[dict[str, Any]], extra: dict[str, Any]) -> None:
    """Merge records into the results file (same size/engine/setting replaced)."""
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    old = json.loads(RESULTS.read_text()) if RESULTS.exists() else {"runs": []}
    keys = {(r["n"], r["engine"], r["setting"]) for r in records if "engine" in r}
    kept = [r for r in old["runs"] if (r.get("n"), r.get("engine"), r.get("setting")) not in keys]
    old["runs"] = kept + records
    old.update(extra)
    RESULTS.write_text(json.dumps(old, indent=1))


def main(argv: list[str] | None = None) -> None:
    """Command-line entry point."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    ap.add_argument("--dim", type=int, default=384)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--engines", nargs="+", default=ALL_ENGINES, choices=ALL_ENGINES)
    args = ap.parse_args(argv)
    for n in args.sizes:
        t0 = time.perf_counter()
        data, queries = make_data(n, args.dim, args.queries)
        truth = exact_truth(data, queries)
        print(f"# n={n} data+truth {time.perf_counter() - t0:.1f}s", flush=True)
        filt = {
            "engine": "filtered-doc-scan",
            "setting": "1000 docs",
            "n": n,
            **filtered_search(data, queries),
        }
        print(json.dumps(filt), flush=True)
        save([filt], {})
        for name in args.engines:
            save(run_engine(name, data, queries, truth), {})
        del data, queries, truth
    save(
        [],
        {
            "machine": machine(),
            "date": datetime.now(UTC).isoformat(timespec="seconds"),
            "command": "python benchmarks/vector_engines.py " + " ".join(argv or []),
        },
    )


if __name__ == "__main__":
    import sys

    main(sys.argv[1:])
