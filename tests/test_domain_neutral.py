"""The core knows no domain: no class or property of a bundled ontology appears in it.

The terms are read from the bundled Turtle files (every ``owl:Class``,
``owl:ObjectProperty`` and ``owl:DatatypeProperty`` local name), not typed here. The
core is ``ingest/``, ``ask/``, ``stores/``, ``providers/``, the facade and the modules
they build on (the ontology reader, the seam types, SPARQL checks, the models); the
domain packs, the test helpers and the presentation modules are outside it. A
camel-case term (``flashPoint``, ``invoiceNumber``) may appear nowhere in the core, not
even in a comment; a one-word term (``Product``, ``currency``) may not be an identifier
or a string the code uses, since words such as "product" stay free for prose.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PKG = ROOT / "hybrid_rag"
_CORE = ("ingest", "ask", "stores", "providers")
_CORE_MODULES = (
    "rag.py", "ontology.py", "types.py", "protocols.py", "sparql.py", "_sparql_shape.py",
    "_vocab.py", "rdf.py", "text.py", "models.py", "config.py",
)  # fmt: skip
_DECL = re.compile(r"^(\w+):(\w+)\s+a\s+owl:(?:Class|ObjectProperty|DatatypeProperty)\b", re.M)


def _terms() -> set[str]:
    found: set[str] = set()
    for ttl in (PKG / "packs").rglob("*.ttl"):
        found |= {m.group(2) for m in _DECL.finditer(ttl.read_text(encoding="utf-8"))}
    return found


def _core_files() -> list[Path]:
    folders = [p for d in _CORE for p in (PKG / d).rglob("*.py")]
    return sorted([*folders, *(PKG / m for m in _CORE_MODULES)])


def _docstring_lines(tree: ast.AST) -> set[int]:
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = getattr(node, "body", [])
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                first = body[0]
                lines |= set(range(first.lineno, (first.end_lineno or first.lineno) + 1))
        string = isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
        if string and isinstance(node.value.value, str):  # attribute docstrings
            lines |= set(range(node.lineno, (node.end_lineno or node.lineno) + 1))
    return lines


def _camel(term: str) -> bool:
    return bool(re.search(r"[a-z][A-Z]", term))


def _hits(path: Path, terms: set[str]) -> list[str]:
    text = path.read_text(encoding="utf-8")
    shown = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
    docs = _docstring_lines(ast.parse(text))
    words = {t: re.compile(rf"(?<![\w]){re.escape(t)}(?![\w])") for t in terms}
    out: list[str] = []
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        row = tok.start[0]
        prose = tok.type == tokenize.COMMENT or (tok.type == tokenize.STRING and row in docs)
        if tok.type == tokenize.NAME and tok.string in terms:
            out.append(f"{shown}:{row}: identifier {tok.string}")
        elif tok.type in (tokenize.STRING, tokenize.COMMENT):
            for term, pattern in words.items():
                if (not prose or _camel(term)) and pattern.search(tok.string):
                    out.append(f"{shown}:{row}: {term!r} in text")
    return out


def test_the_terms_come_from_the_bundled_ontologies() -> None:
    terms = _terms()
    assert {"Invoice", "invoiceNumber"} <= terms  # the invoice pack
    assert len(terms) > 150  # the SDS pack's classes and properties too


@pytest.mark.parametrize("path", _core_files(), ids=lambda p: str(p.relative_to(PKG)))
def test_core_code_names_no_term_of_a_bundled_ontology(path: Path) -> None:
    assert _hits(path, _terms()) == []


def test_the_check_finds_a_planted_term(tmp_path: Path) -> None:
    planted = tmp_path / "planted.py"
    planted.write_text('"""Doc."""\n\nX = "flashPoint"  # hasComponent\n', encoding="utf-8")
    hits = _hits(planted, _terms())
    assert any("flashPoint" in h for h in hits) and any("hasComponent" in h for h in hits)
