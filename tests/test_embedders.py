"""Embedders: the lexical hashing embedder, the local sentence-transformers one, resolution."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import anyio
import numpy as np
import pytest

import hybrid_rag.providers as providers
from hybrid_rag.errors import ConfigurationError
from hybrid_rag.protocols import Embedder
from hybrid_rag.providers import local_model_available, resolve_embedder
from hybrid_rag.providers.hashing import HashingEmbedder
from hybrid_rag.providers.local import INSTALL_HINT, SentenceTransformerEmbedder, bundled_model_path
from hybrid_rag.testing import FakeEmbedder

TEXTS = [
    "Flash point: -18 °C (closed cup). Highly flammable liquid and vapour.",
    "The flash point of this flammable liquid is -18 °C.",
    "Store the polish at room temperature away from children.",
    "",
]


def _cos(a: np.ndarray, b: np.ndarray) -> float:
    return float(a @ b)


def test_hashing_shapes_dtype_and_norm() -> None:
    emb = HashingEmbedder()
    assert isinstance(emb, Embedder) and emb.name == "hashing-384" and emb.dim == 384
    vecs = anyio.run(emb.embed_documents, TEXTS)
    assert vecs.shape == (4, 384) and vecs.dtype == np.float32
    assert np.allclose(np.linalg.norm(vecs[:3], axis=1), 1.0, atol=1e-5)
    assert not vecs[3].any()  # no words -> zero vector
    q = anyio.run(emb.embed_query, TEXTS[0])
    assert q.shape == (384,) and q.dtype == np.float32
    assert np.allclose(q, vecs[0], atol=1e-6)


def test_hashing_is_deterministic_across_processes() -> None:
    here = HashingEmbedder(dim=64).embed_sync(["UN1090 acetone"])[0]
    code = (
        "from hybrid_rag.providers.hashing import HashingEmbedder;"
        "print(HashingEmbedder(dim=64).embed_sync(['UN1090 acetone'])[0].tolist())"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONHASHSEED": "123", "PATH": ""},
    ).stdout
    assert np.allclose(np.array(eval(out), dtype=np.float32), here)


def test_hashing_similar_texts_are_closer_than_unrelated() -> None:
    v = HashingEmbedder().embed_sync(TEXTS)
    assert _cos(v[0], v[1]) > _cos(v[0], v[2]) + 0.2
    # char n-grams relate word forms
    a, b, c = HashingEmbedder().embed_sync(["flammability", "flammable", "toxicity"])
    assert _cos(a, b) > _cos(a, c)


def test_hashing_variants_have_distinct_names() -> None:
    assert HashingEmbedder(dim=128).name == "hashing-128"
    assert HashingEmbedder(ngram=None).name != HashingEmbedder().name
    assert HashingEmbedder(ngram=(2, 4)).name != HashingEmbedder().name
    with pytest.raises(ConfigurationError):
        HashingEmbedder(dim=1)
    with pytest.raises(ConfigurationError):
        HashingEmbedder(ngram=(4, 2))


def test_hashing_large_batch_runs_in_thread_and_matches_sync() -> None:
    emb = HashingEmbedder()
    texts = [f"chunk {i} about acetone flash point" for i in range(200)]
    assert np.allclose(anyio.run(emb.embed_documents, texts), emb.embed_sync(texts))
    assert anyio.run(emb.embed_documents, []).shape == (0, 384)


def test_resolve_embedder_specs(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    assert isinstance(resolve_embedder("hashing"), HashingEmbedder)
    assert resolve_embedder("hashing-128").dim == 128
    fake = FakeEmbedder()
    assert resolve_embedder(fake) is fake
    assert isinstance(resolve_embedder("local"), SentenceTransformerEmbedder)
    assert isinstance(resolve_embedder("minilm"), SentenceTransformerEmbedder)
    assert isinstance(resolve_embedder(str(tmp_path)), SentenceTransformerEmbedder)
    monkeypatch.setattr(providers, "local_model_available", lambda: False)
    assert isinstance(resolve_embedder("auto"), HashingEmbedder)
    monkeypatch.setattr(providers, "local_model_available", lambda: True)
    assert isinstance(resolve_embedder(), SentenceTransformerEmbedder)


@pytest.mark.parametrize("spec", ["bert", "hashing-x", "/no/such/model"])
def test_resolve_embedder_unknown(spec: str) -> None:
    with pytest.raises(ConfigurationError, match="embedder"):
        resolve_embedder(spec)


@pytest.mark.parametrize("spec", ["bert", "hashing-x", "/no/such/model", 42])
def test_a_wrong_embedder_fails_at_construction(spec: object) -> None:
    from hybrid_rag import HybridRAG

    with pytest.raises(ConfigurationError, match="embedder"):
        HybridRAG(embedder=spec)  # type: ignore[arg-type]


def test_a_local_embedder_without_its_extra_fails_at_construction(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from hybrid_rag import HybridRAG

    monkeypatch.setattr(providers, "local_model_available", lambda: False)
    monkeypatch.setattr(providers, "_has_sentence_transformers", lambda: False)
    for spec in ("minilm", "local", str(tmp_path)):
        with pytest.raises(ImportError, match=r'pip install "hybrid-rag\[local\]"'):
            HybridRAG(embedder=spec)
    HybridRAG(embedder="auto").close()  # auto falls back to hashing: nothing to refuse
    monkeypatch.setattr(providers, "local_model_available", lambda: True)
    HybridRAG(embedder="minilm").close()  # installed: accepted, nothing loaded yet


def test_resolve_embedder_rejects_non_embedder() -> None:
    with pytest.raises(ConfigurationError, match="not an embedder"):
        resolve_embedder(object())  # type: ignore[arg-type]


def test_auto_without_sentence_transformers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)
    assert not local_model_available()
    assert isinstance(resolve_embedder("auto"), HashingEmbedder)


def test_missing_extra_names_install_line(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)
    emb = SentenceTransformerEmbedder(tmp_path)  # constructing does no I/O and no import
    with pytest.raises(ImportError) as info:
        emb.embed_sync(["x"])
    assert INSTALL_HINT in str(info.value) and 'pip install "hybrid-rag[local]"' in str(info.value)


def test_local_without_bundled_model(monkeypatch: pytest.MonkeyPatch) -> None:
    import hybrid_rag.providers.local as local

    monkeypatch.setattr(local, "bundled_model_path", lambda: None)
    with pytest.raises(ConfigurationError, match="hybrid-rag\\[local\\]"):
        _ = SentenceTransformerEmbedder().dim


def test_light_imports() -> None:
    code = (
        "import sys, hybrid_rag.providers, hybrid_rag.ingest.load, hybrid_rag.ingest.chunk,"
        " hybrid_rag.testing.fakes, hybrid_rag.providers.hashing, hybrid_rag.providers.local;"
        "hybrid_rag.providers.resolve_embedder('auto');"
        "print(sorted(m for m in ('torch', 'sentence_transformers', 'pypdf') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


needs_local = pytest.mark.skipif(
    not local_model_available(),
    reason='needs the [local] extra: pip install "hybrid-rag[local]"',
)


@pytest.fixture(scope="module")
def minilm() -> SentenceTransformerEmbedder:
    return SentenceTransformerEmbedder()


@needs_local
def test_minilm_metadata_without_loading(minilm: SentenceTransformerEmbedder) -> None:
    assert minilm.name == "all-MiniLM-L6-v2" and minilm.dim == 384
    assert bundled_model_path() is not None


@needs_local
def test_minilm_embeds_semantically(minilm: SentenceTransformerEmbedder) -> None:
    vecs = anyio.run(minilm.embed_documents, TEXTS[:3])
    assert vecs.shape == (3, 384) and vecs.dtype == np.float32
    assert np.allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-4)
    assert _cos(vecs[0], vecs[1]) > _cos(vecs[0], vecs[2])
    q = anyio.run(minilm.embed_query, "How flammable is it?")
    assert q.shape == (384,)
    assert _cos(q, vecs[0]) > _cos(q, vecs[2])
