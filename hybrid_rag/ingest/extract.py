"""Offline extraction (the public names of ``hybrid_rag.ingest.reading``).

Kept as the import path of ``extract_offline``, ``parse_quantity``, ``ExtractedFact``
and ``Extraction``; the reader itself lives in ``hybrid_rag.ingest.reading``, one module
per job.
"""

from __future__ import annotations

from hybrid_rag.ingest.reading import extract_offline, is_unavailable, parse_quantity
from hybrid_rag.types import ExtractedFact, Extraction

__all__ = ["ExtractedFact", "Extraction", "extract_offline", "is_unavailable", "parse_quantity"]
