"""Rich rendering for the ``hybrid-rag`` command: progress, tables, answers.

Every piece of user or document text goes through ``rich.text.Text`` (never markup),
so a ``[1]`` in a sheet is printed as is.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from types import TracebackType
from typing import Any

from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.measure import Measurement
from rich.panel import Panel
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text

from hybrid_rag._display import continues_page, page_label, passage_excerpt
from hybrid_rag._shapes import AnswerShape as Answer
from hybrid_rag._shapes import DocumentShape as DocumentInfo
from hybrid_rag._shapes import ReportShape as IngestReport

__all__ = [
    "IngestProgress",
    "answer_view",
    "documents_table",
    "eval_table",
    "failures_table",
    "ingest_summary",
    "report_view",
]

_STATUSES = ("ingested", "replaced", "skipped", "failed")
_COUNTS = (
    "{task.fields[pages]} pages · {task.fields[chunks]} chunks · {task.fields[triples]} triples"
)


class IngestProgress:
    """Per-document ingest progress: a live bar on a terminal, plain lines otherwise.

    Args:
        console: Where to draw.
        total: Number of documents expected.
        quiet: Off a terminal, print only failures (used by ``eval``).
    """

    def __init__(self, console: Console, total: int, *, quiet: bool = False) -> None:
        self.console, self.total, self.quiet = console, total, quiet
        self.done = 0
        self.counts: Counter[str] = Counter()
        self._progress: Progress | None = None
        self._task: TaskID | None = None

    def __enter__(self) -> IngestProgress:
        if self.console.is_terminal:
            self._progress = Progress(
                SpinnerColumn(),
                TextColumn("[bold]ingest"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn(_COUNTS),
                TextColumn("[red]{task.fields[failed]} failed"),
                TimeElapsedColumn(),
                console=self.console,
                transient=False,
            )
            self._progress.start()
            self._task = self._progress.add_task(
                "ingest", total=self.total, pages=0, chunks=0, triples=0, failed=0
            )
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._progress is not None:
            self._progress.stop()

    def update(self, report: IngestReport) -> None:
        """Record one finished document (the ``progress`` callback of ``ingest_many``)."""
        self.done += 1
        for key, value in (("pages", report.pages), ("chunks", report.chunks)):
            self.counts[key] += value
        self.counts["triples"] += report.triples
        self.counts[report.status] += 1
        if self._progress is not None and self._task is not None:
            self._progress.update(
                self._task,
                advance=1,
                pages=self.counts["pages"],
                chunks=self.counts["chunks"],
                triples=self.counts["triples"],
                failed=self.counts["failed"],
            )
        elif not self.quiet or report.status == "failed":
            self.console.print(
                _plain_line(self.done, self.total, report), highlight=False, soft_wrap=True
            )


def _plain_line(done: int, total: int, r: IngestReport) -> Text:
    width = len(str(total))
    head = f"[{done:>{width}}/{total}] {r.status:<8} "
    if r.status == "failed":
        return Text(f"{head}{r.source}: {r.error}")
    secs = r.timings.get("total_ms", 0.0) / 1000
    return Text(
        f"{head}{r.doc_id}: {r.pages} pages, {r.chunks} chunks, {r.triples} triples"
        + (f" ({secs:.1f} s)" if secs else "")
    )


def ingest_summary(reports: Sequence[IngestReport], seconds: float) -> Table:
    """The end-of-ingest table: documents, pages, chunks and triples per status."""
    table = Table(title=f"Ingest summary ({seconds:.1f} s)", title_justify="left")
    for col in ("status", "documents", "pages", "chunks", "triples"):
        table.add_column(col, justify="left" if col == "status" else "right")
    for status in _STATUSES:
        rows = [r for r in reports if r.status == status]
        sums = [sum(getattr(r, k) for r in rows) for k in ("pages", "chunks", "triples")]
        style = "red" if status == "failed" and rows else None
        table.add_row(status, str(len(rows)), *map(str, sums), style=style)
    table.add_row(
        "total",
        str(len(reports)),
        *(str(sum(getattr(r, k) for r in reports)) for k in ("pages", "chunks", "triples")),
        style="bold",
    )
    return table


def failures_table(reports: Sequence[IngestReport]) -> Table | None:
    """One row per failed document with its reason; ``None`` when nothing failed."""
    failed = [r for r in reports if r.status == "failed"]
    if not failed:
        return None
    table = Table(title="Failed documents", title_justify="left", title_style="red")
    table.add_column("file")
    table.add_column("reason")
    for r in failed:
        table.add_row(Text(r.source), Text(r.error or "unknown error"))
    return table


def report_view(report: IngestReport) -> Table:
    """One ingest as a two-column table (the ``rich`` view of ``IngestReport``)."""
    table = Table(title=f"Ingest {report.status}", title_justify="left", show_header=False)
    table.add_column("field", style="dim")
    table.add_column("value", overflow="fold")
    counts = f"{report.pages} pages · {report.chunks} chunks · {report.triples} triples"
    for key, value in (("document", report.doc_id), ("source", report.source), ("counts", counts)):
        table.add_row(key, Text(value))
    for w in report.warnings:
        table.add_row("warning", Text(w, style="yellow"))
    if report.error:
        table.add_row("error", Text(report.error, style="red"))
    return table


_DOC_COLUMNS = ("doc id", "title", "pages", "chunks", "triples", "updated", "source")


class _DocumentsView:
    """The catalog as a table where it fits the terminal, else one short block per document.

    Columns are dropped from the right (source, then update time) before the layout
    becomes a list; doc ids are never cut or folded, so they can be copied, and only titles
    wrap (at spaces).
    """

    def __init__(self, docs: Sequence[DocumentInfo]) -> None:
        self.docs = docs

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        wide = options.update_width(10_000)  # a table's natural width, not clamped
        for n in (7, 6, 5):
            table = self._table(_DOC_COLUMNS[:n])
            need = Measurement.get(console, wide, table)  # titles may wrap at words (5)
            if (need.minimum if n == 5 else need.maximum) <= options.max_width:
                yield table
                return
        yield self._blocks()

    def _table(self, columns: Sequence[str]) -> Table:
        table = Table(title=f"{len(self.docs)} documents", title_justify="left")
        for col in columns:
            right = col in ("pages", "chunks", "triples")
            table.add_column(col, justify="right" if right else "left", no_wrap=col == "doc id")
        for d in self.docs:
            row = (
                Text(d.doc_id),
                Text(d.title or ""),
                str(d.pages),
                str(d.chunks),
                str(d.triples),
                d.updated_at.strftime("%Y-%m-%d %H:%M"),
                Text(d.source),
            )
            table.add_row(*row[: len(columns)])
        return table

    def _blocks(self) -> Group:
        lines: list[Text] = [Text(f"{len(self.docs)} documents", style="italic")]
        for d in self.docs:
            counts = f"{d.pages} pages, {d.chunks} chunks, {d.triples} triples"
            lines.append(Text(d.doc_id, style="bold"))
            if d.title:
                lines.append(Text(f"  {d.title}"))
            lines.append(Text(f"  {counts}, updated {d.updated_at:%Y-%m-%d %H:%M}", style="dim"))
            lines.append(Text(f"  {d.source}", style="dim"))
        return Group(*lines)


def documents_table(docs: Sequence[DocumentInfo]) -> RenderableType:
    """The catalog: a table as wide as the terminal allows, else one block per document."""
    return _DocumentsView(docs)


def _facts_table(answer: Answer, limit: int) -> Table:
    table = Table(title=f"Facts ({len(answer.facts)})", title_justify="left")
    for col in ("#", "product", "property", "value", "doc", "page", "quote"):
        table.add_column(col, overflow="fold")
    for i, f in enumerate(answer.facts[:limit], start=1):
        value = f.value if f.status == "stated" else f"{f.value} (unavailable)"
        table.add_row(
            str(i),
            Text(f.subject),
            Text(f.predicate_label),
            Text(value),
            Text(f.doc_id),
            page_label(f.evidence.page, f.evidence.ocr),
            Text(f.evidence.quote),
        )
    if len(answer.facts) > limit:
        table.caption = f"{len(answer.facts) - limit} more; --json shows all"
    return table


def _passages_table(answer: Answer, width: int) -> Table:
    table = Table(title=f"Passages ({len(answer.passages)})", title_justify="left")
    for col in ("#", "score", "doc", "page", "ranks", "text"):
        table.add_column(col, overflow="fold")
    for i, p in enumerate(answer.passages, start=1):
        text = passage_excerpt(p.text, width, continued=continues_page(p.chunk_id))
        ranks = " ".join(f"{k}:{v}" for k, v in sorted(p.ranks.items()))
        table.add_row(
            str(i),
            f"{p.score:.4f}",
            Text(p.doc_id),
            page_label(p.page, p.ocr),
            ranks,
            Text(text),
        )
    return table


def _sparql_view(answer: Answer) -> list[Any]:
    parts: list[Any] = [Text("SPARQL", style="bold")]
    for i, s in enumerate(answer.sparql, start=1):
        head = f"{i}. {s.origin}, {s.rows} rows" + (f", error: {s.error}" if s.error else "")
        parts += [Text(head, style="red" if s.error else "dim"), Syntax(s.query, "sparql")]
    return parts


def _footer(answer: Answer) -> Text:
    u = answer.usage
    usage = (
        f"usage: {u.llm_calls} LLM calls, {u.prompt_tokens}+{u.completion_tokens} tokens, "
        f"{u.embedding_calls} embedding calls"
    )
    timings = ", ".join(f"{k.removesuffix('_ms')} {v:.1f} ms" for k, v in answer.timings.items())
    return Text(f"{usage}\ntimings: {timings}", style="dim")


def answer_view(answer: Answer, *, max_facts: int = 20, passage_chars: int = 240) -> Group:
    """The full human view of an ``Answer``."""
    text = answer.text or "No answer: neither chain found support in the documents in scope."
    scope = ", ".join(answer.scope) if answer.scope is not None else "all documents"
    meta = (
        f"sources: {', '.join(answer.sources) or 'none'} · mode: {answer.mode} · "
        f"generation: {answer.generation} · scope: {scope}"
    )
    parts: list[Any] = [
        Panel(Text(text), title=Text(answer.question), title_align="left"),
        Text(meta, style="dim"),
    ]
    if answer.facts:
        parts.append(_facts_table(answer, max_facts))
    if answer.passages:
        parts.append(_passages_table(answer, passage_chars))
    if answer.sparql:
        parts += _sparql_view(answer)
    for e in answer.errors:
        parts.append(Text(f"{e.chain} chain {e.kind}: {e.message}", style="yellow"))
    parts.append(_footer(answer))
    return Group(*parts)


_SUMMARY_ROWS = {
    "overall": "overall",
    "wrong": "wrong (asserts a false answer)",
    "recall": "context recall",
    "precision": "precision (documents named)",
    "doc_recall": "recall (gold documents named)",
}


def eval_table(summary: Mapping[str, Mapping[str, float]], latency: Mapping[str, float]) -> Table:
    """Accuracy by question type (rows) and mode (columns), then overall, wrong (answers
    asserting something false), context recall, the collection questions' precision and
    document recall (where there are any), and median latency."""
    modes = list(summary)
    every = {k for v in summary.values() for k in v}
    keys = sorted(every - set(_SUMMARY_ROWS))
    table = Table(title="Answer quality", title_justify="left")
    table.add_column("question type")
    for m in modes:
        table.add_column(m, justify="right")
    for key in [*keys, *(k for k in _SUMMARY_ROWS if k in every)]:
        style = "bold" if key == "overall" else None
        label = _SUMMARY_ROWS.get(key, key)
        table.add_row(label, *(f"{summary[m].get(key, 0.0):.3f}" for m in modes), style=style)
    table.add_row("p50 latency ms", *(f"{latency.get(m, 0.0):.1f}" for m in modes), style="dim")
    return table
