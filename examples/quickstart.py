"""Quickstart demo: ingest a few Safety Data Sheets on the embedded default and ask two questions.

Uses the real corpus in ``../shared/corpus/sds`` when it is there, otherwise the sample
sheets the library ships (fictional products written as real PDFs). Runs offline: no
credentials, no network, no LLM. Stores persist under ``./.hybrid_rag_demo``, the demo's
own store (a second run skips unchanged documents); your documents go elsewhere, e.g. the
``hybrid-rag`` command's default ``./.hybrid_rag``.

    python examples/quickstart.py
"""

from __future__ import annotations

import sys
import tempfile
import textwrap
from pathlib import Path

from hybrid_rag import HybridRAG

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "sds" / "laballey"
REAL = [
    (
        "acetone-hplc-grade-6732361021b8a.pdf",
        "Give the self-ignition temperature of Acetone, HPLC Grade.",
    ),
    (
        "hydrofluoric-acid-49-solution-electroniccleanroom-grade-673b6a82d80db.pdf",
        "Hydrofluoric Acid 49% Solution splashed into someone's eyes: what first aid?",
    ),
    ("ethyl-acetate-995-acs-grade-673392eb02d41.pdf", None),
]
SAMPLE_QUESTIONS = [
    "Give the flash point of Examplon Solvent 99%.",
    "Samplex Acid Descaler 10% splashed into someone's eyes: what first aid?",
]


def documents() -> tuple[list[Path], list[str]]:
    """Real sheets when the corpus is present, else the shipped samples."""
    if all((CORPUS / name).is_file() for name, _q in REAL):
        return [CORPUS / n for n, _q in REAL], [q for _n, q in REAL if q]
    from hybrid_rag.samples import sample_pdfs

    folder = Path(tempfile.mkdtemp(prefix="hybrid_rag_samples_"))
    return sample_pdfs(folder), SAMPLE_QUESTIONS


def main() -> int:
    paths, questions = documents()
    with HybridRAG(".hybrid_rag_demo") as rag:
        for report in rag.ingest_many(paths):
            print(
                f"{report.status:9s} {report.doc_id}: {report.pages} pages, "
                f"{report.chunks} chunks, {report.triples} triples"
            )
        for question in questions:
            answer = rag.ask(question)
            print(f"\nQ: {question}\nA: {answer.text}")
            for ev in answer.citations[:3]:
                quote = textwrap.shorten(ev.quote, 90, placeholder=" …")  # at a word boundary
                print(f'   cited: {ev.doc_id}, page {ev.page}: "{quote}"')
            print(f"   sources={answer.sources} total={answer.timings.get('total_ms')} ms")
    print("\n(the demo's own store: .hybrid_rag_demo; your documents: hybrid-rag ingest PATH)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
