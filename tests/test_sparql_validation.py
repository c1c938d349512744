"""validate_query, escaping helpers and with_dataset."""

from __future__ import annotations

import subprocess
import sys

import pytest

from hybrid_rag.errors import SparqlValidationError
from hybrid_rag.sparql import sparql_iri, sparql_literal, validate_query, with_dataset

G_A = "urn:hybrid-rag:doc:a"
G_B = "urn:hybrid-rag:doc:b"


# -- validate_query ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "query",
    [
        "SELECT * WHERE { ?s ?p ?o }",
        "ASK { ?s ?p ?o }",
        "PREFIX ex: <http://ex.org/> SELECT ?s WHERE { ?s ex:p 'INSERT DATA' } # DROP ALL",
        "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o } GROUP BY ?s HAVING (COUNT(*) > 1)",
        f"SELECT ?o WHERE {{ GRAPH <{G_A}> {{ ?s ?p ?o }} }}",
        f"SELECT ?o FROM <{G_A}> FROM NAMED <{G_B}> WHERE {{ GRAPH ?g {{ ?s ?p ?o }} }}",
        "SELECT ?s WHERE { { SELECT ?s WHERE { ?s ?p ?o } LIMIT 1 } }",
    ],
)
def test_read_only_queries_pass_unchanged(query: str) -> None:
    assert validate_query(query, allowed_graphs=[G_A, G_B]) == query


@pytest.mark.parametrize(
    "update",
    [
        "INSERT DATA { <urn:a> <urn:b> <urn:c> }",
        "DELETE DATA { <urn:a> <urn:b> <urn:c> }",
        "DELETE WHERE { ?s ?p ?o }",
        "WITH <urn:g> DELETE { ?s ?p ?o } INSERT { ?s ?p 1 } WHERE { ?s ?p ?o }",
        "DROP GRAPH <urn:g>",
        "DROP SILENT ALL",
        "CLEAR ALL",
        "LOAD <http://example.org/x.ttl> INTO GRAPH <urn:g>",
        "CREATE GRAPH <urn:g>",
        "COPY <urn:a> TO <urn:b>",
        "MOVE DEFAULT TO <urn:b>",
        "ADD <urn:a> TO <urn:b>",
        "PREFIX ex: <http://ex.org/> INSERT { ?s ex:p 1 } WHERE { ?s ?p ?o }",
    ],
)
def test_updates_rejected_as_not_read_only(update: str) -> None:
    with pytest.raises(SparqlValidationError, match="not read-only"):
        validate_query(update)


def test_query_followed_by_update_rejected() -> None:
    with pytest.raises(SparqlValidationError):
        validate_query("SELECT * WHERE { ?s ?p ?o } ; DROP ALL")


@pytest.mark.parametrize(
    ("query", "kind"),
    [("CONSTRUCT WHERE { ?s ?p ?o }", "CONSTRUCT"), ("DESCRIBE <urn:x>", "DESCRIBE")],
)
def test_graph_forms_rejected(query: str, kind: str) -> None:
    with pytest.raises(SparqlValidationError, match=kind):
        validate_query(query)


@pytest.mark.parametrize(
    "query",
    [
        "SELECT * WHERE { SERVICE <http://evil.org/sparql> { ?s ?p ?o } }",
        "SELECT * WHERE { SERVICE SILENT <http://evil.org/sparql> { ?s ?p ?o } }",
        "SELECT * WHERE { ?s ?p ?o OPTIONAL { SERVICE <http://e.org/s> { ?s ?q ?r } } }",
        "SELECT * WHERE { { ?s ?p ?o } UNION { SERVICE <http://e.org/s> { ?s ?q ?r } } }",
        "SELECT * WHERE { ?s ?p ?o MINUS { SERVICE <http://e.org/s> { ?s ?q ?r } } }",
        "SELECT * WHERE { ?s ?p ?o FILTER NOT EXISTS { SERVICE <http://e.org/s> { ?s ?q ?r } } }",
        "SELECT * WHERE { { SELECT ?s WHERE { SERVICE <http://e.org/s> { ?s ?q ?r } } } }",
        "PREFIX e: <http://e.org/> ASK { SERVICE e:s { ?s ?q ?r } }",
        "SELECT * WHERE { BIND(<http://e.org/s> AS ?svc) SERVICE ?svc { ?s ?q ?r } }",
    ],
)
def test_service_rejected_anywhere(query: str) -> None:
    with pytest.raises(SparqlValidationError, match="SERVICE"):
        validate_query(query)


@pytest.mark.parametrize(
    "query",
    [
        f"SELECT * FROM <{G_B}> WHERE {{ ?s ?p ?o }}",
        f"SELECT * FROM NAMED <{G_B}> WHERE {{ GRAPH ?g {{ ?s ?p ?o }} }}",
        f"SELECT * WHERE {{ GRAPH <{G_B}> {{ ?s ?p ?o }} }}",
        f"ASK {{ ?s ?p ?o FILTER EXISTS {{ GRAPH <{G_B}> {{ ?s ?p ?o }} }} }}",
        f"SELECT * WHERE {{ {{ SELECT ?s WHERE {{ GRAPH <{G_B}> {{ ?s ?p ?o }} }} }} }}",
        "PREFIX d: <urn:hybrid-rag:doc:> SELECT * WHERE { GRAPH d:b { ?s ?p ?o } }",
        "PREFIX d: <urn:hybrid-rag:doc:> SELECT * FROM d:b WHERE { ?s ?p ?o }",
        "PREFIX d: <urn:hybrid-rag:doc:> ASK { ?x ?y ?z"
        " FILTER NOT EXISTS { GRAPH d:b { ?s ?p ?o } } }",
    ],
)
def test_graphs_outside_scope_rejected(query: str) -> None:
    with pytest.raises(SparqlValidationError, match="outside the query scope"):
        validate_query(query, allowed_graphs=[G_A])
    assert validate_query(query, allowed_graphs=[G_A, G_B]) == query
    assert validate_query(query) == query


def test_empty_allowed_graphs_rejects_any_named_graph() -> None:
    with pytest.raises(SparqlValidationError):
        validate_query(f"SELECT * WHERE {{ GRAPH <{G_A}> {{ ?s ?p ?o }} }}", allowed_graphs=[])


@pytest.mark.parametrize(
    "query", ["", "   ", "SELECT", "SELECT ?s WHERE { ?s ?p", "hello world", "SELECT * WHERE {} }"]
)
def test_malformed_rejected_with_reason(query: str) -> None:
    with pytest.raises(SparqlValidationError) as info:
        validate_query(query)
    assert str(info.value)
    assert "Traceback" not in str(info.value)


def test_too_long_rejected() -> None:
    with pytest.raises(SparqlValidationError, match="too long"):
        validate_query("SELECT * WHERE { ?s ?p ?o } #" + "x" * 200_000)


def test_import_of_hybrid_rag_does_not_import_rdflib() -> None:
    code = "import sys, hybrid_rag.sparql; print('rdflib' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# -- escaping helpers -------------------------------------------------------------------


@pytest.mark.parametrize(
    "text", ['a "quoted" word', "new\nline", "back\\slash", "} . DROP ALL ; #", "é 漢字 🧪", ""]
)
def test_sparql_literal_is_safe_in_templates(text: str) -> None:
    query = f"ASK {{ ?s ?p {sparql_literal(text)} }}"
    assert validate_query(query) == query
    assert "\n" not in sparql_literal(text)


def test_sparql_literal_typed_and_tagged() -> None:
    assert sparql_literal(3) == '"3"^^<http://www.w3.org/2001/XMLSchema#integer>'
    assert sparql_literal(-20.5) == '"-20.5"^^<http://www.w3.org/2001/XMLSchema#double>'
    assert sparql_literal(True) == '"true"^^<http://www.w3.org/2001/XMLSchema#boolean>'
    assert sparql_literal("Aceton", lang="de") == '"Aceton"@de'
    with pytest.raises(SparqlValidationError):
        sparql_literal("x", lang="de> } DROP ALL")


def test_sparql_iri_escapes_breakout_characters() -> None:
    assert sparql_iri("http://ex.org/a") == "<http://ex.org/a>"
    escaped = sparql_iri("http://ex.org/a> } ; DROP ALL ; <x")
    assert escaped.count("<") == 1 and escaped.count(">") == 1
    assert " " not in escaped
    for bad in ("", "relative/path", "<http://x>"):
        with pytest.raises(SparqlValidationError):
            sparql_iri(bad)


# -- with_dataset -----------------------------------------------------------------------


def _dataset(query: str) -> tuple[set[str], set[str]]:
    """FROM and FROM NAMED graphs of a query, read back through rdflib."""
    from rdflib.plugins.sparql import prepareQuery

    parsed = prepareQuery(query)
    clauses = parsed.algebra.get("datasetClause") or []
    default = {str(c["default"]) for c in clauses if "default" in c}
    named = {str(c["named"]) for c in clauses if "named" in c}
    return default, named


def test_with_dataset_adds_from_and_from_named() -> None:
    out = with_dataset("SELECT ?s WHERE { ?s ?p ?o }", [G_A, G_B])
    assert _dataset(out) == ({G_A, G_B}, {G_A, G_B})
    assert out.rstrip().endswith("WHERE { ?s ?p ?o }")


@pytest.mark.parametrize(
    "query",
    [
        f"SELECT ?s FROM <{G_B}> WHERE {{ ?s ?p ?o }}",
        f"SELECT ?s FROM <{G_B}> FROM NAMED <urn:x> WHERE {{ ?s ?p ?o }}",
        "PREFIX d: <urn:hybrid-rag:doc:> SELECT ?s FROM d:b FROM NAMED d:c { ?s ?p ?o }",
        f"select ?s from\n  <{G_B}>\nfrom named <{G_B}> where {{ ?s ?p ?o }}",
        f"ASK FROM <{G_B}> {{ ?s ?p ?o }}",
    ],
)
def test_with_dataset_replaces_existing_clauses(query: str) -> None:
    out = with_dataset(query, [G_A])
    assert _dataset(out) == ({G_A}, {G_A})


def test_with_dataset_ignores_keywords_in_strings_comments_and_iris() -> None:
    query = (
        "PREFIX ex: <http://ex.org/from/> # FROM <urn:evil> WHERE {\n"
        "SELECT ?s ?from WHERE { ?s ex:FROM 'FROM <urn:evil> {' ; "
        '<http://ex.org/WHERE> """x FROM <urn:evil2>\n{""" . ?s ex:p ?from }'
    )
    out = with_dataset(query, [G_A])
    assert _dataset(out) == ({G_A}, {G_A})
    assert "'FROM <urn:evil> {'" in out
    assert '"""x FROM <urn:evil2>\n{"""' in out
    assert "# FROM <urn:evil> WHERE {\n" in out
    assert out.index("FROM <" + G_A) > out.index("?from")


def test_with_dataset_handles_expressions_in_projection() -> None:
    query = "SELECT (COUNT(?s) AS ?n) (EXISTS { ?s ?p 1 } AS ?e) WHERE { ?s ?p ?o } GROUP BY ?p"
    out = with_dataset(query, [G_A])
    assert _dataset(out) == ({G_A}, {G_A})
    # EXISTS in a projection escapes FROM on Virtuoso 7.2: the validator refuses it
    with pytest.raises(SparqlValidationError, match="EXISTS"):
        validate_query(out, allowed_graphs=[G_A])


def test_with_dataset_subquery_untouched() -> None:
    query = "SELECT ?s { { SELECT ?s WHERE { ?s ?p ?o } } }"
    out = with_dataset(query, [G_A])
    assert out.count("FROM <") == 1
    assert out.endswith("{ { SELECT ?s WHERE { ?s ?p ?o } } }")
    assert _dataset(out) == ({G_A}, {G_A})


def test_with_dataset_escapes_graph_iris_and_dedupes() -> None:
    out = with_dataset("ASK { ?s ?p ?o }", [G_A, G_A, "urn:x:a b>"])
    assert out.count(f"FROM <{G_A}>") == 1
    assert "<urn:x:a%20b%3E>" in out
    validate_query(out)


def test_with_dataset_rejects_empty_scope_and_bad_queries() -> None:
    with pytest.raises(SparqlValidationError):
        with_dataset("SELECT * WHERE { ?s ?p ?o }", [])
    with pytest.raises(SparqlValidationError):
        with_dataset("CONSTRUCT WHERE { ?s ?p ?o }", [G_A])
    with pytest.raises(SparqlValidationError):
        with_dataset("DROP ALL", [G_A])


def test_with_dataset_result_runs_scoped_on_a_real_engine() -> None:
    from pyoxigraph import Literal, NamedNode, Quad, Store

    store = Store()
    for g in (G_A, G_B):
        store.add(Quad(NamedNode("urn:s"), NamedNode("urn:p"), Literal(g), NamedNode(g)))
    query = f"SELECT ?o FROM <{G_B}> WHERE {{ ?s ?p ?o }}"
    rewritten = with_dataset(query, [G_A])
    assert [sol["o"].value for sol in store.query(rewritten)] == [G_A]
    named = with_dataset("SELECT ?g WHERE { GRAPH ?g { ?s ?p ?o } }", [G_A])
    assert [sol["g"].value for sol in store.query(named)] == [G_A]


# -- engines agree on what runs ------------------------------------------------------------


@pytest.mark.parametrize(
    "query",
    [
        "SELECT ?s WHERE { ?s ?p ?o } \\u004cIMIT 1",  # rdflib reads LIMIT, Oxigraph an error
        "SELECT ?s WHERE { ?s ?p ?o } # \\u000A FILTER(false)",  # newline only for rdflib
        'SELECT ?s WHERE { ?s ?p "\\u0022 } " }',  # a quote that ends the string for rdflib
        "SELECT ?s WHERE { ?s ?p '\\u005c' }",
        "SELECT ?s WHERE { ?s <urn:a\\u003e> ?o }",
    ],
)
def test_escapes_whose_meaning_differs_between_engines_are_rejected(query: str) -> None:
    with pytest.raises(SparqlValidationError, match="escape"):
        validate_query(query)


def test_harmless_escapes_in_strings_and_iris_pass() -> None:
    query = "SELECT ?s WHERE { ?s <urn:\\u0061> 'caf\\u00E9' }"
    assert validate_query(query) == query


# -- only built-ins, XSD casts and allowed functions ----------------------------------------


@pytest.mark.parametrize(
    "query",
    [
        'ASK { FILTER(<bif:exec>("SPARQL DROP SILENT GRAPH <urn:g>") = 0) }',
        'PREFIX bif: <bif:> ASK { FILTER EXISTS { FILTER(bif:exec("x") = 0) } }',
        "PREFIX sql: <sql:> SELECT ?s WHERE { ?s ?p ?o FILTER(sql:f(?o)) }",
        "BASE <bif:> ASK { FILTER(<exec>('x') = 0) }",
        'SELECT ?s WHERE { ?s <bif:contains> "acetone" }',
    ],
)
def test_vendor_extensions_are_rejected(query: str) -> None:
    with pytest.raises(SparqlValidationError, match="not allowed"):
        validate_query(query)


def test_unknown_function_rejected_unless_allowed() -> None:
    query = "SELECT ?s WHERE { ?s ?p ?o FILTER(<http://fn.example/f>(?o)) }"
    with pytest.raises(SparqlValidationError, match=r"function <http://fn\.example/f>"):
        validate_query(query)
    assert validate_query(query, allowed_functions=["http://fn.example/f"]) == query


def test_allow_functions_extends_the_list_process_wide(monkeypatch: pytest.MonkeyPatch) -> None:
    from hybrid_rag import sparql
    from hybrid_rag.errors import ConfigurationError

    monkeypatch.setattr(sparql, "_extra_functions", set())
    query = "SELECT ?s WHERE { ?s ?p ?o FILTER(<http://fn.example/g>(?o)) }"
    with pytest.raises(SparqlValidationError):
        validate_query(query)
    sparql.allow_functions("http://fn.example/g")
    assert validate_query(query) == query
    with pytest.raises(ConfigurationError):
        sparql.allow_functions("not an iri")


def test_builtins_aggregates_and_xsd_casts_pass() -> None:
    query = (
        "SELECT ?s (SUM(xsd:decimal(?o)) AS ?t) WHERE { ?s ?p ?o "
        "FILTER(STRLEN(STR(?o)) > 1 && REGEX(?o, 'a', 'i') && xsd:double(?o) > 0) } GROUP BY ?s"
    )
    assert validate_query(query) == query


# -- structure of LLM-written queries -------------------------------------------------------

M = "PREFIX m: <http://ex.org/m#> "


@pytest.mark.parametrize(
    "query",
    [
        M + "SELECT * WHERE { ?a ?b ?c . ?d ?e ?f }",
        M + "SELECT * WHERE { ?p a m:P . ?p m:v ?x . ?q a m:P . ?q m:v ?y }",
        M + "SELECT * WHERE { ?a ?b ?c OPTIONAL { ?d ?e ?f } }",
        M + "SELECT * WHERE { ?a ?b ?c { SELECT ?d WHERE { ?d ?e ?f } } }",
        M + "ASK { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i }",
        M + "SELECT * WHERE { { ?a ?b ?c . ?d ?e ?f } UNION { ?a ?b ?c } }",
    ],
)
def test_cartesian_products_are_rejected(query: str) -> None:
    from hybrid_rag.sparql import check_structure

    with pytest.raises(SparqlValidationError, match="cartesian product"):
        check_structure(query)


@pytest.mark.parametrize(
    ("query", "limit"),
    [
        (M + "SELECT ?x WHERE { ?p m:v ?x }", "LIMIT 50"),
        (M + "SELECT ?x WHERE { ?p m:v ?x } LIMIT 10", "LIMIT 10"),
        (M + "SELECT ?x WHERE { ?p m:v ?x } LIMIT 100000", "LIMIT 50"),
        (M + "SELECT ?x WHERE { ?p m:v ?x } # LIMIT 10", "LIMIT 50"),
        (M + "SELECT ?x WHERE { ?p m:v ?x { SELECT ?p WHERE { ?p ?q ?r } LIMIT 9 } }", "LIMIT 50"),
        (M + "SELECT ?x WHERE { ?p m:v ?x } VALUES ?x { 1 }", "LIMIT 50"),
        (M + "SELECT ?x ?y WHERE { <urn:a> m:v ?x . <urn:b> m:v ?y }", "LIMIT 50"),
    ],
)
def test_row_cap_is_added_or_lowered(query: str, limit: str) -> None:
    import pyoxigraph

    from hybrid_rag.sparql import check_structure

    capped = check_structure(query, max_rows=50)
    assert limit in capped
    assert "100000" not in capped
    validate_query(capped)
    pyoxigraph.Store().query(capped)  # the engine parses the rewritten query too


def test_ask_is_not_capped_and_max_rows_is_checked() -> None:
    from hybrid_rag.errors import InputError
    from hybrid_rag.sparql import check_structure

    assert check_structure("ASK { ?s ?p ?o }") == "ASK { ?s ?p ?o }"
    with pytest.raises(InputError):
        check_structure("ASK { ?s ?p ?o }", max_rows=0)


def test_a_vendor_iri_passes_only_when_allowed_explicitly_and_rejection_is_not_cached() -> None:
    query = 'SELECT ?s WHERE { ?s <bif:contains> "acetone" }'
    with pytest.raises(SparqlValidationError, match="vendor extension <bif:contains>"):
        validate_query(query)
    assert validate_query(query, allowed_functions=["bif:contains"]) == query
    with pytest.raises(SparqlValidationError):
        validate_query(query)
