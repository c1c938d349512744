"""The project's grading rule agrees with the reference grader and catches wrong answers."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType

import pytest

from hybrid_rag.evaluation import context_recalled, grade, hit, normalise, summarise

EVAL = Path(__file__).resolve().parents[2] / "shared" / "eval"

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


def _reference() -> ModuleType:
    path = EVAL / "grade.py"
    if not path.is_file():
        pytest.skip(f"reference grader not found at {path}")
    spec = importlib.util.spec_from_file_location("reference_grade", path)
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_agrees_with_reference_grader() -> None:
    ref = _reference()
    qa = [json.loads(x) for x in (EVAL / "qa-public.jsonl").read_text().splitlines() if x.strip()]
    candidates = [None, "", "not stated", "Yes", "No"]
    for q in qa:
        answers = [
            *candidates,
            q["answer"],
            " ".join(q["accept"]),
            q["accept"][0],
            f"{q['accept'][0]} (x); versus {q['accept'][-1]}",
        ]
        for ans in answers:
            assert grade(q, ans) == ref.correct(q, ans), (q["id"], ans)
