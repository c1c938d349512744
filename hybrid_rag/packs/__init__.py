"""Domain packs: a bundled ontology and, only where its documents need it, reading of its own.

The core reads no domain word; a pack brings the domain. Each pack is a folder with its
Turtle file:

* ``sds`` (``"msds"``): Safety Data Sheets. Its ontology, plus the readers only these
  sheets need (GHS classifications and H/P codes, the composition table with CAS
  numbers, exposure-limit tables, the sheet's title line), in ``hybrid_rag.packs.sds``.
* ``invoice``: invoices, bills and payment receipts (Order-to-Cash). The ontology alone:
  the generic reader reads it, as it reads any ontology a user writes.

A user's own domain needs no pack: ``HybridRAG(ontology="my-domain.ttl")``. Reading that
only the user's documents need plugs into ``OfflineExtractor(reader=...)`` through the
``PackReader`` seam (``hybrid_rag.ingest.reading.PackReader``); see
``docs/guides/own-domain.md``.
"""

from __future__ import annotations

from importlib import resources
from importlib.resources.abc import Traversable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hybrid_rag.ingest.reading.pack import PackReader
    from hybrid_rag.types import Ontology

__all__ = ["BUNDLED", "bundled_file", "reader_for"]

_SDS_NAMESPACE = "http://hybrid-rag.org/msds#"

BUNDLED: dict[str, tuple[str, str]] = {
    "msds": ("sds", "msds.ttl"),
    "sds": ("sds", "msds.ttl"),
    "invoice": ("invoice", "invoice.ttl"),
    "invoices": ("invoice", "invoice.ttl"),
}
"""Bundled ontology names -> (pack folder, Turtle file)."""


def bundled_file(name: str) -> Traversable | None:
    """The Turtle file of a bundled ontology, or ``None`` for an unknown name."""
    where = BUNDLED.get(name.lower())
    if where is None:
        return None
    return resources.files("hybrid_rag").joinpath("packs", *where)


def reader_for(ontology: Ontology) -> PackReader | None:
    """The pack reader for documents read under ``ontology``: the SDS pack's for the
    SDS ontology (by its namespace, wherever the file was loaded from), else ``None``."""
    if ontology.namespace == _SDS_NAMESPACE:
        from hybrid_rag.packs.sds import SdsReader

        return SdsReader(ontology)
    return None
