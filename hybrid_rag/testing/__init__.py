"""Test helpers users need in their own tests: fakes and seam contract suites.

The fakes (an embedder, function-backed LLMs) need no model, network or disk. The
contract suites import pytest; import them from :mod:`hybrid_rag.testing.contracts`.
"""

from hybrid_rag.testing.fakes import FakeEmbedder, FunctionLLM, ScriptedLLM

__all__ = ["FakeEmbedder", "FunctionLLM", "ScriptedLLM"]
