"""Pure formatting for notebooks and reprs: HTML fragments and short one-line summaries.

Used by the display methods of ``hybrid_rag.models`` (``_repr_html_``, ``__repr__``).
Every piece of user or document text goes through ``html.escape``; nothing here does
I/O or imports anything heavier than the standard library.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from html import escape
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hybrid_rag.models import Answer, DocumentInfo, Evidence, IngestReport, Usage

__all__ = [
    "NO_ANSWER",
    "answer_citations",
    "answer_html",
    "answer_repr",
    "citations_block",
    "cited_text",
    "documents_html",
    "documents_repr",
    "page_label",
    "report_html",
    "report_repr",
    "shorten",
]

_STYLE = (
    "<style>.hrag table{border-collapse:collapse;margin:4px 0}"
    ".hrag td,.hrag th{border:1px solid #ccc;padding:2px 6px;text-align:left;"
    "vertical-align:top}.hrag .dim{color:#777}.hrag pre{white-space:pre-wrap}</style>"
)


def shorten(text: str, width: int) -> str:
    """``text`` on one line, cut to ``width`` characters with an ellipsis."""
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _table(head: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    th = "".join(f"<th>{escape(h)}</th>" for h in head)
    body = "".join(
        "<tr>" + "".join(f"<td>{escape(str(c))}</td>" for c in row) + "</tr>" for row in rows
    )
    return f"<table><thead><tr>{th}</tr></thead><tbody>{body}</tbody></table>"


def _fold(title: str, inner: str, *, count: int) -> str:
    return f"<details><summary>{escape(title)} ({count})</summary>{inner}</details>"


def _wrap(inner: str) -> str:
    return f'{_STYLE}<div class="hrag">{inner}</div>'


def _usage_line(u: Usage) -> str:
    return (
        f"{u.llm_calls} LLM calls, {u.prompt_tokens}+{u.completion_tokens} tokens, "
        f"{u.embedding_calls} embedding calls, {u.cache_hits} cache hits"
    )


def _timings_line(timings: Mapping[str, float]) -> str:
    return ", ".join(f"{k.removesuffix('_ms')} {v:.1f} ms" for k, v in timings.items())


def answer_citations(answer: Answer) -> list[Evidence]:
    """The answer's citations; for answers without them, the evidence of its facts."""
    if answer.citations:
        return list(answer.citations)
    return list(dict.fromkeys(f.evidence for f in answer.facts))


NO_ANSWER = "The documents in scope do not answer this question."
OCR_MARK = " (read by OCR)"
"""Follows the page of a citation whose quote was read from a page image by OCR."""


def page_label(page: int, ocr: bool) -> str:
    """``"4"``, or ``"4 (read by OCR)"`` for a page whose text came from OCR."""
    return f"{page}{OCR_MARK if ocr else ''}"


def citations_block(answer: Answer) -> str:
    """``Citations:`` and one numbered line per citation; ``""`` when there are none."""
    cites = answer_citations(answer)
    lines = [
        f'[{i}] {c.doc_id}, page {page_label(c.page, c.ocr)}: "{c.quote}"'
        for i, c in enumerate(cites, 1)
    ]
    return "\n".join(["Citations:", *lines]) if lines else ""


def cited_text(answer: Answer) -> str:
    """The answer text (or ``NO_ANSWER``) followed by its numbered citations."""
    block = citations_block(answer)
    return (answer.text or NO_ANSWER) + (f"\n\n{block}" if block else "")


def answer_html(answer: Answer) -> str:
    """The answer, a citations table, then facts, passages and SPARQL folded."""
    text = answer.text or "No answer: neither chain found support in the documents in scope."
    scope = ", ".join(answer.scope) if answer.scope is not None else "all documents"
    parts = [
        f"<p><b>{escape(answer.question)}</b></p>",
        f"<p>{escape(text)}</p>",
        f'<p class="dim">sources: {escape(", ".join(answer.sources) or "none")} · mode: '
        f"{escape(answer.mode)} · generation: {escape(answer.generation)} · "
        f"scope: {escape(scope)}</p>",
    ]
    cites = answer_citations(answer)
    if cites:
        parts.append(
            _table(
                ("document", "page", "quote"),
                ((c.doc_id, page_label(c.page, c.ocr), c.quote) for c in cites),
            )
        )
    parts += _answer_details(answer)
    for e in answer.errors:
        parts.append(f"<p>⚠ {escape(e.chain)} chain {escape(e.kind)}: {escape(e.message)}</p>")
    parts.append(
        f'<p class="dim">usage: {escape(_usage_line(answer.usage))}<br>'
        f"timings: {escape(_timings_line(answer.timings))}</p>"
    )
    return _wrap("".join(parts))


def _answer_details(answer: Answer) -> list[str]:
    out: list[str] = []
    if answer.facts:
        rows = (
            (
                f.subject,
                f.predicate_label,
                f.value,
                f.status,
                f.doc_id,
                page_label(f.evidence.page, f.evidence.ocr),
            )
            for f in answer.facts
        )
        head = ("product", "property", "value", "status", "document", "page")
        out.append(_fold("Facts", _table(head, rows), count=len(answer.facts)))
    if answer.passages:
        rows2 = (
            (f"{p.score:.4f}", p.doc_id, page_label(p.page, p.ocr), shorten(p.text, 400))
            for p in answer.passages
        )
        table = _table(("score", "document", "page", "text"), rows2)
        out.append(_fold("Passages", table, count=len(answer.passages)))
    if answer.sparql:
        inner = "".join(
            f'<p class="dim">{escape(s.origin)}, {s.rows} rows'
            f"{escape(', error: ' + s.error) if s.error else ''}</p><pre>{escape(s.query)}</pre>"
            for s in answer.sparql
        )
        out.append(_fold("SPARQL", inner, count=len(answer.sparql)))
    return out


def answer_repr(answer: Answer) -> str:
    """A one-line ``repr`` of an ``Answer`` (the full model is ``model_dump()``)."""
    text = "None" if answer.text is None else repr(shorten(answer.text, 80))
    return (
        f"Answer(question={shorten(answer.question, 60)!r}, text={text}, "
        f"sources={answer.sources!r}, facts={len(answer.facts)}, "
        f"passages={len(answer.passages)}, errors={len(answer.errors)})"
    )


def report_html(report: IngestReport) -> str:
    """One ingest: status, counts, warnings, error, timings and usage."""
    rows = [
        ("document", report.doc_id or "—"),
        ("source", report.source),
        ("status", report.status),
        (
            "pages / chunks / triples / facts",
            f"{report.pages} / {report.chunks} / {report.triples} / {report.facts}",
        ),
        ("content hash", report.content_hash[:16]),
    ]
    if report.error:
        rows.append(("error", report.error))
    parts = [_table(("", ""), rows)]
    if report.warnings:
        items = "".join(f"<li>{escape(w)}</li>" for w in report.warnings)
        parts.append(_fold("Warnings", f"<ul>{items}</ul>", count=len(report.warnings)))
    parts.append(
        f'<p class="dim">usage: {escape(_usage_line(report.usage))}<br>'
        f"timings: {escape(_timings_line(report.timings))}</p>"
    )
    return _wrap("".join(parts))


def report_repr(report: IngestReport) -> str:
    """A one-line ``repr`` of an ``IngestReport``."""
    tail = f", error={shorten(report.error, 80)!r}" if report.error else ""
    return (
        f"IngestReport(doc_id={report.doc_id!r}, status={report.status!r}, "
        f"pages={report.pages}, chunks={report.chunks}, triples={report.triples}{tail})"
    )


def documents_html(docs: Sequence[DocumentInfo]) -> str:
    """The catalog as a table: id, title, counts, last update and source."""
    head = ("doc id", "title", "pages", "chunks", "triples", "updated", "source")
    rows = (
        (
            d.doc_id,
            d.title or "",
            d.pages,
            d.chunks,
            d.triples,
            d.updated_at.strftime("%Y-%m-%d %H:%M"),
            d.source,
        )
        for d in docs
    )
    return _wrap(f"<p><b>{len(docs)} documents</b></p>" + _table(head, rows))


def documents_repr(docs: Sequence[DocumentInfo]) -> str:
    """``DocumentList([...ids...])``, with at most 10 ids."""
    ids = [d.doc_id for d in docs[:10]]
    more = f", … {len(docs) - 10} more" if len(docs) > 10 else ""
    return f"DocumentList({len(docs)} documents: {', '.join(ids)}{more})"
