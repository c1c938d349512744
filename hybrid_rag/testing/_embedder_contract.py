"""Contract tests every ``Embedder`` must pass.

Subclass ``EmbedderContract`` in a test module and provide an ``embedder``
fixture::

    class TestMyEmbedder(EmbedderContract):
        deterministic = True  # False for a remote model whose vectors may jitter

        @pytest.fixture
        def embedder(self):
            return MyEmbedder()

        def backend_calls(self, embedder):  # optional: requests made to the model
            return embedder.requests

The async methods are driven with ``anyio.run``, so no pytest async plugin is needed.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any

import anyio
import numpy as np
import pytest

from hybrid_rag.errors import InputError
from hybrid_rag.protocols import Embedder

__all__ = ["EmbedderContract"]

TEXTS = [
    "Acetone is a highly flammable liquid and vapour (H225).",
    "Flash point: -20 °C (closed cup). UN1090, CAS 67-64-1.",
    "Keep the container tightly closed in a cool, well-ventilated place.",
    "Äthanol und Wasser: löslich. 漢字 テスト 🧪",
    "x",
]
_BLANK = ["", "   ", "\n\t"]


def run(fn: Callable[..., Coroutine[Any, Any, Any]], *args: Any) -> Any:
    """Run an async embedder method to completion from a sync test."""
    return anyio.run(fn, *args)


class EmbedderContract:
    """Behaviour shared by every embedder; subclasses provide ``embedder``.

    Attributes:
        deterministic: Whether the same text must give the same vector (set ``False``
            for models whose outputs may vary slightly between calls).
    """

    deterministic: bool = True

    def backend_calls(self, embedder: Embedder) -> int | None:
        """How many requests the embedder has sent to its model so far.

        Override to enable the batching test; ``None`` (the default) skips it.
        """
        return None

    # -- identity ----------------------------------------------------------------------

    def test_is_an_embedder(self, embedder: Embedder) -> None:
        assert isinstance(embedder, Embedder)

    def test_name_and_dim_are_stable(self, embedder: Embedder) -> None:
        name, dim = embedder.name, embedder.dim
        assert isinstance(name, str) and name
        assert isinstance(dim, int) and not isinstance(dim, bool) and dim >= 1
        run(embedder.embed_documents, TEXTS[:2])
        run(embedder.embed_query, TEXTS[0])
        assert (embedder.name, embedder.dim) == (name, dim)

    # -- shapes, dtype, norms ----------------------------------------------------------

    def test_documents_shape_dtype_and_norm(self, embedder: Embedder) -> None:
        vecs = run(embedder.embed_documents, TEXTS)
        assert isinstance(vecs, np.ndarray)
        assert vecs.shape == (len(TEXTS), embedder.dim)
        assert vecs.dtype == np.float32
        assert np.isfinite(vecs).all()
        assert np.allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-4)

    def test_query_shape_dtype_and_norm(self, embedder: Embedder) -> None:
        q = run(embedder.embed_query, "What is the flash point of acetone?")
        assert isinstance(q, np.ndarray)
        assert q.shape == (embedder.dim,)
        assert q.dtype == np.float32
        assert float(np.linalg.norm(q)) == pytest.approx(1.0, abs=1e-4)

    def test_empty_batch(self, embedder: Embedder) -> None:
        vecs = run(embedder.embed_documents, [])
        assert vecs.shape == (0, embedder.dim)
        assert vecs.dtype == np.float32
        assert run(embedder.embed_documents, ()).shape == (0, embedder.dim)

    def test_blank_text_is_unit_or_zero(self, embedder: Embedder) -> None:
        vecs = run(embedder.embed_documents, _BLANK)
        assert vecs.shape == (len(_BLANK), embedder.dim) and vecs.dtype == np.float32
        norms = np.linalg.norm(vecs, axis=1)
        assert all(n == pytest.approx(1.0, abs=1e-4) or n == 0.0 for n in norms), norms
        q = run(embedder.embed_query, "")
        assert q.shape == (embedder.dim,) and q.dtype == np.float32
        assert float(np.linalg.norm(q)) in (0.0, pytest.approx(1.0, abs=1e-4))

    def test_rows_follow_input_order(self, embedder: Embedder) -> None:
        forward = run(embedder.embed_documents, TEXTS[:3])
        backward = run(embedder.embed_documents, TEXTS[:3][::-1])
        assert np.allclose(forward, backward[::-1], atol=1e-5)
        assert not np.allclose(forward[0], forward[1], atol=1e-3)

    # -- determinism and batching ------------------------------------------------------

    def test_deterministic(self, embedder: Embedder) -> None:
        if not self.deterministic:
            pytest.skip("this embedder is not declared deterministic")
        first = run(embedder.embed_documents, TEXTS)
        again = run(embedder.embed_documents, TEXTS)
        np.testing.assert_allclose(first, again, atol=1e-6)
        alone = run(embedder.embed_documents, [TEXTS[1]])
        np.testing.assert_allclose(alone[0], first[1], atol=1e-5)
        np.testing.assert_allclose(
            run(embedder.embed_query, TEXTS[2]), run(embedder.embed_query, TEXTS[2]), atol=1e-6
        )

    def test_one_backend_call_per_batch(self, embedder: Embedder) -> None:
        before = self.backend_calls(embedder)
        if before is None:
            pytest.skip("no backend call count for this embedder (override backend_calls)")
        run(embedder.embed_documents, TEXTS)
        assert self.backend_calls(embedder) == before + 1
        run(embedder.embed_query, TEXTS[0])
        assert self.backend_calls(embedder) == before + 2

    def test_concurrent_calls(self, embedder: Embedder) -> None:
        results: dict[int, Any] = {}

        async def one(i: int) -> None:
            results[i] = await embedder.embed_documents([TEXTS[i], TEXTS[(i + 1) % 4]])

        async def main() -> None:
            async with anyio.create_task_group() as tg:
                for i in range(4):
                    tg.start_soon(one, i)

        anyio.run(main)
        for i in range(4):
            assert results[i].shape == (2, embedder.dim)
        if self.deterministic:
            serial = run(embedder.embed_documents, TEXTS[:4])
            for i in range(4):
                np.testing.assert_allclose(results[i][0], serial[i], atol=1e-5)

    # -- bad input ---------------------------------------------------------------------

    @pytest.mark.parametrize(
        "bad",
        ["a single string", b"bytes", None, 42, ["ok", 7], ["ok", None], [b"bytes"], {"a": 1}],
    )
    def test_documents_reject_non_str(self, embedder: Embedder, bad: Any) -> None:
        before = self.backend_calls(embedder)
        with pytest.raises(InputError):
            run(embedder.embed_documents, bad)
        assert self.backend_calls(embedder) == before

    @pytest.mark.parametrize("bad", [None, 42, b"bytes", ["a list"]])
    def test_query_rejects_non_str(self, embedder: Embedder, bad: Any) -> None:
        before = self.backend_calls(embedder)
        with pytest.raises(InputError):
            run(embedder.embed_query, bad)
        assert self.backend_calls(embedder) == before
