"""Per-format readers behind ``hybrid_rag.ingest.load.parse_document``.

Each reader turns a document's bytes into page texts (``hybrid_rag.models.Page``) and
warnings, and raises a typed ``DocumentError`` naming the file for bad input. Optional
libraries (OCR engines) are imported only when a document needs them.
"""

__all__: list[str] = []
