"""What the layout readings of suspect pages cost the PDF loader (issue 18).

``parse_document`` reads a page in pypdf's layout mode too when its plain text stacks its
labels or reads two columns across (``hybrid_rag.ingest.formats.pdf._stacked`` and
``hybrid_rag.text.glued_labels``). This runs the loader on the same files with and
without those readings, alternating file by file in one process (a shared machine slows
both sides alike), OCR off, and prints the seconds, the ratio and how many pages were
read twice.

    python benchmarks/layout_cost.py --corpus ../shared/corpus/sds/laballey --files 60
"""

from __future__ import annotations

import argparse
import json
import logging
import time
from pathlib import Path

import hybrid_rag.ingest.formats.pdf as pdf
from hybrid_rag.ingest.load import OcrOptions, parse_document


def _never(_text: str) -> bool:
    return False


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--corpus", type=Path, default=Path("../shared/corpus/sds/laballey"))
    p.add_argument("--files", type=int, default=60)
    p.add_argument("--rounds", type=int, default=2)
    a = p.parse_args()
    logging.getLogger("pypdf").setLevel(logging.ERROR)
    files = sorted(a.corpus.rglob("*.pdf"))[: a.files]
    hooks = ("_stacked", "glued_labels")  # what decides a layout reading, by name
    real = {name: getattr(pdf, name) for name in hooks}
    spent = {"with": 0.0, "without": 0.0}
    pages = laid = 0
    for r in range(a.rounds):
        for f in files:
            data = f.read_bytes()
            for side in ("with", "without") if r % 2 == 0 else ("without", "with"):
                on = side == "with"
                for name in hooks:
                    setattr(pdf, name, real[name] if on else _never)
                t0 = time.perf_counter()
                doc = parse_document(
                    data, name=f.name, source=str(f), ocr=OcrOptions(enabled=False)
                )
                spent[side] += time.perf_counter() - t0
                if on and r == 0:
                    pages += len(doc.pages)
                    laid += sum(1 for pg in doc.pages if pg.layout)
    for name in hooks:
        setattr(pdf, name, real[name])
    out = {
        "files": len(files),
        "pages": pages,
        "pages_read_in_layout_too": laid,
        "seconds_with": round(spent["with"], 2),
        "seconds_without": round(spent["without"], 2),
        "without_over_with": round(spent["without"] / spent["with"], 3) if spent["with"] else None,
    }
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
