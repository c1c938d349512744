"""What never losing data costs: the checks on open, and the journal's share of a replace.

    python benchmarks/store_safety.py [--docs 200] [--out benchmarks/results/store_safety.json]

Builds a store of ``--docs`` documents (the three sample sheets under distinct ids,
hashing embedder), then measures, each in a fresh process-like state (a new
``HybridRAG`` after the last one closed):

* ``open_check_ms``: the first ``documents()`` of a new ``HybridRAG`` on the store: the
  layout check, opening the three stores, recovery, the catalog against the stores and
  the CRC-32 of every live vector (p50 of 5);
* ``replace_ms``: replacing one document with other bytes (p50 of 10), and within it
  ``journal_ms``: reading the backup, writing the intent and backup files (fsynced) and
  ending the record (p50 of 10 on the same document).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import anyio
from _bench import meta, ms, stats, write_json

from hybrid_rag import HybridRAG
from hybrid_rag.ingest._writes import StoreWriter
from hybrid_rag.samples import pdf_bytes, sample_text
from hybrid_rag.stores._journal import Intent

STEMS = ["examplon-solvent-99", "samplex-acid-descaler-10", "demoline-glass-cleaner"]


def _args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--docs", type=int, default=200)
    p.add_argument("--out", type=Path, default=Path("benchmarks/results/store_safety.json"))
    return p.parse_args()


def _build(store: Path, n: int) -> None:
    sheets = [pdf_bytes(sample_text(s).split("\n\n")) for s in STEMS]
    with HybridRAG(store, embedder="hashing", processes=False) as rag:
        items = [(f"doc-{i:04d}.pdf", sheets[i % 3] + b"\n%" + str(i).encode()) for i in range(n)]
        rag.ingest_many(items, raise_errors=True)


def _open_check(store: Path) -> float:
    with HybridRAG(store, embedder="hashing") as rag:
        return ms(rag.documents)


def _journal_ms(rag: HybridRAG, doc: str) -> float:
    stores = rag._stores
    assert stores is not None
    writer = StoreWriter.of(stores, embedder=rag.embedder, workers=rag._workers)
    t = time.perf_counter()
    backup = anyio.run(writer.backup, doc)
    intent = Intent(doc, "write", new_hash="0" * 64, old=rag.catalog.get(doc), has_backup=True)
    stores.journal.begin(intent, backup)
    stores.journal.end(doc)
    return (time.perf_counter() - t) * 1000


def main() -> int:
    args = _args()
    with tempfile.TemporaryDirectory() as tmp:
        store = Path(tmp) / "store"
        t = time.perf_counter()
        _build(store, args.docs)
        built = time.perf_counter() - t
        opens = [_open_check(store) for _ in range(5)]
        text = sample_text(STEMS[0])
        versions = [pdf_bytes(text.replace("-18", str(-20 - i)).split("\n\n")) for i in range(10)]
        with HybridRAG(store, embedder="hashing") as rag:
            rag.documents()
            replaces = [ms(lambda v=v: rag.ingest(v, name="doc-0000.pdf")) for v in versions]
            journal = [_journal_ms(rag, "doc-0000") for _ in range(10)]
    payload = {
        **meta(docs=args.docs, build_s=round(built, 1)),
        "open_check": stats(opens),
        "replace": stats(replaces),
        "journal": stats(journal),
    }
    write_json(args.out, payload)
    print(payload)
    return 0


if __name__ == "__main__":
    sys.exit(main())
