"""The pack seam: reading that only one kind of document needs, added to the generic reader.

The generic reader (``extract_offline``) reads any ontology: labels and their values,
label columns, tables whose header names properties, procedures, sections. A domain's
documents may carry structures no label announces (a hazard classification written as
"Flammable liquids Category 2", a composition table of CAS numbers). A ``PackReader``
reads them, line by line, inside the generic reader's pass; the SDS pack
(``hybrid_rag.packs.sds``) is one. Subclass ``BasePackReader`` and override what your
documents need; plug it in with ``OfflineExtractor(reader=...)``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from hybrid_rag.models import Page
    from hybrid_rag.types import ExtractedFact

__all__ = ["BasePackReader", "PackReader", "Reading", "quote_of"]


@runtime_checkable
class Reading(Protocol):
    """The reading in progress of one document, as a pack reader sees it.

    ``section`` is the number of the section the reader is in (0 before the first
    heading); ``memo`` is the pack's own state for this document (empty at its start).
    """

    section: int
    memo: dict[str, Any]

    def knows(self, prop: str) -> bool:
        """Whether the ontology defines ``prop``."""
        ...

    def typed(self, prop: str, value: str, quote: str, page: int) -> ExtractedFact | None:
        """A fact of the datatype property ``prop`` read the ontology's way (its value kind,
        pattern and unit), or ``None`` when ``value`` is no value of it."""
        ...

    def add(self, fact: ExtractedFact) -> None:
        """Keep ``fact`` (a repeated value of the same property is kept once)."""
        ...

    def amend(self, old: ExtractedFact, new: ExtractedFact) -> None:
        """Put ``new`` in the place of the kept fact ``old`` (a value another line of the
        document completes); nothing when ``old`` is not kept. When ``new``'s value is
        kept already, one fact of it stays: the one read first."""
        ...


@runtime_checkable
class PackReader(Protocol):
    """Reading a domain's documents need beyond labels and their values.

    Contract:

    * Every fact a pack reader adds has a ``quote`` that is an exact substring of its
      page's text (the ingest pipeline drops, with a warning, any that is not), a
      property the ontology defines (check with ``reading.knows``: an ontology without
      it reads without it), and, for a relation, ``object_label`` and ``object_class``.
    * ``read_line`` sees the lines no label of the ontology took, in page order;
      ``every_line`` sees every line, taken or not (a record whose lines a procedure
      also reads); ``derived`` sees every value the generic reader keeps, to add what
      it implies.
    * ``reads_ahead``, ``ends_value`` and ``subject_table`` steer the generic reader;
      ``title``, ``aliases``, ``other_names`` and ``clean_name`` name the document's
      subject; ``written`` writes a value the way the domain does (a code's prefix the
      label gives). The defaults of ``BasePackReader`` change nothing.
    * Deterministic, no I/O; safe to call for several documents at once (per-document
      state lives in ``reading.memo``).
    """

    name: str

    def read_line(self, reading: Reading, page: Page, line: str, start: int) -> None:
        """Read a line (at offset ``start`` of ``page.text``) that no label took."""
        ...

    def every_line(self, reading: Reading, page: Page, line: str, start: int) -> None:
        """See every line (at offset ``start`` of ``page.text``), in page order."""
        ...

    def derived(self, reading: Reading, fact: ExtractedFact) -> None:
        """Add what a value the generic reader kept implies (a list split into items)."""
        ...

    def reads_ahead(self, reading: Reading, section: int, line: str) -> bool:
        """Whether a label bound to a later ``section`` is read here, on ``line``."""
        ...

    def ends_value(self, line: str) -> bool:
        """Whether ``line`` cannot continue the value above it."""
        ...

    def subject_table(self, reading: Reading) -> bool:
        """Whether identifiers in a table here are the subject's own (not its parts')."""
        ...

    def title(self, pages: Sequence[Page]) -> str | None:
        """The subject's name as the document's title prints it, if the pack knows how."""
        ...

    def aliases(self, facts: Sequence[ExtractedFact]) -> list[str]:
        """More names of the subject the facts give (a formula, a code)."""
        ...

    def other_names(self, name: str) -> list[str]:
        """The same name as the domain also writes it (a chemical's "Cupric Sulfate" is
        "Copper(II) Sulfate"): aliases of a subject that has ``name``."""
        ...

    def clean_name(self, value: str) -> str:
        """A naming value without what the layout glued to it (a neighbouring label)."""
        ...

    def written(self, prop: str, value: str, label: str) -> str:
        """A value of ``prop`` read after ``label``, as the pack writes it (a code's
        prefix the label gives: "UN-Number: 1197" is UN1197); the quote stays as
        printed."""
        ...


class BasePackReader:
    """A ``PackReader`` that adds nothing: subclass it and override what you need."""

    name = "base"

    def read_line(self, reading: Reading, page: Page, line: str, start: int) -> None:
        """Nothing to read."""

    def every_line(self, reading: Reading, page: Page, line: str, start: int) -> None:
        """Nothing to see."""

    def derived(self, reading: Reading, fact: ExtractedFact) -> None:
        """Nothing implied."""

    def reads_ahead(self, reading: Reading, section: int, line: str) -> bool:
        """Labels of later sections are not read early."""
        return False

    def ends_value(self, line: str) -> bool:
        """Any line may continue a value."""
        return False

    def subject_table(self, reading: Reading) -> bool:
        """Identifiers in tables are the subject's."""
        return True

    def title(self, pages: Sequence[Page]) -> str | None:
        """No title rule of its own."""
        return None

    def aliases(self, facts: Sequence[ExtractedFact]) -> list[str]:
        """No names of its own."""
        return []

    def other_names(self, name: str) -> list[str]:
        """No other spellings."""
        return []

    def clean_name(self, value: str) -> str:
        """The value as it is."""
        return value

    def written(self, prop: str, value: str, label: str) -> str:
        """The value as it is."""
        return value

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


def quote_of(page: Page, line: str, start: int) -> str:
    """The quote for a whole line: ``line`` (at offset ``start`` of ``page.text``) without
    its surrounding spaces, as an exact substring of the page's text."""
    stripped = line.strip()
    at = start + line.index(stripped)
    return page.text[at : at + len(stripped)]
