"""A growing embedded vector store: writes, deletes, first searches after them, memory.

A child process builds an on-disk :class:`~hybrid_rag.stores.local_vectors.LocalVectorStore`
of ``N`` chunks through its real write path (the synthetic documents of
``benchmarks/retrieval_scale.py``: 25 chunks per document, 384-d vectors clustered per
document, ~60 Zipf-distributed words plus a CAS-like code per chunk), then measures:

* ``steady``: p50/p95 of dense top-10 (unrestricted: HNSW above the store's
  ``ann_threshold``), keyword top-10 (unrestricted and 1-document), after a first query
  of each (``first_dense_ms`` builds the HNSW index if none was saved, ``first_kw_ms``
  the keyword index);
* ``after_write`` / ``after_delete``: ``--rounds`` times, wait ``--pause`` seconds (a
  user adding one document now and then, not a bulk ingest: the store leaves the keyword
  commit of a write that follows the previous one within 1 s staged for the next
  search), write one new document (or delete one), then time the write, the first
  keyword search and the first dense search after it; the HNSW index object must stay
  the same (``ann_rebuilt`` counts the rounds where it did not) and a deleted document
  must never come back (``deleted_seen``, also checked inside a scope that names it);
* ``burst``: ``--rounds`` times, write ``--burst`` documents back to back (a bulk
  ingest), then time the first keyword search (it commits the whole burst);
* ``reopen``: close, open again, first keyword and dense search;
* peak RSS (``ru_maxrss``) after the build and at the end, and the size on disk.

``--impl legacy`` runs the same against the store as it was before the incremental
keyword index (``hybrid_rag/stores/local_vectors.py`` at ``--legacy-rev``, read with
``git show`` into a temporary module; needs ``pip install bm25s``), so both are measured
in one run on one machine.

``--store DIR`` keeps the built store in ``DIR`` (one size) and, when ``DIR`` already
holds one, measures a copy of it instead of building again (``build_s`` is then the
time of the original build, read from ``DIR/build.json``, and the kept store holds its
HNSW index, so ``first_dense_ms`` restores it instead of building it). The store format
did not change with the keyword-commit policy, so one kept store serves runs of the
code before and after it (``PYTHONPATH=<other checkout>``).

Usage::

    python benchmarks/store_growth.py --sizes 100000 --impl new legacy
    python benchmarks/store_growth.py --sizes 1000000 --impl new --rounds 20
    python benchmarks/store_growth.py --sizes 1000000 --store /tmp/store1m --out /tmp/x.json

Writes ``benchmarks/results/store_growth.json`` (merged by size and implementation).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _bench import meta, write_json  # noqa: E402
from _bench import ms as _ms  # noqa: E402
from _bench import stats as _stats  # noqa: E402
from retrieval_scale import DIM, _build, _doc, _words  # noqa: E402

RESULTS = HERE / "results" / "store_growth.json"
LEGACY_REV = "ef38e85"  # the last commit with the bm25s keyword index


def _args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--sizes", type=int, nargs="+", default=[100_000])
    p.add_argument("--impl", nargs="+", default=["new"], choices=["new", "legacy"])
    p.add_argument("--legacy-rev", default=LEGACY_REV)
    p.add_argument("--queries", type=int, default=200)
    p.add_argument("--rounds", type=int, default=10)
    p.add_argument("--pause", type=float, default=1.5, help="idle seconds before each write")
    p.add_argument("--burst", type=int, default=10, help="documents per bulk-ingest burst")
    p.add_argument("--store", type=Path, help="keep (or reuse a copy of) the built store here")
    p.add_argument("--out", type=Path, default=RESULTS)
    p.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    return p.parse_args()


def _store_class(impl: str, rev: str) -> Any:
    if impl == "new":
        from hybrid_rag.stores.local_vectors import LocalVectorStore

        return LocalVectorStore
    source = subprocess.run(
        ["git", "show", f"{rev}:hybrid_rag/stores/local_vectors.py"],
        cwd=HERE.parent, capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    folder = Path(tempfile.mkdtemp(prefix="legacy_store_"))
    (folder / "legacy_local_vectors.py").write_text(source)
    spec = importlib.util.spec_from_file_location(
        "legacy_local_vectors", folder / "legacy_local_vectors.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.LocalVectorStore


def _rss_mb() -> int:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)


def _steady(store: Any, docs: int, queries: int) -> dict[str, Any]:
    rng = np.random.default_rng(11)
    qv = rng.standard_normal((queries, DIM), dtype=np.float32)
    terms = [" ".join(_words(rng, 3)) for _ in range(queries)]
    one = [[f"doc{d:07d}"] for d in rng.integers(0, docs, size=queries)]
    out: dict[str, Any] = {"first_dense_ms": round(_ms(lambda: store.search(qv[0], k=10)), 1)}
    out["first_kw_ms"] = round(_ms(lambda: store.keyword_search(terms[0], k=10)), 1)
    out["dense"] = _stats([_ms(lambda i=i: store.search(qv[i], k=10)) for i in range(queries)])
    out["kw"] = _stats(
        [_ms(lambda i=i: store.keyword_search(terms[i], k=10)) for i in range(queries)]
    )
    out["kw_doc1"] = _stats(
        [
            _ms(lambda i=i: store.keyword_search(terms[i], k=10, doc_ids=one[i]))
            for i in range(queries)
        ]
    )
    return out


def _rounds(store: Any, docs: int, a: argparse.Namespace) -> dict[str, Any]:
    """Write (then delete) one document per round; time the first searches after it."""
    rng = np.random.default_rng(23)
    write, kw_w, dense_w, kw_d, dense_d, delete = [], [], [], [], [], []
    rebuilt = seen = 0
    for r in range(a.rounds):
        d = docs + r
        chunks, vecs = _doc(rng, d, 25, 60)
        terms = " ".join(_words(rng, 3))
        ann = getattr(store, "_ann", None)
        time.sleep(a.pause)
        write.append(_ms(lambda c=chunks, v=vecs, d=d: store.replace(f"doc{d:07d}", c, v)))
        kw_w.append(_ms(lambda t=terms: store.keyword_search(t, k=10)))
        dense_w.append(_ms(lambda v=vecs: store.search(v[0], k=10)))
        rebuilt += int(ann is not None and getattr(store, "_ann", None) is not ann)
        victim = f"doc{int(rng.integers(0, docs)):07d}"
        gone = store.chunks(victim)[0]
        probe = store._mat.data[store._doc_slots[victim][0]].copy()  # its own vector
        terms = " ".join(_words(rng, 3))  # the same kind of query as the steady ones
        delete.append(_ms(lambda v=victim: store.delete(v)))
        kw_d.append(_ms(lambda t=terms: store.keyword_search(t, k=10)))
        hits: list[Any] = []
        dense_d.append(_ms(lambda h=hits, p=probe: h.extend(store.search(p, k=10))))
        found = store.keyword_search(gone.text, k=50)
        scoped = store.keyword_search(gone.text, k=10, doc_ids=[victim, f"doc{d:07d}"])
        seen += sum(h.chunk.doc_id == victim for h in [*hits, *found, *scoped])
    return {
        "pause_s": a.pause,
        "write_ms": _stats(write),
        "first_kw_after_write_ms": _stats(kw_w),
        "first_dense_after_write_ms": _stats(dense_w),
        "delete_ms": _stats(delete),
        "first_kw_after_delete_ms": _stats(kw_d),
        "first_dense_after_delete_ms": _stats(dense_d),
        "ann_rebuilt": rebuilt,
        "deleted_seen": seen,
    }


def _bursts(store: Any, first: int, a: argparse.Namespace) -> dict[str, Any]:
    """``--burst`` writes back to back, then the first keyword search; ``--rounds`` times."""
    rng = np.random.default_rng(29)
    writes, kw = [], []
    for r in range(a.rounds):
        for i in range(a.burst):
            d = first + r * a.burst + i
            chunks, vecs = _doc(rng, d, 25, 60)
            writes.append(_ms(lambda c=chunks, v=vecs, d=d: store.replace(f"doc{d:07d}", c, v)))
        terms = " ".join(_words(rng, 3))
        kw.append(_ms(lambda t=terms: store.keyword_search(t, k=10)))
    return {"docs_per_burst": a.burst, "write_ms": _stats(writes), "first_kw_ms": _stats(kw)}


def _disk_mb(path: Path) -> float:
    return round(sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) / 2**20, 1)


def _built(cls: Any, n: int, work: Path, keep: Path | None) -> tuple[Any, int, float]:
    """A store of ``n`` chunks at ``work``: built there, or copied from ``keep``."""
    if keep is not None and (keep / "build.json").is_file():
        shutil.copytree(keep / "vectors", work)
        info = json.loads((keep / "build.json").read_text())
        return cls(work, dim=DIM), int(info["docs"]), float(info["build_s"])
    store = cls(work, dim=DIM)
    docs, build_s = _build(store, n, 25, 60)
    if keep is not None:  # with its HNSW index, so that later runs restore it
        store.search(np.ones(DIM, dtype=np.float32), k=10)
        store.close()
        shutil.rmtree(keep, ignore_errors=True)
        shutil.copytree(work, keep / "vectors")
        (keep / "build.json").write_text(json.dumps({"docs": docs, "build_s": build_s}))
        store = cls(work, dim=DIM)
    return store, docs, build_s


def child(n: int, impl: str, a: argparse.Namespace) -> dict[str, Any]:
    """Build one store of ``n`` chunks with ``impl`` and measure it (a fresh process)."""
    cls = _store_class(impl, a.legacy_rev)
    tmp = Path(tempfile.mkdtemp(prefix="store_growth_"))
    try:
        store, docs, build_s = _built(cls, n, tmp / "vectors", a.store)
        rss_build = _rss_mb()
        steady = _steady(store, docs, a.queries)
        rounds = _rounds(store, docs, a)
        bursts = _bursts(store, docs + a.rounds, a)
        store.close()
        store = cls(tmp / "vectors", dim=DIM)
        rng = np.random.default_rng(5)
        reopen = {
            "first_kw_ms": round(_ms(lambda: store.keyword_search("w1 w7 w99", k=10)), 1),
            "first_dense_ms": round(
                _ms(lambda: store.search(rng.standard_normal(DIM, dtype=np.float32), k=10)), 1
            ),
        }
        store.close()
        return {
            "impl": impl, "chunks": docs * 25, "docs": docs, "build_s": round(build_s, 1),
            "steady": steady, "growth": rounds, "burst": bursts, "reopen": reopen,
            "peak_rss_mb_after_build": rss_build, "peak_rss_mb": _rss_mb(),
            "disk_mb": _disk_mb(tmp),
        }  # fmt: skip
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main() -> int:
    a = _args()
    if a.child:
        print(json.dumps(child(int(a.child[0]), a.child[1], a)))
        return 0
    old = json.loads(a.out.read_text())["results"] if a.out.is_file() else []
    results = {(r["chunks"], r["impl"]): r for r in old}
    for n in a.sizes:
        for impl in a.impl:
            cmd = [sys.executable, __file__, "--child", str(n), impl, "--queries", str(a.queries),
                   "--rounds", str(a.rounds), "--legacy-rev", a.legacy_rev,
                   "--pause", str(a.pause), "--burst", str(a.burst)]  # fmt: skip
            cmd += ["--store", str(a.store)] if a.store is not None else []
            out = subprocess.run(cmd, capture_output=True, text=True, check=True)
            record = json.loads(out.stdout.strip().splitlines()[-1])
            print(json.dumps(record), flush=True)
            results[(record["chunks"], impl)] = record
    ordered = sorted(results.values(), key=lambda r: (r["chunks"], r["impl"]))
    write_json(a.out, {"meta": meta(), "results": ordered})
    return 0


if __name__ == "__main__":
    sys.exit(main())
