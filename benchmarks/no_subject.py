"""Documents the ontology knows nothing about: hybrid and vector retrieval vs BM25 over pages.

Issue 16 asks that documents with no extracted subject (a filing, a manual) be answered
from their passages, and that hybrid retrieval never fall below a plain BM25 over pages
on them. The corpus holds no filings or manuals with gold evidence pages, so this builds
the same situation from documents that do have them: the 70 Safety Data Sheets of
``public-2-docs.txt`` are ingested under an ontology of an unrelated domain, so no sheet
gets a subject from its text (titles fall back to file names) and the graph holds no
facts about it. Two unrelated ontologies:

* ``jobs``: a plain OWL ontology of job postings written here (one class, four datatype
  properties whose labels no sheet prints, no ``hr:`` annotations);
* ``invoice``: the bundled invoice ontology (a few labels such as "Supplier" or "Date"
  do occur on sheets, so a handful of stray facts are read: closer to real use).

Questions: every question of ``qa-public-2.jsonl`` with evidence pages, except the
``unanswerable`` ones (their evidence page says "no data"). Per question and per method,
the rank of the first passage on a gold (document, page) among the first 6 (the default
``top_k``):

* ``hybrid``: ``rag.ask(question)`` unscoped, ``Answer.passages``;
* ``vector``: ``rag.ask(question, mode="vector")``;
* ``bm25_pages``: a plain tantivy BM25 index (its ``en_stem`` tokenizer, a lenient parse
  of the question text, a disjunction of its terms) with one entry per page of every
  sheet, the page texts as ``hybrid_rag.ingest.load.parse_document`` gives them.

Also counted: answers that abstain (``Answer.abstention``) and those that say "Not found"
or are out of scope although the sheet the question names is in the store.

Usage::

    python benchmarks/no_subject.py                    # both ontologies
    python benchmarks/no_subject.py --ontology jobs

Writes ``benchmarks/results/no_subject.json`` (per-question ranks under ``questions``).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _bench import meta, write_json  # noqa: E402

from hybrid_rag import HybridRAG  # noqa: E402
from hybrid_rag.ingest.load import parse_document  # noqa: E402
from hybrid_rag.models import Answer  # noqa: E402

RESULTS = HERE / "results" / "no_subject.json"
SHARED = HERE.parent.parent / "shared"
QA = SHARED / "eval" / "qa-public-2.jsonl"
DOCS_LIST = SHARED / "eval" / "public-2-docs.txt"
CORPUS = SHARED / "corpus" / "sds"
SUBFOLDER = "laballey"
KS = (1, 3, 6)
METHODS = ("hybrid", "vector", "bm25_pages")

JOBS_TTL = """\
@prefix job:  <http://example.org/jobs#> .
@prefix owl:  <http://www.w3.org/2002/07/owl#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix xsd:  <http://www.w3.org/2001/XMLSchema#> .

<http://example.org/jobs> a owl:Ontology ; rdfs:label "Job postings" .

job:JobPosting a owl:Class ; rdfs:label "Job posting" ;
    rdfs:comment "An advertised position." .

job:salary a owl:DatatypeProperty ; rdfs:label "Salary" ;
    rdfs:domain job:JobPosting ; rdfs:range xsd:decimal .
job:workingHours a owl:DatatypeProperty ; rdfs:label "Working hours" ;
    rdfs:domain job:JobPosting ; rdfs:range xsd:string .
job:contractType a owl:DatatypeProperty ; rdfs:label "Contract type" ;
    rdfs:domain job:JobPosting ; rdfs:range xsd:string .
job:applicationDeadline a owl:DatatypeProperty ; rdfs:label "Application deadline" ;
    rdfs:domain job:JobPosting ; rdfs:range xsd:date .
"""

Gold = set[tuple[str, int]]


def _files() -> list[Path]:
    names = [n.strip() for n in DOCS_LIST.read_text().splitlines() if n.strip()]
    return [CORPUS / SUBFOLDER / n for n in names]


def _questions() -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in QA.read_text().splitlines() if line.strip()]
    return [q for q in rows if q.get("evidence") and q["type"] != "unanswerable"]


class PageBM25:
    """A plain BM25 over whole pages: tantivy's own ``en_stem`` analyser, in memory."""

    def __init__(self, pages: list[tuple[str, int, str]]) -> None:
        import tantivy

        builder = tantivy.SchemaBuilder()
        builder.add_text_field("body", stored=False, tokenizer_name="en_stem")
        builder.add_integer_field("row", stored=True)
        self.index = tantivy.Index(builder.build())
        writer = self.index.writer(heap_size=32_000_000, num_threads=1)
        for row, (_, _, text) in enumerate(pages):
            writer.add_document(tantivy.Document(body=text, row=row))
        writer.commit()
        writer.wait_merging_threads()
        self.index.reload()
        self.pages = pages

    def search(self, text: str, k: int) -> list[tuple[str, int]]:
        query, _errors = self.index.parse_query_lenient(text, ["body"])
        hits = self.index.searcher().search(query, k).hits
        searcher = self.index.searcher()
        rows = [searcher.doc(address)["row"][0] for _, address in hits]
        return [(self.pages[r][0], self.pages[r][1]) for r in rows]


def _rank(found: list[tuple[str, int]], gold: Gold) -> int | None:
    """1-based rank of the first gold (document, page), or ``None``."""
    return next((i for i, key in enumerate(found, 1) if key in gold), None)


def _not_found(answer: Answer) -> bool:
    text = answer.text or ""
    return answer.abstention == "out_of_scope" or text.startswith("Not found")


def _ask(rag: HybridRAG, question: str, mode: Any) -> tuple[Answer, float]:
    t = time.perf_counter()
    answer = rag.ask(question, mode=mode)
    return answer, time.perf_counter() - t


def run_ontology(name: str, ontology: str, files: list[Path], work: Path) -> dict[str, Any]:
    """Ingest ``files`` under ``ontology`` and measure the three methods."""
    questions = _questions()
    out: dict[str, Any] = {"ontology": name}
    with HybridRAG(work / name, ontology=ontology, embedder="hashing") as rag:
        t = time.perf_counter()
        reports = rag.ingest_many([str(f) for f in files])
        out["ingest_s"] = round(time.perf_counter() - t, 1)
        failed = [r.source for r in reports if r.status == "failed"]
        infos = rag.documents()
        ids = {Path(i.source).name: i.doc_id for i in infos}
        out["documents"] = len(infos)
        out["failed"] = failed
        out["triples"] = sum(i.triples for i in infos)
        out["documents_with_triples"] = sum(1 for i in infos if i.triples)
        out["titles_sample"] = [i.title for i in infos[:5]]
        t = time.perf_counter()
        pages = []
        for f in files:
            doc = parse_document(f.read_bytes(), name=f.name, source=str(f))
            pages += [(ids[f.name], p.number, p.text) for p in doc.pages if p.text.strip()]
        bm25 = PageBM25(pages)
        out["bm25_pages"] = len(pages)
        out["bm25_build_s"] = round(time.perf_counter() - t, 1)
        per_q = []
        seconds = dict.fromkeys(METHODS, 0.0)
        for q in questions:
            gold = {(ids[Path(e["doc"]).name], e["page"]) for e in q["evidence"]}
            row: dict[str, Any] = {"id": q["id"], "type": q["type"]}
            for mode in ("hybrid", "vector"):
                answer, s = _ask(rag, q["question"], mode)
                seconds[mode] += s
                found = [(p.doc_id, p.page) for p in answer.passages[: max(KS)]]
                row[mode] = {
                    "rank": _rank(found, gold),
                    "passages": len(answer.passages),
                    "abstention": answer.abstention,
                    "not_found": _not_found(answer),
                    "text": (answer.text or "")[:160],
                }
            t = time.perf_counter()
            row["bm25_pages"] = {"rank": _rank(bm25.search(q["question"], max(KS)), gold)}
            seconds["bm25_pages"] += time.perf_counter() - t
            per_q.append(row)
        out["questions_n"] = len(per_q)
        out["summary"] = _summary(per_q, seconds)
        out["questions"] = per_q
    return out


def _summary(per_q: list[dict[str, Any]], seconds: dict[str, float]) -> dict[str, Any]:
    n = len(per_q)
    summary: dict[str, Any] = {}
    for m in METHODS:
        ranks = [r[m]["rank"] for r in per_q]
        row: dict[str, Any] = {
            f"hit@{k}": round(sum(1 for x in ranks if x is not None and x <= k) / n, 3) for k in KS
        }
        if m != "bm25_pages":
            row["abstained"] = sum(1 for r in per_q if r[m]["abstention"] is not None)
            row["not_found_or_out_of_scope"] = sum(1 for r in per_q if r[m]["not_found"])
            row["no_passages"] = sum(1 for r in per_q if r[m]["passages"] == 0)
        row["seconds"] = round(seconds[m], 1)
        summary[m] = row
    return summary


def _table(result: dict[str, Any]) -> str:
    head = (
        f"{'method':<11} {'hit@1':>6} {'hit@3':>6} {'hit@6':>6} {'abst.':>6} {'n.f.':>5} {'s':>7}"
    )
    lines = [
        f"ontology {result['ontology']}: {result['documents']} documents, "
        f"{result['triples']} triples, {result['questions_n']} questions",
        head,
    ]
    for m, row in result["summary"].items():
        lines.append(
            f"{m:<11} {row['hit@1']:>6.3f} {row['hit@3']:>6.3f} {row['hit@6']:>6.3f} "
            f"{row.get('abstained', '-')!s:>6} {row.get('not_found_or_out_of_scope', '-')!s:>5} "
            f"{row['seconds']:>7.1f}"
        )
    return "\n".join(lines)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument(
        "--ontology", nargs="+", choices=["jobs", "invoice"], default=["jobs", "invoice"]
    )
    p.add_argument("--out", type=Path, default=RESULTS)
    a = p.parse_args()
    if not QA.exists() or not DOCS_LIST.exists():
        print(f"needs {QA} and {DOCS_LIST} (the shared eval folder)", file=sys.stderr)
        return 2
    files = _files()
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        ttl = work / "jobs.ttl"
        ttl.write_text(JOBS_TTL)
        specs = {"jobs": str(ttl), "invoice": "invoice"}
        for name in a.ontology:
            result = run_ontology(name, specs[name], files, work)
            print(_table(result), flush=True)
            results.append(result)
    write_json(a.out, {"meta": meta(qa=QA.name, documents=len(files)), "runs": results})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
