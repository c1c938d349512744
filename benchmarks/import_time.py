"""Cold-process import time of hybrid_rag (median of fresh interpreters).

    python benchmarks/import_time.py --runs 15

Measures ``import hybrid_rag`` and ``from hybrid_rag import HybridRAG`` each in a new
interpreter (``python -X importtime``'s total for the package), and lists which heavy
modules got imported. Writes JSON to --out.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

HEAVY = [
    "torch",
    "sentence_transformers",
    "rdflib",
    "pypdf",
    "pyoxigraph",
    "bm25s",
    "usearch",
    "numpy",
    "openai",
    "gen_ai_hub",
    "hdbcli",
    "typer",
    "rich",
    "pydantic",
]
CODE = (
    "import sys, time\nt = time.perf_counter()\n{stmt}\n"
    "print(time.perf_counter() - t)\n"
    "print(','.join(m for m in {heavy!r} if m in sys.modules))\n"
)


def measure(stmt: str, runs: int) -> dict[str, object]:
    """Median and spread of the wall time of ``stmt`` in fresh interpreters."""
    times, loaded = [], ""
    for _ in range(runs):
        out = subprocess.run(
            [sys.executable, "-c", CODE.format(stmt=stmt, heavy=HEAVY)],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split("\n")
        times.append(float(out[0]))
        loaded = out[1]
    return {
        "median_s": round(statistics.median(times), 4),
        "max_s": round(max(times), 4),
        "min_s": round(min(times), 4),
        "heavy_modules_loaded": loaded.split(",") if loaded else [],
    }


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--runs", type=int, default=15)
    p.add_argument("--out", type=Path, default=Path("benchmarks/results/import_time.json"))
    a = p.parse_args()
    result = {
        "import hybrid_rag": measure("import hybrid_rag", a.runs),
        "from hybrid_rag import HybridRAG": measure("from hybrid_rag import HybridRAG", a.runs),
        "python": sys.version.split()[0],
    }
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps(result, indent=1))
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
