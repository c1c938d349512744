"""Choose the stores and providers from the environment (``HybridRAG.from_env``).

Resolution, first match wins:

1. **Stores.** HANA settings (``HANA_HOST``/``HANA_PORT``/``HANA_USER``/``HANA_PASSWORD``
   [+ ``HANA_SCHEMA``], a ``.env`` file, or a Cloud Foundry ``VCAP_SERVICES`` hana
   binding) -> ``HanaGraphStore``,
   ``HanaVectorStore`` and
   ``HanaCatalog`` sharing one per-thread connection pool.
   Else ``SPARQL_QUERY_URL`` (+ ``SPARQL_UPDATE_URL``, ``SPARQL_USER``/``SPARQL_PASSWORD``
   or ``SPARQL_TOKEN``) -> ``SparqlHttpStore`` for the
   graph, embedded vectors and catalog. Else the embedded stores.
2. **Embedder.** ``HYBRID_RAG_EMBEDDER``: ``hana`` (``VECTOR_EMBEDDING`` in the database;
   ``HANA_EMBEDDING_MODEL``, ``HANA_EMBEDDING_DIM``), a registered provider name, or any
   spec ``resolve_embedder`` accepts. Unset: ``"auto"``.
3. **LLM.** ``HYBRID_RAG_LLM``: ``<provider>[:<model>]``. Unset: no LLM (the offline,
   extractive path).

Hosted providers, for ``HYBRID_RAG_LLM`` and ``HYBRID_RAG_EMBEDDER`` alike:

* ``openai:<model>``: ``OpenAILLM`` /
  ``OpenAIEmbedder`` with ``OPENAI_BASE_URL`` and
  ``OPENAI_API_KEY`` (and ``HYBRID_RAG_EMBEDDING_DIM`` for an embedding model whose
  size is not known).
* ``aicore:<model>``: ``AICoreLLM`` /
  ``AICoreEmbedder``; credentials from ``AICORE_*``
  (``AICORE_SERVICE_KEY``, ``AICORE_CLIENT_ID`` ...), ``~/.aicore/config.json`` or
  ``VCAP_SERVICES`` as the SDK reads them, ``AICORE_RESOURCE_GROUP``.

Their responses are cached under ``HYBRID_RAG_CACHE_DIR`` (default
``.hybrid_rag/cache``; ``off`` disables it). More providers plug in through
``LLM_PROVIDERS`` and ``EMBEDDER_PROVIDERS``: a name mapped to a factory that
takes the model (``""`` when not given) and the merged environment. Nothing here opens a
connection; one log line says what was chosen (never a secret).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from hybrid_rag.errors import ConfigurationError

if TYPE_CHECKING:
    from hybrid_rag.protocols import Catalog, Embedder, GraphStore, LLMProvider, VectorStore
    from hybrid_rag.stores.hana._connection import HanaConnectionPool

__all__ = [
    "EMBEDDER_PROVIDERS",
    "LLM_PROVIDERS",
    "Choice",
    "Components",
    "llm_from_spec",
    "resolve_components",
]

log = logging.getLogger("hybrid_rag")

Env = Mapping[str, str]

_DEFAULT_CACHE_DIR = ".hybrid_rag/cache"
_AICORE_CREDENTIALS = {
    "AICORE_BASE_URL": "base_url",
    "AICORE_AUTH_URL": "auth_url",
    "AICORE_CLIENT_ID": "client_id",
    "AICORE_CLIENT_SECRET": "client_secret",
}


def _cache_dir(values: Env) -> str | None:
    raw = (values.get("HYBRID_RAG_CACHE_DIR") or _DEFAULT_CACHE_DIR).strip()
    return None if raw.lower() in ("off", "none", "0", "false") else raw


def _aicore_options(values: Env) -> dict[str, Any]:
    """Resource group, and credentials when they come from the given env (a ``.env``)."""
    from hybrid_rag.providers.aicore import shared_proxy_client

    group = values.get("AICORE_RESOURCE_GROUP") or None
    given = {arg: values[var] for var, arg in _AICORE_CREDENTIALS.items() if values.get(var)}
    if len(given) < len(_AICORE_CREDENTIALS) or all(
        os.environ.get(var) == values.get(var) for var in _AICORE_CREDENTIALS
    ):
        return {"resource_group": group}  # the SDK reads its own sources
    return {"proxy_client": shared_proxy_client(group, credentials=given)}


def _openai_llm(model: str, values: Env) -> LLMProvider:
    from hybrid_rag.providers.openai import OpenAILLM

    return OpenAILLM(
        model or "gpt-4o-mini",
        base_url=values.get("OPENAI_BASE_URL") or None,
        api_key=values.get("OPENAI_API_KEY") or None,
        cache=_cache_dir(values),
    )


def _openai_embedder(model: str, values: Env) -> Embedder:
    from hybrid_rag.providers.openai import OpenAIEmbedder

    dim = values.get("HYBRID_RAG_EMBEDDING_DIM")
    return OpenAIEmbedder(
        model or "text-embedding-3-small",
        base_url=values.get("OPENAI_BASE_URL") or None,
        api_key=values.get("OPENAI_API_KEY") or None,
        dimensions=_int(dim, 0, "HYBRID_RAG_EMBEDDING_DIM") if dim else None,
        cache=_cache_dir(values),
    )


def _aicore_llm(model: str, values: Env) -> LLMProvider:
    from hybrid_rag.providers.aicore import AICoreLLM

    return AICoreLLM(model or "gpt-4o", cache=_cache_dir(values), **_aicore_options(values))


def _aicore_embedder(model: str, values: Env) -> Embedder:
    from hybrid_rag.providers.aicore import AICoreEmbedder

    dim = values.get("HYBRID_RAG_EMBEDDING_DIM")
    return AICoreEmbedder(
        model or "text-embedding-3-small",
        dimensions=_int(dim, 0, "HYBRID_RAG_EMBEDDING_DIM") if dim else None,
        cache=_cache_dir(values),
        **_aicore_options(values),
    )


LLM_PROVIDERS: dict[str, Callable[[str, Env], LLMProvider]] = {
    "openai": _openai_llm,
    "aicore": _aicore_llm,
}
EMBEDDER_PROVIDERS: dict[str, Callable[[str, Env], Embedder]] = {
    "openai": _openai_embedder,
    "aicore": _aicore_embedder,
}


@dataclass(frozen=True, slots=True)
class Choice:
    """One part ``resolve_components`` chose, and why.

    Attributes:
        part: ``"stores"``, ``"embedder"`` or ``"llm"``.
        chosen: What was chosen, e.g. ``"embedded stores"``, ``"hashing"``.
        because: The setting (or its absence) that decided it, e.g.
            ``"HYBRID_RAG_LLM is not set"``.
    """

    part: str
    chosen: str
    because: str

    def __str__(self) -> str:
        return f"{self.chosen} ({self.because})"


@dataclass(frozen=True, slots=True)
class Components:
    """What ``resolve_components`` chose; ``None`` means the embedded default.

    Attributes:
        graph: Graph store, or ``None`` for embedded Oxigraph.
        vectors: Vector store, or ``None`` for the embedded one.
        catalog: Catalog, or ``None`` for SQLite.
        embedder: An embedder or an embedder spec string (``"auto"`` by default).
        llm: An LLM provider, or ``None`` for the offline extractive path.
        description: One line saying what was chosen (no secrets).
        choices: Each part with what was chosen and why (no secrets).
        ontology: ``HYBRID_RAG_ONTOLOGY`` (a bundled name or a Turtle file), or ``None``
            when it is not set.
    """

    graph: GraphStore | None = None
    vectors: VectorStore | None = None
    catalog: Catalog | None = None
    embedder: Embedder | str = "auto"
    llm: LLMProvider | None = None
    description: str = "embedded stores, embedder=auto, llm=none"
    choices: tuple[Choice, ...] = ()
    ontology: str | None = None

    @property
    def why(self) -> str:
        """Each part, what was chosen and why, on one line (``"stores: ...; llm: ..."``)."""
        return "; ".join(f"{c.part}: {c}" for c in self.choices)


def resolve_components(
    *, env: Env | None = None, dotenv_path: str | os.PathLike[str] | None = ".env"
) -> Components:
    """Pick stores and providers from ``env`` (default: ``os.environ`` + ``.env``).

    One INFO log line on the ``hybrid_rag`` logger says what was chosen and why.

    Args:
        env: Variables to use instead of the process environment (no ``.env`` then).
        dotenv_path: A ``.env`` file read when ``env`` is ``None``; ``None`` skips it.

    Raises:
        ConfigurationError: Incomplete HANA settings, ``HYBRID_RAG_EMBEDDER=hana``
            without HANA, or an unknown ``HYBRID_RAG_LLM`` provider.
    """
    from hybrid_rag.stores.hana._connection import HanaSettings, merged_env, read_dotenv

    values = merged_env(env, dotenv_path)
    dotenv = read_dotenv(dotenv_path) if env is None and dotenv_path is not None else {}
    settings = HanaSettings.from_env(values, dotenv_path=None)
    pool = None
    if settings is not None:
        from hybrid_rag.stores.hana._connection import HanaConnectionPool

        pool = HanaConnectionPool(settings)
    graph, vectors, catalog, where = _stores(values, pool)
    embedder, embedder_name = _embedder(values, pool)
    llm, llm_name = _llm(values)
    description = f"{where}, embedder={embedder_name}, llm={llm_name}"
    choices: tuple[Choice, ...] = (
        Choice("stores", where, _stores_reason(values, dotenv, pool)),
        Choice("embedder", embedder_name, _embedder_reason(embedder_name, values)),
        Choice(
            "llm",
            "none: the extractive path" if llm is None else llm_name,
            _setting("HYBRID_RAG_LLM", values),
        ),
    )
    ontology = (values.get("HYBRID_RAG_ONTOLOGY") or "").strip() or None
    choices += (Choice("ontology", ontology or "msds", _setting("HYBRID_RAG_ONTOLOGY", values)),)
    parts = Components(graph, vectors, catalog, embedder, llm, description, choices, ontology)
    log.info("hybrid_rag components: %s", parts.why)
    return parts


def _stores_reason(values: Env, dotenv: Env, pool: HanaConnectionPool | None) -> str:
    if pool is not None:
        if not values.get("HANA_HOST"):
            return "a hana binding in VCAP_SERVICES"
        return "HANA_HOST is set" + (" in .env" if "HANA_HOST" in dotenv else "")
    if values.get("SPARQL_QUERY_URL"):
        return "SPARQL_QUERY_URL is set" + (" in .env" if "SPARQL_QUERY_URL" in dotenv else "")
    return "no HANA_HOST, .env or VCAP_SERVICES hana binding, and no SPARQL_QUERY_URL"


def _setting(name: str, values: Env) -> str:
    raw = (values.get(name) or "").strip()
    return f"{name}={raw}" if raw else f"{name} is not set"


def _embedder_reason(spec: str, values: Env) -> str:
    """Why this embedder; for ``auto``, what it stands for on this machine."""
    because = _setting("HYBRID_RAG_EMBEDDER", values)
    if spec.strip().lower() != "auto":
        return because
    from hybrid_rag.providers import local_model_available

    if local_model_available():
        return f"{because}: the store's own embedder, else local MiniLM"
    return f"{because}: the store's own embedder, else hashing, as [local] is not installed"


def _stores(
    values: Env, pool: HanaConnectionPool | None
) -> tuple[GraphStore | None, VectorStore | None, Catalog | None, str]:
    if pool is not None:
        from hybrid_rag.stores.hana import HanaCatalog, HanaGraphStore, HanaVectorStore

        s = pool.settings
        where = f"HANA stores (host={s.host}, schema={s.schema or 'user default'})"
        return HanaGraphStore(pool=pool), HanaVectorStore(pool=pool), HanaCatalog(pool=pool), where
    url = values.get("SPARQL_QUERY_URL")
    if url:
        from hybrid_rag.stores.sparql_http import SparqlHttpStore

        graph = SparqlHttpStore(
            url,
            values.get("SPARQL_UPDATE_URL") or None,
            username=values.get("SPARQL_USER") or None,
            password=values.get("SPARQL_PASSWORD") or None,
            bearer_token=values.get("SPARQL_TOKEN") or None,
        )
        return graph, None, None, f"SPARQL endpoint graph ({url}), embedded vectors and catalog"
    return None, None, None, "embedded stores"


def _embedder(values: Env, pool: HanaConnectionPool | None) -> tuple[Embedder | str, str]:
    spec = (values.get("HYBRID_RAG_EMBEDDER") or "auto").strip()
    key = spec.lower()
    if key == "hana":
        if pool is None:
            raise ConfigurationError("HYBRID_RAG_EMBEDDER=hana needs HANA settings")
        from hybrid_rag.stores.hana import HanaInternalEmbedder

        model = values.get("HANA_EMBEDDING_MODEL") or "SAP_NEB.20240715"
        dim = _int(values.get("HANA_EMBEDDING_DIM"), 768, "HANA_EMBEDDING_DIM")
        return HanaInternalEmbedder(pool=pool, model=model, dim=dim), f"hana:{model}"
    provider, _, model = spec.partition(":")
    if provider.lower() in EMBEDDER_PROVIDERS:
        return EMBEDDER_PROVIDERS[provider.lower()](model.strip(), values), spec
    return spec, spec


def llm_from_spec(
    spec: str, *, env: Env | None = None, dotenv_path: str | os.PathLike[str] | None = ".env"
) -> LLMProvider | None:
    """The LLM a ``<provider>:<model>`` spec names, as ``HYBRID_RAG_LLM`` would.

    Credentials come from ``env`` (default: ``os.environ`` + ``.env``); ``"none"`` or an
    empty spec gives ``None`` (the extractive path).

    Raises:
        ConfigurationError: An unknown provider or missing credentials.
    """
    from hybrid_rag.stores.hana._connection import merged_env

    values = {**merged_env(env, dotenv_path), "HYBRID_RAG_LLM": spec}
    return _llm(values)[0]


def _llm(values: Env) -> tuple[LLMProvider | None, str]:
    spec = (values.get("HYBRID_RAG_LLM") or "").strip()
    provider, _, model = spec.partition(":")
    name = provider.strip().lower()
    if not name or name == "none":
        return None, "none (extractive)"
    if name not in LLM_PROVIDERS:
        known = ", ".join(sorted(LLM_PROVIDERS)) or "none registered yet"
        raise ConfigurationError(
            f"unknown HYBRID_RAG_LLM provider {name!r} (known: {known}; "
            "write <provider>:<model>, e.g. openai:gpt-4o-mini)"
        )
    llm = LLM_PROVIDERS[name](model.strip(), values)
    return llm, f"{name}:{llm.name}"


def _int(raw: str | None, default: int, name: str) -> int:
    if not raw:
        return default
    try:
        return int(raw)
    except ValueError:
        raise ConfigurationError(f"{name} must be an integer, got {raw!r}") from None
