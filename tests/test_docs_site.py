"""The documentation site: every page is reachable and docstrings render as Markdown."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# reST roles (Sphinx syntax) are printed raw by mkdocstrings, which reads Markdown.
_ROLE = re.compile(r":(?:py:)?(?:class|meth|func|attr|mod|exc|data|obj|const|ref):`")


def _nav_pages(text: str) -> set[str]:
    return set(re.findall(r":\s*([\w/.-]+\.md)\s*$", text, re.M))


def test_every_docs_page_is_in_the_navigation() -> None:
    nav = _nav_pages((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    pages = {p.relative_to(ROOT / "docs").as_posix() for p in (ROOT / "docs").rglob("*.md")}
    assert pages, "no documentation pages found"
    assert pages - nav == set(), "pages missing from mkdocs.yml nav"
    assert nav - pages == set(), "nav entries without a page"


def test_no_restructuredtext_roles_in_docstrings() -> None:
    hits = [
        f"{path.relative_to(ROOT)}:{n}"
        for path in sorted((ROOT / "hybrid_rag").rglob("*.py"))
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if _ROLE.search(line)
    ]
    assert hits == []


def test_docs_toolchain_is_pinned_for_ci() -> None:
    script = (ROOT / ".ci" / "docs").read_text(encoding="utf-8")
    assert "-c .ci/docs-constraints.txt" in script
    assert "--strict" in script and "--quiet" not in script
    pins = (ROOT / ".ci" / "docs-constraints.txt").read_text(encoding="utf-8")
    for name in ("mkdocs", "mkdocs-material", "mkdocstrings", "mkdocstrings-python", "griffelib"):
        assert re.search(rf"^{re.escape(name)}==\d", pins, re.M), name
