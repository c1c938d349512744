"""The ``hybrid-rag`` command: ingest, ask, docs, forget, repair, demo, eval and serve.

Imported only by the console script (``hybrid-rag = "hybrid_rag.cli:main"``), never by
``import hybrid_rag``, so typer and rich stay out of the library's import time.
Errors print one line and a hint (``--debug`` shows the traceback); see ``docs/cli.md``.
"""

from __future__ import annotations

import json
import logging
import os
import statistics
import sys
import tempfile
import textwrap
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer
from rich.console import Console
from rich.text import Text

from hybrid_rag import _cli_eval as ev
from hybrid_rag._cli_render import (
    IngestProgress,
    answer_view,
    documents_table,
    eval_table,
    failures_table,
    ingest_summary,
)
from hybrid_rag._display import cited_text
from hybrid_rag.errors import (
    ConfigurationError,
    DamagedStoreError,
    DiskFullError,
    DocumentError,
    DocumentExistsError,
    DocumentNotFoundError,
    DocumentTooLargeError,
    HybridRAGError,
    InputError,
    InvalidDocIdError,
    StoreError,
    StoreLockedError,
)
from hybrid_rag.evaluation import summarise
from hybrid_rag.ingest.inputs import DEFAULT_MAX_BYTES
from hybrid_rag.models import DocumentInfo, IngestReport
from hybrid_rag.rag import HybridRAG

__all__ = ["DEFAULT_STORE", "DEMO_STORE", "app", "demo", "main", "serve"]

DEFAULT_STORE = Path(".hybrid_rag")
"""The persistent store the commands use by default."""

DEMO_STORE = Path(".hybrid_rag_demo")
"""The demo's own store (``hybrid-rag demo``, ``examples/quickstart.py``): its sample
sheets never mix with your documents in ``DEFAULT_STORE``."""

app = typer.Typer(
    name="hybrid-rag",
    help="Agentic hybrid RAG: documents -> knowledge graph + chunks; answers with page citations.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


class AskMode(StrEnum):
    """Which chains answer: both, the knowledge graph only, or the vectors only."""

    hybrid = "hybrid"
    kg = "kg"
    vector = "vector"


class EvalMode(StrEnum):
    """An ask mode, or ``all`` for the three side by side."""

    hybrid = "hybrid"
    kg = "kg"
    vector = "vector"
    all = "all"


class Scope(StrEnum):
    """Eval question scope: the whole store, or each question's listed documents."""

    all = "all"
    listed = "listed"


class EmbedderName(StrEnum):
    """Embedder choice: local MiniLM when installed (auto), offline hashing, or local."""

    auto = "auto"
    hashing = "hashing"
    local = "local"


_state: dict[str, bool] = {"debug": False}

StoreOpt = Annotated[
    Path, typer.Option("--store", help="Store folder (persistent).", file_okay=False)
]
OntologyOpt = Annotated[
    str | None,
    typer.Option(
        "--ontology",
        help="A bundled ontology (msds: Safety Data Sheets, invoice) or a Turtle file. "
        "Default: HYBRID_RAG_ONTOLOGY, else the one the store was built with, else msds.",
    ),
]
EmbedderOpt = Annotated[
    EmbedderName | None,
    typer.Option(
        "--embedder",
        help="auto (local MiniLM when installed, else hashing), hashing or local. "
        "Default: the one the store was built with, else auto.",
    ),
]


# --- errors --------------------------------------------------------------------------------


_HINTS: list[tuple[type[BaseException], str]] = [
    (DocumentNotFoundError, "list the ingested documents with `hybrid-rag docs`"),
    (InvalidDocIdError, "doc ids use 1-128 characters from A-Z a-z 0-9 _ . -"),
    (DocumentTooLargeError, "raise the limit with --max-bytes if the file is meant to be read"),
    (DocumentExistsError, "give the document another --doc-id, or let it replace the old one"),
    (InputError, ""),  # the message says what is wrong with the argument
    (DocumentError, "check that the file is a readable PDF, text or Markdown file"),
    (StoreLockedError, "the message says what holds the store and what to do"),
    (DamagedStoreError, "nothing was changed or deleted; the message says how to repair"),
    (DiskFullError, "nothing was changed: free some disk space and run the command again"),
    (
        StoreError,
        "use the same --embedder as at ingest; if the store is damaged, re-ingest into a "
        "new --store",
    ),
    (ConfigurationError, "see the command's --help"),
    (ImportError, "install the missing extra named above"),
    (OSError, "check the path and its permissions"),
]


def _fail(message: str, hint: str, code: int = 1) -> NoReturn:
    err = Console(stderr=True, highlight=False)
    err.print(Text(f"error: {message}", style="bold red"), soft_wrap=True)
    if hint:
        err.print(Text(f"hint: {hint}", style="yellow"), soft_wrap=True)
    raise typer.Exit(code)


@contextmanager
def _guard() -> Iterator[None]:
    """Turn any exception into one readable line plus a hint (``--debug``: re-raise)."""
    try:
        yield
    except (typer.Exit, typer.Abort, typer.BadParameter):  # typer's own exits pass through
        raise
    except KeyboardInterrupt:
        _fail("interrupted", "a persistent store is left consistent; re-run to resume", 130)
    except Exception as exc:
        if _state["debug"]:
            raise
        hint = next((h for t, h in _HINTS if isinstance(exc, t)), None)
        if hint is None:
            _fail(f"{type(exc).__name__}: {exc}", "unexpected; re-run with --debug for details")
        _fail(str(exc) or type(exc).__name__, hint)


def _existing_store(store: Path) -> Path:
    if not store.is_dir():
        _fail(
            f"no store at {store}",
            f"ingest documents first: hybrid-rag ingest PATH --store {store}"
            + ("" if store == DEFAULT_STORE else " (or pass the right --store)"),
        )
    return store


_EMBEDDER_FILE = "cli-embedder.json"


def _resolved(name: str) -> str:
    if name != "auto":
        return name
    from hybrid_rag.providers import local_model_available

    return "local" if local_model_available() else "hashing"


def _recorded_embedder(store: Path) -> str | None:
    file = store / _EMBEDDER_FILE
    if not file.is_file():
        return None
    value = json.loads(file.read_text(encoding="utf-8")).get("embedder")
    return value if isinstance(value, str) else None


def _embedder_for(store: Path | None, requested: EmbedderName | None) -> str:
    """The embedder a store was built with wins; a different explicit one is an error."""
    recorded = _recorded_embedder(store) if store is not None else None
    if requested is None:
        return recorded or _resolved("auto")
    name = _resolved(requested.value)
    if recorded is not None and recorded != name:
        _fail(
            f"the store at {store} was built with the {recorded!r} embedder, not {name!r}",
            "omit --embedder (the store's own is used) or use a new --store",
        )
    return name


def _record(store: Path | None, name: str) -> None:
    """Remember the embedder a store is built with (next to the store's own files)."""
    if store is not None and _recorded_embedder(store) is None:
        store.mkdir(parents=True, exist_ok=True)
        (store / _EMBEDDER_FILE).write_text(json.dumps({"embedder": name}), encoding="utf-8")


def _say(message: str) -> None:
    """One dim line on stderr (stdout stays clean for --json and --brief)."""
    Console(stderr=True, highlight=False).print(Text(message, style="dim"), soft_wrap=True)


def _open(
    store: Path | None,
    embedder: EmbedderName | None,
    *,
    record: bool = False,
    ontology: str | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> HybridRAG:
    """The store's HybridRAG, with HANA stores and an LLM when ``from_env`` settings say so."""
    from hybrid_rag.config import resolve_components

    parts = resolve_components()
    onto = _ontology_for(store, ontology or parts.ontology)
    if parts.graph is not None or not isinstance(parts.embedder, str):
        _say(f"using {parts.description} (from the environment), ontology={onto}")
        return HybridRAG(
            store,
            ontology=onto,
            graph=parts.graph,
            vectors=parts.vectors,
            catalog=parts.catalog,
            embedder=parts.embedder,
            llm=parts.llm,
            max_bytes=max_bytes,
        )
    if embedder is None and parts.embedder in EmbedderName.__members__ and parts.embedder != "auto":
        embedder = EmbedderName(parts.embedder)
    name = _embedder_for(store, embedder)
    if record:
        _record(store, name)
    llm = parts.description.rsplit("llm=", 1)[-1]
    _say(
        f"using embedded stores under {store or 'memory'}, embedder={name}, llm={llm}, "
        f"ontology={onto}"
    )
    return HybridRAG(store, ontology=onto, embedder=name, llm=parts.llm, max_bytes=max_bytes)


def _ontology_for(store: Path | None, requested: str | None) -> str:
    """The ontology asked for, else the one the store was built with (when it can be
    loaded again: a bundled name or a file that is still there), else ``msds``."""
    from hybrid_rag._store_meta import read_ontology
    from hybrid_rag.packs import BUNDLED

    if requested:
        return requested
    recorded = read_ontology(store)
    if recorded is not None:
        source = recorded[1]
        if source.lower() in BUNDLED or Path(source).is_file():
            return source
    return "msds"


def _version(value: bool) -> None:
    if value:
        from hybrid_rag import __version__

        sys.stdout.write(f"hybrid-rag {__version__}\n")
        raise typer.Exit()


@app.callback()
def _root(
    debug: Annotated[bool, typer.Option("--debug", help="Show tracebacks and debug logs.")] = False,
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Print the version."),
    ] = False,
) -> None:
    """Agentic hybrid RAG over a knowledge graph and text chunks, with page citations."""
    _state["debug"] = debug or os.environ.get("HYBRID_RAG_DEBUG", "") not in ("", "0")
    level = logging.DEBUG if _state["debug"] else logging.ERROR
    logging.basicConfig(level=level, stream=sys.stderr, force=True)
    for handler in logging.getLogger().handlers:  # some libraries set DEBUG on their logger
        handler.setLevel(level)


# --- ingest --------------------------------------------------------------------------------


def _expand(paths: Sequence[Path]) -> list[Path]:
    from hybrid_rag.ingest.load import iter_files

    files: list[Path] = []
    for p in paths:
        if not p.exists():
            _fail(f"no such file or directory: {p}", "check the path")
        files += iter_files(p) if p.is_dir() else [p]
    return list(dict.fromkeys(files))


def _ingest_with_id(rag: HybridRAG, path: Path, doc_id: str) -> IngestReport:
    try:
        report = rag.ingest(path, doc_id=doc_id)
    except HybridRAGError as exc:
        if isinstance(exc, InvalidDocIdError):
            raise
        return IngestReport(
            doc_id=doc_id,
            source=str(path),
            status="failed",
            content_hash="",
            error=f"{type(exc).__name__}: {exc}",
        )
    assert isinstance(report, IngestReport)
    return report


def _run_ingest(
    rag: HybridRAG,
    files: Sequence[Path],
    *,
    console: Console,
    concurrency: int,
    doc_id: str | None = None,
    quiet: bool = False,
) -> tuple[list[IngestReport], float]:
    t0 = time.perf_counter()
    with IngestProgress(console, len(files), quiet=quiet) as bar:
        if doc_id is not None:
            reports = [_ingest_with_id(rag, files[0], doc_id)]
            bar.update(reports[0])
        else:
            reports = rag.ingest_many(files, concurrency=concurrency, progress=bar.update)
    return reports, time.perf_counter() - t0


def _print_reports(console: Console, reports: Sequence[IngestReport], seconds: float) -> None:
    console.print(ingest_summary(reports, seconds))
    failed = failures_table(reports)
    if failed is not None:
        console.print(failed)


@app.command()
def ingest(
    paths: Annotated[
        list[Path], typer.Argument(help="Files and folders (folders are searched recursively).")
    ],
    store: StoreOpt = DEFAULT_STORE,
    doc_id: Annotated[
        str | None, typer.Option("--doc-id", help="Id for the document (one file only).")
    ] = None,
    concurrency: Annotated[
        int, typer.Option("--concurrency", min=1, max=64, help="Documents in flight.")
    ] = 4,
    allow_failures: Annotated[
        bool,
        typer.Option("--allow-failures", help="Exit 0 even when some documents failed."),
    ] = False,
    embedder: EmbedderOpt = None,
    ontology: OntologyOpt = None,
    max_bytes: Annotated[
        int,
        typer.Option(
            "--max-bytes",
            min=1,
            help="Largest document read, in bytes (larger ones fail at once). "
            "Default: 52428800 (50 MiB).",
        ),
    ] = DEFAULT_MAX_BYTES,
) -> None:
    """Ingest documents: same bytes are skipped, changed bytes replace the old version.

    Only regular files are read (named pipes and devices fail at once). A replace keeps
    the old version until the new one is complete. Exit code 0 only when no document
    failed (or with --allow-failures).
    """
    console = Console(highlight=False)
    with _guard():
        files = _expand(paths)
        if not files:
            _fail(
                "no supported documents found",
                "give .pdf, .docx, .html, .txt, .md or image files, or folders",
            )
        if doc_id is not None and len(files) != 1:
            _fail(f"--doc-id needs exactly one file, got {len(files)}", "ingest one file")
        with _open(store, embedder, record=True, ontology=ontology, max_bytes=max_bytes) as rag:
            reports, seconds = _run_ingest(
                rag, files, console=console, concurrency=concurrency, doc_id=doc_id
            )
        _print_reports(console, reports, seconds)
    if any(r.status == "failed" for r in reports) and not allow_failures:
        raise typer.Exit(1)


# --- ask, docs, forget ---------------------------------------------------------------------


def _split_ids(docs: str | None) -> list[str] | None:
    if docs is None:
        return None
    ids = [d.strip() for d in docs.split(",") if d.strip()]
    if not ids:
        _fail("--docs is empty", "give comma-separated doc ids, e.g. --docs a,b")
    return ids


@app.command()
def ask(
    question: Annotated[str, typer.Argument(help="The question (quote it).")],
    store: StoreOpt = DEFAULT_STORE,
    docs: Annotated[
        str | None, typer.Option("--docs", help="Comma-separated doc ids to search (default all).")
    ] = None,
    mode: Annotated[AskMode, typer.Option("--mode", help="Which chains answer.")] = AskMode.hybrid,
    as_json: Annotated[bool, typer.Option("--json", help="Print the Answer as JSON.")] = False,
    brief: Annotated[
        bool, typer.Option("--brief", help="Print only the answer and its citations.")
    ] = False,
    top_k: Annotated[
        int | None, typer.Option("--top-k", min=1, help="Passages from the vector chain.")
    ] = None,
    embedder: EmbedderOpt = None,
    ontology: OntologyOpt = None,
) -> None:
    """Ask a question: the answer, facts with page citations, passages, SPARQL, timings."""
    with _guard():
        scope = _split_ids(docs)
        with _open(_existing_store(store), embedder, ontology=ontology) as rag:
            if not rag.documents():
                _fail(f"the store at {store} has no documents", "run `hybrid-rag ingest PATH`")
            answer = rag.ask(question, docs=scope, mode=mode.value, top_k=top_k)
        if as_json:
            sys.stdout.write(answer.model_dump_json(indent=2) + "\n")
        elif brief:
            sys.stdout.write(cited_text(answer) + "\n")
        else:
            Console(highlight=False).print(answer_view(answer))


@app.command("docs")
def docs_cmd(
    store: StoreOpt = DEFAULT_STORE,
    as_json: Annotated[bool, typer.Option("--json", help="Print the entries as JSON.")] = False,
) -> None:
    """List the ingested documents (also while another process, e.g. a service, writes)."""
    with _guard():
        docs = _documents(_existing_store(store))
    if as_json:
        sys.stdout.write(json.dumps([d.model_dump(mode="json") for d in docs], indent=2) + "\n")
    else:
        Console(highlight=False).print(documents_table(docs))


def _documents(store: Path) -> list[DocumentInfo]:
    """The catalog; read-only beside the process that holds the store, if one does."""
    try:
        with _open(store, None) as rag:
            return list(rag.documents())
    except StoreLockedError as exc:
        from hybrid_rag.stores.catalog import SqliteCatalog

        if not (store / "catalog.sqlite").is_file():
            raise
        _say(f"read beside the writer that holds the store ({exc.holder or f'pid {exc.pid}'})")
        with SqliteCatalog(store / "catalog.sqlite", read_only=True) as catalog:
            return catalog.list()


@app.command()
def forget(
    doc_id: Annotated[str, typer.Argument(help="The doc id to remove (see `hybrid-rag docs`).")],
    store: StoreOpt = DEFAULT_STORE,
) -> None:
    """Remove a document from the catalog, the graph and the vectors."""
    with _guard(), _open(_existing_store(store), None) as rag:
        rag.forget(doc_id)
    Console(highlight=False).print(Text(f"forgot {doc_id}"))


@app.command()
def repair(
    store: StoreOpt = DEFAULT_STORE,
    embedder: Annotated[
        str | None,
        typer.Option(
            "--embedder",
            help="The store's embedder (default: the one store.json records); needed to "
            "embed damaged vectors again, or to write a lost store.json.",
        ),
    ] = None,
) -> None:
    """Check a store and repair it: rebuild the catalog from the graph and the chunks,
    embed damaged vectors again, undo unfinished writes. Nothing is deleted: damaged files
    are moved aside, incomplete documents exported. Exit code 1 when something could not
    be repaired (restore it from a backup).
    """
    from hybrid_rag.repair import repair_store

    console = Console(highlight=False)
    with _guard():
        report = repair_store(_existing_store(store), embedder=embedder)
        for title, lines in (
            ("found", report.found),
            ("done", report.done),
            ("to ingest again (their data was lost to the damage)", report.lost),
            ("not repaired", report.unrepaired),
        ):
            if lines:
                console.print(Text(f"{title}:", style="bold"))
                for line in lines:
                    console.print(Text(f"  - {line}"), soft_wrap=True)
        if report.ok:
            docs = _documents(store)
            console.print(Text(f"the store at {store} opens cleanly: {len(docs)} documents"))
    if not report.ok:
        raise typer.Exit(1)


# --- demo ----------------------------------------------------------------------------------

_REAL = [
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
_SAMPLE_QUESTIONS = [
    "Give the flash point of Examplon Solvent 99%.",
    "Samplex Acid Descaler 10% splashed into someone's eyes: what first aid?",
]


def _corpus_candidates(corpus: Path | None) -> list[Path]:
    if corpus is not None:
        return [corpus]
    return [
        Path.cwd().parent / "shared" / "corpus" / "sds",
        Path(__file__).resolve().parents[2] / "shared" / "corpus" / "sds",
    ]


def demo_documents(corpus: Path | None = None) -> tuple[list[Path], list[str]]:
    """The quickstart's sheets: three real ones when the corpus is there, else the samples."""
    for root in _corpus_candidates(corpus):
        folder = root / "laballey"
        if all((folder / name).is_file() for name, _q in _REAL):
            return [folder / n for n, _q in _REAL], [q for _n, q in _REAL if q]
    from hybrid_rag.samples import sample_pdfs

    folder = Path(tempfile.mkdtemp(prefix="hybrid_rag_samples_"))
    return sample_pdfs(folder), list(_SAMPLE_QUESTIONS)


def _demo_line(r: IngestReport) -> str:
    counts = f"{r.pages} pages, {r.chunks} chunks, {r.triples} triples"
    return f"{r.status:9s} {r.doc_id}: {counts}" + (f" ({r.error})" if r.error else "")


def demo(
    store: Path = DEMO_STORE,
    *,
    corpus: Path | None = None,
    embedder: str = "auto",
    console: Console | None = None,
) -> int:
    """What ``examples/quickstart.py`` does: ingest a few sheets, ask two questions.

    Args:
        store: Persistent store folder (a second run skips unchanged documents); by
            default the demo's own, never the store your documents go to.
        corpus: The ``sds`` corpus folder; default ``../shared/corpus/sds`` when present,
            else the sample sheets shipped with the library.
        embedder: Embedder spec for ``HybridRAG``.
        console: Where to print (default stdout).

    Returns:
        The exit code (0).
    """
    out = console or Console(highlight=False)
    paths, questions = demo_documents(corpus)
    if corpus is not None and not paths[0].is_relative_to(corpus):
        _say(
            f"warning: no demo sheets under {corpus / 'laballey'}; "
            "using the sample sheets shipped with the library"
        )
    with HybridRAG(store, embedder=embedder) as rag:
        for r in rag.ingest_many(paths):
            out.print(Text(_demo_line(r)), soft_wrap=True)
        for question in questions:
            answer = rag.ask(question)
            out.print(Text(f"\nQ: {question}\nA: {answer.text}"), soft_wrap=True)
            for e in answer.citations[:3]:
                quote = textwrap.shorten(e.quote, 90, placeholder=" …")
                out.print(Text(f'   cited: {e.doc_id}, page {e.page}: "{quote}"'), soft_wrap=True)
            total = answer.timings.get("total_ms")
            out.print(Text(f"   sources={answer.sources} total={total} ms"))
    out.print(Text(f"\n(the demo's own store: {store}; your documents: hybrid-rag ingest PATH)"))
    return 0


@app.command("demo")
def demo_cmd(
    store: Annotated[
        Path,
        typer.Option(
            "--store", help="Store folder for the demo (its own by default).", file_okay=False
        ),
    ] = DEMO_STORE,
    corpus: Annotated[
        Path | None,
        typer.Option("--corpus", help="The sds corpus folder (default ../shared/corpus/sds)."),
    ] = None,
    embedder: EmbedderOpt = None,
) -> None:
    """The quickstart: ingest a few Safety Data Sheets, ask two questions with citations."""
    with _guard():
        name = _embedder_for(store, embedder)
        _record(store, name)
        demo(store, corpus=corpus, embedder=name)


# --- serve ---------------------------------------------------------------------------------


@app.command()
def serve(
    store: StoreOpt = DEFAULT_STORE,
    host: Annotated[str, typer.Option("--host", help="Interface to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=0, max=65535, help="TCP port.")] = 8000,
    max_upload_mb: Annotated[
        int,
        typer.Option(
            "--max-upload-mb", min=1, help="Largest request body (and document) accepted."
        ),
    ] = 50,
    api_docs: Annotated[
        bool,
        typer.Option(
            "--api-docs/--no-api-docs",
            help="Serve /docs and /openapi.json (behind the API key when keys are set).",
        ),
    ] = True,
    embedder: EmbedderOpt = None,
    ontology: OntologyOpt = None,
) -> None:
    """Run the HTTP service over a store (needs the [server] extra; see docs/guides/service.md).

    API keys come from HYBRID_RAG_API_KEYS (comma-separated); without it the service is open.
    """
    with _guard():
        from hybrid_rag.server import API_KEYS_ENV, create_app

        try:
            import uvicorn
        except ImportError as exc:
            raise ImportError("uvicorn is missing: pip install 'hybrid-rag[server]'") from exc
        from hybrid_rag.stores._lock import describe_holder

        describe_holder(f"the hybrid-rag service at http://{host}:{port} (POST /ask)")
        limit = max_upload_mb * 2**20
        with _open(store, embedder, record=True, ontology=ontology, max_bytes=limit) as rag:
            app_ = create_app(rag, max_upload_bytes=limit, api_docs=api_docs)
            auth = "API keys required" if os.environ.get(API_KEYS_ENV) else "no API keys (open)"
            _say(f"serving on http://{host}:{port} ({auth})")
            uvicorn.run(app_, host=host, port=port, log_level="warning")


# --- eval ----------------------------------------------------------------------------------


def _eval_ingest(
    rag: HybridRAG, plan: ev.EvalPlan, console: Console, concurrency: int
) -> list[IngestReport]:
    files = plan.sources
    console.print(Text(f"ingesting {len(files)} documents ({len(plan.qa_docs)} named by the QA)"))
    reports, seconds = _run_ingest(rag, files, console=console, concurrency=concurrency, quiet=True)
    _print_reports(console, reports, seconds)
    return reports


def _latency(rows: Sequence[dict[str, Any]]) -> dict[str, float]:
    modes = dict.fromkeys(r["mode"] for r in rows)
    return {m: statistics.median(r["latency_ms"] for r in rows if r["mode"] == m) for m in modes}


def _write_summary(
    path: Path,
    payload: dict[str, Any],
    reports: Sequence[IngestReport],
    summary: dict[str, dict[str, float]],
    latency: dict[str, float],
) -> None:
    failed = [{"source": r.source, "error": r.error} for r in reports if r.status == "failed"]
    payload = {
        **payload,
        "documents": len(reports),
        "failed": failed,
        "summary": summary,
        "p50_latency_ms": latency,
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")


@app.command("eval")
def eval_cmd(
    qa: Annotated[Path, typer.Argument(help="QA file (JSONL).", exists=True, dir_okay=False)],
    corpus: Annotated[
        Path, typer.Option("--corpus", help="Folder the QA 'docs' paths are relative to.")
    ],
    out: Annotated[Path, typer.Option("--out", help="Results: one JSON line per question.")],
    store: Annotated[
        Path | None,
        typer.Option("--store", help="Persistent store (default: a fresh in-memory store)."),
    ] = None,
    mode: Annotated[EvalMode, typer.Option("--mode", help="Ask mode, or all.")] = EvalMode.hybrid,
    scope: Annotated[
        Scope, typer.Option("--scope", help="all: the whole store; listed: each item's docs.")
    ] = Scope.all,
    extra: Annotated[
        list[Path] | None, typer.Option("--extra", help="Folder of distractor documents (repeat).")
    ] = None,
    extra_list: Annotated[
        list[str] | None,
        typer.Option(
            "--extra-list",
            metavar="FILE[:DIR]",
            help="File of document names in DIR (relative to --corpus; default --corpus).",
        ),
    ] = None,
    summary_out: Annotated[
        Path | None, typer.Option("--summary-out", help="Also write the summary as JSON.")
    ] = None,
    concurrency: Annotated[int, typer.Option("--concurrency", min=1, max=64)] = 4,
    embedder: EmbedderOpt = None,
    ontology: OntologyOpt = None,
    llm: Annotated[
        str | None,
        typer.Option(
            "--llm",
            metavar="PROVIDER:MODEL",
            help="Answer with this model (openai:<model> or aicore:<model>; credentials from "
            "the environment as for HYBRID_RAG_LLM): LLM routing, SPARQL and synthesis.",
        ),
    ] = None,
    timeout: Annotated[
        float | None,
        typer.Option(
            "--timeout",
            min=1.001,
            help="Seconds per question (routing, retrieval and the answer, model calls "
            "included; default 30). A model on a CPU needs minutes.",
        ),
    ] = None,
) -> None:
    """Ingest a QA file's documents (plus distractors), ask every question, grade, summarise."""
    console = Console(highlight=False)
    with _guard():
        items = ev.load_qa(qa)
        plan = ev.plan_sources(items, corpus, extra_dirs=extra or [], extra_lists=extra_list or [])
        modes = ev.MODES if mode is EvalMode.all else (mode.value,)
        t0 = time.perf_counter()
        with _open(store, embedder, record=True, ontology=ontology) as rag:
            reports = _eval_ingest(rag, plan, console, concurrency)
            ids = ev.map_doc_ids(plan, reports) if scope is Scope.listed else None
            with ev.answering_with(rag, llm):
                rows = ev.ask_all(rag, items, modes, doc_ids=ids, timeout=timeout)
        ev.write_rows(out, rows)
        summary, latency = summarise(rows), _latency(rows)
        console.print(eval_table(summary, latency))
        console.print(Text(f"{len(rows)} answers written to {out}", style="dim"))
        if summary_out is not None:
            payload = {
                "qa": str(qa),
                "modes": list(modes),
                "scope": scope.value,
                "embedder": _embedder_for(store, embedder),
                "llm": llm or "none",
                "timeout": timeout,
                "seconds": round(time.perf_counter() - t0, 1),
            }
            _write_summary(summary_out, payload, reports, summary, latency)


def main(argv: Sequence[str] | None = None) -> None:
    """Console-script entry point (``hybrid-rag``)."""
    app(args=list(argv) if argv is not None else None, prog_name="hybrid-rag")


if __name__ == "__main__":
    main()
