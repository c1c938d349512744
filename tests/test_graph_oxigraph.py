"""OxigraphGraphStore: the GraphStore contract in memory and on disk, plus extras."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator
from pathlib import Path

import pyoxigraph
import pytest

from hybrid_rag.errors import ConfigurationError, InputError, SparqlValidationError, StoreError
from hybrid_rag.rdf import XSD, Term, iri, literal
from hybrid_rag.stores import oxigraph as oxigraph_module
from hybrid_rag.stores.oxigraph import OxigraphGraphStore
from hybrid_rag.testing._graph_contract import GraphStoreContract, named_subject


class TestOxigraphInMemory(GraphStoreContract):
    @pytest.fixture
    def graph_store(self) -> Iterator[OxigraphGraphStore]:
        with OxigraphGraphStore() as store:
            yield store


@pytest.fixture(scope="module")
def disk_db(tmp_path_factory: pytest.TempPathFactory) -> Iterator[pyoxigraph.Store]:
    """One RocksDB store for the module: opening one costs ~0.2 s, a test ~5 ms."""
    yield pyoxigraph.Store(str(tmp_path_factory.mktemp("kg")))


class TestOxigraphOnDisk(GraphStoreContract):
    """The contract on RocksDB. Each test gets its own graph base on a shared database,
    so it starts empty (``doc_ids`` only lists graphs under the base)."""

    @pytest.fixture
    def graph_store(self, disk_db: pyoxigraph.Store) -> Iterator[OxigraphGraphStore]:
        base = f"urn:test:{uuid.uuid4().hex}:"
        store = OxigraphGraphStore("unused", graph_base=base)
        store._store = disk_db  # share the open database instead of reopening
        yield store
        store._store = None  # skip the flush (~0.15 s) of the shared database
        store.close()


def test_fresh_on_disk_store_passes_a_contract_round(tmp_path: Path) -> None:
    with OxigraphGraphStore(tmp_path / "kg") as store:
        contract = GraphStoreContract()
        contract.test_replace_leaves_other_documents_untouched(store)
        contract.test_numbers_compare_and_sort_across_documents(store)
        contract.test_concurrent_queries(store)


def test_constructor_does_no_io(tmp_path: Path) -> None:
    target = tmp_path / "not-yet"
    store = OxigraphGraphStore(target)
    assert not target.exists()
    store.replace("a", named_subject("a", "x"))
    assert target.exists()
    store.close()


def test_persistence_across_reopen(tmp_path: Path) -> None:
    path = tmp_path / "kg"
    with OxigraphGraphStore(path) as store:
        store.replace("a", named_subject("a", "Acetone"))
        store.replace("b", named_subject("b", "Benzene"))
        store.delete("b")
        store.replace("c", [(iri("http://x.org/s"), iri("http://x.org/p"), literal('q "1"\n'))])
    with OxigraphGraphStore(path) as again:
        assert again.doc_ids() == ["a", "c"]
        assert again.count("a") == 3
        assert again.dump("c")[0][2] == Term('q "1"\n')


def test_graph_base_is_configurable() -> None:
    with OxigraphGraphStore(graph_base="http://example.org/g/") as store:
        assert store.graph_iri("doc1") == "http://example.org/g/doc1"
        store.replace("doc1", named_subject("doc1", "x"))
        assert store.doc_ids() == ["doc1"]


def test_doc_ids_ignore_graphs_under_other_bases() -> None:
    with OxigraphGraphStore() as store:
        store.replace("a", named_subject("a", "x"))
        store._db().update("INSERT DATA { GRAPH <urn:other:g> { <urn:s> <urn:p> <urn:o> } }")
        assert store.doc_ids() == ["a"]


def test_bad_graph_base_rejected() -> None:
    with pytest.raises(ConfigurationError):
        OxigraphGraphStore(graph_base="not an iri")


def test_count_and_dump() -> None:
    with OxigraphGraphStore() as store:
        triples = named_subject("a", "Acetone")
        store.replace("a", triples)
        assert store.count("a") == 3
        assert store.count("missing") == 0
        assert sorted(store.dump("a"), key=repr) == sorted(triples, key=repr)
        assert store.dump("missing") == []


def test_count_is_of_the_distinct_triples_the_engine_keeps() -> None:
    # one subject and predicate repeated (converted once), a duplicate triple, and two
    # spellings of one integer, which the engine stores as one literal
    s, p = iri("urn:x:s"), iri("urn:x:p")
    one, also_one = literal("1", XSD + "integer"), literal("01", XSD + "integer")
    triples = [(s, p, one), (s, p, one), (s, p, also_one), (s, p, literal("two"))]
    with OxigraphGraphStore() as store:
        assert store.replace("a", triples) == store.count("a") == 2
        assert store.replace("a", triples[3:]) == 1  # a replace: the update path
        assert store.count("a") == 1 and store.count("b") == 0


def test_terms_survive_pickling_whole() -> None:
    import pickle

    terms = [iri("urn:x"), literal("3", XSD + "integer"), Term("Aceton", "literal", lang="de")]
    terms.append(Term("b0", "bnode"))
    again = pickle.loads(pickle.dumps(terms))
    assert again == terms and {hash(t) for t in again} == {hash(t) for t in terms}


def test_empty_replace_removes_graph() -> None:
    with OxigraphGraphStore() as store:
        store.replace("a", named_subject("a", "x"))
        assert store.replace("a", []) == 0
        assert store.doc_ids() == []


@pytest.mark.parametrize(
    ("bad", "error"),
    [
        ((literal("s"), iri("http://x.org/p"), literal("o")), StoreError),
        ((iri("http://x.org/s"), literal("p"), literal("o")), StoreError),
        ((iri("relative"), iri("http://x.org/p"), literal("o")), StoreError),
        (("s", "p", "o"), InputError),  # not Terms: a bad argument
        ((iri("http://x.org/s"),), InputError),
    ],
)
def test_bad_triple_leaves_old_graph(bad: object, error: type[Exception]) -> None:
    with OxigraphGraphStore() as store:
        store.replace("a", named_subject("a", "Acetone"))
        with pytest.raises(error):
            store.replace("a", [*named_subject("a", "New"), bad])  # type: ignore[list-item]
        assert store.count("a") == 3
        assert Term("Acetone") in [t[2] for t in store.dump("a")]


def test_engine_error_is_store_error_with_engine_text(monkeypatch: pytest.MonkeyPatch) -> None:
    # an allowed function the engine does not know gets past validation
    monkeypatch.setattr("hybrid_rag.sparql._extra_functions", {"urn:no-such-function"})
    with OxigraphGraphStore() as store:
        store.replace("a", named_subject("a", "x"))
        with pytest.raises(StoreError, match="urn:no-such-function"):
            query = "SELECT * WHERE { ?s ?p ?o FILTER(<urn:no-such-function>(?o)) }"
            store.query(query, scope=["a"])


def test_scope_must_not_be_a_string() -> None:
    with OxigraphGraphStore() as store, pytest.raises(InputError):
        store.query("ASK { ?s ?p ?o }", scope="a")  # type: ignore[arg-type]


def test_use_after_close_is_store_error() -> None:
    store = OxigraphGraphStore()
    store.replace("a", named_subject("a", "x"))
    store.close()
    with pytest.raises(StoreError, match="closed"):
        store.doc_ids()


def test_validation_happens_before_engine() -> None:
    with OxigraphGraphStore() as store:
        with pytest.raises(SparqlValidationError):
            store.query("DROP ALL", scope=["a"])
        assert store._store is None  # the engine was never opened


def test_readers_never_see_half_written_graph() -> None:
    with OxigraphGraphStore() as store:
        big = [(iri(f"http://x.org/s{i}"), iri("http://x.org/p"), literal(i)) for i in range(300)]
        store.replace("a", big)
        stop = threading.Event()
        seen: set[int] = set()

        def reader() -> None:
            while not stop.is_set():
                seen.add(store.count("a"))

        thread = threading.Thread(target=reader)
        thread.start()
        for n in (300, 150, 300, 150, 300):
            store.replace("a", big[:n])
        stop.set()
        thread.join()
        assert seen <= {300, 150}


def _names(store: OxigraphGraphStore, scope: list[str]) -> list[str]:
    q = "SELECT ?n WHERE { ?s <http://example.org/contract/name> ?n } ORDER BY ?n"
    return [r["n"].value for r in store.query(q, scope=scope).rows]


def test_full_scope_fast_path_matches_per_graph_dataset() -> None:
    docs = [f"d{i:02d}" for i in range(12)]
    with OxigraphGraphStore() as store:
        for doc in docs:
            store.replace(doc, named_subject(doc, f"name-{doc}"))
        everything = _names(store, docs)  # covers the store: union path
        assert everything == [f"name-{d}" for d in docs]
        assert _names(store, docs[:11]) == everything[:11]  # partial: per-graph path
        q = "SELECT DISTINCT ?g WHERE { GRAPH ?g { ?s ?p ?o } }"
        graphs = {r["g"].value for r in store.query(q, scope=docs[:10]).rows}
        assert graphs == {store.graph_iri(d) for d in docs[:10]}


def test_full_scope_never_sees_foreign_graphs_or_default_graph() -> None:
    docs = [f"d{i:02d}" for i in range(10)]
    with OxigraphGraphStore() as store:
        for doc in docs:
            store.replace(doc, named_subject(doc, f"name-{doc}"))
        foreign = "<urn:s> <http://example.org/contract/name> 'foreign'"
        store._db().update(f"INSERT DATA {{ GRAPH <urn:other:g> {{ {foreign} }} }}")
        assert "foreign" not in _names(store, docs)
        store._db().update("DROP GRAPH <urn:other:g>")
        store._db().update(f"INSERT DATA {{ {foreign} }}")  # the store's default graph
        assert "foreign" not in _names(store, docs)


def test_large_partial_scope_runs_on_a_copy_of_exactly_its_graphs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(oxigraph_module, "_COPY_MIN_GRAPHS", 4)
    docs = [f"d{i:02d}" for i in range(12)]
    with OxigraphGraphStore() as store:
        for doc in docs:
            store.replace(doc, named_subject(doc, f"name-{doc}"))
        foreign = "<urn:s> <http://example.org/contract/name> 'foreign'"
        store._db().update(f"INSERT DATA {{ {foreign} GRAPH <urn:other:g> {{ {foreign} }} }}")
        scope = docs[2:9]
        per_graph = oxigraph_module._execute(
            store._db(), "SELECT ?n WHERE { ?s <http://example.org/contract/name> ?n }",
            [store.graph_iri(d) for d in scope],
        )  # fmt: skip
        assert _names(store, scope) == sorted(r["n"].value for r in per_graph.rows)
        assert _names(store, scope) == [f"name-{d}" for d in scope]
        assert len(store._copies) == 1
        q = "SELECT DISTINCT ?g WHERE { GRAPH ?g { ?s ?p ?o } }"
        graphs = {r["g"].value for r in store.query(q, scope=scope).rows}
        assert graphs == {store.graph_iri(d) for d in scope}  # nothing else is readable
        copy = next(iter(store._copies.values()))[1]
        assert store.query(q, scope=list(reversed(scope))).rows  # same scope: same copy
        assert next(iter(store._copies.values()))[1] is copy
        store.replace("d03", named_subject("d03", "renamed"))  # a write: the copy is stale
        assert "renamed" in _names(store, scope) and "name-d03" not in _names(store, scope)


def test_write_between_scope_check_and_query_is_detected(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    docs = [f"d{i:02d}" for i in range(10)]
    with OxigraphGraphStore() as store:
        for doc in docs:
            store.replace(doc, named_subject(doc, f"name-{doc}"))
        original = store._covers
        calls: list[bool] = []

        def covers_then_race(db: pyoxigraph.Store, graphs: list[str]) -> bool:
            covered = original(db, graphs)
            if not calls:  # a concurrent ingest lands right after the check
                store.replace("intruder", named_subject("intruder", "unscoped"))
            calls.append(covered)
            return covered

        monkeypatch.setattr(store, "_covers", covers_then_race)
        assert "unscoped" not in _names(store, docs)
        assert calls == [True, False]  # re-checked after the write, then per-graph path


def test_full_scope_queries_during_writes_never_see_unscoped_docs() -> None:
    docs = [f"d{i:02d}" for i in range(10)]
    with OxigraphGraphStore() as store:
        for doc in docs:
            store.replace(doc, named_subject(doc, f"name-{doc}"))
        stop = threading.Event()

        def writer() -> None:
            i = 0
            while not stop.is_set():
                store.replace(f"new{i % 5}", named_subject(f"new{i % 5}", "unscoped"))
                store.delete(f"new{(i + 2) % 5}")
                i += 1

        thread = threading.Thread(target=writer)
        thread.start()
        try:
            for _ in range(60):
                assert "unscoped" not in _names(store, docs)
        finally:
            stop.set()
            thread.join()


# -- the in-memory mirror of an on-disk store ---------------------------------------------


def _quads(store: pyoxigraph.Store) -> set[str]:
    return {str(q) for q in store.quads_for_pattern(None, None, None, None)}


def _mirror_store(store: OxigraphGraphStore) -> pyoxigraph.Store:
    assert store._mirror is not None and store._mirror.wait(30)
    mirror = store._mirror.reader(store._db())
    assert mirror is not store._db()
    return mirror


def test_mirror_serves_many_document_queries_and_follows_every_write(tmp_path: Path) -> None:
    docs = [f"d{i:02d}" for i in range(12)]
    with OxigraphGraphStore(tmp_path / "kg") as store:
        for doc in docs:
            store.replace(doc, named_subject(doc, f"name-{doc}"))
        assert store._mirror is not None and store._mirror.state == "off"  # lazy
        assert store.query("ASK { ?s ?p ?o }", scope=docs[:2]).boolean  # few docs: no load
        assert store._mirror.state == "off"
        assert _names(store, docs) == [f"name-{d}" for d in docs]  # read from disk, loads
        mirror = _mirror_store(store)
        assert _quads(mirror) == _quads(store._db())
        store.replace("d03", named_subject("d03", "renamed"))  # replace, delete, new graph
        store.delete("d04")
        store.replace("new", named_subject("new", "added"))
        everything = [d for d in docs if d != "d04"] + ["new"]
        assert _quads(mirror) == _quads(store._db())
        assert "renamed" in _names(store, everything) and "added" in _names(store, everything)
        assert "name-d04" not in _names(store, docs)
        assert _names(store, docs[:9]) == sorted(
            [f"name-{d}" for d in docs[:9] if d not in ("d03", "d04")] + ["renamed"]
        )


def test_writes_while_the_mirror_loads_are_read_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hybrid_rag.stores import _mirror

    loaded, release = threading.Event(), threading.Event()
    copy_all = _mirror._copy_all

    def slow_copy(db: pyoxigraph.Store, copy: pyoxigraph.Store, stop: threading.Event) -> bool:
        done = copy_all(db, copy, stop)
        loaded.set()
        release.wait(10)
        return done

    monkeypatch.setattr(_mirror, "_copy_all", slow_copy)
    docs = [f"d{i:02d}" for i in range(10)]
    with OxigraphGraphStore(tmp_path / "kg") as store:
        for doc in docs:
            store.replace(doc, named_subject(doc, f"name-{doc}"))
        _names(store, docs)
        assert loaded.wait(10)  # the copy is taken; now write before it is published
        store.replace("d01", named_subject("d01", "renamed"))
        store.delete("d02")
        store.replace("late", named_subject("late", "late"))
        assert "renamed" in _names(store, docs)  # still served from the disk
        release.set()
        assert _quads(_mirror_store(store)) == _quads(store._db())


_TEN = [f"d{i:02d}" for i in range(10)]


@pytest.fixture()
def mirrored(tmp_path: Path) -> Iterator[OxigraphGraphStore]:
    """An on-disk store of ten documents whose mirror has loaded."""
    with OxigraphGraphStore(tmp_path / "kg") as store:
        for doc in _TEN:
            store.replace(doc, named_subject(doc, f"name-{doc}"))
        _names(store, _TEN)
        _mirror_store(store)
        yield store


def test_failed_write_leaves_the_mirror_as_it_was(mirrored: OxigraphGraphStore) -> None:
    mirror = _mirror_store(mirrored)
    bad = named_subject("d05", "new", (iri("urn:s"), iri("not an iri"), literal("x")))
    with pytest.raises(StoreError):
        mirrored.replace("d05", bad)
    assert _quads(mirror) == _quads(mirrored._db())
    assert "name-d05" in _names(mirrored, _TEN)


def test_mirror_failure_falls_back_to_the_disk(mirrored: OxigraphGraphStore) -> None:
    assert mirrored._mirror is not None

    def broken(_: pyoxigraph.Store) -> None:
        raise MemoryError("out of memory")

    mirrored._mirror.apply(mirrored.graph_iri("d00"), broken)
    assert mirrored._mirror.state == "failed"
    mirrored.replace("d00", named_subject("d00", "after"))
    assert "after" in _names(mirrored, _TEN)  # the disk answers, not a stale copy
    assert mirrored._mirror.reader(mirrored._db()) is mirrored._db()


def test_close_stops_a_mirror_load_and_mirror_false_never_loads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hybrid_rag.stores import _mirror

    started = threading.Event()

    def stuck_copy(db: pyoxigraph.Store, copy: pyoxigraph.Store, stop: threading.Event) -> bool:
        started.set()
        stop.wait(30)
        return False

    monkeypatch.setattr(_mirror, "_copy_all", stuck_copy)
    docs = [f"d{i:02d}" for i in range(10)]
    store = OxigraphGraphStore(tmp_path / "kg")
    for doc in docs:
        store.replace(doc, named_subject(doc, f"name-{doc}"))
    _names(store, docs)
    assert started.wait(10)
    store.close()  # joins the loader, which stops at once
    assert store._mirror is not None and store._mirror.state == "off"
    with OxigraphGraphStore(tmp_path / "kg", mirror=False) as again:
        assert again._mirror is None
        assert _names(again, docs) == [f"name-{d}" for d in docs]
