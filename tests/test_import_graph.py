"""The package's import graph has no cycle, counting every import: module level,
function level and ``TYPE_CHECKING`` blocks (a cycle there still couples the modules)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PKG = ROOT / "hybrid_rag"


def _module_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in PKG.rglob("*.py")}


def _imports(path: Path, name: str, known: set[str]) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    out: set[str] = set()
    for node in ast.walk(tree):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            targets = [f"{base}.{a.name}" for a in node.names] + [base]
        for t in targets:
            while t and t not in known:  # "pkg.mod.Name" -> "pkg.mod"
                t = t.rsplit(".", 1)[0] if "." in t else ""
            if t and t != name:
                out.add(t)
    return out


def import_graph() -> dict[str, set[str]]:
    """Module -> the package modules it imports (parent packages left out: importing
    ``a.b`` runs ``a/__init__``, which is not an edge of the code's own design)."""
    mods = _modules()
    known = set(mods)
    graph = {}
    for name, path in mods.items():
        deps = _imports(path, name, known)
        graph[name] = {d for d in deps if not name.startswith(d + ".")}
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


# cycles being taken apart on other branches (the display helpers type the models they
# render; the query process reuses the embedded store's term converter); none may be added
_KNOWN: list[list[str]] = []  # cycles still to remove: none


def test_the_import_graph_has_no_cycle() -> None:
    assert [c for c in _cycles(import_graph()) if c not in _KNOWN] == []


def test_the_cycle_finder_finds_a_planted_cycle() -> None:
    graph = import_graph()
    graph["hybrid_rag.text"] = {*graph["hybrid_rag.text"], "hybrid_rag.rag"}
    assert any("hybrid_rag.text" in c for c in _cycles(graph))


def test_the_seam_types_live_in_a_leaf_module() -> None:
    graph = import_graph()
    assert "hybrid_rag.types" in graph
    reach: set[str] = set()
    todo = ["hybrid_rag.types"]
    while todo:
        for dep in graph[todo.pop()]:
            if dep not in reach:
                reach.add(dep)
                todo.append(dep)
    # the name index and the question grammar are leaves of their own (text only, and
    # the units of measure the grammar converts a bound by)
    leaves = {
        "hybrid_rag.text",
        "hybrid_rag.units",
        "hybrid_rag.rdf",
        "hybrid_rag.errors",
        "hybrid_rag.ask.linking",
        "hybrid_rag.ask.grammar",
    }
    assert reach <= leaves, reach
