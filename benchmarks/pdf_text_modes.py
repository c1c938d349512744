"""PDF text modes compared: do labels and their values stay together?

    python benchmarks/pdf_text_modes.py --corpus ../shared/corpus/sds-more \
        --qa ../shared/eval/qa-public-3.jsonl

On every page that holds a gold evidence quote of the set (questions on sheets with a text
layer), each mode's page text is searched for the quote:
- ``found``: the quote occurs after whitespace normalisation (every run of spaces and
  line breaks read as one space);
- ``on_one_line``: the quote occurs inside a single line (spaces within the line
  normalised): a label and its value printed side by side came out side by side.
- ``on_one_line_squashed``: the same with spaces and punctuation ignored on both sides
  (pypdf's "li quid" and another mode's "liquid" both pass; a value printed before its
  label, as pypdf reads some tables, still fails);
- ``label_value_on_one_line``: a mode-neutral check (the gold quotes were cut from pypdf's
  text, so the two above favour pypdf by construction): for fact questions whose quote
  holds an accepted answer, the words of the quote before that answer (its label) and the
  answer occur, in that order, on one line of the mode's text (case, Unicode forms and
  spacing normalised).
Per mode also the mean milliseconds per page (open + extract one page). Results per
maker and overall.

Modes: ``pypdf`` (``extract_text()``, what ingest stores), ``pypdf-layout``
(``extract_text(extraction_mode="layout")``), ``pdfplumber`` (``extract_text()``: words
grouped into lines by their coordinates), ``pdfplumber-layout`` (``layout=True``),
``pdfium`` (``pypdfium2`` text page).
"""

from __future__ import annotations

import argparse
import io
import json
import logging
import re
import sys
import time
import unicodedata
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _bench import meta, write_json


def _args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--corpus", type=Path, default=Path("../shared/corpus/sds-more"))
    p.add_argument("--qa", type=Path, default=Path("../shared/eval/qa-public-3.jsonl"))
    p.add_argument("--modes", default="pypdf,pypdf-layout,pdfplumber,pdfplumber-layout,pdfium")
    p.add_argument("--out", type=Path, default=Path("benchmarks/results/pdf_text_modes.json"))
    return p.parse_args()


def _ws(s: str) -> str:
    return re.sub(r"\s+", " ", s).strip()


def _pypdf(data: bytes, page: int) -> str:
    from pypdf import PdfReader

    return PdfReader(io.BytesIO(data)).pages[page - 1].extract_text() or ""


def _pypdf_layout(data: bytes, page: int) -> str:
    from pypdf import PdfReader

    return PdfReader(io.BytesIO(data)).pages[page - 1].extract_text(extraction_mode="layout") or ""


def _plumber(layout: bool) -> Callable[[bytes, int], str]:
    def read(data: bytes, page: int) -> str:
        import pdfplumber

        with pdfplumber.open(io.BytesIO(data)) as pdf:
            return pdf.pages[page - 1].extract_text(layout=layout) or ""

    return read


def _pdfium(data: bytes, page: int) -> str:
    import pypdfium2 as pdfium

    doc = pdfium.PdfDocument(data)
    try:
        return str(doc[page - 1].get_textpage().get_text_bounded())
    finally:
        doc.close()


MODES: dict[str, Callable[[bytes, int], str]] = {
    "pypdf": _pypdf,
    "pypdf-layout": _pypdf_layout,
    "pdfplumber": _plumber(False),
    "pdfplumber-layout": _plumber(True),
    "pdfium": _pdfium,
}


def _loose(s: str) -> str:
    s = unicodedata.normalize("NFKC", s).lower()
    s = re.sub(r"\s*°\s*", "°", s)
    return re.sub(r"\s+", " ", s).strip()


def _squash(s: str) -> str:
    return "".join(ch for ch in _loose(s) if ch.isalnum())


def _pair(quote: str, accept: list[str]) -> tuple[list[str], str] | None:
    """(label words, answer) when an accepted answer occurs in the quote after a label."""
    q = _loose(quote)
    for ans in sorted((_loose(x) for x in accept), key=len, reverse=True):
        m = re.search(r"(?<![\w])" + re.escape(ans) + r"(?![\w])", q) if ans else None
        i = m.start() if m else -1
        label = re.findall(r"[a-z]{2,}", q[:i]) if i > 0 else []
        if label:
            return label, ans
    return None


def _together(pair: tuple[list[str], str], text: str) -> bool:
    label, ans = pair
    pat = re.compile(r"\b" + r"\b.*?\b".join(map(re.escape, label)) + r"\b.*?" + re.escape(ans))
    return any(pat.search(_loose(ln)) for ln in text.splitlines())


Gold = dict[tuple[str, int], list[tuple[str, tuple[list[str], str] | None]]]


def _gold(qa: Path) -> Gold:
    pages: Gold = defaultdict(list)
    for line in qa.read_text().splitlines():
        if not line.strip():
            continue
        q = json.loads(line)
        if q.get("scanned"):
            continue
        fact = q["type"] in ("fact", "multi_fact")
        for ev in q.get("evidence", []):
            pair = _pair(ev["quote"], q.get("accept", [])) if fact else None
            pages[(ev["doc"], int(ev["page"]))].append((ev["quote"], pair))
    return pages


def main() -> None:
    a = _args()
    logging.getLogger("pypdf").setLevel(logging.ERROR)
    logging.getLogger("pdfminer").setLevel(logging.ERROR)
    gold = _gold(a.qa)
    results: dict[str, Any] = {}
    for mode in a.modes.split(","):
        fn = MODES[mode]
        per_maker: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0, 0, 0])
        seconds = 0.0
        for (doc, page), quotes in sorted(gold.items()):
            data = (a.corpus / doc).read_bytes()
            t = time.perf_counter()
            text = fn(data, page)
            seconds += time.perf_counter() - t
            flat, lines = _ws(text), [_ws(ln) for ln in text.splitlines()]
            squashed = [_squash(ln) for ln in text.splitlines()]
            row = per_maker[doc.split("/")[0]]
            for quote, pair in quotes:
                q = _ws(quote)
                row[0] += 1
                row[1] += q in flat
                row[2] += any(q in ln for ln in lines)
                row[5] += any(_squash(quote) in ln for ln in squashed)
                if pair is not None:
                    row[3] += 1
                    row[4] += _together(pair, text)
        total = [sum(r[i] for r in per_maker.values()) for i in range(6)]
        results[mode] = {
            "quotes": total[0],
            "found": round(total[1] / total[0], 3),
            "on_one_line": round(total[2] / total[0], 3),
            "on_one_line_squashed": round(total[5] / total[0], 3),
            "label_value_pairs": total[3],
            "label_value_on_one_line": round(total[4] / total[3], 3),
            "ms_per_page": round(1000 * seconds / len(gold), 1),
            "per_maker": {
                m: {
                    "quotes": r[0],
                    "found": round(r[1] / r[0], 3),
                    "on_one_line": round(r[2] / r[0], 3),
                    "on_one_line_squashed": round(r[5] / r[0], 3),
                    "label_value_on_one_line": round(r[4] / r[3], 3) if r[3] else None,
                }
                for m, r in sorted(per_maker.items())
            },
        }
        print(mode, {k: v for k, v in results[mode].items() if k != "per_maker"}, flush=True)
    write_json(
        a.out, {"meta": meta(pages=len(gold), command=" ".join(sys.argv)), "results": results}
    )


if __name__ == "__main__":
    main()
