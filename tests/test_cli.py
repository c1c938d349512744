"""The ``hybrid-rag`` command, driven through its real typer app (and once as a subprocess)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from hybrid_rag.cli import app
from hybrid_rag.models import Answer
from hybrid_rag.samples import SAMPLE_SHEETS, sample_pdfs, sample_text

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "sds"
EVAL = CORPUS.parents[1] / "eval"

runner = CliRunner()
SAMPLE_TEXT = " ".join(" ".join(sample_text(stem).split()) for stem in SAMPLE_SHEETS)


def run(*args: str | Path) -> Any:
    """Invoke the CLI in-process (stdout is not a terminal: plain progress lines).

    Commands run one after another in this process on the same store path, which also
    checks that a closed store releases its files for the next command.
    """
    return runner.invoke(app, [str(a) for a in args])


@pytest.fixture(scope="module")
def samples(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    return sample_pdfs(tmp_path_factory.mktemp("samples"))


@pytest.fixture(scope="module")
def store(samples: list[Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store with the three sample sheets, built by `hybrid-rag ingest`."""
    path = tmp_path_factory.mktemp("cli") / "store"
    result = run("ingest", samples[0].parent, "--store", path, "--embedder", "hashing")
    assert result.exit_code == 0, result.output
    return path


def assert_one_line_error(result: Any, *needles: str) -> None:
    assert result.exit_code != 0
    assert "Traceback" not in result.output
    assert "error: " in result.output and "hint: " in result.output
    for needle in needles:
        assert needle in result.output


# --- packaging -----------------------------------------------------------------------------


def test_help_lists_every_command() -> None:
    result = run("--help")
    assert result.exit_code == 0
    for command in ("ingest", "ask", "docs", "forget", "demo", "eval"):
        assert command in result.output


def test_library_import_does_not_load_the_cli_stack() -> None:
    code = "import sys, hybrid_rag; print(sorted({'typer', 'rich', 'click'} & set(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_console_script_entry_point_runs(tmp_path: Path) -> None:
    code = "import sys; from hybrid_rag.cli import main; sys.argv[0] = 'hybrid-rag'; main()"
    out = subprocess.run(
        [sys.executable, "-c", code, "docs", "--store", str(tmp_path / "none")],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 1
    assert "error: no store at" in out.stderr and "Traceback" not in out.stderr


# --- ingest --------------------------------------------------------------------------------


def test_ingest_prints_plain_lines_and_summary(store: Path, samples: list[Path]) -> None:
    result = run("ingest", *samples, "--store", store)
    assert result.exit_code == 0, result.output
    assert result.output.count("] skipped ") == 3  # same bytes: nothing rewritten
    assert "[1/3]" in result.output and "Ingest summary" in result.output


def test_ingest_failure_sets_exit_code_and_names_reason(
    tmp_path: Path, samples: list[Path]
) -> None:
    broken = tmp_path / "broken.pdf"
    broken.write_bytes(b"%PDF-1.4 this is not really a pdf")
    args = ("ingest", samples[0], broken, "--store", tmp_path / "s", "--embedder", "hashing")
    result = run(*args)
    assert result.exit_code == 1
    assert "Failed documents" in result.output and "broken.pdf" in result.output
    assert "Traceback" not in result.output
    tolerant = run(*args, "--allow-failures")
    assert tolerant.exit_code == 0
    assert " skipped " in tolerant.output and " failed " in tolerant.output


def test_ingest_with_doc_id(tmp_path: Path, samples: list[Path]) -> None:
    s = tmp_path / "s"
    result = run("ingest", samples[0], "--doc-id", "my-doc", "--store", s, "--embedder", "hashing")
    assert result.exit_code == 0, result.output
    listed = run("docs", "--store", s, "--json")
    assert [d["doc_id"] for d in json.loads(listed.stdout)] == ["my-doc"]
    two = run("ingest", *samples[:2], "--doc-id", "x", "--store", s)
    assert_one_line_error(two, "--doc-id needs exactly one file")


def test_ingest_missing_path_is_a_readable_error(tmp_path: Path) -> None:
    result = run("ingest", tmp_path / "nope.pdf", "--store", tmp_path / "s")
    assert_one_line_error(result, "no such file or directory")


# --- ask -----------------------------------------------------------------------------------


def test_ask_shows_answer_facts_passages_sparql_and_timings(store: Path) -> None:
    result = run("ask", "What is the flash point of Examplon Solvent 99%?", "--store", store)
    assert result.exit_code == 0, result.output
    out = result.output
    assert "-18 °C" in out
    assert "Facts" in out and "examplon-solvent-99" in out
    assert "Passages" in out and "SPARQL" in out and "SELECT" in out
    assert "timings:" in out and "usage:" in out


def test_ask_json_is_the_answer_model(store: Path) -> None:
    q = "What is the flash point of Examplon Solvent 99%?"
    result = run("ask", q, "--store", store, "--json", "--mode", "kg")
    assert result.exit_code == 0, result.output
    answer = Answer.model_validate_json(result.stdout)
    assert answer.mode == "kg" and answer.sources == ["kg"], result.output
    assert answer.facts and answer.facts[0].evidence.page == 1


def test_ask_docs_restricts_scope(store: Path) -> None:
    q = "What should I do after eye contact?"
    result = run("ask", q, "--store", store, "--json", "--docs", "demoline-glass-cleaner")
    answer = Answer.model_validate_json(result.stdout)
    assert answer.scope == ["demoline-glass-cleaner"]
    assert {p.doc_id for p in answer.passages} <= {"demoline-glass-cleaner"}
    bad = run("ask", q, "--store", store, "--docs", "acetone")
    assert_one_line_error(bad, "unknown document id 'acetone'", "hybrid-rag docs")


def test_ask_errors_are_one_line_with_a_hint(tmp_path: Path, store: Path) -> None:
    assert_one_line_error(run("ask", "x?", "--store", tmp_path / "none"), "no store at")
    mismatch = run("ask", "x?", "--store", store, "--embedder", "local")
    assert_one_line_error(mismatch, "built with the 'hashing' embedder")


def test_debug_shows_the_exception(store: Path) -> None:
    result = run("--debug", "ask", "x?", "--store", store, "--docs", "acetone")
    assert result.exit_code == 1
    assert type(result.exception).__name__ == "DocumentNotFoundError"


# --- docs, forget, demo --------------------------------------------------------------------


def test_docs_and_forget(tmp_path: Path, samples: list[Path]) -> None:
    s = tmp_path / "s"
    assert run("ingest", *samples, "--store", s, "--embedder", "hashing").exit_code == 0
    table = run("docs", "--store", s)
    assert table.exit_code == 0 and "3 documents" in table.output
    assert run("forget", "examplon-solvent-99", "--store", s).exit_code == 0
    ids = [d["doc_id"] for d in json.loads(run("docs", "--store", s, "--json").stdout)]
    assert ids == ["demoline-glass-cleaner", "samplex-acid-descaler-10"]
    again = run("forget", "examplon-solvent-99", "--store", s)
    assert_one_line_error(again, "unknown document id", "hybrid-rag docs")


def test_demo_ingests_samples_and_answers(tmp_path: Path) -> None:
    args = ("demo", "--store", tmp_path / "s", "--corpus", tmp_path / "no-corpus")
    result = run(*args, "--embedder", "hashing")
    assert result.exit_code == 0, result.output
    assert result.output.count("ingested ") == 3
    assert "Q: Give the flash point of Examplon Solvent 99%." in result.output
    assert "-18 °C" in result.output and "cited: examplon-solvent-99, page 1" in result.output
    second = run(*args)  # the store remembers its embedder; unchanged sheets are skipped
    assert second.exit_code == 0 and second.output.count("skipped ") == 3


def test_demo_uses_its_own_store_and_quotes_whole_words(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hybrid_rag.cli import DEFAULT_STORE, DEMO_STORE

    monkeypatch.chdir(tmp_path)
    result = run("demo", "--corpus", tmp_path / "no-corpus", "--embedder", "hashing")
    assert result.exit_code == 0, result.output
    assert (tmp_path / DEMO_STORE).is_dir() and not (tmp_path / DEFAULT_STORE).exists()
    assert f"the demo's own store: {DEMO_STORE}" in result.stdout
    quotes = re.findall(r'cited: [^"]+"(.*?)"$', result.stdout, flags=re.M)
    assert quotes, result.stdout
    for quote in quotes:  # whole words: the sheet's own text, or a cut marked with …
        words = quote.removesuffix(" …").split()
        assert all(re.search(rf"(?<!\w){re.escape(w)}(?!\w)", SAMPLE_TEXT) for w in words)


@pytest.mark.parametrize(
    ("question", "message"),
    [("   ", "question must be a non-empty string"), ("x" * 4001, "longer than 4000")],
)
def test_a_bad_argument_is_one_plain_line(store: Path, question: str, message: str) -> None:
    result = run("ask", question, "--store", store)
    assert result.exit_code == 1 and "Traceback" not in result.output
    said = [line for line in result.stderr.splitlines() if not line.startswith("using ")]
    assert len(said) == 1 and said[0].startswith("error: ") and message in said[0], said
    assert "unexpected" not in result.stderr and "--debug" not in result.stderr


def test_docs_fits_80_columns_and_never_cuts_an_id() -> None:
    import io
    from datetime import UTC, datetime

    from rich.console import Console

    from hybrid_rag._cli_render import documents_table
    from hybrid_rag.models import DocumentInfo

    now = datetime(2026, 1, 2, 3, 4, tzinfo=UTC)
    ids = ["1063_20libman_concentrated_glass_cleaner_ghs_sds_05_08_2018", "acetone", "b"]
    docs = [
        DocumentInfo(
            doc_id=i, source=f"/data/sheets/{i}.pdf", content_hash="h", pages=7, chunks=35,
            triples=529, title=i.replace("_", " ").title(), created_at=now, updated_at=now,
        )
        for i in ids
    ]  # fmt: skip
    for width in (80, 100, 200):
        buf = io.StringIO()
        Console(file=buf, width=width).print(documents_table(docs))
        lines = buf.getvalue().splitlines()
        assert max(len(line) for line in lines) <= width, buf.getvalue()
        for i in ids:
            assert any(re.search(rf"(?<![\w-]){i}(?![\w-])", line) for line in lines), (width, i)
    short = docs[1:]
    buf = io.StringIO()
    Console(file=buf, width=80).print(documents_table(short))
    assert "┃ doc id" in buf.getvalue()  # short ids: still a table at 80 columns


# --- eval ----------------------------------------------------------------------------------


def _qa_file(tmp_path: Path) -> Path:
    items = [
        {
            "id": "S1",
            "type": "fact",
            "question": "What is the flash point of Examplon Solvent 99%?",
            "docs": ["samples/examplon-solvent-99.pdf"],
            "accept": ["-18 °C"],
            "evidence": [{"page": 1, "quote": "Flash point: -18 °C (closed cup)"}],
        },
        {
            "id": "S2",
            "type": "fact",
            "question": "What is the pH of Demoline Glass Cleaner?",
            "docs": ["samples/demoline-glass-cleaner.pdf"],
            "accept": ["10.5"],
            "evidence": [{"page": 1, "quote": "pH: 10.5"}],
        },
        {
            "id": "S3",
            "type": "unanswerable",
            "question": "What is the odour threshold of Brokenex Cleaner?",
            "docs": ["samples/brokenex.pdf"],
            "accept": [],
            "evidence": [],
        },
    ]
    qa = tmp_path / "qa.jsonl"
    qa.write_text("".join(json.dumps(i) + "\n" for i in items))
    return qa


@pytest.fixture
def eval_corpus(tmp_path: Path) -> Path:
    corpus = tmp_path / "corpus"
    sample_pdfs(corpus / "samples")
    (corpus / "samples" / "brokenex.pdf").write_bytes(b"%PDF-1.4 broken")
    return corpus


def test_eval_all_modes_goes_on_past_a_failed_document(tmp_path: Path, eval_corpus: Path) -> None:
    out = tmp_path / "results.jsonl"
    summary = tmp_path / "summary.json"
    result = run(
        "eval", _qa_file(tmp_path), "--corpus", eval_corpus, "--mode", "all",
        "--out", out, "--summary-out", summary, "--embedder", "hashing",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "brokenex.pdf" in result.output and "Failed documents" in result.output
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 9 and {r["mode"] for r in rows} == {"hybrid", "kg", "vector"}
    keys = {"id", "type", "question", "mode", "answer", "sources", "facts", "passages"}
    assert keys | {"sparql", "llm_calls", "latency_ms", "correct"} <= set(rows[0])
    by = {(r["id"], r["mode"]): r for r in rows}
    assert by["S1", "hybrid"]["correct"] and by["S2", "kg"]["correct"]
    assert ("S3", "hybrid") in by  # asked and scored although its document failed
    data = json.loads(summary.read_text())
    assert data["summary"]["hybrid"]["overall"] >= 2 / 3 and len(data["failed"]) == 1
    for mode in ("hybrid", "kg", "vector"):
        assert mode in result.output


def test_eval_scope_listed_and_extras(tmp_path: Path, eval_corpus: Path) -> None:
    names = tmp_path / "names.txt"
    names.write_text("samplex-acid-descaler-10.pdf\n")
    out = tmp_path / "r.jsonl"
    result = run(
        "eval", _qa_file(tmp_path), "--corpus", eval_corpus, "--scope", "listed",
        "--extra-list", f"{names}:samples", "--out", out, "--embedder", "hashing",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "ingesting 4 documents (3 named by the QA)" in result.output
    rows = {r["id"]: r for r in map(json.loads, out.read_text().splitlines())}
    assert {p["doc_id"] for p in rows["S1"]["passages"]} == {"examplon-solvent-99"}
    assert rows["S3"]["correct"]  # empty scope: abstains


def test_eval_grades_collection_questions_on_the_documents_named(
    tmp_path: Path, eval_corpus: Path
) -> None:
    from hybrid_rag.evaluation import grade_set, known_ids

    items = [
        {
            "id": "C1", "type": "classified", "docs": [], "accept": [],
            "question": "Which of our products are flammable liquids?",
            "gold_docs": ["examplon-solvent-99"],
        },
        {
            "id": "C2", "type": "classified", "docs": [], "accept": [],
            "question": "Which of our products are flammable liquids?",
            "gold_docs": ["demoline-glass-cleaner", "samplex-acid-descaler-10"],
        },
    ]  # fmt: skip
    qa = tmp_path / "collection.jsonl"
    qa.write_text("".join(json.dumps(i) + "\n" for i in items))
    out, summary = tmp_path / "r.jsonl", tmp_path / "s.json"
    result = run(
        "eval", qa, "--corpus", eval_corpus, "--extra", eval_corpus / "samples",
        "--scope", "listed", "--out", out, "--summary-out", summary, "--embedder", "hashing",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    rows = {r["id"]: r for r in map(json.loads, out.read_text().splitlines())}
    assert rows["C1"]["named"] == ["examplon-solvent-99"]  # asked unscoped despite "listed"
    assert rows["C1"]["correct"] and not rows["C2"]["correct"]
    assert (rows["C2"]["precision"], rows["C2"]["doc_recall"]) == (0.0, 0.0)
    known = known_ids(items, rows.values())
    for q in items:
        assert rows[q["id"]]["correct"] == grade_set(q, rows[q["id"]]["answer"], [], known).correct
    got = json.loads(summary.read_text())["summary"]["hybrid"]
    assert got["overall"] == 0.5 and got["precision"] == 0.5 and got["doc_recall"] == 0.5
    assert "recall (gold documents named)" in result.output and "wrong" not in got


def test_eval_reports_wrong_beside_accuracy(tmp_path: Path, eval_corpus: Path) -> None:
    items = [
        {
            "id": "W1", "type": "fact", "docs": ["samples/examplon-solvent-99.pdf"],
            "question": "What is the flash point of Examplon Solvent 99%?",
            "accept": ["-40 °C"],  # the sheet says -18 °C: the answer is (graded) wrong
        },
    ]  # fmt: skip
    qa = tmp_path / "w.jsonl"
    qa.write_text("".join(json.dumps(i) + "\n" for i in items))
    out, summary = tmp_path / "r.jsonl", tmp_path / "s.json"
    result = run(
        "eval", qa, "--corpus", eval_corpus, "--out", out, "--summary-out", summary,
        "--embedder", "hashing",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    row = json.loads(out.read_text())
    assert not row["correct"] and row["wrong"]
    assert json.loads(summary.read_text())["summary"]["hybrid"]["wrong"] == 1.0
    assert "wrong (asserts a false answer)" in result.output


def test_eval_bad_inputs_are_readable(tmp_path: Path, eval_corpus: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "x"}\n')
    result = run("eval", bad, "--corpus", eval_corpus, "--out", tmp_path / "o.jsonl")
    assert_one_line_error(result, "missing field(s)")
    qa = _qa_file(tmp_path)
    nolist = run("eval", qa, "--corpus", eval_corpus, "--out", tmp_path / "o.jsonl",
                 "--extra-list", tmp_path / "missing.txt")  # fmt: skip
    assert_one_line_error(nolist, "--extra-list file not found")


@pytest.mark.slow
@pytest.mark.skipif(not (EVAL / "qa-public.jsonl").is_file(), reason="shared eval set absent")
def test_eval_public_set_reproduces_reference_numbers(tmp_path: Path) -> None:
    summary = tmp_path / "summary.json"
    result = run(
        "eval", EVAL / "qa-public.jsonl", "--corpus", CORPUS, "--mode", "all",
        "--extra-list", f"{EVAL / 'public-docs.txt'}:laballey", "--extra", CORPUS / "libman",
        "--out", tmp_path / "r.jsonl", "--summary-out", summary, "--embedder", "hashing",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    got = json.loads(summary.read_text())["summary"]
    assert got["hybrid"]["overall"] >= 0.95
    assert got["hybrid"]["overall"] >= got["kg"]["overall"] >= got["vector"]["overall"]


# --- version, brief, environment, demo fallback --------------------------------------------


def test_version() -> None:
    from hybrid_rag import __version__

    result = run("--version")
    assert result.exit_code == 0 and result.stdout.strip() == f"hybrid-rag {__version__}"


def test_ask_brief_prints_answer_and_citations_only(store: Path) -> None:
    result = run(
        "ask", "What is the flash point of Examplon Solvent 99%?", "--store", store, "--brief"
    )
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert "-18" in lines[0] and "Citations:" in lines
    assert any(line.startswith("[1] examplon-solvent-99, page 1:") for line in lines)
    assert "Facts" not in result.stdout and "timings" not in result.stdout


def test_cli_says_which_parts_it_uses(store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HYBRID_RAG_LLM", "none")
    result = run("docs", "--store", store)
    assert result.exit_code == 0
    assert f"using embedded stores under {store}, embedder=hashing, llm=none" in result.stderr
    monkeypatch.setenv("HYBRID_RAG_LLM", "no-such-provider")
    bad = run("docs", "--store", store)
    assert_one_line_error(bad, "no-such-provider")


def test_demo_warns_when_the_corpus_is_missing(tmp_path: Path) -> None:
    result = run(
        "demo", "--store", tmp_path / "s", "--corpus", tmp_path / "nowhere", "--embedder", "hashing"
    )
    assert result.exit_code == 0, result.output
    assert "warning: no demo sheets under" in result.stderr and "sample sheets" in result.stderr
    assert "Examplon" in result.stdout
