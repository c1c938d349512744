"""Answer quality when the public questions are asked in other surface forms.

Mechanical rewrites of every question of a QA file (same gold answers), each run with
``hybrid-rag eval --mode hybrid`` on the same store:

* ``lower``: all lower case;
* ``lead_in``: "Quick question from the lab: " before it;
* ``imperative``: "What is X?" -> "Tell me X.";
* ``contraction``: "What is" -> "What's";
* ``no_grade``: grade words after the product name dropped (", Lab Grade", "ACS Grade" ...).

The grader reads the options of a comparison from the question text, so with ``lead_in``
two cross-document questions are graded wrong although the answer is the same as for the
original wording; compare the answers, not only the score.

Usage (the store must already hold the set's sheets, e.g. from the eval commands in
``docs/benchmarks.md``)::

    python benchmarks/phrasing_variants.py ../shared/eval/qa-public-2.jsonl \\
        --store /tmp/st2 -- --corpus ../shared/corpus/sds \\
        --extra-list ../shared/eval/public-2-docs.txt:laballey

Writes ``benchmarks/results/phrasing_variants_<set>.json``.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _bench import meta, write_json  # noqa: E402

_WHAT = re.compile(r"What (?:is|are) (.*)\?$")
_GRADE = re.compile(r",? (?:Lab|ACS|Reagent|Technical|USP|NF/USP|FCC|HPLC) Grade")
VARIANTS: dict[str, Callable[[str], str]] = {
    "original": lambda q: q,
    "lower": str.lower,
    "lead_in": lambda q: "Quick question from the lab: " + q[:1].lower() + q[1:],
    "imperative": lambda q: f"Tell me {m.group(1)}." if (m := _WHAT.match(q)) else q,
    "contraction": lambda q: re.sub(r"^What is ", "What's ", q),
    "no_grade": lambda q: _GRADE.sub("", q),
}


def run(qa: Path, store: str, extra: list[str], workdir: Path) -> dict[str, float]:
    """Overall hybrid score per variant."""
    rows = [json.loads(line) for line in qa.read_text().splitlines() if line.strip()]
    out: dict[str, float] = {}
    for name, rewrite in VARIANTS.items():
        path = workdir / f"{name}.jsonl"
        path.write_text("".join(json.dumps({**r, "question": rewrite(r["question"])}) + "\n"
                                for r in rows))  # fmt: skip
        summary = workdir / f"{name}.summary.json"
        cmd = ["hybrid-rag", "eval", str(path), "--mode", "hybrid", "--embedder", "hashing",
               "--store", store, "--out", str(workdir / f"{name}.out.jsonl"),
               "--summary-out", str(summary), *extra]  # fmt: skip
        subprocess.run(cmd, check=True, capture_output=True)
        data = json.loads(summary.read_text())
        out[name] = _overall(data)
        print(name, out[name], flush=True)
    return out


def _overall(summary: dict[str, Any]) -> float:
    """The hybrid overall score from an eval summary."""
    return float(summary["summary"]["hybrid"]["overall"])


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("qa", type=Path)
    p.add_argument("--store", required=True)
    a, extra = p.parse_known_args()  # the rest (after --) goes to hybrid-rag eval
    with tempfile.TemporaryDirectory(prefix="variants_") as tmp:
        scores = run(a.qa, a.store, [x for x in extra if x != "--"], Path(tmp))
    target = HERE / "results" / f"phrasing_variants_{a.qa.stem}.json"
    write_json(target, {"result": scores, "meta": meta()})
    return 0


if __name__ == "__main__":
    sys.exit(main())
