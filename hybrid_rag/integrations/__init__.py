"""Adapters to other frameworks, each behind its own extra (``[langchain]``).

Import the submodule you need (``hybrid_rag.integrations.langchain``); this package
imports nothing itself.
"""

from __future__ import annotations

__all__: list[str] = []
