"""Keyword engines for the embedded store, side by side: tantivy, SQLite FTS5, bm25s.

All three index the same tokens (:func:`hybrid_rag.text.keyword_tokens`:
identifiers whole plus their parts, mild stemming) and answer a disjunction of the
question's distinct tokens, BM25-ranked:

* ``tantivy``: :class:`hybrid_rag.stores._keywords.KeywordIndex` (the store's engine now;
  per-document delete + add, commit on the next search);
* ``fts5``: an SQLite FTS5 table (ships with Python; ``ascii`` tokenizer with ``-./,`` as
  token characters so our tokens stay whole; ``ORDER BY bm25() LIMIT k``; incremental);
* ``bm25s``: the previous engine, rebuilt from every chunk's tokens after a change
  (needs ``pip install bm25s``).

Two measurements:

* ``quality``: for each QA set, the documents the eval ingests (QA sheets + distractors)
  are ingested offline into a fresh store; for every question with evidence, the top-10
  keyword hits over the whole store (unscoped) are checked for a chunk on a gold
  (document, page): recall@10 and MRR.
* ``speed``: ``--size`` synthetic chunks (``benchmarks/retrieval_scale.py`` data): build
  time, unscoped and 1-document query p50/p95, and the first query after writing one
  new document.

Usage::

    python benchmarks/keyword_engines.py --size 100000
    python benchmarks/keyword_engines.py --skip-quality --size 20000
    python benchmarks/keyword_engines.py --skip-speed --engines tantivy --prune-from 0 \
        --out benchmarks/results/keyword_prune_quality.json

Writes ``benchmarks/results/keyword_engines.json``.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _bench import meta, write_json  # noqa: E402
from _bench import ms as _ms  # noqa: E402
from _bench import stats as _stats  # noqa: E402
from retrieval_scale import _doc, _words  # noqa: E402

from hybrid_rag.stores import _keywords  # noqa: E402
from hybrid_rag.stores._keywords import KeywordIndex, index_text  # noqa: E402
from hybrid_rag.text import keyword_tokens as tokenize  # noqa: E402

RESULTS = HERE / "results" / "keyword_engines.json"
SHARED = HERE.parent.parent / "shared"
QA_SETS = {
    "qa-public": ("qa-public.jsonl", ["public-docs.txt:laballey"], ["libman"]),
    "qa-public-2": ("qa-public-2.jsonl", ["public-2-docs.txt:laballey"], []),
}
Row = tuple[int, str, str]  # slot, doc id, text


class Tantivy:
    """The store's engine."""

    def __init__(self, folder: Path) -> None:
        self.index = KeywordIndex(folder)
        self.index.open(fresh=True)

    def write(self, doc: str, rows: Sequence[Row]) -> None:
        self.index.replace(doc, [(s, index_text(tokenize(t))) for s, _, t in rows])

    def search(self, text: str, k: int, docs: list[str] | None = None) -> list[int]:
        self.index.commit()
        return [s for s, _ in self.index.search(tokenize(text), k, docs)]


class Fts5:
    """SQLite FTS5 over the same tokens, bm25() ranking."""

    def __init__(self, folder: Path) -> None:
        self.db = sqlite3.connect(folder / "fts.sqlite3", isolation_level=None)
        self.db.execute(
            "CREATE VIRTUAL TABLE f USING fts5(tokens, doc UNINDEXED,"
            " tokenize = \"ascii tokenchars '-./,'\")"
        )

    def write(self, doc: str, rows: Sequence[Row]) -> None:
        self.db.execute("BEGIN")
        self.db.execute("DELETE FROM f WHERE doc = ?", (doc,))
        self.db.executemany(
            "INSERT INTO f (rowid, tokens, doc) VALUES (?, ?, ?)",
            [(s, index_text(tokenize(t)), doc) for s, _, t in rows],
        )
        self.db.execute("COMMIT")

    def search(self, text: str, k: int, docs: list[str] | None = None) -> list[int]:
        terms = " OR ".join(f'"{t}"' for t in dict.fromkeys(tokenize(text)))
        if not terms:
            return []
        scope = "" if docs is None else f" AND doc IN ({','.join('?' * len(docs))})"
        sql = f"SELECT rowid FROM f WHERE f MATCH ?{scope} ORDER BY bm25(f) LIMIT {int(k)}"
        return [r[0] for r in self.db.execute(sql, [terms, *(docs or [])])]


class Bm25s:
    """The previous engine: token ids cached per chunk, index rebuilt after a change."""

    def __init__(self, folder: Path) -> None:
        self.tokens: dict[int, list[int]] = {}
        self.docs: dict[int, str] = {}
        self.vocab: dict[str, int] = {"": 0}
        self.index: Any = None

    def write(self, doc: str, rows: Sequence[Row]) -> None:
        for slot in [s for s, d in self.docs.items() if d == doc]:
            del self.tokens[slot], self.docs[slot]
        for s, _, t in rows:
            self.tokens[s] = [self.vocab.setdefault(w, len(self.vocab)) for w in tokenize(t)]
            self.tokens[s] = self.tokens[s] or [0]
            self.docs[s] = doc
        self.index = None

    def search(self, text: str, k: int, docs: list[str] | None = None) -> list[int]:
        import bm25s

        if self.index is None:
            self.slots = np.array(sorted(self.tokens), dtype=np.int64)
            self.index = bm25s.BM25()
            corpus = [self.tokens[int(s)] for s in self.slots]
            self.index.index((corpus, self.vocab), show_progress=False)
        ids = [self.vocab[t] for t in dict.fromkeys(tokenize(text)) if t in self.vocab]
        if not ids:
            return []
        scores = np.asarray(self.index.get_scores_from_ids(ids), dtype=np.float32)
        if docs is not None:
            keep = np.array([self.docs[int(s)] in docs for s in self.slots])
            scores = np.where(keep, scores, 0)
        pos = np.flatnonzero(scores > 0)
        pos = pos[np.lexsort((pos, -scores[pos]))][:k]
        return [int(self.slots[p]) for p in pos]


ENGINES: dict[str, Callable[[Path], Any]] = {"tantivy": Tantivy, "fts5": Fts5, "bm25s": Bm25s}


# --- quality ---------------------------------------------------------------------------


def _corpus_rows(
    name: str, work: Path
) -> tuple[list[Row], list[int], list[dict[str, Any]], dict[str, str]]:
    """Ingest a QA set's documents offline: chunks, their pages, questions, path -> id."""
    from hybrid_rag import HybridRAG
    from hybrid_rag._cli_eval import map_doc_ids, plan_sources

    qa_file, lists, dirs = QA_SETS[name]
    qa = [json.loads(line) for line in (SHARED / "eval" / qa_file).read_text().splitlines()]
    corpus = SHARED / "corpus" / "sds"
    specs = [f"{SHARED / 'eval' / spec}" for spec in lists]
    plan = plan_sources(qa, corpus, extra_dirs=[corpus / d for d in dirs], extra_lists=specs)
    rows: list[Row] = []
    pages: list[int] = []
    with HybridRAG(path=work / name, embedder="hashing") as rag:
        ids = map_doc_ids(plan, rag.ingest_many(plan.sources))
        for doc in rag.vectors.doc_ids():
            for chunk in rag.vectors.chunks(doc):
                rows.append((len(rows), doc, chunk.text))
                pages.append(chunk.page)
    return rows, pages, qa, ids


def quality(work: Path) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name in QA_SETS:
        rows, pages, qa, ids = _corpus_rows(name, work)
        gold_items = [
            (q, {(ids[e["doc"]], e["page"]) for e in q.get("evidence", []) if e["doc"] in ids})
            for q in qa
        ]
        gold_items = [(q, g) for q, g in gold_items if g]
        out[name] = {"questions": len(gold_items), "chunks": len(rows)}
        for engine, make in ENGINES.items():
            folder = Path(tempfile.mkdtemp(dir=work))
            index = make(folder)
            by_doc: dict[str, list[Row]] = {}
            for row in rows:
                by_doc.setdefault(row[1], []).append(row)
            for doc, doc_rows in by_doc.items():
                index.write(doc, doc_rows)
            found = rr = 0.0
            for q, gold in gold_items:
                hits = index.search(q["question"], 10)
                ranks = [i for i, s in enumerate(hits) if (rows[s][1], pages[s]) in gold]
                found += bool(ranks)
                rr += 1 / (ranks[0] + 1) if ranks else 0
            n = len(gold_items)
            out[name][engine] = {"recall_at_10": round(found / n, 3), "mrr": round(rr / n, 3)}
            print(name, engine, out[name][engine], flush=True)
    return out


# --- speed -----------------------------------------------------------------------------


def speed(size: int, queries: int, work: Path) -> dict[str, Any]:
    rng = np.random.default_rng(7)
    docs = size // 25
    rows_by_doc = []
    for d in range(docs):
        chunks, _ = _doc(rng, d, 25, 60)
        rows_by_doc.append([(d * 25 + i, c.doc_id, c.text) for i, c in enumerate(chunks)])
    qrng = np.random.default_rng(11)
    terms = [" ".join(_words(qrng, 3)) for _ in range(queries)]
    one = [[f"doc{int(d):07d}"] for d in qrng.integers(0, docs, size=queries)]
    out: dict[str, Any] = {"chunks": size}
    for engine, make in ENGINES.items():
        index = make(Path(tempfile.mkdtemp(dir=work)))
        build = _ms(lambda ix=index: [ix.write(r[0][1], r) for r in rows_by_doc]) / 1000
        first = _ms(lambda ix=index: ix.search(terms[0], 10))
        steady = [_ms(lambda ix=index, t=t: ix.search(t, 10)) for t in terms]
        scoped = [
            _ms(lambda ix=index, t=t, o=o: ix.search(t, 10, o))
            for t, o in zip(terms, one, strict=True)
        ]
        after = []
        for r in range(5):
            chunks, _ = _doc(rng, docs + r, 25, 60)
            new = [(size + r * 25 + i, c.doc_id, c.text) for i, c in enumerate(chunks)]
            index.write(new[0][1], new)
            after.append(_ms(lambda ix=index, t=terms[r]: ix.search(t, 10)))
        out[engine] = {
            "build_s": round(build, 1), "first_query_ms": round(first, 1),
            "query": _stats(steady), "query_1doc": _stats(scoped),
            "first_query_after_one_doc_write": _stats(after),
        }  # fmt: skip
        print(engine, out[engine], flush=True)
    return out


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--size", type=int, default=100_000)
    p.add_argument("--queries", type=int, default=200)
    p.add_argument("--skip-quality", action="store_true")
    p.add_argument("--skip-speed", action="store_true")
    p.add_argument("--out", type=Path, default=RESULTS)
    p.add_argument("--engines", nargs="+", choices=list(ENGINES), default=list(ENGINES))
    p.add_argument(
        "--prune-from",
        type=int,
        help="chunks from which tantivy leaves near-universal query terms out (default: "
        "the store's; 0 applies it to the small QA stores too)",
    )
    a = p.parse_args()
    for name in set(ENGINES) - set(a.engines):
        del ENGINES[name]
    if a.prune_from is not None:
        _keywords._PRUNE_FROM = a.prune_from
    with tempfile.TemporaryDirectory(prefix="keyword_engines_") as tmp:
        work = Path(tmp)
        payload: dict[str, Any] = {}
        if not a.skip_quality:
            payload["quality"] = quality(work)
        if not a.skip_speed:
            payload["speed"] = speed(a.size, a.queries, work)
    extra = {} if a.prune_from is None else {"prune_from": a.prune_from}
    write_json(a.out, {"meta": meta(sqlite=sqlite3.sqlite_version, **extra), **payload})
    return 0


if __name__ == "__main__":
    sys.exit(main())
