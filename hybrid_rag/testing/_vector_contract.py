"""Contract tests every ``VectorStore`` must pass.

Subclass ``VectorStoreContract`` in a test module and provide a ``vector_store``
fixture returning a fresh, empty store of dimension ``dim`` (fixture, default 8)::

    class TestMyStore(VectorStoreContract):
        @pytest.fixture
        def vector_store(self, dim):
            with MyStore(dim=dim) as store:
                yield store
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

import numpy as np
import pytest

from hybrid_rag.errors import InputError, InvalidDocIdError, StoreError
from hybrid_rag.models import Chunk

if TYPE_CHECKING:
    import numpy.typing as npt

    from hybrid_rag.protocols import VectorStore

__all__ = ["VectorStoreContract", "make_chunks", "unit_vectors"]

_TEXTS = [
    "Acetone is a colourless, highly flammable liquid.",
    "CAS number 67-64-1, EC number 200-662-2.",
    "Transport: UN1090 Acetone, class 3, packing group II.",
    "Hazard statement H225 Highly flammable liquid and vapour.",
    "Flash point -20 °C (closed cup). Boiling point 56 °C.",
    "Keep away from heat, sparks, open flames and hot surfaces.",
]


def unit_vectors(n: int, dim: int, *, seed: int = 0) -> npt.NDArray[np.float32]:
    """``n`` random L2-normalised float32 vectors (deterministic for a seed)."""
    x = np.random.default_rng(seed).standard_normal((n, dim)).astype(np.float32)
    out: npt.NDArray[np.float32] = x / np.linalg.norm(x, axis=1, keepdims=True)
    return out


def make_chunks(doc_id: str, texts: list[str], *, pages: list[int] | None = None) -> list[Chunk]:
    """Chunks of ``doc_id``, one per text, on the given pages (default page 1)."""
    pages = pages or [1] * len(texts)
    out, pos = [], 0
    for i, (text, page) in enumerate(zip(texts, pages, strict=True)):
        out.append(
            Chunk(
                chunk_id=f"{doc_id}:{i}",
                doc_id=doc_id,
                page=page,
                start=pos,
                end=pos + len(text),
                text=text,
            )
        )
        pos += len(text) + 1
    return out


class VectorStoreContract:
    """Behaviour shared by every vector store; subclasses provide ``vector_store``."""

    @pytest.fixture
    def dim(self) -> int:
        """Dimension of the store under test."""
        return 8

    # -- helpers -----------------------------------------------------------------

    def _fill(
        self, store: VectorStore, doc_id: str, n: int, dim: int, seed: int
    ) -> npt.NDArray[np.float32]:
        vecs = unit_vectors(n, dim, seed=seed)
        texts = [f"{doc_id} passage number {i}" for i in range(n)]
        assert store.replace(doc_id, make_chunks(doc_id, texts), vecs) == n
        return vecs

    # -- dense search ------------------------------------------------------------

    def test_search_nearest_first_with_cosine(self, vector_store: VectorStore, dim: int) -> None:
        vecs = self._fill(vector_store, "A", 20, dim, seed=1)
        hits = vector_store.search(vecs[7] * 3.0, k=5)
        assert hits[0].chunk.chunk_id == "A:7"
        assert hits[0].score == pytest.approx(1.0, abs=1e-4)
        expected = np.sort(vecs @ vecs[7])[::-1][:5]
        assert [h.score for h in hits] == pytest.approx(expected.tolist(), abs=1e-4)

    def test_k_is_respected(self, vector_store: VectorStore, dim: int) -> None:
        vecs = self._fill(vector_store, "A", 12, dim, seed=2)
        assert len(vector_store.search(vecs[0], k=3)) == 3
        assert len(vector_store.search(vecs[0], k=100)) == 12
        assert len(vector_store.search(vecs[0], k=1)) == 1
        assert len(vector_store.keyword_search("passage", k=2)) == 2

    def test_empty_store_returns_nothing(self, vector_store: VectorStore, dim: int) -> None:
        assert vector_store.search(unit_vectors(1, dim)[0], k=5) == []
        assert vector_store.keyword_search("acetone", k=5) == []

    def test_doc_filter(self, vector_store: VectorStore, dim: int) -> None:
        va = self._fill(vector_store, "A", 10, dim, seed=3)
        self._fill(vector_store, "B", 10, dim, seed=4)
        q = va[0]
        assert {h.chunk.doc_id for h in vector_store.search(q, k=20)} == {"A", "B"}
        assert vector_store.search(q, k=20, doc_ids=[]) == []
        only_b = vector_store.search(q, k=20, doc_ids=["B"])
        assert len(only_b) == 10
        assert {h.chunk.doc_id for h in only_b} == {"B"}
        assert vector_store.search(q, k=5, doc_ids=["missing"]) == []
        for ids in (("B",), {"B"}, frozenset({"B", "missing"}), ["B", "B"]):
            assert {h.chunk.doc_id for h in vector_store.search(q, k=20, doc_ids=ids)} == {"B"}  # type: ignore[arg-type]
            assert len(vector_store.search(q, k=20, doc_ids=ids)) == 10  # type: ignore[arg-type]

    def test_replace_twice_leaves_no_duplicates(self, vector_store: VectorStore, dim: int) -> None:
        self._fill(vector_store, "A", 6, dim, seed=5)
        vb = self._fill(vector_store, "B", 4, dim, seed=6)
        new = unit_vectors(3, dim, seed=7)
        chunks = make_chunks("A", ["new one", "new two", "new three"])
        assert vector_store.replace("A", chunks, new) == 3
        assert vector_store.replace("A", chunks, new) == 3
        assert vector_store.chunks("A") == chunks
        hits = vector_store.search(new[1], k=50)
        assert len(hits) == 7
        assert hits[0].chunk.text == "new two"
        assert [h.chunk.chunk_id for h in vector_store.search(vb[2], k=1)] == ["B:2"]
        assert len(vector_store.chunks("B")) == 4

    def test_dimension_mismatch_raises_and_writes_nothing(
        self, vector_store: VectorStore, dim: int
    ) -> None:
        va = self._fill(vector_store, "A", 3, dim, seed=8)
        bad = unit_vectors(2, dim + 1)
        with pytest.raises(StoreError):
            vector_store.replace("A", make_chunks("A", ["x", "y"]), bad)
        with pytest.raises(StoreError):
            vector_store.replace("C", make_chunks("C", ["x", "y"]), unit_vectors(3, dim))
        with pytest.raises(StoreError):
            vector_store.search(unit_vectors(1, dim + 1)[0], k=1)
        assert len(vector_store.chunks("A")) == 3
        assert vector_store.chunks("C") == []
        assert vector_store.search(va[1], k=1)[0].chunk.chunk_id == "A:1"

    def test_bad_writes_raise_and_write_nothing(self, vector_store: VectorStore, dim: int) -> None:
        self._fill(vector_store, "A", 2, dim, seed=12)
        before = vector_store.chunks("A")
        two = make_chunks("A", ["x", "y"])
        nan = unit_vectors(2, dim)
        nan[1, 0] = np.nan
        other = make_chunks("B", ["x", "y"])
        store_errors = [
            (two, unit_vectors(1, dim)),  # one row for two chunks
            (two, unit_vectors(2, dim)[0]),  # 1-D vectors
            (two, nan),  # non-finite value
            (other, unit_vectors(2, dim)),  # chunks of another document
            ([two[0], two[0]], unit_vectors(2, dim)),  # duplicate chunk ids
        ]
        for chunks, vectors in store_errors:
            with pytest.raises(StoreError):
                vector_store.replace("A", chunks, vectors)
        input_errors: list[tuple[Any, Any]] = [
            ("not chunks", unit_vectors(2, dim)),
            ([{"text": "x"}, {"text": "y"}], unit_vectors(2, dim)),
            (two, "not vectors"),
            (two, None),
            (two, [["a", "b"], ["c", "d"]]),
        ]
        for bad_chunks, bad_vectors in input_errors:
            with pytest.raises(InputError):
                vector_store.replace("A", bad_chunks, bad_vectors)
        assert vector_store.chunks("A") == before
        assert vector_store.chunks("B") == []

    @pytest.mark.parametrize("bad", ["", "a b", "a/b", "x" * 129, ".", ".."])
    def test_invalid_doc_id_rejected(self, vector_store: VectorStore, dim: int, bad: str) -> None:
        chunks = make_chunks("A", ["x"])
        with pytest.raises(InvalidDocIdError):
            vector_store.replace(bad, [c.model_copy(update={"doc_id": bad}) for c in chunks],
                                 unit_vectors(1, dim))  # fmt: skip
        assert vector_store.search(unit_vectors(1, dim)[0], k=5) == []

    def test_empty_write_removes_document(self, vector_store: VectorStore, dim: int) -> None:
        self._fill(vector_store, "A", 3, dim, seed=13)
        self._fill(vector_store, "B", 2, dim, seed=14)
        assert vector_store.replace("A", [], np.zeros((0, dim), dtype=np.float32)) == 0
        assert vector_store.chunks("A") == []
        assert {h.chunk.doc_id for h in vector_store.search(unit_vectors(1, dim)[0], k=9)} == {"B"}

    @pytest.mark.parametrize("k", [0, -1, 1.5, True, "3", None])
    def test_bad_k_is_input_error(self, vector_store: VectorStore, dim: int, k: object) -> None:
        vecs = self._fill(vector_store, "A", 3, dim, seed=15)
        with pytest.raises(InputError):
            vector_store.search(vecs[0], k=k)  # type: ignore[arg-type]
        with pytest.raises(InputError):
            vector_store.keyword_search("passage", k=k)  # type: ignore[arg-type]

    def test_bad_query_arguments_are_input_errors(
        self, vector_store: VectorStore, dim: int
    ) -> None:
        vecs = self._fill(vector_store, "A", 3, dim, seed=16)
        nan = vecs[0].copy()
        nan[0] = np.nan
        for vector in ("abc", None, vecs[:2], nan, np.zeros(0, dtype=np.float32)):
            with pytest.raises(InputError):
                vector_store.search(vector, k=1)  # type: ignore[arg-type]
        for text in (None, 5, b"passage", ["passage"]):
            with pytest.raises(InputError):
                vector_store.keyword_search(text, k=1)  # type: ignore[arg-type]
        for doc_ids in ("A", b"A", 5, [5]):
            with pytest.raises(InputError):
                vector_store.search(vecs[0], k=1, doc_ids=doc_ids)  # type: ignore[arg-type]
            with pytest.raises(InputError):
                vector_store.keyword_search("passage", k=1, doc_ids=doc_ids)  # type: ignore[arg-type]
        assert [h.chunk.chunk_id for h in vector_store.search(list(vecs[1]), k=1)] == ["A:1"]  # type: ignore[arg-type]

    # -- delete ------------------------------------------------------------------

    def test_delete_removes_from_dense_and_keyword(
        self, vector_store: VectorStore, dim: int
    ) -> None:
        vecs = unit_vectors(len(_TEXTS), dim, seed=9)
        vector_store.replace("A", make_chunks("A", _TEXTS), vecs)
        vb = self._fill(vector_store, "B", 3, dim, seed=10)
        assert vector_store.keyword_search("UN1090", k=5)
        assert vector_store.delete("A") == len(_TEXTS)
        assert vector_store.delete("A") == 0
        assert {h.chunk.doc_id for h in vector_store.search(vecs[0], k=50)} == {"B"}
        assert vector_store.keyword_search("UN1090", k=5) == []
        assert vector_store.chunks("A") == []
        assert vector_store.search(vb[0], k=1)[0].chunk.chunk_id == "B:0"

    # -- keyword search ----------------------------------------------------------

    @pytest.mark.parametrize(
        ("query", "index"),
        [
            ("67-64-1", 1),
            ("UN1090", 2),
            ("un 1090", 2),
            ("H225", 3),
            ("h 225", 3),
            ("un1090", 2),
            ("\uff35\uff2e\uff11\uff10\uff19\uff10", 2),  # full-width UN1090 (NFKC)
            ("What is CAS 67-64-1?", 1),
            ("flash point", 4),
        ],
    )
    def test_keyword_finds_identifiers(
        self, vector_store: VectorStore, dim: int, query: str, index: int
    ) -> None:
        vector_store.replace("A", make_chunks("A", _TEXTS), unit_vectors(len(_TEXTS), dim))
        other = ["Ethanol UN1170, CAS 64-17-5.", "Hazard H319 causes eye irritation."]
        vector_store.replace("B", make_chunks("B", other), unit_vectors(2, dim, seed=1))
        hits = vector_store.keyword_search(query, k=3)
        assert hits, query
        assert hits[0].chunk.chunk_id == f"A:{index}"
        assert all(h.score > 0 for h in hits)
        assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)

    def test_keyword_no_match_and_filter(self, vector_store: VectorStore, dim: int) -> None:
        vector_store.replace("A", make_chunks("A", _TEXTS), unit_vectors(len(_TEXTS), dim))
        vector_store.replace(
            "B", make_chunks("B", ["Acetone UN1090 again."]), unit_vectors(1, dim, seed=3)
        )
        assert vector_store.keyword_search("zirconium", k=5) == []
        assert vector_store.keyword_search("UN1090", k=5, doc_ids=[]) == []
        only_b = vector_store.keyword_search("UN1090", k=5, doc_ids=["B"])
        assert [h.chunk.chunk_id for h in only_b] == ["B:0"]
        assert len(vector_store.keyword_search("acetone", k=1)) == 1

    # -- chunks ------------------------------------------------------------------

    def test_chunks_in_page_order(self, vector_store: VectorStore, dim: int) -> None:
        chunks = make_chunks("A", ["p3", "p1 b", "p2", "p1 a"], pages=[3, 1, 2, 1])
        vector_store.replace("A", chunks, unit_vectors(4, dim))
        got = vector_store.chunks("A")
        assert [c.page for c in got] == [1, 1, 2, 3]
        first = [c for c in got if c.page == 1]
        assert [c.start for c in first] == sorted(c.start for c in first)
        assert vector_store.chunks("nobody") == []

    # -- threads -----------------------------------------------------------------

    def test_concurrent_searches(self, vector_store: VectorStore, dim: int) -> None:
        vecs = self._fill(vector_store, "A", 50, dim, seed=11)
        errors: list[BaseException] = []

        def work(i: int) -> None:
            try:
                for j in range(20):
                    row = (i * 7 + j) % 50
                    hit = vector_store.search(vecs[row], k=1)[0]
                    assert hit.chunk.chunk_id == f"A:{row}"
                    vector_store.keyword_search("passage", k=3)
            except BaseException as exc:  # collected and re-raised in the main thread
                errors.append(exc)

        def write() -> None:
            try:
                for j in range(20):
                    self._fill(vector_store, "B", 5, dim, seed=100 + j)
            except BaseException as exc:
                errors.append(exc)

        threads = [threading.Thread(target=work, args=(i,)) for i in range(6)]
        threads.append(threading.Thread(target=write))
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert errors == []
        assert len(vector_store.chunks("B")) == 5
