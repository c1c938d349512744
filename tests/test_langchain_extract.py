"""LLMGraphTransformerExtractor: LangChain's graph transformer -> evidence-carrying facts."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

pytest.importorskip("langchain_experimental", reason="needs the [langchain] extra")

from langchain_core.language_models.fake_chat_models import FakeListChatModel

from hybrid_rag.ingest.langchain_extract import (
    LLMGraphTransformerExtractor,
    property_for,
)
from hybrid_rag.models import Chunk, Page, PreparedDocument
from hybrid_rag.ontology import load_ontology
from hybrid_rag.testing.contracts import ExtractorContract

ONTOLOGY = load_ontology("msds")


def _model(*relations: list[dict[str, Any]]) -> FakeListChatModel:
    """LangChain's own fake chat model, replying the transformer's JSON format in turn."""
    return FakeListChatModel(responses=[json.dumps(r) for r in relations] or ["[]"])


def _doc(text: str) -> PreparedDocument:
    page = Page(number=1, text=text)
    chunk = Chunk(chunk_id="d:1", doc_id="d", page=1, start=0, end=len(text), text=text)
    return PreparedDocument(
        doc_id="d", name="d.pdf", source="d.pdf", pages=(page,), chunks=(chunk,)
    )


class TestGraphTransformerContract(ExtractorContract):
    @pytest.fixture
    def extractor(self) -> LLMGraphTransformerExtractor:
        return LLMGraphTransformerExtractor(_model(), ignore_tool_usage=True)


def test_relationships_become_facts_only_with_a_verbatim_quote() -> None:
    text = "Product: Zorbix\nOdour: faint citrus\nSupplier: ACME Chemicals Inc."
    relations = [
        {"head": "Zorbix", "head_type": "Product", "relation": "ODOR",
         "tail": "faint citrus", "tail_type": "Value"},
        {"head": "Zorbix", "head_type": "Product", "relation": "SUPPLIED_BY",
         "tail": "ACME Chemicals Inc.", "tail_type": "Supplier"},
        {"head": "Zorbix", "head_type": "Product", "relation": "HAS_COLOR",
         "tail": "bright purple", "tail_type": "Value"},
        {"head": "Zorbix", "head_type": "Product", "relation": "LIKES",
         "tail": "citrus", "tail_type": "Value"},
    ]  # fmt: skip
    ex = LLMGraphTransformerExtractor(_model(relations), ignore_tool_usage=True, offline=False)
    got = asyncio.run(ex.extract(_doc(text), ontology=ONTOLOGY))
    facts = {f.prop: f for f in got.facts}
    assert set(facts) == {"odor", "suppliedBy"}
    assert facts["odor"].quote == "faint citrus" and facts["odor"].chunk_id == "d:1"
    assert facts["suppliedBy"].object_label == "ACME Chemicals Inc."
    assert facts["suppliedBy"].object_class == "Supplier"
    assert "llm: dropped 1 fact(s): quote not found in its chunk" in got.warnings  # purple
    assert "llm: dropped 1 fact(s): relationship type not in the ontology" in got.warnings


def test_relationship_types_map_to_ontology_properties() -> None:
    assert property_for("HAS_FLASH_POINT", ONTOLOGY) == "flashPoint"
    assert property_for("flashPoint", ONTOLOGY) == "flashPoint"
    assert property_for("Flash point", ONTOLOGY) == "flashPoint"
    assert property_for("LOVES", ONTOLOGY) is None
