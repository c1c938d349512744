"""Digest of every PDF page's plain and layout text, to compare two versions of the loader.

    python benchmarks/pdf_pages_digest.py --out new.json ../shared/corpus/sds ...
    (cd /tmp && PYTHONPATH=<other checkout> python <this>/benchmarks/pdf_pages_digest.py \\
        --out old.json ...)
    python benchmarks/pdf_pages_digest.py --compare old.json new.json

OCR is off: only the text layer is read. A file that fails records its error's type.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

from hybrid_rag.ingest.formats.ocr import OcrOptions
from hybrid_rag.ingest.formats.pdf import pdf_pages


def digests(folders: list[Path]) -> dict[str, list[str] | str]:
    """Per file: an MD5 of each page's plain text and layout text (or the error type)."""
    out: dict[str, list[str] | str] = {}
    for folder in folders:
        for f in sorted(folder.rglob("*.pdf")):
            try:
                pages, _ = pdf_pages(f.read_bytes(), f.name, ocr=OcrOptions(enabled=False))
            except Exception as exc:
                out[str(f)] = type(exc).__name__
                continue
            both = (p.text + "\x00" + (p.layout or "<none>") for p in pages)
            out[str(f)] = [hashlib.md5(b.encode()).hexdigest() for b in both]
    return out


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("folders", nargs="*", type=Path)
    p.add_argument("--out", type=Path)
    p.add_argument("--compare", nargs=2, type=Path, metavar=("OLD", "NEW"))
    a = p.parse_args()
    if a.compare:
        old, new = (json.loads(x.read_text()) for x in a.compare)
        differ = sorted(k for k in old.keys() | new.keys() if old.get(k) != new.get(k))
        print(f"{len(old)} vs {len(new)} files; {len(differ)} differ")
        for k in differ[:20]:
            print(" ", k)
        return 1 if differ else 0
    found = digests(a.folders)
    if a.out:
        a.out.write_text(json.dumps(found, indent=0))
    pages = sum(len(v) for v in found.values() if isinstance(v, list))
    print(f"{len(found)} files, {pages} pages", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
