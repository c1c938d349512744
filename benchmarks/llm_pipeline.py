"""The LLM path, side by side with the original pipeline, on a fake model that sleeps L.

The fake model (a :class:`~hybrid_rag.testing.FunctionLLM`, NOT a real model) sleeps
``L`` seconds per call, then answers like a cooperative model: a routing JSON, a SPARQL
query, an extraction JSON, or a synthesis that quotes source [1]. So every row measures
our orchestration: how many calls a question costs and how they are arranged in time.

Rows, in one run:

* ``ours, template hit``: a question the offline router and a SPARQL template answer;
  the model writes the answer only (1 call).
* ``ours, LLM routing``: a question the rules are unsure about; ``LLMRouter`` reads it
  (1 call), a template runs, the model writes the answer (1 call).
* ``ours, LLM SPARQL``: a question no template fits; the model writes SPARQL (1 call,
  in parallel with the vector chain), then the answer (1 call).
* ``original``: a faithful re-implementation of the pipeline this library replaces, in
  this script only: KG chain = the model writes a query, the query runs, the model
  summarises the rows; vector chain = retrieval, the model summarises the passages (in
  parallel with the KG chain); then a synthesis call over both summaries (4 calls).
* time to first streamed token after retrieval (``Answer.timings["first_token_ms"]``).
* extraction of ``--chunks`` chunks with ``LLMExtractor`` at ``--extract-latency`` and
  concurrency 8.

Targets (issue 8): <= 2 calls on the happy path, 1 on a template hit (seed: 4); ask
latency at L = 0.3 s <= 2 L + 50 ms (seed: about 3 L); first token <= L + 50 ms after
retrieval; 200 chunks at L = 0.5 s, concurrency 8: <= 1.1 x 200 L / 8.

Usage::

    python benchmarks/llm_pipeline.py [--latency 0.3] [--extract-latency 0.5] [--chunks 200]

Writes ``benchmarks/results/llm_pipeline.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import re
import statistics
import tempfile
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from hybrid_rag import HybridRAG
from hybrid_rag._vocab import HR
from hybrid_rag.ask.llm_route import LLMRouter
from hybrid_rag.ingest.llm_extract import LLMExtractor
from hybrid_rag.models import Answer, ChatMessage, Chunk, Page, PreparedDocument
from hybrid_rag.rag import StreamDelta
from hybrid_rag.samples import sample_pdfs
from hybrid_rag.testing import FunctionLLM

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "llm_pipeline.json"
NS = "http://hybrid-rag.org/msds#"

TEMPLATE_Q = "What is the flash point of Examplon Solvent 99%?"
ROUTED_Q = "Is Examplon's solvent something that ignites readily?"
SPARQL_Q = "Tell me about dangerous goods transport"
_FLASH_SPARQL = f"SELECT ?fact WHERE {{ ?fact <{HR}property> <{NS}flashPoint> }}"


class SleepyModel:
    """A fake model: sleeps ``latency`` per call, then answers by the kind of prompt."""

    def __init__(self, latency: float) -> None:
        self.latency = latency
        self.llm = FunctionLLM(self._reply, name=f"sleepy-{latency}")

    async def _reply(self, messages: Sequence[ChatMessage]) -> str:
        await asyncio.sleep(self.latency)
        system, last = messages[0].content, messages[-1].content
        if system.startswith("You route questions"):
            return json.dumps({"intent": "lookup", "documents": ["examplon-solvent-99"],
                               "properties": ["flashPoint"], "filter_terms": [],
                               "reason": None, "standalone": None})  # fmt: skip
        if system.startswith("You write one SPARQL"):
            return f"```sparql\n{_FLASH_SPARQL}\n```"
        if system.startswith("You extract facts"):
            return '{"product": null, "aliases": [], "facts": []}'
        if last.startswith("Summarise"):
            return "Summary: " + last.splitlines()[-1][:200]
        m = re.search(r"^\[1\] (.*)$", last, re.M)
        return f"{m.group(1) if m else 'No sources'} [1]."


# --- the original pipeline, re-implemented here for comparison only ------------------------


async def original_pipeline(rag: HybridRAG, model: SleepyModel, question: str) -> int:
    """KG: write query + summarise; vector: summarise; then synthesis. Returns LLM calls."""
    llm, calls = model.llm, len(model.llm.calls)
    docs = [d.doc_id for d in rag.documents()]

    async def kg() -> str:
        done = await llm.complete([ChatMessage(role="system", content="You write one SPARQL"),
                                   ChatMessage(role="user", content=question)])  # fmt: skip
        query = re.sub(r"```(sparql)?", "", done.text).strip()
        rows = await asyncio.to_thread(lambda: rag.graph.query(query, scope=docs).rows)
        text = "\n".join(str({k: v.value for k, v in r.items()}) for r in rows[:20])
        return (await llm.complete([ChatMessage(role="user", content=f"Summarise\n{text}")])).text

    async def vector() -> str:
        with rag.override(llm=None):
            found = await rag.aask(question, mode="vector")
        text = "\n".join(p.text for p in found.passages[:5])
        return (await llm.complete([ChatMessage(role="user", content=f"Summarise\n{text}")])).text

    kg_summary, vec_summary = await asyncio.gather(kg(), vector())
    prompt = f"Question: {question}\n[1] {kg_summary}\n[2] {vec_summary}"
    await llm.complete([ChatMessage(role="user", content=prompt)])
    return len(llm.calls) - calls


# --- rows --------------------------------------------------------------------------------


async def ours(rag: HybridRAG, model: SleepyModel, question: str, *, routed: bool) -> Answer:
    router = LLMRouter(model.llm) if routed else None
    with rag.override(llm=model.llm, **({"router": router} if router else {})):
        return await rag.aask(question)


async def first_token(rag: HybridRAG, model: SleepyModel, question: str) -> dict[str, float]:
    with rag.override(llm=model.llm):
        t0 = time.perf_counter()
        first = None
        answer: Answer | None = None
        async for part in rag.astream(question):
            if isinstance(part, StreamDelta):
                first = first or time.perf_counter()
            else:
                answer = part
    assert answer is not None and first is not None
    return {
        "first_token_after_retrieval_ms": answer.timings["first_token_ms"],
        "first_token_from_call_ms": round((first - t0) * 1000, 1),
        "total_ms": round((time.perf_counter() - t0) * 1000, 1),
    }


def _row(name: str, calls: list[int], seconds: list[float], latency: float) -> dict[str, Any]:
    med = statistics.median(seconds)
    return {
        "row": name,
        "llm_calls": calls[0],
        "median_s": round(med, 3),
        "in_units_of_L": round(med / latency, 2),
        "runs": len(seconds),
    }


async def ask_rows(rag: HybridRAG, latency: float, repeats: int) -> list[dict[str, Any]]:
    model = SleepyModel(latency)
    rows = []
    cases = [
        ("ours, template hit", TEMPLATE_Q, False),
        ("ours, LLM routing", ROUTED_Q, True),
        ("ours, LLM SPARQL", SPARQL_Q, False),
    ]
    for name, q, routed in cases:
        calls, secs = [], []
        for _ in range(repeats):
            t = time.perf_counter()
            ans = await ours(rag, model, q, routed=routed)
            secs.append(time.perf_counter() - t)
            calls.append(ans.usage.llm_calls)
            assert ans.generation == "llm", (name, ans.errors)
        rows.append(_row(name, calls, secs, latency))
    for name, q in (("original, template question", TEMPLATE_Q), ("original", SPARQL_Q)):
        calls, secs = [], []
        for _ in range(repeats):
            t = time.perf_counter()
            calls.append(await original_pipeline(rag, model, q))
            secs.append(time.perf_counter() - t)
        rows.append(_row(name, calls, secs, latency))
    return rows


async def extraction_row(chunks: int, latency: float, concurrency: int) -> dict[str, Any]:
    model = SleepyModel(latency)
    texts = [f"Section {i}. Keep container closed." for i in range(chunks)]
    pages = tuple(Page(number=i + 1, text=t) for i, t in enumerate(texts))
    doc = PreparedDocument(
        doc_id="bench", name="bench.txt", source="bench.txt", pages=pages,
        chunks=tuple(Chunk(chunk_id=f"bench#{p.number}", doc_id="bench", page=p.number, start=0,
                           end=len(p.text), text=p.text) for p in pages),
    )  # fmt: skip
    rag = HybridRAG(embedder="hashing")
    t = time.perf_counter()
    await LLMExtractor(model.llm, concurrency=concurrency).extract(doc, ontology=rag.ontology)
    wall = time.perf_counter() - t
    bound = 1.1 * chunks * latency / concurrency
    return {
        "row": f"extraction of {chunks} chunks, L={latency}s, concurrency {concurrency}",
        "llm_calls": len(model.llm.calls),
        "wall_s": round(wall, 3),
        "target_s": round(bound, 3),
        "ideal_s": round(chunks * latency / concurrency, 3),
    }


async def main_async(args: argparse.Namespace) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp, HybridRAG(embedder="hashing") as rag:
        await rag.aingest_many(sample_pdfs(Path(tmp)))
        rows = await ask_rows(rag, args.latency, args.repeats)
        stream = [await first_token(rag, SleepyModel(args.latency), TEMPLATE_Q)
                  for _ in range(args.repeats)]  # fmt: skip
    ttft = statistics.median(s["first_token_after_retrieval_ms"] for s in stream)
    extraction = await extraction_row(args.chunks, args.extract_latency, 8)
    return {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": f"{platform.machine()}, Python {platform.python_version()}",
        "latency_s": args.latency,
        "ask": rows,
        "stream": {"runs": stream, "median_first_token_after_retrieval_ms": ttft},
        "extraction": extraction,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.3, help="L per call for ask (s)")
    parser.add_argument("--extract-latency", type=float, default=0.5, help="L for extraction")
    parser.add_argument("--chunks", type=int, default=200, help="chunks to extract")
    parser.add_argument("--repeats", type=int, default=5, help="runs per ask row")
    args = parser.parse_args()
    result = asyncio.run(main_async(args))
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n")
    print(json.dumps(result, indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()
