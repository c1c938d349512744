"""Contract test suite for ``GraphStore`` implementations.

Subclass ``GraphStoreContract`` in a test module and provide a ``graph_store``
fixture that yields a fresh, empty store::

    class TestMyStore(GraphStoreContract):
        @pytest.fixture
        def graph_store(self, tmp_path):
            with MyStore(tmp_path / "kg") as store:
                yield store

Only protocol methods are used, so any store (embedded, HTTP, HANA) can run it.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from hybrid_rag.errors import InputError, InvalidDocIdError, SparqlValidationError, StoreError
from hybrid_rag.protocols import GraphStore
from hybrid_rag.rdf import XSD, SparqlResult, Term, Triple, iri, literal

__all__ = ["GraphStoreContract"]

EX = "http://example.org/contract/"
HR = "http://hybrid-rag.org/ns#"
P_NAME = iri(EX + "name")
P_FLASH = iri(EX + "flashPoint")
P_NOTE = iri(EX + "note")

COUNT_ALL = "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }"
VALUES_ALL = "SELECT ?s ?p ?o WHERE { ?s ?p ?o }"

UPDATES = [
    f"INSERT DATA {{ <{EX}x> <{EX}p> 'evil' }}",
    f"INSERT DATA {{ GRAPH <{EX}g> {{ <{EX}x> <{EX}p> 'evil' }} }}",
    "DELETE WHERE { ?s ?p ?o }",
    "DELETE { ?s ?p ?o } WHERE { ?s ?p ?o }",
    "DROP GRAPH <urn:hybrid-rag:doc:a>",
    "DROP ALL",
    "CLEAR DEFAULT",
    "LOAD <http://example.org/data.ttl>",
    "CREATE GRAPH <urn:x>",
    "SELECT * WHERE { ?s ?p ?o } ; DROP ALL",
]


def named_subject(doc: str, name: str, *extra: Triple) -> list[Triple]:
    """A small document graph: one product with a name and a marker note."""
    subject = iri(f"{EX}{doc}/product")
    return [
        (subject, iri("http://www.w3.org/1999/02/22-rdf-syntax-ns#type"), iri(EX + "Product")),
        (subject, P_NAME, literal(name)),
        (subject, P_NOTE, literal(f"marker-{doc}")),
        *extra,
    ]


def count(store: GraphStore, doc: str) -> int:
    """Number of triples visible in one document's scope."""
    result = store.query(COUNT_ALL, scope=[doc])
    return int(result.rows[0]["n"].to_python())


def values(result: SparqlResult, var: str) -> list[Any]:
    """The Python values bound to ``var`` in every row."""
    return [row[var].to_python() for row in result.rows if var in row]


def rows_or_rejected(store: GraphStore, sparql: str, scope: list[str]) -> list[dict[str, Term]]:
    """Rows of a query, or no rows when the store rejects it as out of scope."""
    try:
        return list(store.query(sparql, scope=scope).rows)
    except SparqlValidationError:
        return []


class GraphStoreContract:
    """Behaviour every GraphStore must show. Needs a ``graph_store`` fixture."""

    # -- writing -----------------------------------------------------------------------

    def test_is_a_graph_store(self, graph_store: GraphStore) -> None:
        assert isinstance(graph_store, GraphStore)

    def test_replace_returns_count_and_is_queryable(self, graph_store: GraphStore) -> None:
        assert graph_store.replace("a", named_subject("a", "Acetone")) == 3
        assert count(graph_store, "a") == 3
        result = graph_store.query(f"SELECT ?n WHERE {{ ?s <{P_NAME.value}> ?n }}", scope=["a"])
        assert values(result, "n") == ["Acetone"]

    def test_double_write_keeps_one_copy(self, graph_store: GraphStore) -> None:
        triples = named_subject("a", "Acetone")
        graph_store.replace("a", triples)
        assert graph_store.replace("a", triples) == 3
        assert count(graph_store, "a") == 3

    def test_duplicate_triples_in_one_write_are_stored_once(self, graph_store: GraphStore) -> None:
        triples = named_subject("a", "Acetone")
        assert graph_store.replace("a", triples + triples) == 3

    def test_replace_removes_old_triples(self, graph_store: GraphStore) -> None:
        graph_store.replace("a", named_subject("a", "Old name"))
        graph_store.replace("a", named_subject("a", "New name"))
        result = graph_store.query(f"SELECT ?n WHERE {{ ?s <{P_NAME.value}> ?n }}", scope=["a"])
        assert values(result, "n") == ["New name"]
        assert count(graph_store, "a") == 3

    def test_replace_leaves_other_documents_untouched(self, graph_store: GraphStore) -> None:
        graph_store.replace("a", named_subject("a", "Acetone"))
        graph_store.replace(
            "b", named_subject("b", "Benzene", (iri(EX + "x"), P_NOTE, literal("b2")))
        )
        graph_store.replace("a", named_subject("a", "Acetone v2"))
        assert count(graph_store, "b") == 4
        result = graph_store.query(f"SELECT ?n WHERE {{ ?s <{P_NAME.value}> ?n }}", scope=["b"])
        assert values(result, "n") == ["Benzene"]

    def test_graph_iri_is_per_document(self, graph_store: GraphStore) -> None:
        assert graph_store.graph_iri("a") != graph_store.graph_iri("b")
        assert graph_store.graph_iri("a").endswith("a")

    def test_invalid_doc_id_rejected(self, graph_store: GraphStore) -> None:
        for bad in ("", "a b", "a>b", "x" * 129, "../etc", ".", ".."):
            with pytest.raises(InvalidDocIdError):
                graph_store.replace(bad, named_subject("a", "x"))
        assert graph_store.doc_ids() == []

    def test_empty_write_removes_graph(self, graph_store: GraphStore) -> None:
        graph_store.replace("a", named_subject("a", "Acetone"))
        graph_store.replace("b", named_subject("b", "Benzene"))
        assert graph_store.replace("a", []) == 0
        assert count(graph_store, "a") == 0
        assert graph_store.doc_ids() == ["b"]

    @pytest.mark.parametrize(
        "bad",
        [
            "not triples",
            None,
            [("s", "p", "o")],
            [(iri(EX + "s"), P_NAME)],
            [[iri(EX + "s"), P_NAME, literal("list, not tuple")]],
        ],
    )
    def test_malformed_triples_are_input_errors(self, graph_store: GraphStore, bad: Any) -> None:
        graph_store.replace("a", named_subject("a", "Acetone"))
        with pytest.raises(InputError):
            graph_store.replace("a", bad)
        with pytest.raises(InputError):
            graph_store.replace("new", bad)
        assert count(graph_store, "a") == 3
        assert graph_store.doc_ids() == ["a"]

    @pytest.mark.parametrize(
        "bad",
        [
            (literal("a literal subject"), P_NAME, literal("x")),
            (iri(EX + "s"), literal("a literal predicate"), literal("x")),
            (iri(EX + "s"), iri("not an iri"), literal("x")),
        ],
    )
    def test_unstorable_triple_is_store_error_and_graph_unchanged(
        self, graph_store: GraphStore, bad: Triple
    ) -> None:
        graph_store.replace("a", named_subject("a", "Acetone"))
        with pytest.raises(StoreError):
            graph_store.replace("a", [*named_subject("a", "Changed"), bad])
        with pytest.raises(StoreError):
            graph_store.replace("new", [*named_subject("new", "New"), bad])
        assert count(graph_store, "a") == 3
        assert values(
            graph_store.query(f"SELECT ?n WHERE {{ ?s <{P_NAME.value}> ?n }}", scope=["a"]), "n"
        ) == ["Acetone"]
        assert graph_store.doc_ids() == ["a"]

    # -- deleting and listing ----------------------------------------------------------

    def test_delete(self, graph_store: GraphStore) -> None:
        graph_store.replace("a", named_subject("a", "Acetone"))
        graph_store.replace("b", named_subject("b", "Benzene"))
        assert graph_store.delete("a") is True
        assert count(graph_store, "a") == 0
        assert count(graph_store, "b") == 3
        assert graph_store.doc_ids() == ["b"]

    def test_delete_absent_is_false(self, graph_store: GraphStore) -> None:
        assert graph_store.delete("nothing") is False
        graph_store.replace("a", named_subject("a", "Acetone"))
        graph_store.delete("a")
        assert graph_store.delete("a") is False

    def test_doc_ids(self, graph_store: GraphStore) -> None:
        assert graph_store.doc_ids() == []
        for doc in ("c", "a", "b-2.x_y"):
            graph_store.replace(doc, named_subject(doc, doc))
        assert sorted(graph_store.doc_ids()) == ["a", "b-2.x_y", "c"]

    # -- scope isolation ---------------------------------------------------------------

    @pytest.fixture
    def two_docs(self, graph_store: GraphStore) -> GraphStore:
        graph_store.replace("a", named_subject("a", "Acetone"))
        graph_store.replace("b", named_subject("b", "Benzene"))
        return graph_store

    def test_plain_pattern_sees_only_scope(self, two_docs: GraphStore) -> None:
        rows = two_docs.query(VALUES_ALL, scope=["a"]).rows
        assert len(rows) == 3
        assert not any("marker-b" in r["o"].value or "/b/" in r["s"].value for r in rows)

    def test_scope_of_two_is_union(self, two_docs: GraphStore) -> None:
        two_docs.replace("c", named_subject("c", "Chloroform"))
        result = two_docs.query(
            f"SELECT ?n WHERE {{ ?s <{P_NAME.value}> ?n }} ORDER BY ?n", scope=["a", "b"]
        )
        assert values(result, "n") == ["Acetone", "Benzene"]

    def test_from_other_graph_cannot_widen_scope(self, two_docs: GraphStore) -> None:
        g_b = two_docs.graph_iri("b")
        q = f"SELECT ?o FROM <{g_b}> WHERE {{ ?s ?p ?o }}"
        assert not any(r["o"].value == "marker-b" for r in rows_or_rejected(two_docs, q, ["a"]))

    def test_from_named_other_graph_cannot_widen_scope(self, two_docs: GraphStore) -> None:
        g_b = two_docs.graph_iri("b")
        q = f"SELECT ?g ?o FROM NAMED <{g_b}> WHERE {{ GRAPH ?g {{ ?s ?p ?o }} }}"
        rows = rows_or_rejected(two_docs, q, ["a"])
        assert not any(r["o"].value == "marker-b" for r in rows)
        assert not any(r["g"].value == g_b for r in rows)

    def test_graph_iri_of_other_doc_cannot_widen_scope(self, two_docs: GraphStore) -> None:
        g_b = two_docs.graph_iri("b")
        q = f"SELECT ?o WHERE {{ GRAPH <{g_b}> {{ ?s ?p ?o }} }}"
        assert rows_or_rejected(two_docs, q, ["a"]) == []

    def test_graph_variable_ranges_over_scope_only(self, two_docs: GraphStore) -> None:
        q = "SELECT DISTINCT ?g WHERE { GRAPH ?g { ?s ?p ?o } }"
        result = two_docs.query(q, scope=["a"])
        assert [r["g"].value for r in result.rows] == [two_docs.graph_iri("a")]

    def test_per_graph_query_over_many_documents_sees_the_scope_only(
        self, graph_store: GraphStore
    ) -> None:
        # a query that reads only inside GRAPH ?g may have its scope written into it by
        # the store (VALUES ?g, or the graphs outside it): the rows are the scope's, for
        # scopes of every size (all of the store, most, half, a few), also when a VALUES
        # block sits inside the GRAPH group and a literal is looked up by equality
        docs = [f"m{i:02d}" for i in range(20)]
        for doc in docs:
            graph_store.replace(
                doc,
                named_subject(
                    doc, f"name-{doc}", (iri(f"{EX}{doc}/f"), P_FLASH, literal("shared"))
                ),
            )
        query = (
            'SELECT ?g ?n WHERE { GRAPH ?g { VALUES ?v { "shared" } ?f <'
            + P_FLASH.value
            + "> ?v . "
            "?s <" + P_NAME.value + "> ?n } }"
        )
        for scope in (docs, docs[1:], docs[::2], docs[:9], docs[:3]):
            rows = graph_store.query(query, scope=scope).rows
            assert sorted(r["n"].value for r in rows) == sorted(f"name-{d}" for d in scope)
            assert {r["g"].value for r in rows} == {graph_store.graph_iri(d) for d in scope}
        distinct = "SELECT DISTINCT ?v WHERE { GRAPH ?g { ?f <" + P_FLASH.value + "> ?v } }"
        assert values(graph_store.query(distinct, scope=docs[1:]), "v") == ["shared"]

    def test_graph_iri_in_scope_is_allowed(self, two_docs: GraphStore) -> None:
        q = f"SELECT ?o WHERE {{ GRAPH <{two_docs.graph_iri('a')}> {{ ?s <{P_NOTE.value}> ?o }} }}"
        assert values(two_docs.query(q, scope=["a", "b"]), "o") == ["marker-a"]

    def test_empty_scope_is_empty_result(self, two_docs: GraphStore) -> None:
        result = two_docs.query(VALUES_ALL, scope=[])
        assert result.rows == ()
        assert result.boolean is None

    def test_scope_may_be_any_collection_of_ids(self, two_docs: GraphStore) -> None:
        q = f"SELECT ?n WHERE {{ ?s <{P_NAME.value}> ?n }} ORDER BY ?n"
        for scope in (("a", "b"), {"a", "b"}, frozenset({"b", "a"}), ["a", "b", "a"]):
            assert values(two_docs.query(q, scope=scope), "n") == ["Acetone", "Benzene"]  # type: ignore[arg-type]
        assert values(two_docs.query(q, scope=set()), "n") == []  # type: ignore[arg-type]

    @pytest.mark.parametrize("scope", ["a", None, 7, (d for d in ["a"])])
    def test_scope_must_be_a_sequence_of_ids(self, two_docs: GraphStore, scope: Any) -> None:
        with pytest.raises(InputError):
            two_docs.query(VALUES_ALL, scope=scope)

    @pytest.mark.parametrize("bad", ["a b", "", "../x", ".", "..", 7])
    def test_invalid_doc_id_in_scope_rejected(self, two_docs: GraphStore, bad: Any) -> None:
        with pytest.raises(InvalidDocIdError):
            two_docs.query(VALUES_ALL, scope=["a", bad])

    def test_unknown_doc_in_scope_sees_nothing(self, two_docs: GraphStore) -> None:
        assert two_docs.query(VALUES_ALL, scope=["zzz"]).rows == ()

    def test_ask(self, two_docs: GraphStore) -> None:
        yes = f"ASK {{ ?s <{P_NOTE.value}> 'marker-a' }}"
        no = f"ASK {{ ?s <{P_NOTE.value}> 'marker-b' }}"
        assert two_docs.query(yes, scope=["a"]).boolean is True
        assert two_docs.query(no, scope=["a"]).boolean is False

    def test_select_result_shape(self, two_docs: GraphStore) -> None:
        q = (
            f"SELECT ?s ?missing WHERE {{ ?s <{P_NAME.value}> ?n "
            f"OPTIONAL {{ ?s <{EX}no> ?missing }} }}"
        )
        result = two_docs.query(q, scope=["a"])
        assert result.variables == ("s", "missing")
        assert result.boolean is None
        assert result.rows == ({"s": iri(f"{EX}a/product")},)

    # -- read-only safety --------------------------------------------------------------

    @pytest.mark.parametrize("update", UPDATES)
    def test_updates_rejected_and_store_unchanged(self, two_docs: GraphStore, update: str) -> None:
        with pytest.raises(SparqlValidationError):
            two_docs.query(update, scope=["a", "b"])
        assert count(two_docs, "a") == 3
        assert count(two_docs, "b") == 3
        assert sorted(two_docs.doc_ids()) == ["a", "b"]

    @pytest.mark.parametrize(
        "sparql",
        [
            "SELECT * WHERE { SERVICE <http://example.org/sparql> { ?s ?p ?o } }",
            "SELECT * WHERE { ?s ?p ?o OPTIONAL { SERVICE SILENT <http://x.org/s> { ?s ?q ?r } } }",
            "ASK { ?s ?p ?o FILTER EXISTS { SERVICE <http://x.org/s> { ?s ?q ?r } } }",
        ],
    )
    def test_service_rejected(self, two_docs: GraphStore, sparql: str) -> None:
        with pytest.raises(SparqlValidationError, match="SERVICE"):
            two_docs.query(sparql, scope=["a"])

    @pytest.mark.parametrize(
        "sparql", ["CONSTRUCT WHERE { ?s ?p ?o }", "DESCRIBE <http://example.org/x>"]
    )
    def test_graph_returning_forms_rejected(self, two_docs: GraphStore, sparql: str) -> None:
        with pytest.raises(SparqlValidationError):
            two_docs.query(sparql, scope=["a"])

    @pytest.mark.parametrize(
        "sparql", ["SELECT ?s WHERE { ?s ?p", "SELEKT * WHERE { ?s ?p ?o }", "", "   ", None, 42]
    )
    def test_malformed_query_is_typed_error(self, two_docs: GraphStore, sparql: str) -> None:
        with pytest.raises(SparqlValidationError):
            two_docs.query(sparql, scope=["a"])

    # -- values ------------------------------------------------------------------------

    @pytest.mark.parametrize(
        "text",
        [
            'say "hello"',
            "line1\nline2\r\nline3\ttab",
            "back\\slash \\n not a newline",
            "unicode: é ü 漢字 🧪 °C ≤ µg/m³",
            "'single' and '''triple''' quotes",
            "# not a comment } { . ;",
            "\x01 control \x7f",
            "",
        ],
    )
    def test_literal_round_trip_exact(self, graph_store: GraphStore, text: str) -> None:
        subject = iri(EX + "s")
        graph_store.replace("a", [(subject, P_NOTE, literal(text))])
        result = graph_store.query(VALUES_ALL, scope=["a"])
        assert result.rows[0]["o"] == Term(text)

    def test_language_tag_round_trip(self, graph_store: GraphStore) -> None:
        term = Term("Aceton", "literal", lang="de")
        graph_store.replace("a", [(iri(EX + "s"), P_NAME, term)])
        assert graph_store.query(VALUES_ALL, scope=["a"]).rows[0]["o"] == term

    def test_typed_numbers_round_trip(self, graph_store: GraphStore) -> None:
        numbers = [literal(-20.5), literal(42), literal("3.25", XSD + "decimal"), literal(True)]
        subject = iri(EX + "s")
        graph_store.replace("a", [(subject, iri(f"{EX}v{i}"), n) for i, n in enumerate(numbers)])
        result = graph_store.query("SELECT ?p ?o WHERE { ?s ?p ?o } ORDER BY ?p", scope=["a"])
        got = [(r["o"].datatype, r["o"].to_python()) for r in result.rows]
        assert got == [(n.datatype, n.to_python()) for n in numbers]

    def test_numbers_compare_and_sort_across_documents(self, graph_store: GraphStore) -> None:
        for doc, number in (("a", -20.0), ("b", 12.5), ("c", -45.0)):
            extra = (iri(f"{EX}{doc}/product"), P_FLASH, literal(number))
            graph_store.replace(doc, named_subject(doc, doc, extra))
        flash = P_FLASH.value
        ordered = graph_store.query(
            f"SELECT ?v WHERE {{ ?s <{flash}> ?v }} ORDER BY ?v", scope=["a", "b"]
        )
        assert values(ordered, "v") == [-20.0, 12.5]
        below = graph_store.query(
            f"SELECT ?v WHERE {{ ?s <{flash}> ?v FILTER(?v < 0) }}", scope=["a", "b"]
        )
        assert values(below, "v") == [-20.0]
        lowest = graph_store.query(
            f"SELECT (MIN(?v) AS ?m) WHERE {{ ?s <{flash}> ?v }}", scope=["a", "b", "c"]
        )
        assert values(lowest, "m") == [-45.0]

    def test_blank_nodes_are_stored(self, graph_store: GraphStore) -> None:
        node = Term("n1", "bnode")
        triples = [(iri(EX + "s"), P_NOTE, node), (node, P_NAME, literal("inner"))]
        assert graph_store.replace("a", triples) == 2
        q = f"SELECT ?n WHERE {{ <{EX}s> <{P_NOTE.value}> ?b . ?b <{P_NAME.value}> ?n }}"
        assert values(graph_store.query(q, scope=["a"]), "n") == ["inner"]

    # -- concurrency and lifecycle -----------------------------------------------------

    def test_concurrent_queries(self, graph_store: GraphStore) -> None:
        docs = [f"d{i}" for i in range(6)]
        for doc in docs:
            graph_store.replace(doc, named_subject(doc, f"name-{doc}"))
        q = f"SELECT ?n WHERE {{ ?s <{P_NAME.value}> ?n }}"

        def ask(i: int) -> tuple[str, list[Any]]:
            doc = docs[i % len(docs)]
            return doc, values(graph_store.query(q, scope=[doc]), "n")

        with ThreadPoolExecutor(max_workers=6) as pool:
            results = list(pool.map(ask, range(60)))
        assert all(names == [f"name-{doc}"] for doc, names in results)

    def test_concurrent_writes_to_different_docs(self, graph_store: GraphStore) -> None:
        def write(i: int) -> int:
            return graph_store.replace(f"w{i}", named_subject(f"w{i}", f"n{i}"))

        with ThreadPoolExecutor(max_workers=4) as pool:
            assert list(pool.map(write, range(12))) == [3] * 12
        assert len(graph_store.doc_ids()) == 12

    def test_close_is_idempotent(self, graph_store: GraphStore) -> None:
        graph_store.close()
        graph_store.close()
