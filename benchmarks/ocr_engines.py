"""OCR engines compared: RapidOCR (onnxruntime) vs Tesseract, accuracy and seconds per page.

    python benchmarks/ocr_engines.py --corpus ../shared/corpus --qa ../shared/eval/qa-public-3.jsonl

Three sets, every page read by each engine through `hybrid_rag.ingest.formats.ocr` (the
code ingest runs: pages rendered with pypdfium2 at ``--dpi``, lines assembled, NFKC):

- ``scanned``: the sheets of ``sds-more/`` without a text layer (byte copies read once).
  Accuracy: the share of the gold evidence quotes (and of the accepted answer strings) of
  the ``"scanned": true`` questions found in the OCR text of their page, after the
  graders' normalisation (NFKC, case, spaces, degree forms), and again with every space
  removed (OCR often splits or joins words at ``°`` or ``/``).
- ``rendered``: pages of sheets that do have a text layer, rendered to images; the gold
  quotes of the other questions on those pages are the truth (a larger sample of the same
  measure), plus word recall: the share of the text layer's words found in the OCR words.
- ``invoices``: the PNG invoices against the text layer of the PDF they were made from
  (word recall).

Seconds per page are wall-clock render + OCR on this machine (shared: the load average
is recorded), and CPU seconds (onnxruntime threads, tesseract's child process).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import resource
import sys
import time
import unicodedata
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _bench import meta, write_json

from hybrid_rag.ingest.formats.ocr import OcrEngine, OcrOptions, engine_for
from hybrid_rag.ingest.formats.pdf import render_pages


def _args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--corpus", type=Path, default=Path("../shared/corpus"))
    p.add_argument("--qa", type=Path, default=Path("../shared/eval/qa-public-3.jsonl"))
    p.add_argument("--engines", default="rapidocr,tesseract")
    p.add_argument("--dpi", type=int, default=200)
    p.add_argument("--rendered-pages", type=int, default=24, help="text-layer pages (0 = none)")
    p.add_argument("--sets", default="scanned,rendered,invoices")
    p.add_argument("--out", type=Path, default=Path("benchmarks/results/ocr_engines.json"))
    p.add_argument("--texts", type=Path, default=None, help="also write every OCR text (JSON)")
    return p.parse_args()


def norm(s: str) -> str:
    """The graders' normalisation: NFKC, lower case, one space, degree and minus forms."""
    s = unicodedata.normalize("NFKC", s or "").lower()
    s = re.sub("[\u2212\u2013\u2010\u2011]", "-", s).replace("º", "°").replace("˚", "°")
    s = re.sub(r"\s*°\s*", "°", s)
    return re.sub(r"\s+", " ", s).strip()


def found(needle: str, hay: str) -> tuple[bool, bool]:
    """``(normalised substring, substring with all spaces removed)``."""
    n, h = norm(needle), norm(hay)
    return n in h, n.replace(" ", "") in h.replace(" ", "")


def words(s: str) -> Counter[str]:
    return Counter(w for w in re.findall(r"[\w.,%/°-]+", norm(s)) if len(w) > 1)


def recall(truth: str, got: str) -> float:
    t, g = words(truth), words(got)
    total = sum(t.values())
    return sum(min(c, g[w]) for w, c in t.items()) / total if total else 1.0


def _cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def read_pdf_pages(engine: OcrEngine, data: bytes, numbers: list[int], dpi: int) -> dict[int, Any]:
    out: dict[int, Any] = {}
    w0, c0 = time.perf_counter(), _cpu()
    for n, image in render_pages(data, numbers, dpi=dpi, max_pixels=3000):
        t, c = time.perf_counter(), _cpu()
        text = engine.read(image)
        out[n] = {"text": text, "wall_s": time.perf_counter() - t, "cpu_s": _cpu() - c}
    out["_total"] = {"wall_s": time.perf_counter() - w0, "cpu_s": _cpu() - c0}
    return out


def _questions(qa: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in qa.read_text().splitlines() if line.strip()]


def _scanned_docs(corpus: Path, qs: list[dict[str, Any]]) -> dict[str, Path]:
    """Sheets without a text layer, one path per distinct content (byte copies once)."""
    import pypdf

    seen: dict[str, Path] = {}
    for f in sorted((corpus / "sds-more").glob("*/*.pdf")):
        reader = pypdf.PdfReader(f)
        if any((p.extract_text() or "").strip() for p in reader.pages[:3]):
            continue
        digest = hashlib.sha256(f.read_bytes()).hexdigest()
        seen.setdefault(digest, f)
    return {str(p.relative_to(corpus / "sds-more")): p for p in seen.values()}


def _page_score(
    q_items: list[tuple[str, int, list[str], list[str]]], texts: dict[str, dict[int, str]]
) -> dict[str, Any]:
    quotes = strict = loose = 0
    acc_n = acc_hit = 0
    misses: list[str] = []
    for doc, page, qts, accept in q_items:
        text = texts.get(doc, {}).get(page, "")
        for quote in qts:
            a, b = found(quote, text)
            quotes += 1
            strict += a
            loose += b
            if not b:
                misses.append(f"{doc} p{page}: {quote[:80]}")
        if accept:
            acc_n += 1
            acc_hit += any(found(a, text)[1] for a in accept)
    return {
        "quotes": quotes,
        "quotes_found": strict,
        "quotes_found_ignoring_spaces": loose,
        "questions_with_accept": acc_n,
        "an_accepted_answer_on_page": acc_hit,
        "missed_quotes": misses,
    }


def _timing(per_page: list[dict[str, float]]) -> dict[str, float]:
    if not per_page:
        return {}
    walls = sorted(p["wall_s"] for p in per_page)
    return {
        "pages": len(per_page),
        "wall_s_per_page_mean": round(sum(walls) / len(walls), 2),
        "wall_s_per_page_p50": round(walls[len(walls) // 2], 2),
        "cpu_s_per_page_mean": round(sum(p["cpu_s"] for p in per_page) / len(per_page), 2),
    }


def scanned_set(
    engine: OcrEngine, corpus: Path, qs: list[dict[str, Any]], dpi: int, keep: dict[str, Any]
) -> dict[str, Any]:
    import pypdf

    docs = _scanned_docs(corpus, qs)
    digest_of = {k: hashlib.sha256(p.read_bytes()).hexdigest() for k, p in docs.items()}
    texts: dict[str, dict[int, str]] = {}
    per_page: list[dict[str, float]] = []
    for key, path in docs.items():
        data = path.read_bytes()
        n = len(pypdf.PdfReader(path).pages)
        got = read_pdf_pages(engine, data, list(range(1, n + 1)), dpi)
        texts[key] = {k: v["text"] for k, v in got.items() if isinstance(k, int)}
        per_page += [v for k, v in got.items() if isinstance(k, int)]
        print(f"  {engine.name} {key}: {n} pages {got['_total']['wall_s']:.1f}s", flush=True)
    keep[engine.name + ":scanned"] = texts
    # a question on a byte copy reads the copy that was OCR'd
    alias: dict[str, str] = {}
    for f in sorted((corpus / "sds-more").glob("*/*.pdf")):
        d = hashlib.sha256(f.read_bytes()).hexdigest()
        for k, dd in digest_of.items():
            if d == dd:
                alias[str(f.relative_to(corpus / "sds-more"))] = k
    items = []
    for q in qs:
        if not q.get("scanned"):
            continue
        for ev in q["evidence"]:
            items.append(
                (alias.get(ev["doc"], ev["doc"]), ev["page"], [ev["quote"]], q.get("accept", []))
            )
    return {"docs": len(docs), **_timing(per_page), **_page_score(items, texts)}


def rendered_set(
    engine: OcrEngine, corpus: Path, qs: list[dict[str, Any]], dpi: int, limit: int
) -> dict[str, Any]:
    import pypdf

    wanted: dict[tuple[str, int], list[tuple[str, list[str]]]] = {}
    for q in qs:
        if q.get("scanned") or q["type"] == "unanswerable":
            continue
        for ev in q["evidence"]:
            wanted.setdefault((ev["doc"], ev["page"]), []).append(
                (ev["quote"], q.get("accept", []))
            )
    keys = sorted(wanted)[:: max(1, len(wanted) // max(limit, 1))][:limit]
    per_page, items, recalls = [], [], []
    texts: dict[str, dict[int, str]] = {}
    for doc, page in keys:
        path = corpus / "sds-more" / doc
        layer = pypdf.PdfReader(path).pages[page - 1].extract_text() or ""
        got = read_pdf_pages(engine, path.read_bytes(), [page], dpi)
        text = got[page]["text"]
        texts.setdefault(doc, {})[page] = text
        per_page.append(got[page])
        recalls.append(recall(layer, text))
        for quote, accept in wanted[(doc, page)]:
            items.append((doc, page, [quote], accept))
    score = _page_score(items, texts)
    return {
        **_timing(per_page),
        "word_recall_mean": round(sum(recalls) / len(recalls), 3) if recalls else None,
        **score,
    }


def invoices_set(engine: OcrEngine, corpus: Path) -> dict[str, Any]:
    import pypdf
    from PIL import Image

    rows = {}
    for png in sorted((corpus / "invoices").glob("*.png")):
        layer = "\n".join(
            p.extract_text() or "" for p in pypdf.PdfReader(png.with_suffix(".pdf")).pages[:1]
        )
        with Image.open(png) as im:
            image = im.convert("L")
        t = time.perf_counter()
        text = engine.read(image)
        rows[png.name] = {
            "pixels": f"{image.width}x{image.height}",
            "wall_s": round(time.perf_counter() - t, 2),
            "word_recall": round(recall(layer, text), 3),
        }
    return rows


def main() -> None:
    a = _args()
    qs = _questions(a.qa)
    sets = set(a.sets.split(","))
    results: dict[str, Any] = {}
    keep: dict[str, Any] = {}
    for name in a.engines.split(","):
        engine = engine_for(OcrOptions(engine=name))  # type: ignore[arg-type]
        t = time.perf_counter()
        engine.read(__import__("PIL.Image", fromlist=["Image"]).new("L", (200, 60), 255))
        row: dict[str, Any] = {"first_call_s": round(time.perf_counter() - t, 2)}
        if "scanned" in sets:
            row["scanned"] = scanned_set(engine, a.corpus, qs, a.dpi, keep)
        if "rendered" in sets and a.rendered_pages:
            row["rendered"] = rendered_set(engine, a.corpus, qs, a.dpi, a.rendered_pages)
        if "invoices" in sets:
            row["invoices"] = invoices_set(engine, a.corpus)
        results[name] = row
        print(
            json.dumps({name: {k: v for k, v in row.items()}}, indent=1, default=str)[:3000],
            flush=True,
        )
    from importlib.metadata import PackageNotFoundError, version

    versions: dict[str, str | None] = {}
    for dist in ("rapidocr", "onnxruntime", "pytesseract", "pypdfium2"):
        try:
            versions[dist] = version(dist)
        except PackageNotFoundError:
            versions[dist] = None
    try:
        import pytesseract

        versions["tesseract"] = str(pytesseract.get_tesseract_version())
    except Exception:
        versions["tesseract"] = None
    write_json(
        a.out,
        {
            "meta": meta(dpi=a.dpi, versions=versions, command=" ".join(sys.argv)),
            "results": results,
        },
    )
    if a.texts:
        write_json(a.texts, keep)


if __name__ == "__main__":
    main()
