"""Cancellation of an ingest propagates as cancellation, after the rollback (issue 12)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import anyio
import numpy as np
import numpy.typing as npt

from hybrid_rag import HybridRAG
from hybrid_rag.providers.hashing import HashingEmbedder
from hybrid_rag.samples import sample_pdfs


class SlowHashingEmbedder(HashingEmbedder):
    """The hashing embedder, made slow so a cancel scope ends during the write."""

    async def embed_documents(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        await anyio.sleep(5)
        return await super().embed_documents(texts)


def test_cancelled_ingest_is_cancelled_and_leaves_no_trace(tmp_path: Path) -> None:
    pdf = sample_pdfs(tmp_path / "pdfs")[0]
    with HybridRAG(None, embedder="hashing") as probe:  # what a finished ingest writes
        doc = probe.ingest(pdf).doc_id
        assert probe.vectors.chunks(doc) and probe.graph.dump(doc)  # type: ignore[attr-defined]

    async def main() -> bool:
        async with HybridRAG(tmp_path / "store", embedder=SlowHashingEmbedder()) as rag:
            with anyio.move_on_after(0.5) as scope:
                await rag.aingest(pdf)
            assert len(rag.documents()) == 0
            assert rag.vectors.chunks(doc) == []
            assert not rag.graph.dump(doc)  # type: ignore[attr-defined]  # rolled back
            return scope.cancelled_caught

    assert anyio.run(main) is True  # a cancellation, not a StoreError
