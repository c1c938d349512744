"""Contract tests for the ``Ontology`` seam (and ``OntologyMatching`` where offered).

Subclass and provide one fixture::

    class TestMyOntology(OntologyContract):
        @pytest.fixture
        def ontology(self):
            return MyOntology(...)

Every rule checked here is written in the docstrings of ``hybrid_rag.protocols.Ontology``
and ``hybrid_rag.protocols.OntologyMatching``.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import pytest

from hybrid_rag.errors import OntologyError
from hybrid_rag.rdf import iri, literal
from hybrid_rag.types import OntologyMatching

if TYPE_CHECKING:
    from hybrid_rag.types import Ontology

__all__ = ["OntologyContract"]

_RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
_SAFE_LOCAL = re.compile(r"[A-Za-z][A-Za-z0-9_-]*")
_KINDS = {
    "text", "number", "date", "identifier", "temperature", "range", "currency",
    "procedure", "category",
}  # fmt: skip


class OntologyContract:
    """The behaviour every ``Ontology`` must show (fixture: ``ontology``)."""

    @pytest.fixture
    def ontology(self) -> Ontology:  # pragma: no cover - provided by subclasses
        raise NotImplementedError

    def test_namespace_ends_a_term_prefix(self, ontology: Ontology) -> None:
        assert ontology.namespace.endswith(("#", "/"))

    def test_every_property_resolves_by_name_and_iri(self, ontology: Ontology) -> None:
        props = ontology.properties()
        assert props, "an ontology defines at least one property"
        for p in props:
            assert ontology.property(p.name) == p
            assert ontology.property(p.iri) == p
            assert p.kind in ("object", "datatype")
            assert p.label and p.labels[0] == p.label

    def test_an_unknown_property_is_an_ontology_error(self, ontology: Ontology) -> None:
        with pytest.raises(OntologyError):
            ontology.property("noSuchPropertyAnywhere")

    def test_minted_iris_are_hana_safe(self, ontology: Ontology) -> None:
        base = "http://example.org/id/"
        for label in ("Acme Corp.", "Über-Größe 10 %", "2024 report", "a" * 300):
            minted = ontology.mint_iri(label, base=base)
            assert minted.startswith(base)
            assert _SAFE_LOCAL.fullmatch(minted[len(base) :]), minted

    def test_validate_accepts_its_terms_and_names_unknown_ones(self, ontology: Ontology) -> None:
        ns = ontology.namespace
        s = iri("http://example.org/id/s")
        p = ontology.properties()[0]
        good = [(s, iri(p.iri), literal("x"))]
        assert ontology.validate(good) == []
        if ontology.classes():
            typed = [(s, iri(_RDF_TYPE), iri(ontology.classes()[0].iri))]
            assert ontology.validate(typed) == []
        bad = [(s, iri(ns + "noSuchPropertyAnywhere"), literal("x"))]
        assert any("noSuchPropertyAnywhere" in problem for problem in ontology.validate(bad))
        wrong_class = [(s, iri(_RDF_TYPE), iri(ns + "NoSuchClassAnywhere"))]
        assert any("NoSuchClassAnywhere" in pr for pr in ontology.validate(wrong_class))

    def test_vocabulary_lists_every_property(self, ontology: Ontology) -> None:
        text = ontology.vocabulary()
        assert all(p.name in text for p in ontology.properties())

    # --- OntologyMatching, where the ontology offers it ---------------------------------

    def _matching(self, ontology: Ontology) -> OntologyMatching:
        if not isinstance(ontology, OntologyMatching):
            pytest.skip("the ontology does not offer OntologyMatching")
        return ontology

    def test_labels_match_their_property_best_first(self, ontology: Ontology) -> None:
        m = self._matching(ontology)
        for p in ontology.properties():
            found = m.match_properties(f"What is the {p.label}?")
            names = [q.name for q, _s in found]
            assert len(names) == len(set(names)), "each property once"
            assert all(0.0 < s < 1.0 for _q, s in found)
            assert [s for _q, s in found] == sorted((s for _q, s in found), reverse=True)
            assert names, f"the label {p.label!r} matches no property"
        assert m.match_properties("") == []

    def test_unknown_names_give_the_defaults(self, ontology: Ontology) -> None:
        m = self._matching(ontology)
        name = "noSuchPropertyAnywhere"
        assert m.value_kind(name) == "text"
        assert (m.value_pattern(name), m.section(name), m.max_values(name)) == (None, None, None)
        assert m.find_pattern(name) is None
        assert m.read_from(name) == m.narrower(name) == m.search_labels(name) == ()
        assert m.lower_when_more(name) == () == m.reading_labels(name)

    def test_hints_name_known_properties_and_kinds(self, ontology: Ontology) -> None:
        m = self._matching(ontology)
        names = {p.name for p in ontology.properties()}
        for p in ontology.properties():
            assert m.value_kind(p.name) in _KINDS, (p.name, m.value_kind(p.name))
            assert set(m.read_from(p.name)) <= names
            assert set(m.narrower(p.name)) <= names
            if (pattern := m.value_pattern(p.name)) is not None:
                re.compile(pattern)

    def test_the_document_model_names_its_own_terms(self, ontology: Ontology) -> None:
        model = self._matching(ontology).document_model()
        classes = {c.name for c in ontology.classes()}
        names = {p.name for p in ontology.properties()}
        assert model.subject_class is None or model.subject_class in classes
        assert set(model.naming) <= names and set(model.identifying) <= names
        assert all(prop in names and cls in classes for prop, cls in model.parts)
        assert model.document_noun.strip()
