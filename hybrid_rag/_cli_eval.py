"""The evaluation runner behind ``hybrid-rag eval``: corpus assembly, asking and grading.

No terminal output here: ``hybrid_rag.cli`` renders what these functions return. The
grading rule is ``hybrid_rag.evaluation`` (the project's single implementation).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hybrid_rag.errors import ConfigurationError, HybridRAGError
from hybrid_rag.evaluation import (
    context_recalled,
    context_text,
    grade,
    grade_set,
    is_collection,
    known_ids,
    wrong,
)

if TYPE_CHECKING:
    from hybrid_rag.models import Answer, IngestReport
    from hybrid_rag.rag import HybridRAG

__all__ = [
    "MODES",
    "EvalPlan",
    "answer_row",
    "answering_with",
    "ask_all",
    "context_of",
    "grade_collection",
    "grade_fields",
    "load_qa",
    "map_doc_ids",
    "parse_extra_list",
    "plan_sources",
    "write_rows",
]

MODES: tuple[str, ...] = ("hybrid", "kg", "vector")
"""The ask modes; ``--mode all`` runs each of them on the same store."""

_REQUIRED = ("id", "type", "question", "docs", "accept")


@dataclass(frozen=True)
class EvalPlan:
    """What an evaluation ingests.

    Attributes:
        qa_docs: QA ``docs`` path (as written in the QA file) -> file under ``--corpus``.
        extra: Distractor files from ``--extra`` folders and ``--extra-list`` files.
    """

    qa_docs: dict[str, Path]
    extra: list[Path] = field(default_factory=list)

    @property
    def sources(self) -> list[Path]:
        """Every file to ingest, QA documents first, without duplicates."""
        seen: dict[Path, Path] = {}
        for p in [*self.qa_docs.values(), *self.extra]:
            seen.setdefault(p.resolve(), p)
        return list(seen.values())


def load_qa(path: Path) -> list[dict[str, Any]]:
    """Read a QA JSONL file, checking every line has the fields the grader needs.

    Raises:
        ConfigurationError: unreadable JSON or a missing field, naming the line.
    """
    items: list[dict[str, Any]] = []
    lines = path.read_text(encoding="utf-8").splitlines()
    for n, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ConfigurationError(f"{path}:{n}: not valid JSON ({exc.msg})") from exc
        missing = [k for k in _REQUIRED if not isinstance(item, dict) or k not in item]
        if missing:
            raise ConfigurationError(f"{path}:{n}: missing field(s) {', '.join(missing)}")
        items.append(item)
    if not items:
        raise ConfigurationError(f"{path}: no questions")
    return items


def parse_extra_list(spec: str, corpus: Path) -> tuple[Path, Path]:
    """Split an ``--extra-list FILE[:DIR]`` value into the list file and its base folder.

    ``DIR`` defaults to ``corpus``; a relative ``DIR`` is taken relative to ``corpus``.

    >>> parse_extra_list("names.txt:laballey", Path("/c"))
    (PosixPath('names.txt'), PosixPath('/c/laballey'))
    """
    file, sep, base = spec.rpartition(":")
    if not sep or not file:
        return Path(spec), corpus
    return Path(file), corpus / base


def _listed(file: Path, base: Path) -> list[Path]:
    if not file.is_file():
        raise ConfigurationError(f"--extra-list file not found: {file}")
    names = [n.strip() for n in file.read_text(encoding="utf-8").splitlines()]
    return [base / n for n in names if n and not n.startswith("#")]


def _folder(folder: Path) -> list[Path]:
    from hybrid_rag.ingest.load import iter_files

    if not folder.is_dir():
        raise ConfigurationError(f"--extra folder not found: {folder}")
    return iter_files(folder)


def plan_sources(
    qa: Sequence[Mapping[str, Any]],
    corpus: Path,
    *,
    extra_dirs: Sequence[Path] = (),
    extra_lists: Sequence[str] = (),
) -> EvalPlan:
    """The files an evaluation ingests: every QA document plus the distractors.

    Missing QA documents stay in the plan: their ingest fails with a reason and the
    questions about them are still asked.
    """
    if not corpus.is_dir():
        raise ConfigurationError(f"--corpus folder not found: {corpus}")
    qa_docs = {d: corpus / d for q in qa for d in q["docs"]}
    extra: list[Path] = []
    for spec in extra_lists:
        extra += _listed(*parse_extra_list(spec, corpus))
    for folder in extra_dirs:
        extra += _folder(folder)
    return EvalPlan(qa_docs=qa_docs, extra=extra)


def map_doc_ids(plan: EvalPlan, reports: Iterable[IngestReport]) -> dict[str, str]:
    """QA ``docs`` path -> doc id, for every QA document that was ingested."""
    by_source = {r.source: r.doc_id for r in reports if r.status != "failed"}
    return {d: by_source[str(p)] for d, p in plan.qa_docs.items() if str(p) in by_source}


def context_of(answer: Answer) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The facts and passages of an answer as plain JSON rows (the retrieved context)."""
    facts = [
        {
            "doc_id": f.doc_id,
            "page": f.evidence.page,
            "subject": f.subject,
            "property": f.predicate_label,
            "value": f.value,
            "quote": f.evidence.quote,
        }
        for f in answer.facts
    ]
    passages = [
        {"doc_id": p.doc_id, "page": p.page, "score": round(p.score, 5), "text": p.text}
        for p in answer.passages
    ]
    return facts, passages


def answer_row(
    q: Mapping[str, Any], mode: str, answer: Answer | None, latency_ms: float, error: str | None
) -> dict[str, Any]:
    """One results line: the answer, its context, its grade and its context recall."""
    facts, passages = context_of(answer) if answer is not None else ([], [])
    text = answer.text if answer is not None else None
    row = {
        "id": q["id"],
        "type": q["type"],
        "question": q["question"],
        "mode": mode,
        "answer": text,
        "sources": list(answer.sources) if answer is not None else [],
        "facts": facts,
        "passages": passages,
        "sparql": [s.query for s in answer.sparql] if answer is not None else [],
        "sparql_attempts": _attempts(answer),
        "generation": answer.generation if answer is not None else None,
        "errors": [e.model_dump() for e in answer.errors] if answer is not None else [],
        "usage": answer.usage.model_dump() if answer is not None else None,
        "llm_calls": answer.usage.llm_calls if answer is not None else 0,
        "latency_ms": round(latency_ms, 1),
        "error": error,
    }
    if is_collection(q):  # graded with every row's documents known: see grade_collection
        return row
    return {**row, **grade_fields(q, text, facts, passages)}


def grade_fields(
    q: Mapping[str, Any], text: str | None, facts: Sequence[Any], passages: Sequence[Any]
) -> dict[str, bool]:
    """The grading of a question-set answer, as ``grade.py`` grades a results line:
    ``correct``, ``recalled`` (context recall) and ``wrong`` (asserts a false answer)."""
    return {
        "correct": grade(q, text),
        "recalled": context_recalled(q, context_text(passages, facts)),
        "wrong": wrong(q, text),
    }


def grade_collection(
    qa: Sequence[Mapping[str, Any]], rows: Sequence[dict[str, Any]]
) -> list[dict[str, Any]]:
    """``rows`` with collection questions graded as ``grade_sets.py`` grades a results file.

    Adds ``correct``, ``precision`` (``None`` when the answer names no document),
    ``doc_recall``, ``f1`` and ``named`` to the row of every question with ``gold_docs``;
    other rows are returned as they are.
    """
    by_id = {q["id"]: q for q in qa if is_collection(q)}
    if not by_id:
        return list(rows)
    known = known_ids(qa, rows)
    out = []
    for row in rows:
        q = by_id.get(row["id"])
        if q is not None:
            g = grade_set(q, row["answer"], row["facts"], known)
            row = {
                **row,
                "correct": g.correct,
                "precision": g.precision,
                "doc_recall": g.recall,
                "f1": g.f1,
                "named": list(g.named),
            }
        out.append(row)
    return out


def _attempts(answer: Answer | None) -> list[dict[str, Any]]:
    """Each SPARQL attempt's origin and outcome (``rows``, ``rejected``, ``error``)."""
    if answer is None:
        return []
    out = []
    for s in answer.sparql:
        if s.error is None:
            outcome = "rows" if s.rows else "empty"
        else:
            outcome = "rejected" if s.error.startswith("rejected:") else "error"
        out.append({"origin": s.origin, "outcome": outcome, "rows": s.rows, "error": s.error})
    return out


def _ask_one(
    rag: HybridRAG,
    q: Mapping[str, Any],
    mode: str,
    docs: list[str] | None,
    timeout: float | None = None,
) -> dict[str, Any]:
    t = time.perf_counter()
    try:
        answer: Answer | None = rag.ask(q["question"], mode=mode, docs=docs, timeout=timeout)  # type: ignore[arg-type]
        error = None
    except HybridRAGError as exc:
        answer, error = None, f"{type(exc).__name__}: {exc}"
    return answer_row(q, mode, answer, (time.perf_counter() - t) * 1000, error)


def ask_all(
    rag: HybridRAG,
    qa: Sequence[Mapping[str, Any]],
    modes: Sequence[str],
    *,
    doc_ids: Mapping[str, str] | None = None,
    timeout: float | None = None,
) -> list[dict[str, Any]]:
    """Ask every question in every mode, and grade each answer.

    ``doc_ids`` given: scope each question to its documents; a question whose documents
    all failed to ingest is asked with an empty scope (and graded like any other).
    Collection questions (no ``docs``, ``gold_docs`` instead) are always asked unscoped.
    ``timeout`` is each question's budget (``ask(..., timeout=...)``; default the store's).
    """
    rows: list[dict[str, Any]] = []
    for mode in modes:
        for q in qa:
            docs = None
            if doc_ids is not None and not is_collection(q):
                docs = [doc_ids[d] for d in q["docs"] if d in doc_ids]
            rows.append(_ask_one(rag, q, mode, docs, timeout))
    return grade_collection(qa, rows)


@contextmanager
def answering_with(rag: HybridRAG, spec: str | None) -> Iterator[HybridRAG]:
    """``rag`` answering with the model ``spec`` names (LLM router, SPARQL, synthesis).

    ``None`` leaves ``rag`` as it is (the offline, extractive path).
    """
    if spec is None:
        yield rag
        return
    from hybrid_rag.ask.llm_route import LLMRouter
    from hybrid_rag.config import llm_from_spec

    llm = llm_from_spec(spec)
    if llm is None:
        yield rag
        return
    with rag.override(llm=llm, router=LLMRouter(llm)):
        yield rag


def write_rows(path: Path, rows: Iterable[Mapping[str, Any]]) -> None:
    """Write results as JSON lines (creating the parent folder)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
