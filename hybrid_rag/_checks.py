"""Argument checks shared by the seams' implementations (stores, embedders).

Each check returns the argument in the form the caller works with, or raises
``InputError`` naming the argument and what was wrong, before
any I/O. They implement the argument rules written in ``hybrid_rag.protocols``.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING, Any

from hybrid_rag.errors import InputError, InvalidDocIdError

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from hybrid_rag.models import Chunk, DocumentInfo
    from hybrid_rag.rdf import Triple

__all__ = [
    "DOC_ID_PATTERN",
    "check_chunks",
    "check_doc_id",
    "check_doc_ids",
    "check_filter",
    "check_info",
    "check_int",
    "check_k",
    "check_matrix",
    "check_scope",
    "check_text",
    "check_texts",
    "check_triples",
    "check_vector",
    "is_doc_id",
]

DOC_ID_PATTERN = "[A-Za-z0-9_.-]{1,128}"
"""What a document id is: 1-128 characters from ``A-Z a-z 0-9 _ . -``, not ``.`` or ``..``."""

_DOC_ID = re.compile(DOC_ID_PATTERN)


def _kind(value: object) -> str:
    return type(value).__name__


def check_k(k: object) -> int:
    """``k`` when it is an ``int`` >= 1 (not a bool)."""
    if isinstance(k, bool) or not isinstance(k, int):
        raise InputError(f"k must be an int >= 1, got {_kind(k)}")
    if k < 1:
        raise InputError(f"k must be >= 1, got {k}")
    return k


def check_int(value: object, *, name: str, low: int, high: int) -> int:
    """``value`` when it is an ``int`` (not a bool) in ``low..high``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise InputError(f"{name} must be an int, not {_kind(value)}")
    if not low <= value <= high:
        raise InputError(f"{name} must be {low}..{high}, not {value}")
    return value


def check_text(text: object, *, name: str = "text") -> str:
    """``text`` when it is a ``str``."""
    if not isinstance(text, str):
        raise InputError(f"{name} must be a str, got {_kind(text)}")
    return text


def _items(value: object, *, name: str, what: str, ordered: bool = True) -> list[Any]:
    """The items of a sequence (or, unless ``ordered``, a set) that is not a string."""
    kind = Sequence if ordered else Collection
    if isinstance(value, str | bytes | bytearray) or not isinstance(value, kind):
        raise InputError(f"{name} must be a sequence of {what}, got {_kind(value)}")
    return list(value)


def check_texts(texts: object, *, name: str = "texts", ordered: bool = True) -> list[str]:
    """``texts`` as a list when it is a sequence (not a string) of ``str``."""
    items = _items(texts, name=name, what="str", ordered=ordered)
    bad = next((i for i, t in enumerate(items) if not isinstance(t, str)), None)
    if bad is not None:
        raise InputError(f"{name}[{bad}] must be a str, got {_kind(items[bad])}")
    return items


def check_doc_ids(doc_ids: object, *, name: str = "doc_ids") -> list[str]:
    """A sequence or set (not a string) of doc id strings, as a list without duplicates."""
    return list(dict.fromkeys(check_texts(doc_ids, name=name, ordered=False)))


def check_filter(doc_ids: object) -> list[str] | None:
    """A search's ``doc_ids`` filter: ``None`` (all documents) or a list of ids."""
    return None if doc_ids is None else check_doc_ids(doc_ids)


def check_scope(scope: object) -> list[str]:
    """A query's ``scope``: a sequence or set (not a string) of valid doc ids, deduplicated."""
    items = _items(scope, name="scope", what="doc ids", ordered=False)
    return list(dict.fromkeys(check_doc_id(d) for d in items))


def check_vector(vector: object, *, name: str = "vector") -> npt.NDArray[np.float32]:
    """A finite numeric 1-D array-like as a float32 array (its length is not checked)."""
    import numpy as np

    arr = _numeric(vector, name=name)
    if arr.ndim != 1 or arr.size == 0:
        raise InputError(f"{name} must be one non-empty row of numbers, got shape {arr.shape}")
    if not np.isfinite(arr).all():
        raise InputError(f"{name} contains NaN or infinite values")
    return arr


def check_matrix(vectors: object, *, name: str = "vectors") -> npt.NDArray[np.float32]:
    """A numeric array-like as a float32 array (shape and finiteness are the store's to check)."""
    return _numeric(vectors, name=name)


def _numeric(value: object, *, name: str) -> npt.NDArray[np.float32]:
    import numpy as np

    if isinstance(value, str | bytes | bytearray) or value is None:
        raise InputError(f"{name} must be an array of numbers, got {_kind(value)}")
    try:
        arr = np.asarray(value, dtype=np.float32)
    except (TypeError, ValueError) as exc:
        raise InputError(f"{name} must be an array of numbers: {exc}") from None
    return arr


def check_chunks(chunks: object) -> list[Chunk]:
    """``chunks`` as a list when it is a sequence of ``Chunk``."""
    from hybrid_rag.models import Chunk

    items = _items(chunks, name="chunks", what="Chunk")
    bad = next((i for i, c in enumerate(items) if not isinstance(c, Chunk)), None)
    if bad is not None:
        raise InputError(f"chunks[{bad}] must be a Chunk, got {_kind(items[bad])}")
    return items


def check_triples(triples: object) -> list[Triple]:
    """``triples`` as a list when it is a sequence of ``(Term, Term, Term)`` tuples."""
    from hybrid_rag.rdf import Term

    items = _items(triples, name="triples", what="(Term, Term, Term) tuples", ordered=False)
    for i, t in enumerate(items):
        if not (isinstance(t, tuple) and len(t) == 3 and all(isinstance(x, Term) for x in t)):
            raise InputError(f"triples[{i}] must be a (Term, Term, Term) tuple, got {t!r:.80}")
    return items


def is_doc_id(value: object) -> bool:
    """Whether ``value`` is a valid document id (see ``DOC_ID_PATTERN``)."""
    return isinstance(value, str) and bool(_DOC_ID.fullmatch(value)) and value not in {".", ".."}


def check_doc_id(doc_id: object) -> str:
    """``doc_id`` when it is a valid document id (``DOC_ID_PATTERN``).

    The one doc-id check of the library: ingest, the catalog and every store call it.
    ``.`` and ``..`` are refused (they are path components, never names).

    Raises:
        InvalidDocIdError: naming the rejected id (also for a non-``str``).
    """
    if not is_doc_id(doc_id):
        raise InvalidDocIdError(
            f"invalid doc id {doc_id!r}: use 1-128 characters from [A-Za-z0-9_.-] (not '.' or '..')"
        )
    assert isinstance(doc_id, str)
    return doc_id


def check_info(info: object) -> DocumentInfo:
    """``info`` when it is a ``DocumentInfo`` with a valid doc id."""
    from hybrid_rag.models import DocumentInfo

    if not isinstance(info, DocumentInfo):
        raise InputError(f"info must be a DocumentInfo, got {_kind(info)}")
    check_doc_id(info.doc_id)
    return info
