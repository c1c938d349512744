"""hybrid_rag: agentic hybrid RAG over an ontology-constrained knowledge graph and chunks."""
