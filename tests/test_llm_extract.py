"""LLMExtractor: ontology-constrained structured output, checked against the text, merged."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Sequence
from pathlib import Path

import pytest

from hybrid_rag import HybridRAG, InputError
from hybrid_rag.errors import LLMError
from hybrid_rag.ingest.llm_extract import (
    LLMExtractor,
    extraction_messages,
    extraction_schema,
    locate_quote,
)
from hybrid_rag.models import ChatMessage, Chunk, Completion, Page, PreparedDocument
from hybrid_rag.ontology import load_ontology
from hybrid_rag.protocols import Ontology
from hybrid_rag.testing import FunctionLLM
from hybrid_rag.testing.contracts import ExtractorContract

ONTOLOGY = load_ontology("msds")


def _passage(messages: Sequence[ChatMessage]) -> str:
    m = re.search(r"<passage>\n(.*)\n</passage>", messages[-1].content, re.S)
    assert m, "the chunk is sent as delimited data"
    return m.group(1)


def reader(messages: Sequence[ChatMessage]) -> str:
    """A stand-in model that reads 'Label: value' lines the way a model would."""
    text = _passage(messages)
    labels = {"Odour": "odor", "Vapour pressure": "vaporPressure", "Supplier": "suppliedBy"}
    facts = []
    for line in text.splitlines():
        label, _, value = line.partition(":")
        prop = labels.get(label.strip())
        if prop and value.strip():
            fact = {"property": prop, "value": value.strip(), "quote": line.strip()}
            if prop == "suppliedBy":
                fact |= {"object_label": value.strip(), "object_class": "Supplier"}
            facts.append(fact)
    return json.dumps({"product": None, "aliases": [], "facts": facts})


class TestLLMExtractorContract(ExtractorContract):
    @pytest.fixture
    def extractor(self) -> LLMExtractor:
        return LLMExtractor(FunctionLLM(reader))


def _doc(*pages: str, doc_id: str = "d") -> PreparedDocument:
    ps = tuple(Page(number=i + 1, text=t) for i, t in enumerate(pages))
    chunks = tuple(
        Chunk(chunk_id=f"{doc_id}:{p.number}", doc_id=doc_id, page=p.number, start=0,
              end=len(p.text), text=p.text)
        for p in ps
    )  # fmt: skip
    return PreparedDocument(
        doc_id=doc_id, name=f"{doc_id}.pdf", source="x", pages=ps, chunks=chunks
    )


def _run(ex: LLMExtractor, doc: PreparedDocument, ontology: Ontology = ONTOLOGY):  # type: ignore[no-untyped-def]
    return asyncio.run(ex.extract(doc, ontology=ontology))


def test_schema_admits_only_ontology_properties_and_classes() -> None:
    schema = extraction_schema(ONTOLOGY)
    item = schema["properties"]["facts"]["items"]
    assert set(item["properties"]["property"]["enum"]) == {p.name for p in ONTOLOGY.properties()}
    classes = item["properties"]["object_class"]["anyOf"][0]["enum"]
    assert set(classes) == {c.name for c in ONTOLOGY.classes()}
    assert item["additionalProperties"] is False and set(item["required"]) == set(
        item["properties"]
    )


def test_model_facts_are_added_with_quote_chunk_and_typed_quantity() -> None:
    llm = FunctionLLM(reader)
    doc = _doc(
        "Product name: Zorbix Cleaner\nOdour: faint citrus\nVapour pressure: 17 mmHg at 20 °C"
    )
    ex = _run(LLMExtractor(llm), doc)
    sent = llm.json_schemas[0]
    assert sent == extraction_messages(doc.chunks[0], ONTOLOGY)[1]
    asked = sent["properties"]["facts"]["items"]["properties"]["property"]["enum"]  # type: ignore[index]
    assert {"odor", "vaporPressure"} <= set(asked) and len(asked) <= 15  # what the chunk can touch
    by_prop = {f.prop: f for f in ex.facts}
    assert by_prop["odor"].value == "faint citrus" and by_prop["odor"].chunk_id == "d:1"
    assert by_prop["vaporPressure"].number == 17.0 and by_prop["vaporPressure"].unit == "mmHg"
    assert by_prop["vaporPressure"].quote in doc.pages[0].text


def test_unknown_property_and_made_up_quote_are_dropped_and_counted() -> None:
    reply = {
        "product": None,
        "aliases": [],
        "facts": [
            {"property": "favouriteColour", "value": "blue", "quote": "Odour: faint citrus"},
            {"property": "odor", "value": "pine", "quote": "Odour: pine fresh"},
            {"property": "odor", "value": "faint citrus", "quote": "Odour:   faint\ncitrus"},
        ],
    }
    ex = _run(LLMExtractor(FunctionLLM(lambda _m: json.dumps(reply))), _doc("Odour: faint citrus"))
    assert [(f.prop, f.value, f.quote) for f in ex.facts] == [
        ("odor", "faint citrus", "Odour: faint citrus")  # re-spaced quote mapped to the text
    ]
    assert "llm: dropped 1 fact(s): property not in the ontology" in ex.warnings
    assert "llm: dropped 1 fact(s): quote not found in its chunk" in ex.warnings


def test_offline_value_wins_over_the_models_for_the_same_property() -> None:
    doc = _doc("Product name: Zorbix Cleaner\nFlash point: -18 °C (closed cup)")
    reply = {"facts": [{"property": "flashPoint", "value": "18 °C", "quote": "-18 °C"}]}
    llm = FunctionLLM(lambda _m: json.dumps({"product": None, "aliases": [], **reply}))
    ex = _run(LLMExtractor(llm), doc)
    flash = [f for f in ex.facts if f.prop == "flashPoint"]
    assert len(flash) == 1 and flash[0].number == -18.0
    assert any("patterns already read" in w for w in ex.warnings)
    alone = _run(LLMExtractor(llm, offline=False), doc)
    assert [f.number for f in alone.facts if f.prop == "flashPoint"] == [18.0]


def test_entities_resolve_to_one_spelling_within_and_across_documents() -> None:
    ex = LLMExtractor(FunctionLLM(reader))
    one = _run(
        ex, _doc("Supplier: ACME Chemicals, Inc.", "Supplier: Acme chemicals inc", doc_id="a")
    )
    two = _run(ex, _doc("Supplier: ACME  CHEMICALS INC.", doc_id="b"))
    labels = {f.object_label for f in (*one.facts, *two.facts) if f.prop == "suppliedBy"}
    assert labels == {"ACME Chemicals, Inc."}


def test_product_and_aliases_come_from_the_model_when_patterns_found_none() -> None:
    reply = {"product": "Zorbix Cleaner", "aliases": ["ZX-100", "zorbix cleaner"], "facts": []}
    ex = _run(LLMExtractor(FunctionLLM(lambda _m: json.dumps(reply))), _doc("Keep dry."))
    assert ex.subject == "Zorbix Cleaner" and ex.aliases == ("ZX-100",)
    assert not any("no name found" in w for w in ex.warnings)


def test_chunks_run_concurrently_within_the_limit() -> None:
    running, peak = 0, 0

    async def slow(_m: Sequence[ChatMessage]) -> str:
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        await asyncio.sleep(0.02)
        running -= 1
        return '{"product": null, "aliases": [], "facts": []}'

    doc = _doc(*[f"page {i}\nOdour: faint" for i in range(12)])
    _run(LLMExtractor(FunctionLLM(slow), concurrency=3), doc)
    assert peak == 3


def test_a_bad_reply_or_a_failing_call_loses_its_chunk_never_the_document() -> None:
    odd = FunctionLLM(lambda _m: '{"facts": [{"value": 1}]}')
    ex = _run(LLMExtractor(odd), _doc("Odour: faint citrus"))
    assert any("did not fit the schema" in w for w in ex.warnings)

    def down(_m: Sequence[ChatMessage]) -> str:
        raise LLMError("model down")

    pages = ("Product name: Zorbix Cleaner\nFlash point: -18 °C", "Odour: mild", "Odour: none")
    ex = _run(LLMExtractor(FunctionLLM(down)), _doc(*pages))
    assert [f.number for f in ex.facts if f.prop == "flashPoint"] == [-18.0]  # offline facts stay
    assert "llm: dropped 3 fact(s): a chunk's model call failed (chunk skipped)" in ex.warnings

    def cut(_m: Sequence[ChatMessage]) -> Completion:
        return Completion(text='{"subject": null, "facts": [{"prop', finish_reason="length")

    ex = _run(LLMExtractor(FunctionLLM(cut)), _doc("Odour: mild"))
    assert any("cut at its token limit" in w for w in ex.warnings)
    with pytest.raises(InputError):
        LLMExtractor(FunctionLLM(reader), concurrency=0)


def test_locate_quote() -> None:
    assert locate_quote("a  b", "x a b y") == "a b"
    assert locate_quote("a b", "x a\nb y") == "a\nb"
    assert locate_quote("zz", "x a b") is None and locate_quote(" ", "x") is None


def test_ingest_with_the_llm_extractor_counts_its_calls(tmp_path: Path) -> None:
    from hybrid_rag.samples import sample_pdfs

    llm = FunctionLLM(reader)
    with HybridRAG(embedder="hashing", extractor=LLMExtractor(llm)) as rag:
        report = rag.ingest(sample_pdfs(tmp_path)[0])
        again = rag.ingest(sample_pdfs(tmp_path)[0])
    assert report.usage.llm_calls == len(llm.calls) == report.chunks > 0
    assert again.status == "skipped" and len(llm.calls) == report.chunks
