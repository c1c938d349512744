"""Answer quality on a QA file: ingest its documents into one store, ask unscoped, grade.

    python benchmarks/qa_eval.py ../shared/eval/qa-public.jsonl --corpus ../shared/corpus/sds \
        --docs-list ../shared/eval/public-docs.txt --extra-dir libman --modes hybrid,kg,vector

Writes one JSON line per (question, mode) to --out and prints accuracy by type and mode.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from hybrid_rag import HybridRAG
from hybrid_rag.evaluation import context_recalled, grade, summarise


def _args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("qa", type=Path, help="QA JSONL file")
    p.add_argument("--corpus", type=Path, required=True, help="folder the QA 'docs' paths are in")
    p.add_argument("--docs-list", type=Path, help="file of extra file names (in --list-dir)")
    p.add_argument("--list-dir", default="laballey", help="sub-folder of --docs-list names")
    p.add_argument("--extra-dir", action="append", default=[], help="sub-folder ingested whole")
    p.add_argument("--modes", default="hybrid,kg,vector")
    p.add_argument("--embedder", default="hashing")
    p.add_argument("--out", type=Path, default=Path("benchmarks/results/qa_eval.jsonl"))
    return p.parse_args()


def _sources(a: argparse.Namespace, qa: list[dict]) -> list[Path]:
    paths = {a.corpus / d for q in qa for d in q["docs"]}
    if a.docs_list:
        names = [n.strip() for n in a.docs_list.read_text().splitlines() if n.strip()]
        paths |= {a.corpus / a.list_dir / n for n in names}
    for sub in a.extra_dir:
        paths |= set((a.corpus / sub).glob("*.pdf"))
    return sorted(p for p in paths if p.is_file())


def main() -> int:
    a = _args()
    qa = [json.loads(line) for line in a.qa.read_text().splitlines() if line.strip()]
    rows = []
    with HybridRAG(embedder=a.embedder) as rag:
        t = time.perf_counter()
        reports = rag.ingest_many(_sources(a, qa))
        failed = [r for r in reports if r.status == "failed"]
        print(
            f"ingested {len(reports) - len(failed)} docs in {time.perf_counter() - t:.1f} s; "
            f"failed {len(failed)}: {[r.source for r in failed]}",
            file=sys.stderr,
        )
        for mode in a.modes.split(","):
            for q in qa:
                t = time.perf_counter()
                ans = rag.ask(q["question"], mode=mode)  # type: ignore[arg-type]
                ctx = json.dumps(
                    [p.text for p in ans.passages]
                    + [f.evidence.quote + " " + f.value for f in ans.facts]
                )
                rows.append(
                    {
                        "id": q["id"],
                        "type": q["type"],
                        "question": q["question"],
                        "mode": mode,
                        "answer": ans.text,
                        "sources": ans.sources,
                        "correct": grade(q, ans.text),
                        "recalled": context_recalled(q, ctx),
                        "latency_ms": round((time.perf_counter() - t) * 1000, 1),
                        "llm_calls": ans.usage.llm_calls,
                        "sparql": [s.query for s in ans.sparql],
                    }
                )
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text("".join(json.dumps(r) + "\n" for r in rows))
    summary = summarise(rows)
    print(json.dumps(summary, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
