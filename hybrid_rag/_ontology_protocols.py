"""What an ontology offers beyond :class:`~hybrid_rag.protocols.Ontology` (staging module).

:class:`OntologyMatching` is the second ontology seam: matching free text (questions) to
properties, and the extraction hints an offline extractor reads. Code that needs these
checks ``isinstance(ontology, OntologyMatching)`` instead of probing with ``getattr``.
This module is where the protocol is staged; it is meant to move into
``hybrid_rag/protocols.py`` (names unchanged).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from hybrid_rag.protocols import PropertyDef

__all__ = ["OntologyMatching"]


@runtime_checkable
class OntologyMatching(Protocol):
    """Question matching and extraction hints of an ontology.

    Contract:

    * ``match_properties(text)`` returns ``(property, score)`` pairs, best first, each
      property once, scores in ``(0, 1)``; an empty list when nothing matches. It matches
      the properties' labels, alternative labels and search-only labels (the words people
      use: verbs, adjectives, paraphrases), ignoring case, accents, punctuation, spacing
      and inflection. The words come from the ontology, never from code.
    * ``value_kind(name)`` is one of ``temperature``, ``number``, ``range``,
      ``identifier``, ``text`` or ``procedure`` (the sheet's own sentences for one item,
      read up to the next item); ``text`` when not annotated.
    * ``value_pattern(name)`` is a regular expression a stated value must contain, or
      ``None``.
    * ``section(name)`` is the numbered document section (SDS sections 1-16) the
      property's values are printed in, or ``None`` when they may appear anywhere.
    * ``read_from(name)`` names the properties whose stated values may also carry this
      property's value (a colour printed in the appearance line; a storage temperature
      in the storage conditions); empty when none.
    * Unknown property names give the defaults (``text``, ``None``, ``None``, ``()``);
      no method raises for them. Implementations are immutable and thread-safe.
    """

    def match_properties(self, text: str) -> list[tuple[PropertyDef, float]]:
        """Which properties ``text`` talks about, best first."""
        ...

    def value_kind(self, name: str) -> str:
        """How a value of the property is read."""
        ...

    def value_pattern(self, name: str) -> str | None:
        """A regular expression a stated value must contain, if any."""
        ...

    def section(self, name: str) -> int | None:
        """The document section the property's values are printed in, if fixed."""
        ...

    def read_from(self, name: str) -> tuple[str, ...]:
        """Properties whose stated values may also carry this property's value."""
        ...
