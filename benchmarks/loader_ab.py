"""A/B of the loader alone: another revision's `parse_document` vs this one's, alternating
file by file in one process, on the same PDFs (OCR off), checking both give the same text.

    git show main:hybrid_rag/ingest/load.py > /tmp/old_load.py
    python benchmarks/loader_ab.py --old /tmp/old_load.py --corpus ../shared/corpus/sds/laballey

A shared machine slows both sides alike, so the ratio is the loader's own cost.
"""

from __future__ import annotations

import argparse
import importlib.util
import logging
import sys
import time
from pathlib import Path

from hybrid_rag.ingest.load import OcrOptions, parse_document


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--old", type=Path, required=True, help="the other revision's load.py")
    p.add_argument("--corpus", type=Path, default=Path("../shared/corpus/sds/laballey"))
    p.add_argument("--files", type=int, default=60)
    p.add_argument("--rounds", type=int, default=3)
    a = p.parse_args()
    logging.getLogger("pypdf").setLevel(logging.ERROR)
    spec = importlib.util.spec_from_file_location("old_load", a.old)
    assert spec is not None and spec.loader is not None
    old = importlib.util.module_from_spec(spec)
    sys.modules["old_load"] = old
    spec.loader.exec_module(old)
    off = OcrOptions(enabled=False)
    data = [(f.name, f.read_bytes()) for f in sorted(a.corpus.glob("*.pdf"))[: a.files]]
    t_old = t_new = 0.0
    for rnd in range(a.rounds):
        for name, d in data:
            t = time.perf_counter()
            before = old.parse_document(d, name=name, source=name)
            t_old += time.perf_counter() - t
            t = time.perf_counter()
            after = parse_document(d, name=name, source=name, ocr=off)
            t_new += time.perf_counter() - t
            assert [x.text for x in before.pages] == [x.text for x in after.pages], name
        print(f"round {rnd + 1}: old {t_old:.2f} s, new {t_new:.2f} s, new/old {t_new / t_old:.3f}")


if __name__ == "__main__":
    main()
