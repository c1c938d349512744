"""Pure formatting for notebooks and reprs: HTML fragments and short one-line summaries.

Used by the display methods of ``hybrid_rag.models`` (``_repr_html_``, ``__repr__``).
Every piece of user or document text goes through ``html.escape``; nothing here does
I/O or imports anything heavier than the standard library.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from html import escape
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from hybrid_rag._shapes import AnswerShape as Answer
    from hybrid_rag._shapes import DocumentShape as DocumentInfo
    from hybrid_rag._shapes import EvidenceShape as Evidence
    from hybrid_rag._shapes import ReportShape as IngestReport
    from hybrid_rag._shapes import UsageShape as Usage

__all__ = [
    "NO_ANSWER",
    "answer_citations",
    "answer_html",
    "answer_repr",
    "citations_block",
    "cited_text",
    "continues_page",
    "documents_html",
    "documents_repr",
    "page_label",
    "passage_excerpt",
    "report_html",
    "report_repr",
    "shorten",
]

_STYLE = (
    "<style>.hrag .dim{color:#777}.hrag pre{white-space:pre-wrap;text-align:left}"
    ".hrag details{text-align:left}</style>"
)
# Inline styles on every cell: notebook front ends style output tables with selectors that
# beat a class rule (JupyterLab right-aligns cells with `:not(.jp-RenderedMarkdown)
# .jp-RenderedHTMLCommon td`), but no stylesheet rule beats an inline style.
_TABLE_STYLE = "border-collapse:collapse;margin:4px 0"
_CELL = "border:1px solid #ccc;padding:2px 6px;vertical-align:top;line-height:1.4;"
_CELL_STYLE = {
    "text": _CELL + "text-align:left;white-space:normal",
    "num": _CELL + "text-align:right;white-space:nowrap",
    "id": _CELL + "text-align:left;white-space:normal;overflow-wrap:normal;word-break:normal",
}
Kind = Literal["text", "num", "id"]


def shorten(text: str, width: int) -> str:
    """``text`` on one line, cut at a word boundary to at most ``width`` characters (``…``)."""
    flat = " ".join(text.split())
    if len(flat) <= width:
        return flat
    cut = flat[: width - 1]
    head, space, _tail = cut.rpartition(" ")
    return (head if space and len(head) >= width // 2 else cut).rstrip(" ,;:") + "…"


def passage_excerpt(text: str, width: int = 400, *, continued: bool = True) -> str:
    """A passage for reading, cut at a word boundary to ``width`` characters.

    A chunk that continues its page (``continued``: it starts in the overlap with the
    chunk before it, usually mid-sentence) is shown from its first sentence or line start
    within ``_SKIP`` characters, and ``…`` marks what was skipped; ``Passage.text`` keeps
    every character.
    """
    text = text.strip()
    if continued and text and not _starts_a_sentence(text):
        found = _SENTENCE_START.search(text, 0, min(len(text), _SKIP))
        text = "… " + (text[found.end() :] if found else text)
    return shorten(text, width)


def continues_page(chunk_id: str) -> bool:
    """Whether a chunk id names a chunk after the first of its page (``doc#p3c2``)."""
    m = re.search(r"#p\d+c(\d+)$", chunk_id)
    return m is None or m.group(1) != "0"


_SKIP = 160  # about the chunk overlap: what is skipped is also in the chunk before
# the end of a sentence, or a line break, then what starts a sentence or a heading
_SENTENCE_START = re.compile(r"(?:[.!?;]\s+|\s*\n\s*)(?=[A-Z0-9(\"“‘'•])")


def _starts_a_sentence(text: str) -> bool:
    first = text[0]
    return first.isupper() or first.isdigit() or first in "(\"“‘'•-–*#"


def _id_html(value: str) -> str:
    """An id (or path) that wraps only after its separators (``-``, ``_``, ``.``, ``/``),
    never mid-word."""
    return re.sub(r"([-_./])", r"\1<wbr>", escape(value))


def _cell(tag: str, value: object, kind: Kind) -> str:
    inner = _id_html(str(value)) if kind == "id" else escape(str(value))
    return f'<{tag} style="{_CELL_STYLE[kind]}">{inner}</{tag}>'


def _table(head: Sequence[tuple[str, Kind]], rows: Iterable[Sequence[object]]) -> str:
    th = "".join(_cell("th", h, "num" if k == "num" else "text") for h, k in head)
    body = "".join(
        "<tr>" + "".join(_cell("td", c, k) for c, (_h, k) in zip(row, head, strict=True)) + "</tr>"
        for row in rows
    )
    return (
        f'<table style="{_TABLE_STYLE}"><thead><tr>{th}</tr></thead><tbody>{body}</tbody></table>'
    )


def _fields(rows: Iterable[tuple[str, object, Kind]]) -> str:
    """A two-column table of labelled values: the labels are row headers (no header row)."""
    body = "".join(
        f"<tr>{_cell('th', label, 'text')}{_cell('td', value, kind)}</tr>"
        for label, value, kind in rows
    )
    return f'<table style="{_TABLE_STYLE}"><tbody>{body}</tbody></table>'


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
        head: tuple[tuple[str, Kind], ...] = (
            ("document", "id"),
            ("page", "num"),
            ("quote", "text"),
        )
        rows = ((c.doc_id, page_label(c.page, c.ocr), c.quote) for c in cites)
        parts.append(_table(head, rows))
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
        head: tuple[tuple[str, Kind], ...] = (
            ("subject", "text"), ("property", "text"), ("value", "text"), ("status", "text"),
            ("document", "id"), ("page", "num"),
        )  # fmt: skip
        out.append(_fold("Facts", _table(head, rows), count=len(answer.facts)))
    if answer.passages:
        rows2 = (
            (f"{p.score:.4f}", p.doc_id, page_label(p.page, p.ocr), passage_excerpt(p.text))
            for p in answer.passages
        )
        head = (("score", "num"), ("document", "id"), ("page", "num"), ("text", "text"))
        table = _table(head, rows2)
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
    rows: list[tuple[str, object, Kind]] = [
        ("document", report.doc_id or "—", "id"),
        ("source", report.source, "id"),
        ("status", report.status, "text"),
        (
            "pages / chunks / triples / facts",
            f"{report.pages} / {report.chunks} / {report.triples} / {report.facts}",
            "text",
        ),
        ("content hash", report.content_hash[:16], "text"),
    ]
    if report.error:
        rows.append(("error", report.error, "text"))
    parts = [_fields(rows)]
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
    head: tuple[tuple[str, Kind], ...] = (
        ("doc id", "id"), ("title", "text"), ("pages", "num"), ("chunks", "num"),
        ("triples", "num"), ("updated", "num"), ("source", "id"),
    )  # fmt: skip
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
