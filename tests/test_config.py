"""resolve_components and HanaSettings: env, .env, VCAP_SERVICES, secrets, hooks."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from hybrid_rag import config
from hybrid_rag.config import resolve_components
from hybrid_rag.errors import ConfigurationError
from hybrid_rag.stores.hana import (
    HanaCatalog,
    HanaGraphStore,
    HanaInternalEmbedder,
    HanaSettings,
    HanaVectorStore,
)
from hybrid_rag.stores.hana._connection import read_dotenv
from hybrid_rag.stores.sparql_http import SparqlHttpStore
from hybrid_rag.testing.fakes import FunctionLLM

SECRET = "s3cr3t-Pa55"
HANA = {"HANA_HOST": "abc.hana.example", "HANA_USER": "RAG", "HANA_PASSWORD": SECRET}


def test_embedded_when_nothing_is_configured() -> None:
    got = resolve_components(env={})
    assert (got.graph, got.vectors, got.catalog, got.llm) == (None, None, None, None)
    assert got.embedder == "auto"
    assert got.description.startswith("embedded stores")


def test_hana_stores_share_one_pool_and_log_one_line(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="hybrid_rag"):
        got = resolve_components(env={**HANA, "HANA_SCHEMA": "RAG_DATA", "HANA_PORT": "30015"})
    assert isinstance(got.graph, HanaGraphStore)
    assert isinstance(got.vectors, HanaVectorStore)
    assert isinstance(got.catalog, HanaCatalog)
    assert got.graph._pool is got.vectors._pool is got.catalog._pool
    settings = got.graph._pool.settings
    assert (settings.port, settings.schema) == (30015, "RAG_DATA")
    assert got.graph._pool.open_connections() == 0  # nothing connected yet
    lines = [r.getMessage() for r in caplog.records if "components" in r.getMessage()]
    assert len(lines) == 1 and "HANA" in lines[0] and "abc.hana.example" in lines[0]
    for text in (*lines, got.description, repr(got), repr(settings), repr(got.graph._pool)):
        assert SECRET not in text


def test_incomplete_hana_settings_name_what_is_missing() -> None:
    with pytest.raises(ConfigurationError, match="HANA_PASSWORD"):
        resolve_components(env={"HANA_HOST": "h", "HANA_USER": "u"})
    with pytest.raises(ConfigurationError):
        HanaSettings.from_env({**HANA, "HANA_PORT": "not-a-number"})
    with pytest.raises(ConfigurationError):
        HanaSettings.from_env({**HANA, "HANA_SCHEMA": 'x"; drop'})


def test_vcap_services_binding() -> None:
    vcap = {
        "hana": [
            {
                "name": "hana-db",
                "tags": ["hana", "database"],
                "credentials": {
                    "host": "zz.hanacloud.example",
                    "port": "443",
                    "user": "BIND_USER",
                    "password": SECRET,
                    "schema": "BIND_SCHEMA",
                    "certificate": "-----BEGIN CERTIFICATE-----...",
                },
            }
        ]
    }
    settings = HanaSettings.from_env({"VCAP_SERVICES": json.dumps(vcap)})
    assert settings is not None
    assert (settings.host, settings.user, settings.schema) == (
        "zz.hanacloud.example",
        "BIND_USER",
        "BIND_SCHEMA",
    )
    kwargs = settings.connect_kwargs()
    assert kwargs["password"] == SECRET and kwargs["sslTrustStore"].startswith("-----BEGIN")
    assert SECRET not in repr(settings) and "CERTIFICATE" not in repr(settings)
    with pytest.raises(ConfigurationError):
        HanaSettings.from_env({"VCAP_SERVICES": "{not json"})


def test_explicit_variables_win_over_vcap() -> None:
    vcap = {"hana-cloud": [{"credentials": {"host": "vcap", "user": "v", "password": "p"}}]}
    settings = HanaSettings.from_env({**HANA, "VCAP_SERVICES": json.dumps(vcap)})
    assert settings is not None and settings.host == "abc.hana.example"
    assert HanaSettings.from_env({"VCAP_SERVICES": json.dumps(vcap)}).host == "vcap"  # type: ignore[union-attr]


def test_dotenv_file_is_read_and_environment_wins(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for key in ("HANA_HOST", "HANA_USER", "HANA_PASSWORD", "HANA_SCHEMA", "VCAP_SERVICES"):
        monkeypatch.delenv(key, raising=False)
    dotenv = tmp_path / ".env"
    dotenv.write_text(
        f"# comment\nHANA_HOST=file-host\nHANA_USER='file user'\nHANA_PASSWORD=\"{SECRET}\"\n",
        encoding="utf-8",
    )
    settings = HanaSettings.from_env(dotenv_path=dotenv)
    assert settings is not None and (settings.host, settings.user) == ("file-host", "file user")
    monkeypatch.setenv("HANA_HOST", "env-host")
    assert HanaSettings.from_env(dotenv_path=dotenv).host == "env-host"  # type: ignore[union-attr]
    with pytest.raises(ConfigurationError, match="HANA_USER"):  # no file: user missing
        HanaSettings.from_env(dotenv_path=tmp_path / "missing.env")


def test_dotenv_file_is_read_with_python_dotenv(tmp_path: Path) -> None:
    env = tmp_path / ".env"
    env.write_text("A=1\nexport B = two # note\nC='x # y'\n# D=4\n", encoding="utf-8")
    assert read_dotenv(env) == {"A": "1", "B": "two", "C": "x # y"}
    assert read_dotenv(tmp_path / "absent.env") == {}


def test_hana_internal_embedder_and_provider_hooks(monkeypatch: pytest.MonkeyPatch) -> None:
    got = resolve_components(
        env={**HANA, "HYBRID_RAG_EMBEDDER": "hana", "HANA_EMBEDDING_DIM": "384"}
    )
    assert isinstance(got.embedder, HanaInternalEmbedder) and got.embedder.dim == 384
    assert got.embedder._pool is got.graph._pool  # type: ignore[union-attr]
    with pytest.raises(ConfigurationError):
        resolve_components(env={"HYBRID_RAG_EMBEDDER": "hana"})
    assert resolve_components(env={"HYBRID_RAG_EMBEDDER": "hashing"}).embedder == "hashing"
    with pytest.raises(ConfigurationError, match="unknown HYBRID_RAG_LLM"):
        resolve_components(env={"HYBRID_RAG_LLM": "nosuch:model"})
    llm = FunctionLLM(lambda messages: "ok")
    monkeypatch.setitem(config.LLM_PROVIDERS, "mine", lambda model, env: llm)
    chosen = resolve_components(env={"HYBRID_RAG_LLM": "mine:m1"})
    assert chosen.llm is llm and "llm=mine:function" in chosen.description


def test_sparql_endpoint_graph() -> None:
    got = resolve_components(
        env={
            "SPARQL_QUERY_URL": "http://kg:7878/query",
            "SPARQL_PASSWORD": SECRET,
            "SPARQL_USER": "u",
        }
    )
    assert isinstance(got.graph, SparqlHttpStore) and got.vectors is None
    assert SECRET not in got.description and SECRET not in repr(got.graph)


def test_hybrid_rag_from_env_uses_the_resolution() -> None:
    from hybrid_rag import HybridRAG

    if not hasattr(HybridRAG, "from_env"):
        pytest.skip("HybridRAG.from_env not wired yet (see the config change request)")
    rag = HybridRAG.from_env(env={**HANA})  # type: ignore[attr-defined]
    assert isinstance(rag._graph, HanaGraphStore)
    rag.close()


def test_choices_say_what_and_why(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    nothing = resolve_components(env={})
    assert [c.part for c in nothing.choices] == ["stores", "embedder", "llm", "ontology"]
    assert "no HANA_HOST" in nothing.why and "no SPARQL_QUERY_URL" in nothing.why
    assert "HYBRID_RAG_EMBEDDER is not set" in nothing.why
    assert "llm: none: the extractive path (HYBRID_RAG_LLM is not set)" in nothing.why
    hana = resolve_components(env={**HANA, "HYBRID_RAG_EMBEDDER": "hashing"})
    assert "(HANA_HOST is set)" in hana.why
    assert "embedder: hashing (HYBRID_RAG_EMBEDDER=hashing)" in hana.why
    assert SECRET not in hana.why
    vcap = {"hana": [{"credentials": {"host": "v", "user": "u", "password": SECRET}}]}
    bound = resolve_components(env={"VCAP_SERVICES": json.dumps(vcap)})
    assert "a hana binding in VCAP_SERVICES" in bound.why and SECRET not in bound.why
    for key in ("HANA_HOST", "HANA_USER", "HANA_PASSWORD", "VCAP_SERVICES", "SPARQL_QUERY_URL"):
        monkeypatch.delenv(key, raising=False)
    dotenv = tmp_path / ".env"
    dotenv.write_text(f"HANA_HOST=h\nHANA_USER=u\nHANA_PASSWORD={SECRET}\n", encoding="utf-8")
    assert "HANA_HOST is set in .env" in resolve_components(dotenv_path=dotenv).why


def test_from_env_repr_and_log_say_what_was_chosen(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from hybrid_rag import HybridRAG

    with caplog.at_level(logging.INFO, logger="hybrid_rag"):
        rag = HybridRAG.from_env(env={})
    text = repr(rag)
    assert "no HANA_HOST" in text and "HYBRID_RAG_LLM is not set" in text
    assert "path: in memory, nothing is kept after exit" in text
    info = [r for r in caplog.records if r.levelno == logging.INFO and "components" in r.message]
    assert len(info) == 1 and "stores: embedded stores (no HANA_HOST" in info[0].message
    warned = [r.message for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warned) == 1 and "in memory" in warned[0] and "pass a path" in warned[0]
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="hybrid_rag"):
        kept = HybridRAG.from_env(tmp_path / "store", env={"HYBRID_RAG_EMBEDDER": "hashing"})
    assert f"path: {tmp_path / 'store'}" in repr(kept)
    assert "HYBRID_RAG_EMBEDDER=hashing" in repr(kept)
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert repr(HybridRAG(tmp_path)) == f"HybridRAG(path={str(tmp_path)!r}, llm=None)"
