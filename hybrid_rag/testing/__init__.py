"""Test helpers users need in their own tests: fakes and seam contract suites.

The fakes (an embedder, function-backed LLMs, in-memory catalog and vector store) need
no model, network or disk. The contract suites import pytest; import them from
``hybrid_rag.testing.contracts``.
"""

from hybrid_rag.testing.fakes import FakeEmbedder, FunctionLLM, ScriptedLLM
from hybrid_rag.testing.memory import InMemoryCatalog, InMemoryVectorStore

__all__ = ["FakeEmbedder", "FunctionLLM", "InMemoryCatalog", "InMemoryVectorStore", "ScriptedLLM"]
