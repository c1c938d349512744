"""Prometheus metrics of one service instance (its own registry, so apps never collide)."""

from __future__ import annotations

from collections.abc import Callable

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

from hybrid_rag.models import Answer, IngestReport

__all__ = ["Metrics"]

_LATENCY = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)


class Metrics:
    """Counters and histograms for documents, ingests, asks, chain errors and LLM usage.

    Args:
        documents: called at scrape time for the number of documents in the catalog.
    """

    def __init__(self, documents: Callable[[], float]) -> None:
        self.registry = r = CollectorRegistry()
        Gauge("hybrid_rag_documents", "Documents in the catalog", registry=r).set_function(
            documents
        )
        self.ingests = Counter(
            "hybrid_rag_ingests", "Ingested files by status", ["status"], registry=r
        )
        self.ingest_seconds = Histogram(
            "hybrid_rag_ingest_seconds", "Ingest time per file", buckets=_LATENCY, registry=r
        )
        self.asks = Counter(
            "hybrid_rag_asks", "Questions by route and mode", ["route", "mode"], registry=r
        )
        self.ask_seconds = Histogram(
            "hybrid_rag_ask_seconds", "Time per question", ["route"], buckets=_LATENCY, registry=r
        )
        self.chain_errors = Counter(
            "hybrid_rag_chain_errors",
            "Chain errors reported in answers",
            ["chain", "kind"],
            registry=r,
        )
        self.llm_calls = Counter("hybrid_rag_llm_calls", "LLM calls", registry=r)
        self.llm_tokens = Counter("hybrid_rag_llm_tokens", "LLM tokens", ["kind"], registry=r)
        self.http_errors = Counter(
            "hybrid_rag_http_errors", "Requests answered with an error", ["status"], registry=r
        )

    def asked(self, route: str, answer: Answer, seconds: float) -> None:
        """Record one answered question."""
        self.asks.labels(route=route, mode=answer.mode).inc()
        self.ask_seconds.labels(route=route).observe(seconds)
        for e in answer.errors:
            self.chain_errors.labels(chain=e.chain, kind=e.kind).inc()
        self._usage(
            answer.usage.llm_calls, answer.usage.prompt_tokens, answer.usage.completion_tokens
        )

    def ingested(self, report: IngestReport, seconds: float) -> None:
        """Record one ingested (or failed) file."""
        self.ingests.labels(status=report.status).inc()
        self.ingest_seconds.observe(seconds)
        self._usage(
            report.usage.llm_calls, report.usage.prompt_tokens, report.usage.completion_tokens
        )

    def _usage(self, calls: int, prompt: int, completion: int) -> None:
        self.llm_calls.inc(calls)
        self.llm_tokens.labels(kind="prompt").inc(prompt)
        self.llm_tokens.labels(kind="completion").inc(completion)

    def render(self) -> bytes:
        """The Prometheus text exposition of every metric."""
        return generate_latest(self.registry)
