"""Sample documents shipped for the Quickstart: synthetic Safety Data Sheets as real PDFs.

The products are fictional; the sheets follow the 16-section GHS layout so the offline
extractor, the chunker and the retrievers have realistic material when no corpus is
at hand.

Example:
    >>> from hybrid_rag.samples import sample_pdfs
    >>> paths = sample_pdfs("./sample_sds")  # doctest: +SKIP
"""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

from hybrid_rag.samples._pdf import pdf_bytes, write_pdf

__all__ = ["SAMPLE_SHEETS", "pdf_bytes", "sample_pdfs", "sample_text", "write_pdf"]

_LINES_PER_PAGE = 52
_WRAP = 95


SAMPLE_SHEETS: dict[str, str] = {
    "examplon-solvent-99": "Examplon Solvent 99%",
    "demoline-glass-cleaner": "Demoline Glass Cleaner",
    "samplex-acid-descaler-10": "Samplex Acid Descaler 10%",
}
"""Sample stem -> product name; the sheet text is ``<stem>.txt`` next to this module."""


def sample_text(stem: str) -> str:
    """The text of one shipped sample sheet (e.g. ``sample_text("examplon-solvent-99")``)."""
    if stem not in SAMPLE_SHEETS:
        raise KeyError(f"unknown sample {stem!r}; known: {', '.join(SAMPLE_SHEETS)}")
    return (Path(__file__).with_name(f"{stem}.txt")).read_text(encoding="utf-8")


def _paginate(title: str, text: str) -> list[str]:
    """Wrap long lines, cut into pages and add a ``Page i of n`` footer to each."""
    lines: list[str] = []
    for line in text.splitlines():
        lines.extend(textwrap.wrap(line, _WRAP) or [""])
    chunks = [lines[i : i + _LINES_PER_PAGE] for i in range(0, len(lines), _LINES_PER_PAGE)]
    n = len(chunks)
    return [
        "\n".join([*body, "", f"{title} - Page {i} of {n}"])
        for i, body in enumerate(chunks, start=1)
    ]


def sample_pdfs(directory: str | os.PathLike[str]) -> list[Path]:
    """Write the sample Safety Data Sheets as PDF files into ``directory``.

    Args:
        directory: Target folder; created when missing. Existing samples are overwritten.

    Returns:
        The paths written, sorted by name.
    """
    target = Path(directory)
    target.mkdir(parents=True, exist_ok=True)
    paths = [
        write_pdf(
            target / f"{stem}.pdf", _paginate(title, sample_text(stem)), title=f"SDS - {title}"
        )
        for stem, title in SAMPLE_SHEETS.items()
    ]
    return sorted(paths)
