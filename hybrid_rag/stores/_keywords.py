"""Incremental BM25 keyword index of the embedded vector store, on tantivy.

One tantivy document per chunk: its ``hybrid_rag.text.keyword_tokens``
tokens (joined by spaces and split again by tantivy's ``whitespace`` tokenizer, so the
tokens are exactly ours: identifiers such as ``67-64-1`` or ``un1090`` stay whole), the
chunk's matrix slot (stored, returned with each hit) and its document id (a ``raw`` term,
used to delete a document's chunks and to restrict a search to documents).

Writes are staged in tantivy's writer; the store decides when to commit
(``LocalVectorStore._index_keywords`` in ``hybrid_rag.stores.local_vectors``): a lone
write commits itself, a burst of writes is committed once by the next search, and a
delete's tombstones wait for a later commit while searches skip the deleted chunks'
slots (``live``) and fetch that many more hits (``dead``). The store lists the
documents whose index update is not committed yet in SQLite (``kw_pending``, written in
the same transaction as the chunks) and re-indexes exactly those after a failed update
or a crash. Nothing is rebuilt from the whole store except when the index is missing or
of another format.

Scoring is tantivy's BM25 (k1 = 1.2, b = 0.75, Lucene idf); a search is a disjunction of
the query's distinct tokens. The Python binding always collects through a
``MultiCollector``, so tantivy's block-max WAND pruning never runs: a query costs a pass
over every posting list of its terms. In a large index the terms found in nearly every
chunk are therefore left out of the query (``_informative``; they add almost
nothing to any score).
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

__all__ = ["KeywordIndex", "index_text"]

_MAX_TOKEN = 255  # longer "tokens" are noise; tantivy rejects terms over 65,530 bytes
_HEAP = 32_000_000  # writer memory budget (tantivy's minimum is 15 MB per thread)
_UBIQUITOUS = 0.95  # a query term in more than this share of the chunks is not scored ...
_PRUNE_FROM = 50_000  # ... once the index holds this many chunks (see _informative)


def _import_tantivy() -> Any:
    try:
        import tantivy
    except ImportError as exc:  # pragma: no cover - a base dependency
        raise ImportError("the embedded keyword index needs tantivy: pip install tantivy") from exc
    return tantivy


class KeywordIndex:
    """Tantivy index of chunk tokens keyed by matrix slot; deletable by document.

    Args:
        folder: Where the index lives; ``None`` keeps it in memory.

    Not thread-safe on its own: ``LocalVectorStore``
    calls it under its lock. The constructor does no I/O; ``open`` does.
    """

    def __init__(self, folder: Path | None) -> None:
        self._folder = folder
        self._tv: Any = None
        self._index: Any = None
        self._schema: Any = None
        self._writer: Any = None
        self._searcher: Any = None
        self._dirty = False
        self._adds = False

    def open(self, *, fresh: bool) -> None:
        """Open the index, or create an empty one (``fresh``, or none on disk yet).

        Raises:
            OSError, ValueError: The files on disk are not a readable index of this
                format (the caller then opens it ``fresh`` and re-indexes).
        """
        tv = self._tv = _import_tantivy()
        builder = tv.SchemaBuilder()
        builder.add_text_field("tokens", tokenizer_name="whitespace", index_option="freq")
        builder.add_integer_field("slot", stored=True)
        builder.add_text_field("doc", tokenizer_name="raw", index_option="basic")
        self._schema = builder.build()
        if self._folder is None:
            self._index = tv.Index(self._schema)
            return
        if fresh and self._folder.exists():
            shutil.rmtree(self._folder)
        self._folder.mkdir(parents=True, exist_ok=True)
        self._index = tv.Index(self._schema, path=str(self._folder), reuse=True)
        self._index.searcher()  # fail now, not on the first search, if unreadable

    def _write(self) -> Any:
        if self._writer is None:
            self._writer = self._index.writer(heap_size=_HEAP, num_threads=1)
        return self._writer

    def replace(self, doc_id: str, rows: Iterable[tuple[int, str]]) -> None:
        """Make ``doc_id`` hold exactly ``rows`` (slot, tokens text); not yet committed."""
        writer = self._write()
        writer.delete_documents_by_term("doc", doc_id)
        doc = self._tv.Document
        for slot, tokens in rows:
            writer.add_document(doc(tokens=tokens, slot=int(slot), doc=doc_id))
            self._adds = True
        self._dirty = True

    def delete(self, doc_id: str) -> None:
        """Remove the document's chunks (not yet committed)."""
        self._write().delete_documents_by_term("doc", doc_id)
        self._dirty = True

    def count(self) -> int:
        """Chunks in the committed index (deleted ones not counted)."""
        return int(self._index.searcher().num_docs)

    @property
    def staged_adds(self) -> bool:
        """Chunks were added since the last commit (searches cannot see them yet)."""
        return self._adds

    def commit(self) -> bool:
        """Make the writes since the last commit searchable; ``True`` if there were any."""
        if not self._dirty:
            return False
        self._write().commit()
        self._index.reload()
        self._searcher, self._dirty, self._adds = None, False, False
        return True

    def search(
        self,
        tokens: Sequence[str],
        k: int,
        doc_ids: Sequence[str] | None,
        *,
        live: Callable[[int], bool] | None = None,
        dead: int = 0,
    ) -> list[tuple[int, float]]:
        """Top-``k`` (slot, BM25 score) for any of ``tokens``, best first; scores > 0.

        Args:
            tokens: Query tokens. Duplicates and over-long ones are dropped; in a large
                index so are those in nearly every chunk, unless fewer than ``k`` chunks
                match the others (``_informative``).
            k: How many hits.
            doc_ids: Restrict to these documents (``None``: all).
            live: Skip hits whose slot fails this (chunks deleted since the last commit:
                their postings are still in the index).
            dead: At most how many indexed chunks fail ``live``; that many more are fetched.
        """
        terms = [t for t in dict.fromkeys(tokens) if len(t) <= _MAX_TOKEN]
        if not terms or k <= 0:
            return []
        if self._searcher is None:
            self._searcher = self._index.searcher()
        searcher, keep = self._searcher, live or _always
        informative = _informative(searcher, terms)
        hits = _top(searcher, self._query(informative, doc_ids), k, dead, keep)
        if len(hits) < k and len(informative) < len(terms):  # fill up as the full query does
            hits = _top(searcher, self._query(terms, doc_ids), k, dead, keep)
        return hits

    def _query(self, terms: list[str], doc_ids: Sequence[str] | None) -> Any:
        """Chunks matching any of ``terms`` (BM25 summed over them), within ``doc_ids``."""
        tv = self._tv
        should = tv.Occur.Should
        query = tv.Query.boolean_query(
            [(should, tv.Query.term_query(self._schema, "tokens", t)) for t in terms]
        )
        if doc_ids is None:
            return query
        scope = tv.Query.term_set_query(self._schema, "doc", list(doc_ids))
        must = tv.Occur.Must
        return tv.Query.boolean_query(
            [(must, query), (must, tv.Query.const_score_query(scope, 0.0))]
        )

    def close(self) -> None:
        """Commit pending writes and release the writer (its lock on the folder)."""
        if self._index is None:
            return
        self.commit()
        if self._writer is not None:
            self._writer.wait_merging_threads()
        self._writer = self._searcher = self._index = None


def index_text(tokens: Iterable[str]) -> str:
    """The ``tokens`` field of a chunk: its tokens joined by spaces, over-long ones dropped."""
    return " ".join(t for t in tokens if len(t) <= _MAX_TOKEN)


def _always(slot: int) -> bool:
    return True


def _top(
    searcher: Any, query: Any, k: int, dead: int, keep: Callable[[int], bool]
) -> list[tuple[int, float]]:
    """The best ``k`` hits with a positive score whose slot passes ``keep``."""
    out: list[tuple[int, float]] = []
    for score, address in searcher.search(query, k + dead, count=False).hits:
        slot = int(searcher.doc(address)["slot"][0])
        if score > 0 and keep(slot):
            out.append((slot, float(score)))
            if len(out) == k:
                break
    return out


def _informative(searcher: Any, terms: list[str]) -> list[str]:
    """``terms`` less those in more than ``_UBIQUITOUS`` of the chunks of a large index.

    Such a term separates almost nothing: its BM25 idf is below ln(1 + 0.05 / 0.95) =
    0.052, so it adds less than 0.12 to any chunk's score (idf times k1 + 1), a rounding
    next to a term that does separate chunks. Scoring it costs a pass over a posting
    list as long as the index, because the Python binding collects every matching
    document (no block-max WAND pruning): at 1M chunks that pass is most of a query.
    Below ``_PRUNE_FROM`` chunks, or when every term is that common, all are kept.
    ``doc_freq`` counts chunks deleted but not yet merged away, so the share can read a
    little high after many deletes.
    """
    total = searcher.num_docs
    if total < _PRUNE_FROM:
        return terms
    kept = [t for t in terms if searcher.doc_freq("tokens", t) <= _UBIQUITOUS * total]
    return kept or terms
