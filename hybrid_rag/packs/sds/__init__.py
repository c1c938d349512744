"""The Safety Data Sheet pack: ``msds.ttl`` and the reader for what only SDS print.

``HybridRAG(ontology="msds")`` (the default) reads sheets with both. The reader
(``SdsReader``) plugs into the generic offline reader through the ``PackReader`` seam;
see ``hybrid_rag.packs.sds._reader`` for what it reads.
"""

from hybrid_rag.packs.sds._reader import SdsReader

__all__ = ["SdsReader"]
