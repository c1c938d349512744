"""The vector chain: dense search plus BM25 over the same chunks, fused by reciprocal rank."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import anyio

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

from hybrid_rag._workers import Workers
from hybrid_rag.ask.fusion import reciprocal_rank_fusion
from hybrid_rag.errors import HybridRAGError
from hybrid_rag.models import ChainError, Chunk, Passage, Usage
from hybrid_rag.protocols import Embedder, VectorHit, VectorStore

__all__ = [
    "VectorResult",
    "heading_number",
    "run_vector_chain",
    "section_number",
    "with_matching_passages",
    "with_section_passages",
]


@dataclass(slots=True)
class VectorResult:
    """Fused passages, errors as data, embedding usage."""

    passages: list[Passage] = field(default_factory=list)
    errors: list[ChainError] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)


async def run_vector_chain(
    question: str,
    *,
    embedder: Embedder,
    vectors: VectorStore,
    scope: Sequence[str] | None,
    top_k: int,
    workers: Workers,
) -> VectorResult:
    """Dense + BM25 retrieval restricted to ``scope`` (``None``: every document)."""
    out = VectorResult()
    if scope is not None and not scope:
        out.errors.append(ChainError(chain="vector", kind="empty_scope", message="no documents"))
        return out
    depth = max(top_k * 3, 20)
    try:
        qvec = await embedder.embed_query(question)
        out.usage = Usage(embedding_calls=1, embedded_texts=1)
        dense, lexical = await _both(
            qvec, question, vectors=vectors, scope=scope, depth=depth, workers=workers
        )
    except (HybridRAGError, BaseExceptionGroup) as exc:
        err = _first_error(exc)
        out.errors.append(ChainError(chain="vector", kind=type(err).__name__, message=str(err)))
        return out
    out.passages = fuse(dense, lexical, top_k=top_k)
    if not out.passages:
        out.errors.append(ChainError(chain="vector", kind="empty", message="no passages"))
    return out


def _first_error(exc: BaseException) -> BaseException:
    """The library error inside a task group's exception group (re-raise anything else)."""
    while isinstance(exc, BaseExceptionGroup):
        errors = exc.subgroup(HybridRAGError)
        if errors is None:
            raise exc
        exc = errors.exceptions[0]
    return exc


async def _both(
    qvec: npt.NDArray[np.float32],
    question: str,
    *,
    vectors: VectorStore,
    scope: Sequence[str] | None,
    depth: int,
    workers: Workers,
) -> tuple[list[VectorHit], list[VectorHit]]:
    found: dict[str, list[VectorHit]] = {}

    async def dense() -> None:
        found["dense"] = await workers.run(
            lambda: vectors.search(qvec, k=depth, doc_ids=scope), abandon_on_cancel=True
        )

    async def lexical() -> None:
        found["bm25"] = await workers.run(
            lambda: vectors.keyword_search(question, k=depth, doc_ids=scope),
            abandon_on_cancel=True,
        )

    async with anyio.create_task_group() as tg:
        tg.start_soon(dense)
        tg.start_soon(lexical)
    return found["dense"], found["bm25"]


def fuse(dense: Sequence[VectorHit], lexical: Sequence[VectorHit], *, top_k: int) -> list[Passage]:
    """RRF of the two hit lists into passages carrying their per-retriever ranks."""
    chunks: dict[str, Chunk] = {h.chunk.chunk_id: h.chunk for h in [*dense, *lexical]}
    fused = reciprocal_rank_fusion(
        {
            "dense": [h.chunk.chunk_id for h in dense],
            "bm25": [h.chunk.chunk_id for h in lexical],
        }
    )
    return [
        Passage(
            doc_id=chunks[f.key].doc_id,
            page=chunks[f.key].page,
            chunk_id=f.key,
            text=chunks[f.key].text,
            score=round(f.score, 6),
            ranks=dict(f.ranks),
            section=chunks[f.key].section,
        )
        for f in fused[:top_k]
    ]


_SECTION_NO = re.compile(r"^\s*(?:section\s*)?(\d{1,2})\b", re.I)


async def with_section_passages(
    found: VectorResult,
    *,
    vectors: VectorStore,
    doc_ids: Sequence[str],
    sections: Sequence[int],
    workers: Workers,
    limit: int = 4,
) -> VectorResult:
    """``found`` with the chunks of the asked sections of ``doc_ids`` put first.

    A procedure question ("what to do after eye contact") is answered by one section of
    the sheet (first aid: 4). Its chunks are read from the store by their section, not
    left to similarity search, and lead the passages (``ranks["section"]``).
    """
    wanted = set(sections)
    return await with_matching_passages(
        found,
        vectors=vectors,
        doc_ids=doc_ids,
        keep=lambda c: _covers(c, wanted),
        rank="section",
        workers=workers,
        limit=limit,
    )


async def with_matching_passages(
    found: VectorResult,
    *,
    vectors: VectorStore,
    doc_ids: Sequence[str],
    keep: Callable[[Chunk], bool],
    rank: str,
    workers: Workers,
    limit: int,
) -> VectorResult:
    """``found`` with the chunks of ``doc_ids`` that ``keep`` accepts put first.

    Each document's chunks are read from the store (at most 4 documents, ``limit``
    chunks each); the passages they give carry ``ranks[rank]``.
    """
    extra: list[Passage] = []
    for doc in doc_ids[:4]:
        try:
            chunks = await workers.run(lambda d=doc: vectors.chunks(d), abandon_on_cancel=True)  # type: ignore[misc]
        except HybridRAGError as exc:
            found.errors.append(
                ChainError(chain="vector", kind=type(exc).__name__, message=str(exc))
            )
            continue
        mine = [c for c in chunks if keep(c)][:limit]
        extra += [
            Passage(
                doc_id=c.doc_id,
                page=c.page,
                chunk_id=c.chunk_id,
                text=c.text,
                score=0.0,
                ranks={rank: i + 1},
                section=c.section,
            )
            for i, c in enumerate(mine)
        ]
    if not extra:
        return found
    seen = {p.chunk_id for p in extra}
    found.passages = [*extra, *(p for p in found.passages if p.chunk_id not in seen)]
    found.errors = [e for e in found.errors if e.kind != "empty"]
    return found


def _covers(chunk: Chunk, sections: set[int]) -> bool:
    """Whether the chunk starts in one of ``sections`` or holds one's heading."""
    if section_number(chunk.section) in sections:
        return True
    return any(
        _HEADING_NO.match(line) and section_number(line) in sections
        for line in chunk.text.splitlines()
    )


_HEADING_NO = re.compile(
    r"^\s*(?:section\s*\d{1,2}\b|\d{1,2}\s*[.:]\s+[A-Z]"
    r"|(?-i:\d{1,2}\s+[A-Z][A-Za-z]+(?:[ /&,-]+[A-Za-z]+){0,5}\s*$))",
    re.I,
)
"""A numbered section heading: "SECTION 5", "5. FIRE-FIGHTING MEASURES", or a number
and a title alone on its line ("5 Fire-fighting measures")."""


def heading_number(line: str) -> int | None:
    """The section number of a numbered section heading line, else ``None``."""
    return section_number(line) if _HEADING_NO.match(line) else None


def section_number(title: str | None) -> int | None:
    """The SDS section number a chunk's section title or a heading line starts with."""
    m = _SECTION_NO.match(title or "")
    return int(m.group(1)) if m else None
