"""HTML to text: candidate extractors compared on real HTML documents found on this machine.

    python benchmarks/html_extractors.py /usr/share/doc/nodejs/api /usr/share/doc/valgrind/html \
        /usr/share/doc/libxslt1-dev site

Per extractor, over up to ``--per-folder`` documents of each folder:
- ``word_recall``: the share of the words of the page's visible text (body without
  script/style, read with lxml) that the output keeps (never lose data);
- ``headings_as_lines``: the share of ``<h1>``-``<h6>`` texts that come out as a line of
  their own (the position a chunk can name);
- ``rows_on_one_line``: the share of table rows with two or more cells whose cells come
  out on one line, in order (a label and its value stay together);
- ``ms_per_doc``: mean wall-clock milliseconds per document.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
import unicodedata
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _bench import meta, write_json


def _args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("folders", nargs="+", type=Path)
    p.add_argument("--per-folder", type=int, default=12)
    p.add_argument("--out", type=Path, default=Path("benchmarks/results/html_extractors.json"))
    return p.parse_args()


def _norm(s: str) -> str:
    return re.sub(r"\s+", " ", unicodedata.normalize("NFKC", s)).strip().lower()


def _words(s: str) -> Counter[str]:
    return Counter(re.findall(r"\w+", _norm(s)))


def truth(html: str) -> dict[str, Any]:
    import lxml.html

    root = lxml.html.fromstring(html.encode())
    for bad in root.xpath("//script|//style|//noscript|//template"):
        bad.drop_tree()
    body = root.find("body")
    body = body if body is not None else root
    heads = [_norm(h.text_content()) for h in body.xpath(".//h1|.//h2|.//h3|.//h4|.//h5|.//h6")]
    rows = []
    for tr in body.xpath(".//tr"):
        cells = [_norm(c.text_content()) for c in tr.xpath("./td|./th")]
        cells = [c for c in cells if c]
        if len(cells) >= 2 and all(len(c) < 80 for c in cells):
            rows.append(cells)
    return {"words": _words(body.text_content()), "headings": [h for h in heads if h], "rows": rows}


def score(t: dict[str, Any], out: str) -> dict[str, float]:
    got = _words(out)
    total = sum(t["words"].values())
    rec = sum(min(c, got[w]) for w, c in t["words"].items()) / total if total else 1.0
    lines = [_norm(re.sub(r"^[#\s]+|[#\s|*]+$", "", ln)) for ln in out.splitlines()]
    lineset = set(lines)
    heads = [h in lineset for h in t["headings"]]
    rows = []
    for cells in t["rows"]:
        pat = r".*?".join(re.escape(c) for c in cells)
        rows.append(any(re.search(pat, ln) for ln in lines if cells[0] in ln))
    return {
        "word_recall": rec,
        "headings_as_lines": sum(heads) / len(heads) if heads else float("nan"),
        "rows_on_one_line": sum(rows) / len(rows) if rows else float("nan"),
    }


def _inscriptis(html: str) -> str:
    from inscriptis import get_text
    from inscriptis.model.config import ParserConfig

    return get_text(html, ParserConfig(display_links=False))


def _markdownify(html: str) -> str:
    from markdownify import markdownify

    return str(markdownify(html, heading_style="ATX", strip=["a", "img", "b", "strong", "i", "em"]))


def _trafilatura(html: str) -> str:
    import trafilatura

    return trafilatura.extract(html, include_tables=True, favor_recall=True) or ""


def _html_text(html: str) -> str:
    import html_text

    return str(html_text.extract_text(html))


def _bs4(html: str) -> str:
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(html, "html.parser")
    for bad in soup(["script", "style", "noscript", "template"]):
        bad.decompose()
    return soup.get_text("\n")


EXTRACTORS: dict[str, Callable[[str], str]] = {
    "inscriptis": _inscriptis,
    "markdownify": _markdownify,
    "trafilatura": _trafilatura,
    "html-text": _html_text,
    "bs4-get_text": _bs4,
}


def main() -> None:
    a = _args()
    docs: list[Path] = []
    for folder in a.folders:
        found = sorted(p for p in folder.rglob("*.htm*") if p.stat().st_size > 4000)
        docs += found[:: max(1, len(found) // a.per_folder)][: a.per_folder]
    pages = [(d, d.read_text(errors="replace")) for d in docs]
    truths = [truth(h) for _, h in pages]
    results: dict[str, Any] = {}
    for name, fn in EXTRACTORS.items():
        fn(pages[0][1])  # warm imports
        rows, t_total = [], 0.0
        for (_, html), t in zip(pages, truths, strict=True):
            t0 = time.perf_counter()
            out = fn(html)
            t_total += time.perf_counter() - t0
            rows.append(score(t, out))
        agg = {k: [r[k] for r in rows if r[k] == r[k]] for k in rows[0]}
        results[name] = {k: round(sum(v) / len(v), 3) if v else None for k, v in agg.items()}
        results[name]["ms_per_doc"] = round(1000 * t_total / len(pages), 1)
        print(name, results[name], flush=True)
    total_bytes = sum(len(h) for _, h in pages)
    write_json(
        a.out,
        {
            "meta": meta(
                documents=len(pages),
                bytes=total_bytes,
                folders=[str(f) for f in a.folders],
                command=" ".join(sys.argv),
            ),
            "results": results,
        },
    )


if __name__ == "__main__":
    main()
