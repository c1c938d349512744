"""An ``Extractor`` on LangChain's ``LLMGraphTransformer``.

For users who already rely on ``langchain-experimental``'s graph transformer. Each chunk
goes through ``LLMGraphTransformer`` (allowed relationships: the ontology's property
names; a ``quote`` relationship property is requested when the model uses tools), and
its relationships become the same evidence-carrying facts ``LLMExtractor`` makes:

* the relationship type is mapped to an ontology property (``shipDate``, ``SHIP_DATE``,
  ``HAS_SHIP_DATE`` and the property's labels all match); other types
  are dropped and counted;
* the target node is the value (datatype property) or the related entity (object
  property; its type is kept as the class when the ontology has it);
* the quote is the relationship's ``quote`` property, or else the target's text, and it
  must be found verbatim in the chunk: a relationship without one is dropped and counted.

The source node is taken to be the document's product (sheets are about one product).
Offline extraction, concurrency and the merge rule are those of
``LLMExtractor``.

Note: ``langchain-experimental`` is being sunset by its maintainers; prefer
``LLMExtractor`` with
``LangChainLLM`` for new code.
"""

from __future__ import annotations

import re
import warnings
from typing import Any

from hybrid_rag.ingest.llm_extract import (
    ChunkFacts,
    ChunkwiseExtractor,
    RawFact,
    Tally,
    checked_fact,
    locate_quote,
)
from hybrid_rag.models import Chunk
from hybrid_rag.protocols import Ontology

__all__ = ["LLMGraphTransformerExtractor", "property_for"]

_INSTALL = 'pip install "hybrid-rag[langchain]"'


def _transformer_class() -> Any:
    try:
        with warnings.catch_warnings():  # the package warns that it is being sunset
            warnings.simplefilter("ignore", DeprecationWarning)
            from langchain_experimental.graph_transformers import LLMGraphTransformer
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(
            f"LLMGraphTransformerExtractor needs langchain-experimental: {_INSTALL}"
        ) from exc
    return LLMGraphTransformer


def _squash(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.casefold())


def property_for(relation: str, ontology: Ontology) -> str | None:
    """The ontology property a relationship type names, or ``None``.

    A relationship ``HAS_SHIP_DATE`` names a property ``shipDate`` (its local name or
    any of its labels, compared without case, spaces, underscores or a ``has`` prefix).
    """
    key = _squash(relation)
    names: dict[str, str] = {}
    for p in ontology.properties():
        for form in (p.name, *p.labels):
            names.setdefault(_squash(form), p.name)
    if key in names:
        return names[key]
    return names.get(key[3:]) if key.startswith("has") else None


class LLMGraphTransformerExtractor(ChunkwiseExtractor):
    """Extraction through ``langchain_experimental``'s ``LLMGraphTransformer``.

    Args:
        chat_model: a LangChain chat model (``BaseChatModel``).
        concurrency: chunks in flight at once (1..64).
        offline: run the offline pattern extractor first and merge.
        ignore_tool_usage: passed to the transformer: ``True`` for models without tool
            calling (prompt-based JSON; no ``quote`` property then, the target's text
            must be the quote).

    Raises:
        ImportError: ``langchain-experimental`` is not installed (names the pip line).
        InputError: a bad option.
    """

    def __init__(
        self,
        chat_model: Any,
        *,
        concurrency: int = 8,
        offline: bool = True,
        ignore_tool_usage: bool = False,
    ) -> None:
        super().__init__(concurrency=concurrency, offline=offline)
        self._cls = _transformer_class()
        self._model = chat_model
        self._tools = not ignore_tool_usage
        self._transformers: dict[int, Any] = {}

    @property
    def name(self) -> str:
        """``langchain-graph:<chat model class>``."""
        return f"langchain-graph:{type(self._model).__name__}"

    def __repr__(self) -> str:
        return f"LLMGraphTransformerExtractor(chat_model={type(self._model).__name__})"

    def _transformer(self, ontology: Ontology) -> Any:
        found = self._transformers.get(id(ontology))
        if found is None:
            found = self._cls(
                llm=self._model,
                allowed_relationships=[p.name for p in ontology.properties()],
                strict_mode=False,  # types are mapped (and misses counted) here
                relationship_properties=["quote"] if self._tools else False,
                ignore_tool_usage=not self._tools,
            )
            self._transformers[id(ontology)] = found
        return found

    async def read_chunk(self, chunk: Chunk, ontology: Ontology, tally: Tally) -> ChunkFacts:
        """The transformer's relationships in ``chunk`` as checked facts."""
        from langchain_core.documents import Document

        from hybrid_rag.errors import LLMError

        try:
            graph = await self._transformer(ontology).aprocess_response(
                Document(page_content=chunk.text)
            )
        except Exception as exc:
            raise LLMError(f"{self.name}: {type(exc).__name__}: {exc}") from exc
        facts = []
        for rel in graph.relationships:
            raw = _raw_fact(rel, chunk, ontology)
            if raw is None:
                tally.drop("relationship type not in the ontology")
                continue
            fact = checked_fact(raw, chunk, ontology, tally)
            if fact is not None:
                facts.append(fact)
        return facts, []


def _raw_fact(rel: Any, chunk: Chunk, ontology: Ontology) -> RawFact | None:
    prop = property_for(str(rel.type), ontology)
    if prop is None:
        return None
    target = str(rel.target.id)
    quote = str((getattr(rel, "properties", None) or {}).get("quote") or "")
    if not quote or locate_quote(quote, chunk.text) is None:
        quote = target
    is_object = ontology.property(prop).kind == "object"
    classes = {c.name.casefold(): c.name for c in ontology.classes()}
    return RawFact(
        property=prop,
        value=target,
        quote=quote,
        object_label=target if is_object else None,
        object_class=classes.get(str(rel.target.type).casefold()) if is_object else None,
    )
