"""Imports of third-party modules that warn on first use in a notebook, made quiet.

``bm25s`` imports ``tqdm.auto``, which inside a Jupyter kernel without ``ipywidgets``
warns "IProgress not found" (we never show its progress bars: ``show_progress=False``).
"""

from __future__ import annotations

import warnings
from types import ModuleType

__all__ = ["import_bm25s"]


def import_bm25s() -> ModuleType:
    """``import bm25s`` without tqdm's notebook warning."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="IProgress not found")
        import bm25s  # type: ignore[import-untyped,unused-ignore]
    module: ModuleType = bm25s
    return module
