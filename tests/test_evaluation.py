"""The project's grading rule agrees with the reference grader and catches wrong answers."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from hybrid_rag._cli_eval import grade_collection, grade_fields
from hybrid_rag.evaluation import (
    abstained,
    context_recalled,
    grade,
    hit,
    normalise,
    summarise,
    wrong,
)

REPO = Path(__file__).resolve().parents[1]
EVAL = REPO.parent / "shared" / "eval"

Q_FACT = {"type": "fact", "question": "Flash point of X?", "accept": ["-20 °C", "-4 °F"]}
Q_CROSS = {
    "type": "cross_doc",
    "accept": ["Acetone"],
    "question": "Which has the lowest flash point: Acetone, HPLC Grade; Ethyl Acetate; or IPA 91%?",
}
Q_YESNO = {
    "type": "cross_doc",
    "accept": ["no", "UN2796", "UN1830"],
    "question": "Do A and B have the same UN number?",
}


def test_normalise_unifies_signs() -> None:
    assert normalise("−20 ° C  Auto-Ignition") == "-20°c auto ignition"
    assert hit("-20 °C", "Flash point: \u221220°C (closed cup)")
    assert not hit("20 °C", "flash point 120 °C")


@pytest.mark.parametrize(
    ("q", "answer", "ok"),
    [
        (Q_FACT, "Flash Point -20 °C / -4 °F", True),
        (Q_FACT, "Flash Point 20 °C", False),
        (Q_FACT, "x" * 400 + " -20 °C", False),
        ({"type": "unanswerable", "question": "?", "accept": []}, "Not stated in the sheet.", True),
        ({"type": "unanswerable", "question": "?", "accept": []}, "It is 42 °C.", False),
        ({"type": "unanswerable", "question": "?", "accept": []}, None, True),
        ({"type": "multi_fact", "question": "?", "accept": ["Danger", "UN1219"]}, "Danger", False),
        (
            {"type": "narrative", "question": "?", "accept": ["a b", "c", "d", "e"]},
            "a-b and c",
            True,
        ),
        (
            Q_CROSS,
            "Acetone, HPLC Grade has the lowest flash point (-20 °C); versus Ethyl Acetate",
            True,
        ),
        (Q_CROSS, "Acetone, HPLC Grade and Ethyl Acetate have the lowest flash point.", False),
        (Q_YESNO, "No, they differ: A: UN2796; B: UN1830.", True),
        (Q_YESNO, "Yes: UN2796 and UN1830.", False),
    ],
)
def test_grade(q: dict, answer: str | None, ok: bool) -> None:
    assert grade(q, answer) is ok


def test_context_recall() -> None:
    q = {"accept": ["463 °C"], "evidence": [{"quote": "Autoignition Temperature 463°C (867°F)"}]}
    assert context_recalled(q, "... Autoignition  Temperature 463°C (867°F) ...")
    assert not context_recalled(q, "flash point 12 °C")


def test_summarise_by_mode_and_type() -> None:
    rows = [
        {"mode": "kg", "type": "fact", "correct": True, "recalled": True},
        {"mode": "kg", "type": "fact", "correct": False, "recalled": False},
        {"mode": "kg", "type": "unanswerable", "correct": True},
    ]
    s = summarise(rows)
    assert s["kg"]["fact"] == 0.5 and s["kg"]["overall"] == round(2 / 3, 3)
    assert s["kg"]["recall"] == 0.5


def _reference(name: str = "grade") -> ModuleType:
    path = EVAL / f"{name}.py"
    if not path.is_file():
        pytest.skip(f"reference grader not found at {path}")
    spec = importlib.util.spec_from_file_location(f"reference_{name}", path)
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


QA_SETS = ["qa-public.jsonl", "qa-public-2.jsonl", "qa-public-3.jsonl", "qa-invoices.jsonl"]


@pytest.mark.parametrize("qa_name", QA_SETS)
def test_agrees_with_reference_grader(qa_name: str) -> None:
    ref = _reference()
    if not (EVAL / qa_name).is_file():
        pytest.skip(f"{qa_name} not found in {EVAL}")
    candidates = [None, "", "not stated", "Yes", "No", "Not found: no document is about X."]
    for q in _jsonl(EVAL / qa_name):
        answers = [
            *candidates,
            q["answer"],
            " ".join(q["accept"]),
            q["accept"][0] if q["accept"] else "",
            f"{q['accept'][0] if q['accept'] else ''} (x); versus {q['accept'][-1:] or ''}",
            f"Not available for {q['answer']}.",
            f"No: {q['answer']}",
        ]
        for ans in answers:
            assert grade(q, ans) == ref.correct(q, ans), (q["id"], ans)
            assert abstained(q, ans) == ref.abstained(q, ans), (q["id"], ans)


RESULTS = sorted((REPO / "benchmarks" / "results").glob("*.jsonl"))


def _qa_for(rows: list[dict[str, Any]]) -> Path:
    ids = {r["id"] for r in rows}
    for name in QA_SETS:
        path = EVAL / name
        if path.is_file() and ids <= {q["id"] for q in _jsonl(path)}:
            return path
    pytest.skip(f"no question set in {EVAL} holds these ids")


@pytest.mark.parametrize("results", RESULTS, ids=[p.name for p in RESULTS])
def test_eval_grades_a_results_file_as_grade_py(results: Path, tmp_path: Path) -> None:
    """Re-grade real `hybrid-rag eval` output: our summary == `grade.py --json`, per mode."""
    _reference()
    rows = _jsonl(results)
    qa_file = _qa_for(rows)
    qa = {q["id"]: q for q in _jsonl(qa_file)}
    regraded = [
        {
            "mode": r["mode"],
            "type": r["type"],
            **grade_fields(qa[r["id"]], r["answer"], r["facts"], r["passages"]),
        }
        for r in rows
    ]
    ours = summarise(regraded)
    for mode in ours:
        one = tmp_path / f"{mode}.jsonl"
        one.write_text("".join(json.dumps(r) + "\n" for r in rows if r["mode"] == mode))
        run = subprocess.run(
            [sys.executable, str(EVAL / "grade.py"), str(qa_file), str(one), "--json"],
            capture_output=True, text=True, check=True,
        )  # fmt: skip
        theirs = json.loads(run.stdout)
        assert theirs.pop("missing") == 0
        assert ours[mode] == theirs, mode


def _collection_answers(q: dict[str, Any], i: int) -> tuple[str, list[dict[str, Any]]]:
    """A varied, realistic answer to a collection question: some cite every gold sheet,
    some miss half, cite a wrong one, name them only as facts, or give a count."""
    gold: list[str] = q["gold_docs"]
    value = q["accept"][0] if q["accept"] else ""
    kind = i % 6
    if kind == 0:
        return f"{len(gold)} products: " + "; ".join(f"X [{d} p.2]" for d in gold), []
    if kind == 1:
        half = gold[: max(1, len(gold) // 2)]
        return f"{value} " + ", ".join(f"[{d}]" for d in half), []
    if kind == 2:
        return f"{value}: Y [{gold[0]} p.1] and Z [made-up-sheet-123 p.3]", []
    if kind == 3:
        return f"{value} (see the facts)", [{"doc_id": d} for d in gold]
    if kind == 4:
        return f"Not found in the documents. Category {value}, UN {value}", []
    return f"There are {value} of them; class 8 [{gold[-1]}, {gold[0]} p.4-5]", []


def test_collection_grading_agrees_with_grade_sets(tmp_path: Path) -> None:
    _reference("grade_sets")
    qa_file = EVAL / "qa-collection.jsonl"
    if not qa_file.is_file():
        pytest.skip(f"{qa_file} not found")
    qa = _jsonl(qa_file)
    rows = []
    for i, q in enumerate(qa):
        text, facts = _collection_answers(q, i)
        passages = [{"doc_id": "passage-only-doc-1"}]
        rows.append({"id": q["id"], "type": q["type"], "mode": "hybrid", "answer": text,
                     "facts": facts, "passages": passages})  # fmt: skip
    results = tmp_path / "results.jsonl"
    results.write_text("".join(json.dumps(r) + "\n" for r in rows))
    graded = grade_collection(qa, rows)
    out = subprocess.run(
        [sys.executable, str(EVAL / "grade_sets.py"), str(qa_file), str(results), "--json"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    report = json.loads(out.stdout)
    for mine, item in zip(graded, report["items"], strict=True):
        assert mine["id"] == item["id"]
        got = (mine["correct"], mine["precision"], mine["doc_recall"], mine["f1"], mine["named"])
        want = (item["correct"], item["precision"], item["recall"], item["f1"], item["named"])
        assert got == want, item["id"]
    assert 0 < sum(g["correct"] for g in graded) < len(graded)  # the answers are varied
    summary = summarise(graded)["hybrid"]
    assert summary["overall"] == report["overall"]
    assert (summary["precision"], summary["doc_recall"]) == (
        report["precision"], report["recall"],
    )  # fmt: skip
    for kind, t in report["types"].items():
        assert summary[kind] == t["accuracy"], kind


def test_wrong_is_reported_beside_accuracy() -> None:
    q = {"type": "fact", "question": "Flash point of X?", "accept": ["-20 °C"]}
    rows = [
        {"mode": "kg", "type": "fact", "correct": True, "recalled": True, "wrong": False},
        {"mode": "kg", "type": "fact", "correct": False, "recalled": True, "wrong": True},
        {"mode": "kg", "type": "fact", "correct": False, "recalled": False, "wrong": False},
        {"mode": "kg", "type": "fact", "correct": False, "recalled": False, "wrong": False},
    ]
    assert summarise(rows)["kg"]["wrong"] == 0.25
    assert wrong(q, "Flash point 12 °C") and not wrong(q, "Not stated in the sheet.")
    assert not wrong(q, None) and not wrong(q, "-20 °C")
    cross = {**Q_CROSS, "accept": ["Acetone"]}
    assert not grade(cross, "Not available for Acetone, HPLC Grade or Ethyl Acetate.")
