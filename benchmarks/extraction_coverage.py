"""Measure offline extraction over the SDS corpus: coverage per property, speed, names.

Runs :func:`hybrid_rag.ingest.extract.extract_offline` over every PDF under the corpus
folder and writes a JSON report:

* per property, in how many documents it got a stated (or unavailable) value, in how many
  the sheet prints one of its labels (``printed``: a label on word boundaries, inside the
  property's SDS section when the ontology binds it to one -- a proxy, since a label can
  be printed without a value), and how often a value was found where a label is printed
  (``found_when_printed``);
* a hand-checked sample (``--handcheck``, one JSON object per line: ``doc``, ``field``,
  ``expect`` = a verbatim piece of the value the sheet prints or ``null`` when it prints
  none, optional ``not`` = text of the next item that must not be in the value, optional
  ``status``): precision and recall per field;
* extraction time against pypdf's text-extraction time, the documents whose product name
  fell back to the file name, the name every document's subject got (``subjects``), and
  (with ``--qa``) whether the facts carry the values quoted as evidence in an eval
  question file.

Usage::

    .venv/bin/python benchmarks/extraction_coverage.py [--corpus DIR] [--qa FILE] \
        [--handcheck FILE] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_CORPUS = ROOT.parent / "shared" / "corpus" / "sds"
DEFAULT_QA = ROOT.parent / "shared" / "eval" / "qa-public.jsonl"
DEFAULT_OUT = ROOT / "benchmarks" / "results" / "extraction_coverage.json"
DEFAULT_HANDCHECK = ROOT / "benchmarks" / "data" / "extraction_handcheck.jsonl"
_SECTION_HEAD = re.compile(r"^\s*(?:SECTION\s*(\d{1,2})\b|Section\s*(\d{1,2})\s*:)", re.M)


def _load_pages(path: Path) -> tuple[list[Any], float]:
    import pypdf

    from hybrid_rag.models import Page

    t0 = time.perf_counter()
    reader = pypdf.PdfReader(str(path))
    texts = [page.extract_text() or "" for page in reader.pages]
    elapsed = time.perf_counter() - t0
    return [Page(number=i + 1, text=t) for i, t in enumerate(texts)], elapsed


def _load_library(path: Path, ocr: bool) -> tuple[list[Any], float]:
    """Pages as ``HybridRAG`` reads them (layout readings, OCR when asked)."""
    from hybrid_rag.ingest.load import OcrOptions, parse_document

    t0 = time.perf_counter()
    doc = parse_document(
        path.read_bytes(), name=path.name, source=str(path), ocr=OcrOptions(enabled=ocr)
    )
    return list(doc.pages), time.perf_counter() - t0


def _by_folder(
    per_doc: dict[str, tuple[set[str], set[str], bool]], qa: dict[str, Any] | None
) -> dict[str, Any]:
    """Per top folder (a maker): documents, labels printed, found when printed (summed
    over documents and properties), names from the file, gold evidence carried."""
    rows: dict[str, dict[str, Any]] = {}
    for rel, (shown, got, fell_back) in per_doc.items():
        row = rows.setdefault(
            rel.split("/")[0] if "/" in rel else ".",
            {"documents": 0, "printed": 0, "found": 0, "name_from_file": 0},
        )
        row["documents"] += 1
        row["printed"] += len(shown)
        row["found"] += len(shown & got)
        row["name_from_file"] += fell_back
    for row in rows.values():
        row["found_when_printed"] = (
            round(row["found"] / row["printed"], 3) if row["printed"] else None
        )
    if qa is not None:
        for miss in qa.get("checked_by_doc", []):
            row = rows.get(miss["doc"].split("/")[0])
            if row is not None:
                row["evidence_checked"] = row.get("evidence_checked", 0) + 1
                row["evidence_found"] = row.get("evidence_found", 0) + miss["found"]
    return dict(sorted(rows.items()))


def _squash(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())


def _norm(text: str) -> str:
    return " ".join(text.split()).lower()


def _sections(pages: list[Any]) -> dict[int, str]:
    """Text per SDS section number (the document's text between section headings)."""
    text = "\n".join(p.text for p in pages)
    marks = [(m.start(), int(m.group(1) or m.group(2))) for m in _SECTION_HEAD.finditer(text)]
    out: dict[int, str] = {}
    for (start, num), nxt in zip(marks, [*marks[1:], (len(text), 0)][: len(marks)], strict=True):
        out[num] = out.get(num, "") + text[start : nxt[0]]
    return out


def _label_patterns(ontology: Any) -> dict[str, re.Pattern[str]]:
    out = {}
    for p in ontology.properties():
        if p.kind != "datatype":
            continue
        words = sorted({_norm(label) for label in p.labels if len(label) > 2}, key=len)[::-1]
        alts = "|".join(re.escape(w).replace(r"\ ", r"\s+") for w in words)
        out[p.name] = re.compile(rf"(?<![\w])(?:{alts})(?![\w])", re.IGNORECASE)
    return out


def _printed(pages: list[Any], ontology: Any, patterns: dict[str, re.Pattern[str]]) -> set[str]:
    """Properties one of whose labels the sheet prints (inside the property's section)."""
    whole = "\n".join(p.text for p in pages)
    by_section = _sections(pages)
    found = set()
    for name, pattern in patterns.items():
        section = ontology.section(name)
        text = whole if section is None else by_section.get(section, "")
        if pattern.search(text):
            found.add(name)
    return found


def _grade(rows: list[dict[str, Any]], results: dict[str, Any]) -> dict[str, Any]:
    """Precision / recall per field of the hand-checked sample."""
    per: dict[str, Counter[str]] = {}
    for row in rows:
        facts = [f for f in results.get(row["doc"], []) if f["prop"] == row["field"]]
        per.setdefault(row["field"], Counter())[_verdict(row, facts)] += 1
    out: dict[str, Any] = {}
    for field, c in sorted(per.items()):
        got = c["tp"] + c["wrong"] + c["fp"]
        want = c["tp"] + c["wrong"] + c["fn"]
        out[field] = {
            **dict(c),
            "precision": round(c["tp"] / got, 3) if got else None,
            "recall": round(c["tp"] / want, 3) if want else None,
        }
    return out


def _verdict(row: dict[str, Any], facts: list[dict[str, Any]]) -> str:
    """tp (right value), wrong (a value, not the right one), fn (none), fp / tn (the sheet
    prints none: a value / no value)."""
    if row["expect"] is None:
        return "fp" if any(f["status"] == "stated" for f in facts) else "tn"
    if not facts:
        return "fn"
    value = _norm(facts[0]["value"])
    ok = _norm(row["expect"]) in value and not (row.get("not") and _norm(row["not"]) in value)
    ok = ok and facts[0]["status"] == row.get("status", "stated")
    return "tp" if ok else "wrong"


def _qa_check(qa_path: Path, results: dict[str, Any]) -> dict[str, Any]:
    """For each evidence quote, is there a fact on that page whose quote overlaps it?"""
    checked = hits = 0
    misses: list[dict[str, Any]] = []
    by_doc: list[dict[str, Any]] = []
    for line in qa_path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        item = json.loads(line)
        if item.get("type") not in ("fact", "multi_fact", "cross_doc", "unanswerable"):
            continue
        for ev in item.get("evidence", []):
            facts = results.get(ev["doc"])
            if facts is None:
                continue
            checked += 1
            want = _squash(ev["quote"])
            found = any(
                f["page"] == ev["page"]
                and (want in _squash(f["quote"]) or _squash(f["quote"]) in want)
                for f in facts
                if len(_squash(f["quote"])) > 3
            )
            hits += found
            by_doc.append({"doc": ev["doc"], "found": int(found)})
            if not found:
                misses.append({"id": item["id"], "doc": ev["doc"], "quote": ev["quote"]})
    return {
        "evidence_checked": checked,
        "evidence_found": hits,
        "misses": misses,
        "checked_by_doc": by_doc,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS, help="folder of PDFs")
    parser.add_argument("--qa", type=Path, default=DEFAULT_QA, help="eval questions (jsonl)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="JSON report path")
    parser.add_argument(
        "--handcheck", type=Path, default=DEFAULT_HANDCHECK, help="hand-checked sample (jsonl)"
    )
    parser.add_argument("--limit", type=int, default=0, help="only the first N PDFs (0 = all)")
    parser.add_argument(
        "--loader",
        choices=["pypdf", "library"],
        default="pypdf",
        help="pypdf: plain text only (the speed baseline); library: pages as HybridRAG reads "
        "them (layout readings), with the SDS pack's reader",
    )
    parser.add_argument("--ocr", action="store_true", help="with --loader library: OCR too")
    args = parser.parse_args(argv)

    from hybrid_rag.ingest.extract import extract_offline
    from hybrid_rag.ingest.reading import NO_NAME
    from hybrid_rag.ontology import load_ontology
    from hybrid_rag.packs import reader_for

    ontology = load_ontology("msds")
    pdfs = sorted(args.corpus.rglob("*.pdf"))
    if args.limit:
        pdfs = pdfs[: args.limit]
    if not pdfs:
        print(f"no PDFs under {args.corpus}", file=sys.stderr)
        return 1
    stated: Counter[str] = Counter()
    unavailable: Counter[str] = Counter()
    printed: Counter[str] = Counter()
    found_printed: Counter[str] = Counter()
    patterns = _label_patterns(ontology)
    fallbacks: list[str] = []
    results: dict[str, Any] = {}
    pypdf_s = extract_s = 0.0
    reader = reader_for(ontology) if args.loader == "library" else None
    per_doc: dict[str, tuple[set[str], set[str], bool]] = {}
    subjects: dict[str, str] = {}  # the name each document's subject got, to read by hand
    for pdf in pdfs:
        rel = pdf.relative_to(args.corpus).as_posix()
        try:
            if args.loader == "library":
                pages, spent = _load_library(pdf, args.ocr)
            else:
                pages, spent = _load_pages(pdf)
        except Exception as exc:  # a broken PDF is reported, not fatal
            print(f"skip {rel}: {exc}", file=sys.stderr)
            continue
        pypdf_s += spent
        t0 = time.perf_counter()
        ex = extract_offline(pages, ontology=ontology, source_name=pdf.name, reader=reader)
        extract_s += time.perf_counter() - t0
        stated.update({f.prop for f in ex.facts if f.status == "stated"})
        unavailable.update({f.prop for f in ex.facts if f.status == "unavailable"})
        shown = _printed(pages, ontology, patterns)
        printed.update(shown)
        found_printed.update(shown & {f.prop for f in ex.facts})
        fell_back = any(w.startswith(NO_NAME) for w in ex.warnings)
        if fell_back:
            fallbacks.append(rel)
        per_doc[rel] = (shown, {f.prop for f in ex.facts}, fell_back)
        subjects[rel] = ex.subject
        results[rel] = [
            {"prop": f.prop, "value": f.value, "quote": f.quote, "page": f.page, "status": f.status}
            for f in ex.facts
        ]
    report = {
        "documents": len(results),
        "pypdf_seconds": round(pypdf_s, 3),
        "extract_seconds": round(extract_s, 3),
        "extract_vs_pypdf": round(extract_s / pypdf_s, 4) if pypdf_s else None,
        "properties": {
            p.name: {
                "stated": stated.get(p.name, 0),
                "unavailable": unavailable.get(p.name, 0),
                "printed": printed.get(p.name, 0),
                "found_when_printed": round(found_printed[p.name] / printed[p.name], 3)
                if printed.get(p.name)
                else None,
            }
            for p in sorted(ontology.properties(), key=lambda p: -stated.get(p.name, 0))
        },
        "product_name_fallbacks": fallbacks,
        "subjects": subjects,
    }
    qa = _qa_check(args.qa, results) if args.qa.is_file() else None
    if qa is not None:
        report["qa_evidence"] = {k: v for k, v in qa.items() if k != "checked_by_doc"}
    report["by_folder"] = _by_folder(per_doc, qa)
    if args.handcheck.is_file():
        rows = [json.loads(x) for x in args.handcheck.read_text(encoding="utf-8").splitlines() if x]
        report["handcheck"] = _grade(rows, results)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2, ensure_ascii=False), encoding="utf-8")
    summary = {
        k: v
        for k, v in report.items()
        if k not in ("properties", "handcheck", "qa_evidence", "subjects")
    }
    if qa is not None:
        summary["qa_evidence"] = f"{qa['evidence_found']}/{qa['evidence_checked']}"
    print(json.dumps(summary, indent=2, ensure_ascii=False)[:4000])
    print(f"report written to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
