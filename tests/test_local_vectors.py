"""LocalVectorStore: the shared contract (in memory and on disk), persistence, HNSW path."""

from __future__ import annotations

import contextlib
import shutil
import sqlite3
import time
from collections.abc import Iterable, Iterator
from pathlib import Path

import numpy as np
import pytest

from hybrid_rag.errors import ConfigurationError, StoreError
from hybrid_rag.protocols import VectorStore
from hybrid_rag.stores._keywords import KeywordIndex
from hybrid_rag.stores.local_vectors import LocalVectorStore
from hybrid_rag.testing._vector_contract import VectorStoreContract, make_chunks, unit_vectors
from hybrid_rag.text import keyword_tokens as tokenize


class TestInMemory(VectorStoreContract):
    @pytest.fixture
    def vector_store(self, dim: int) -> Iterator[LocalVectorStore]:
        with LocalVectorStore(dim=dim) as store:
            yield store


class TestOnDisk(VectorStoreContract):
    @pytest.fixture
    def vector_store(self, dim: int, tmp_path: Path) -> Iterator[LocalVectorStore]:
        with LocalVectorStore(tmp_path / "vec", dim=dim) as store:
            yield store


class TestForcedAnn(VectorStoreContract):
    """The contract holds when every unrestricted search goes through HNSW."""

    @pytest.fixture
    def vector_store(self, dim: int, tmp_path: Path) -> Iterator[LocalVectorStore]:
        with LocalVectorStore(tmp_path / "vec", dim=dim, ann_threshold=0) as store:
            yield store


def test_is_a_vector_store() -> None:
    assert isinstance(LocalVectorStore(dim=4), VectorStore)


def test_constructor_does_no_io(tmp_path: Path) -> None:
    LocalVectorStore(tmp_path / "never")
    assert not (tmp_path / "never").exists()
    with pytest.raises(ConfigurationError):
        LocalVectorStore(dim=0)


def test_tokenize_keeps_identifiers() -> None:
    toks = tokenize("CAS 67-64-1, UN 1090 and H225; UN1090.")
    for t in ("67-64-1", "67", "64", "1", "un1090", "un", "1090", "h225", "cas"):
        assert t in toks
    assert "and" not in toks
    assert tokenize("") == []


def test_reopen_sees_same_data(tmp_path: Path) -> None:
    vecs = unit_vectors(30, 8, seed=1)
    with LocalVectorStore(tmp_path, dim=8) as store:
        store.replace("A", make_chunks("A", [f"alpha {i}" for i in range(20)]), vecs[:20])
        store.replace("B", make_chunks("B", [f"beta UN1090 {i}" for i in range(10)]), vecs[20:])
        store.delete("A")
        store.replace("A", make_chunks("A", ["gamma H225"]), vecs[:1])
    with LocalVectorStore(tmp_path) as again:
        assert again.doc_ids() == ["A", "B"]
        assert len(again) == 11
        assert again.search(vecs[25], k=1)[0].chunk.chunk_id == "B:5"
        assert again.search(vecs[0], k=1, doc_ids=["A"])[0].chunk.text == "gamma H225"
        assert again.keyword_search("H225", k=5)[0].chunk.doc_id == "A"
        with pytest.raises(StoreError):
            again.replace("C", make_chunks("C", ["x"]), unit_vectors(1, 5))
    with pytest.raises(StoreError):
        LocalVectorStore(tmp_path, dim=16).chunks("A")


def test_closed_store_raises_and_close_is_idempotent() -> None:
    store = LocalVectorStore(dim=4)
    store.replace("A", make_chunks("A", ["x"]), unit_vectors(1, 4))
    store.close()
    store.close()
    with pytest.raises(StoreError):
        store.search(unit_vectors(1, 4)[0], k=1)


def test_bad_writes_raise_store_error() -> None:
    with LocalVectorStore(dim=4) as store:
        with pytest.raises(StoreError):  # chunk of another document
            store.replace("A", make_chunks("B", ["x"]), unit_vectors(1, 4))
        with pytest.raises(StoreError):  # NaN
            store.replace("A", make_chunks("A", ["x"]), np.full((1, 4), np.nan, np.float32))
        with pytest.raises(StoreError):  # duplicate chunk ids
            chunk = make_chunks("A", ["x"])[0]
            store.replace("A", [chunk, chunk], unit_vectors(2, 4))
        assert store.doc_ids() == []
        assert store.replace("A", [], np.zeros((0, 4), np.float32)) == 0
        assert store.doc_ids() == []


def _recall(
    store: LocalVectorStore, data: np.ndarray, queries: np.ndarray, doc_of: list[str]
) -> float:
    hits = 0
    for q in queries:
        truth = set(np.argsort(-(data @ q))[:10].tolist())
        got = {int(h.chunk.chunk_id.split(":")[1]) for h in store.search(q, k=10)}
        hits += len(got & truth)
    return hits / (10 * len(queries))


def _clustered(n: int, dim: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    centers = rng.standard_normal((40, dim))
    x = centers[rng.integers(0, 40, n)] + 0.8 * rng.standard_normal((n, dim))
    out: np.ndarray = (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)
    return out


def test_ann_path_keeps_recall_and_honours_deletes(tmp_path: Path) -> None:
    dim, n = 32, 4000
    data = _clustered(n, dim)
    rng = np.random.default_rng(5)
    queries = data[rng.choice(n, 50, replace=False)] + 0.05 * rng.standard_normal((50, dim))
    queries = (queries / np.linalg.norm(queries, axis=1, keepdims=True)).astype(np.float32)
    # one "document" per 100 rows; chunk id suffix = global row number
    with LocalVectorStore(tmp_path, dim=dim, ann_threshold=100) as store:
        for d in range(n // 100):
            rows = range(d * 100, (d + 1) * 100)
            chunks = [
                c.model_copy(update={"chunk_id": f"D{d}:{r}"})
                for c, r in zip(make_chunks(f"D{d}", [f"t{r}" for r in rows]), rows, strict=True)
            ]
            store.replace(f"D{d}", chunks, data[d * 100 : (d + 1) * 100])
        assert _recall(store, data, queries, []) >= 0.95
        assert store._ann.index is not None  # the HNSW path was used
        # delete half of the documents: they vanish at once, recall over the rest holds
        for d in range(0, n // 100, 2):
            store.delete(f"D{d}")
        alive = np.zeros(n, dtype=bool)
        for d in range(1, n // 100, 2):
            alive[d * 100 : (d + 1) * 100] = True
        masked = np.where(alive[:, None], data, 0).astype(np.float32)
        for q in queries[:10]:
            assert all(int(h.chunk.doc_id[1:]) % 2 == 1 for h in store.search(q, k=10))
        assert _recall(store, masked, queries, []) >= 0.95
        # re-add a document: its rows reuse freed slots and are found by HNSW
        store.replace("D0", make_chunks("D0", ["back"]), data[:1])
        assert store.search(data[0], k=1)[0].chunk.chunk_id == "D0:0"
    assert (tmp_path / "ann.usearch").exists()
    with LocalVectorStore(tmp_path, ann_threshold=100) as again:
        assert again.search(data[0], k=1)[0].chunk.chunk_id == "D0:0"
        assert again._ann.index is not None  # loaded from disk, not rebuilt
        assert _recall(again, np.where(alive[:, None], data, 0), queries, []) >= 0.9


def test_filtered_search_is_exact_and_fast() -> None:
    dim = 64
    data = _clustered(20_000, dim, seed=3)
    with LocalVectorStore(dim=dim, ann_threshold=1000) as store:
        for d in range(20):
            store.replace(
                f"D{d}", make_chunks(f"D{d}", ["x"] * 1000), data[d * 1000 : (d + 1) * 1000]
            )
        q = data[5500]
        t0 = time.perf_counter()
        hits = store.search(q, k=10, doc_ids=["D5"])
        elapsed = time.perf_counter() - t0
        truth = np.argsort(-(data[5000:6000] @ q))[:10]
        assert [h.chunk.chunk_id for h in hits] == [f"D5:{i}" for i in truth]
        assert elapsed < 0.05


def _indexed_docs(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Record every document (re-)indexed by the keyword index from now on."""
    seen: list[str] = []
    original = KeywordIndex.replace

    def spy(self: KeywordIndex, doc_id: str, rows: Iterable[tuple[int, str]]) -> None:
        seen.append(doc_id)
        original(self, doc_id, rows)

    monkeypatch.setattr(KeywordIndex, "replace", spy)
    return seen


def test_keyword_index_is_updated_per_document(monkeypatch: pytest.MonkeyPatch) -> None:
    with LocalVectorStore(dim=4) as store:
        for d in range(20):
            store.replace(f"D{d}", make_chunks(f"D{d}", [f"acetone {d}"]), unit_vectors(1, 4))
        assert len(store.keyword_search("acetone", k=50)) == 20
        seen = _indexed_docs(monkeypatch)
        store.replace("B", make_chunks("B", ["UN1090 acetone"]), unit_vectors(1, 4))
        assert [h.chunk.doc_id for h in store.keyword_search("UN1090", k=5)] == ["B"]
        store.replace("D3", make_chunks("D3", ["toluene"]), unit_vectors(1, 4))
        store.delete("D4")
        hits = store.keyword_search("acetone", k=50)
        assert seen == ["B", "D3", "D4"]  # only the changed documents, never the whole store
        expected = {f"D{d}" for d in range(20)} - {"D3", "D4"} | {"B"}
        assert {h.chunk.doc_id for h in hits} == expected
        assert [h.chunk.doc_id for h in store.keyword_search("toluene", k=5)] == ["D3"]


def test_keyword_index_is_reused_after_reopen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    vecs = unit_vectors(12, 8, seed=3)
    with LocalVectorStore(tmp_path / "v") as store:
        store.replace("A", make_chunks("A", [f"alpha {i}" for i in range(10)]), vecs[:10])
        first = [h.chunk.chunk_id for h in store.keyword_search("alpha 3", k=3)]
    seen = _indexed_docs(monkeypatch)
    with LocalVectorStore(tmp_path / "v") as store:
        assert [h.chunk.chunk_id for h in store.keyword_search("alpha 3", k=3)] == first
        assert seen == []  # opened from keywords/, nothing re-indexed
        store.replace("B", make_chunks("B", ["omega UN1090"]), vecs[10:11])
        assert [h.chunk.doc_id for h in store.keyword_search("UN1090", k=3)] == ["B"]
    with LocalVectorStore(tmp_path / "v") as store:
        assert [h.chunk.doc_id for h in store.keyword_search("UN1090", k=3)] == ["B"]
    assert seen == ["B"]


def test_failed_keyword_update_is_redone_by_the_next_search(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    vecs = unit_vectors(3, 8, seed=4)
    with LocalVectorStore(tmp_path / "v") as store:
        store.replace("A", make_chunks("A", ["alpha"]), vecs[:1])
        assert store.keyword_search("alpha", k=1)
        with monkeypatch.context() as patch:

            def fail(self: KeywordIndex, doc_id: str, rows: object) -> None:
                raise OSError("disk full")

            patch.setattr(KeywordIndex, "replace", fail)
            store.replace("B", make_chunks("B", ["omega UN1090"]), vecs[1:2])  # still stands
        assert [c.text for c in store.chunks("B")] == ["omega UN1090"]
        seen = _indexed_docs(monkeypatch)
        assert [h.chunk.doc_id for h in store.keyword_search("UN1090", k=3)] == ["B"]
        assert seen == ["B"]


def test_keyword_updates_lost_in_a_crash_are_redone_on_open(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("hybrid_rag.stores._vector_keywords.KW_BURST_S", 3600.0)  # all a burst
    vecs = unit_vectors(3, 8, seed=4)
    store = LocalVectorStore(tmp_path / "v")
    store.replace("A", make_chunks("A", ["alpha"]), vecs[:1])
    store.replace("C", make_chunks("C", ["gamma"]), vecs[2:3])
    assert store.keyword_search("alpha", k=1)  # commits A and C
    store.replace("B", make_chunks("B", ["omega UN1090"]), vecs[1:2])
    store.delete("A")
    # the process dies here: SQLite committed both writes, the keyword index neither
    assert store._kw.kw is not None and store._db is not None
    store._kw.kw._writer = store._kw.kw._index = None
    store._db.close()
    if store._file_lock is not None:  # a dead process holds no OS lock
        store._file_lock.release()
    seen = _indexed_docs(monkeypatch)
    with LocalVectorStore(tmp_path / "v") as again:
        assert [h.chunk.doc_id for h in again.keyword_search("UN1090 alpha", k=3)] == ["B"]
        assert [h.chunk.doc_id for h in again.keyword_search("gamma", k=3)] == ["C"]
    assert sorted(seen) == ["A", "B"]  # exactly the documents whose update was lost


def test_old_bm25_folder_is_replaced_by_the_keyword_index(tmp_path: Path) -> None:
    vecs = unit_vectors(2, 8, seed=5)
    with LocalVectorStore(tmp_path) as store:
        store.replace("A", make_chunks("A", ["acetone UN1090"]), vecs[:1])
    db = sqlite3.connect(tmp_path / "chunks.sqlite3")  # what an older version left behind
    db.execute("DELETE FROM meta WHERE key = 'kw_index'")
    db.execute("INSERT OR REPLACE INTO meta VALUES ('bm25_ok', '1')")
    db.commit()
    db.close()
    shutil.rmtree(tmp_path / "keywords")
    (tmp_path / "bm25").mkdir()
    (tmp_path / "bm25" / "params.index.json").write_text("{}")
    with LocalVectorStore(tmp_path) as store:
        assert [h.chunk.doc_id for h in store.keyword_search("un1090", k=3)] == ["A"]
    assert not (tmp_path / "bm25").exists()


def test_damaged_keyword_index_is_rebuilt(tmp_path: Path) -> None:
    vecs = unit_vectors(2, 8, seed=6)
    with LocalVectorStore(tmp_path) as store:
        store.replace("A", make_chunks("A", ["acetone 67-64-1"]), vecs[:1])
        assert store.keyword_search("acetone", k=1)
    (tmp_path / "keywords" / "meta.json").write_text("not json")
    with LocalVectorStore(tmp_path) as store:
        assert [h.chunk.doc_id for h in store.keyword_search("67-64-1", k=3)] == ["A"]


def _fill(store: LocalVectorStore, data: np.ndarray, per_doc: int = 100) -> None:
    """One document ``D<d>`` per ``per_doc`` rows; chunk id suffix = global row number."""
    for d in range(len(data) // per_doc):
        rows = range(d * per_doc, (d + 1) * per_doc)
        chunks = [
            c.model_copy(update={"chunk_id": f"D{d}:{r}"})
            for c, r in zip(make_chunks(f"D{d}", [f"t{r}" for r in rows]), rows, strict=True)
        ]
        store.replace(f"D{d}", chunks, data[d * per_doc : (d + 1) * per_doc])


def _copy_live_folder(src: Path, dst: Path) -> None:
    """Copy a store folder while it is open, as a crash would find it.

    The keyword index's background merge threads create and delete temporary
    files at any moment; a file that vanishes between listing and copying was
    never part of the committed state, so it is skipped rather than failing.
    """

    def copy(s: str, d: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            shutil.copy2(s, d)

    shutil.copytree(src, dst, copy_function=copy, ignore_dangling_symlinks=True)


def test_index_file_reused_on_reopen_and_stale_one_rebuilt(tmp_path: Path) -> None:
    data = _clustered(1000, 16, seed=7)
    with LocalVectorStore(tmp_path, dim=16, ann_threshold=100) as store:
        _fill(store, data)
        assert store.search(data[3], k=1)[0].chunk.chunk_id == "D0:3"
    file = tmp_path / "ann.usearch"
    assert file.exists()
    with LocalVectorStore(tmp_path, ann_threshold=100) as again:
        assert len(again) == 1000
        loaded = again._ann.index
        assert loaded is not None  # read from ann.usearch on open, not built
        assert again.search(data[3], k=1)[0].chunk.chunk_id == "D0:3"
        assert again._ann.index is loaded
        again.replace("D0", make_chunks("D0", ["new"]), data[500:501])  # file now stale
        # one handle per store: look at the folder as a crash now would leave it
        crashed = tmp_path.with_name(tmp_path.name + "-crashed")
        _copy_live_folder(tmp_path, crashed)
    with LocalVectorStore(crashed, ann_threshold=100) as third:
        assert len(third) == 901
        assert third._ann.index is None  # the staleness flag forbids the old file
        hits = third.search(data[500], k=2)
        assert {h.chunk.chunk_id for h in hits} == {"D0:0", "D5:500"}
        assert third._ann.index is not None and len(third._ann.index) == 901
    with LocalVectorStore(tmp_path, ann_threshold=100) as fourth:
        assert len(fourth) == 901
        assert fourth._ann.index is not None and len(fourth._ann.index) == 901
    # other index settings or a damaged file: ignored and rebuilt
    with LocalVectorStore(tmp_path, ann_threshold=100, hnsw_m=8) as other:
        assert len(other) == 901
        assert other._ann.index is None
        assert other.search(data[500], k=1)[0].score == pytest.approx(1.0, abs=1e-5)
    file.write_bytes(b"not an index" * 10)
    with LocalVectorStore(tmp_path, ann_threshold=100, hnsw_m=8) as damaged:
        assert len(damaged) == 901
        assert damaged._ann.index is None
        assert len(damaged.search(data[7], k=5)) == 5


def test_old_hnswlib_file_is_ignored(tmp_path: Path) -> None:
    data = _clustered(300, 8, seed=2)
    with LocalVectorStore(tmp_path, dim=8) as store:
        _fill(store, data)
        store._open().execute("INSERT OR REPLACE INTO meta VALUES ('ann_ok', '1')")
    (tmp_path / "hnsw.bin").write_bytes(b"\0" * 64)
    with LocalVectorStore(tmp_path, ann_threshold=100) as store:
        assert len(store) == 300
        assert store._ann.index is None
        assert store.search(data[42], k=1)[0].chunk.chunk_id == "D0:42"
    assert (tmp_path / "ann.usearch").exists()
    assert not (tmp_path / "hnsw.bin").exists()


@pytest.mark.parametrize("oversample", [1, 4])
def test_large_filter_over_fetches_then_falls_back(tmp_path: Path, oversample: int) -> None:
    dim, n = 32, 4000
    data = _clustered(n, dim, seed=11)
    rng = np.random.default_rng(3)
    with LocalVectorStore(dim=dim, ann_threshold=100, ann_oversample=oversample) as store:
        _fill(store, data)
        hits = total = 0
        for i in range(40):
            docs = sorted(rng.choice(40, 15, replace=False).tolist())
            rows = np.concatenate([np.arange(d * 100, (d + 1) * 100) for d in docs])
            q = data[rows[i * 7 % len(rows)]]
            truth = set(rows[np.argsort(-(data[rows] @ q))[:10]].tolist())
            got = store.search(q, k=10, doc_ids=[f"D{d}" for d in docs])
            assert len(got) == 10
            assert all(int(h.chunk.doc_id[1:]) in docs for h in got)
            assert [h.score for h in got] == sorted((h.score for h in got), reverse=True)
            hits += len(truth & {int(h.chunk.chunk_id.split(":")[1]) for h in got})
            total += 10
        assert store._ann.index is not None  # the index was asked
        assert hits / total >= 0.95


def test_writes_and_deletes_update_the_hnsw_index_in_place() -> None:
    data = _clustered(600, 16, seed=9)
    with LocalVectorStore(dim=16, ann_threshold=100) as store:
        _fill(store, data)
        assert store.search(data[3], k=1)[0].chunk.chunk_id == "D0:3"
        index = store._ann.index
        assert index is not None and len(index) == 600
        store.delete("D1")
        store.replace("D2", make_chunks("D2", ["new"]), data[250:251])
        hits = store.search(data[150], k=5)  # a row of the deleted document
        assert store._ann.index is index  # updated in place, never rebuilt
        assert len(index) == 401
        assert all(h.chunk.doc_id != "D1" for h in hits)
        assert store.search(data[250], k=1)[0].chunk.chunk_id == "D2:0"


def _commits(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Count keyword index commits that had something to commit, from now on."""
    done: list[int] = []
    original = KeywordIndex.commit

    def spy(self: KeywordIndex) -> bool:
        changed = original(self)
        done.extend([1] if changed else [])
        return changed

    monkeypatch.setattr(KeywordIndex, "commit", spy)
    return done


@pytest.mark.parametrize("on_disk", [False, True])
def test_deleted_chunks_are_never_served_before_their_tombstones_commit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, on_disk: bool
) -> None:
    path = tmp_path / "v" if on_disk else None
    with LocalVectorStore(path, dim=4) as store:
        # the deleted documents score best for "acetone": without over-fetching, their
        # hits would fill the top-k and push the live chunks out
        for d in range(6):
            store.replace(
                f"X{d}", make_chunks(f"X{d}", ["acetone acetone acetone"]), unit_vectors(1, 4)
            )
        for d in range(3):
            store.replace(
                f"L{d}", make_chunks(f"L{d}", [f"acetone and filler words {d}"]), unit_vectors(1, 4)
            )
        assert len(store.keyword_search("acetone", k=20)) == 9  # commits everything
        commits = _commits(monkeypatch)
        for d in range(6):
            store.delete(f"X{d}")
        hits = store.keyword_search("acetone", k=3)
        assert commits == []  # the deletes are still staged: the search did not pay a commit
        assert sorted(h.chunk.doc_id for h in hits) == ["L0", "L1", "L2"]
        assert store.keyword_search("acetone", k=3, doc_ids=["X0", "X5"]) == []
        scoped = store.keyword_search("acetone", k=10, doc_ids=["X1", "L2"])
        assert [h.chunk.doc_id for h in scoped] == ["L2"]
        # a new write reuses the freed rows: its search commits it with the tombstones
        store.replace("N", make_chunks("N", ["toluene", "xylene"]), unit_vectors(2, 4))
        assert [h.chunk.doc_id for h in store.keyword_search("acetone toluene", k=20)].count(
            "N"
        ) == 1
        assert commits == [1]
        assert all(h.chunk.doc_id[0] != "X" for h in store.keyword_search("acetone", k=20))


def test_tombstones_commit_once_too_many_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("hybrid_rag.stores._vector_keywords.KW_MAX_DEAD", 3)
    with LocalVectorStore(dim=4) as store:
        for d in range(3):
            store.replace(f"D{d}", make_chunks(f"D{d}", ["alpha", "beta"]), unit_vectors(2, 4))
        assert store.keyword_search("alpha", k=5)
        commits = _commits(monkeypatch)
        store.delete("D0")  # 2 freed chunks wait
        assert commits == []
        store.delete("D1")  # 4 > 3: this delete commits
        assert commits == [1]
        assert [h.chunk.doc_id for h in store.keyword_search("alpha beta", k=5)] == ["D2", "D2"]


def test_uncommitted_tombstones_lost_in_a_crash_are_applied_on_open(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    vecs = unit_vectors(3, 8, seed=4)
    store = LocalVectorStore(tmp_path / "v")
    store.replace("A", make_chunks("A", ["alpha UN1090"]), vecs[:1])
    store.replace("B", make_chunks("B", ["beta UN1090"]), vecs[1:2])
    assert len(store.keyword_search("UN1090", k=5)) == 2  # both committed
    store.delete("A")
    assert [h.chunk.doc_id for h in store.keyword_search("UN1090 alpha", k=5)] == ["B"]
    # the process dies: SQLite committed the delete, the keyword index still holds A
    assert store._kw.kw is not None and store._db is not None
    store._kw.kw._writer = store._kw.kw._index = None
    store._db.close()
    if store._file_lock is not None:
        store._file_lock.release()
    seen = _indexed_docs(monkeypatch)
    with LocalVectorStore(tmp_path / "v") as again:
        assert [h.chunk.doc_id for h in again.keyword_search("UN1090 alpha", k=5)] == ["B"]
        assert again.keyword_search("alpha", k=5, doc_ids=["A"]) == []
        assert seen == ["A"]  # its tombstone was redone from kw_pending
        assert again._kw.dead == set()
    with LocalVectorStore(tmp_path / "v") as third:  # and it stays gone
        assert third.keyword_search("alpha", k=5) == []


def test_a_lone_write_commits_itself_and_a_burst_stays_staged(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with LocalVectorStore(dim=4) as store:
        store.replace("A", make_chunks("A", ["alpha"]), unit_vectors(1, 4))
        assert store.keyword_search("alpha", k=1)
        commits = _commits(monkeypatch)
        monkeypatch.setattr("hybrid_rag.stores._vector_keywords.KW_BURST_S", 0.0)  # every write
        store.replace("B", make_chunks("B", ["beta UN1090"]), unit_vectors(1, 4))
        assert commits == [1]  # the write paid its commit ...
        assert [h.chunk.doc_id for h in store.keyword_search("UN1090", k=3)] == ["B"]
        assert commits == [1]  # ... so the search after it did not
        monkeypatch.setattr("hybrid_rag.stores._vector_keywords.KW_BURST_S", 3600.0)
        for d in range(5):  # a bulk ingest: every write right after the previous one
            store.replace(f"C{d}", make_chunks(f"C{d}", [f"gamma {d}"]), unit_vectors(1, 4))
        assert commits == [1]
        assert len(store.keyword_search("gamma", k=10)) == 5
        assert commits == [1, 1]  # one commit for the whole burst, paid by the search


def test_terms_in_nearly_every_chunk_are_not_scored_in_a_large_index(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    kw = KeywordIndex(None)
    kw.open(fresh=True)
    # "sds" is in all 40 chunks, "flash" in 3 of them, "point" in 20
    for d in range(8):
        rows = [
            (
                d * 5 + i,
                f"sds {'flash ' if d * 5 + i in (3, 17, 31) else ''}"
                f"{'point ' if (d * 5 + i) % 2 else ''}w{d * 5 + i}",
            )
            for i in range(5)
        ]
        kw.replace(f"D{d}", rows)
    kw.commit()
    full = kw.search(["sds", "flash"], 10, None)
    assert len(full) == 10  # the three "flash" chunks first, then any of the others
    assert {s for s, _ in full[:3]} == {3, 17, 31}
    monkeypatch.setattr("hybrid_rag.stores._keywords._PRUNE_FROM", 0)
    pruned = kw.search(["sds", "flash"], 3, None)
    assert [s for s, _ in pruned] == [s for s, _ in full[:3]]
    assert all(0 < b - a < 0.12 for (_, a), (_, b) in zip(pruned, full, strict=False))
    # fewer than k chunks match the informative terms: the full query fills the rest
    assert [s for s, _ in kw.search(["sds", "flash"], 10, None)] == [s for s, _ in full]
    # only common terms: all of them are scored
    assert len(kw.search(["sds"], 50, None)) == 40
    assert {s for s, _ in kw.search(["sds", "point"], 2, ["D0"])} == {1, 3}
    kw.close()
