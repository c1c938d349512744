"""Render an executed notebook's `Answer` in a real browser, as three front ends style it.

A manual check (not collected by pytest; it needs Debian's `chromium` and nbconvert):

    .venv/bin/pip install nbconvert
    pip download jupyterlab --no-deps -d /tmp/jl     # the real JupyterLab CSS, from PyPI
    .venv/bin/python tests/browser_check.py /tmp/jl/jupyterlab-*.whl OUT_DIR

It executes a notebook (ingest, ask, show the `Answer`, an `IngestReport` and the document
list), exports it with nbconvert's `lab` template plus the rendermime stylesheet of the
given JupyterLab wheel, with the `classic` template (classic Notebook's stylesheet), and as
a bare page with VS Code's forced table rules (`text-align: left !important` on table, th,
tr; `border: none !important` on cells). Chromium (headless) then screenshots each page
and reads every table cell's computed `text-align` and line count; the script fails when a
text cell is not left-aligned, a number not right-aligned, a header row is empty, or an id
wraps inside a word. Text cells are meant left, numbers (page, score, counts) right.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbconvert import HTMLExporter

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "sds"
FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip

SETUP = f"""
from pathlib import Path
from hybrid_rag import HybridRAG
from hybrid_rag.samples import sample_pdfs
corpus = Path({str(CORPUS)!r})
files = sorted((corpus / "libman").glob("*.pdf"))[:3] if corpus.is_dir() else []
files = files or sample_pdfs("sheets")
rag = HybridRAG(embedder="hashing")
reports = rag.ingest_many(files)
question = "What is the flash point of " + (rag.documents()[0].title or "it") + "?"
"""

PROBE = """
<script>
function lineBreaks(cell) {  // the characters after which the browser wrapped a line
  const after = [], walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
  let top = null, prev = '';
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    for (let i = 0; i < node.length; i++) {
      const r = document.createRange();
      r.setStart(node, i); r.setEnd(node, i + 1);
      const box = r.getBoundingClientRect();
      if (top !== null && box.top > top + 2) after.push(prev);
      top = box.top; prev = node.data[i];
    }
  }
  return after;
}
window.addEventListener('load', () => {
  document.querySelectorAll('details').forEach(d => { d.open = true; });
  const out = [];
  document.querySelectorAll('.hrag table').forEach(t => {
    t.querySelectorAll('tr').forEach(tr => {
      const cells = [...tr.children].filter(c => c.tagName === 'TD' || c.tagName === 'TH');
      out.push({row: cells.map(c => {
        return {tag: c.tagName, text: c.innerText, align: getComputedStyle(c).textAlign,
                meant: c.style.textAlign,
                id: c.innerHTML.includes('<wbr>'), breaks: lineBreaks(c)};
      })});
    });
  });
  const pre = document.createElement('pre');
  pre.id = 'probe';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});
</script>
"""

VSCODE_RULES = (
    "<style>table,thead,tr,th,td,tbody{border:none!important}"
    "table,th,tr{text-align:left!important}table{width:100%}</style>"
)


def _notebook(work: Path) -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell(SETUP),
        nbformat.v4.new_code_cell("rag.ask(question)"),
        nbformat.v4.new_code_cell("reports[0]"),
        nbformat.v4.new_code_cell("rag.documents()"),
    ]
    NotebookClient(nb, timeout=300, resources={"metadata": {"path": str(work)}}).execute()
    return nb


def _lab_css(wheel: Path) -> str:
    """The rendermime stylesheet JupyterLab ships (a CSS module inside its core bundle)."""
    with zipfile.ZipFile(wheel) as z:
        name = next(n for n in z.namelist() if re.search(r"static/jlab_core\.[0-9a-f]+\.js$", n))
        js = z.read(name).decode("utf-8")
    i = js.index(":not(.jp-RenderedMarkdown).jp-RenderedHTMLCommon td")
    return js[js.rindex("`", 0, i) + 1 : js.index("`", i)]


def _pages(nb: nbformat.NotebookNode, lab_css: str, out: Path) -> dict[str, Path]:
    lab, _ = HTMLExporter(template_name="lab").from_notebook_node(nb)
    classic, _ = HTMLExporter(template_name="classic").from_notebook_node(nb)
    outputs = [o for c in nb.cells for o in c.get("outputs", [])]
    html = [o["data"]["text/html"] for o in outputs if "text/html" in o.get("data", {})]
    vscode = f"<html><head>{VSCODE_RULES}</head><body>{''.join(html)}</body></html>"
    pages = {
        "jupyterlab": lab.replace("</head>", f"<style>{lab_css}</style></head>"),
        "classic": classic,
        "vscode": vscode,
    }
    paths = {}
    for name, page in pages.items():
        paths[name] = out / f"{name}.html"
        paths[name].write_text(page.replace("</body>", PROBE + "</body>"), encoding="utf-8")
    return paths


def _chromium(page: Path, *args: str) -> str:
    with tempfile.TemporaryDirectory() as profile:
        cmd = ["chromium", *FLAGS, f"--user-data-dir={profile}", *args, page.as_uri()]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=True).stdout


def _problems(name: str, rows: list[dict[str, list[dict[str, object]]]]) -> list[str]:
    found = []
    for r in rows:
        cells = r["row"]
        if not any(str(c["text"]).strip() for c in cells):
            found.append(f"{name}: an empty row {cells}")
        for c in cells:
            text = str(c["text"]).strip()
            prose = re.search(r"[A-Za-z]{2}", text) is not None and c["meant"] == "left"
            if c["tag"] == "TD" and (c["align"] != c["meant"] or (prose and c["align"] != "left")):
                found.append(f"{name}: {text[:40]!r} is aligned {c['align']}, not {c['meant']}")
            inside = [b for b in c["breaks"] if b not in "-_./ "]  # type: ignore[union-attr]
            if c["id"] and inside:
                found.append(f"{name}: id {text!r} wraps inside a word (after {inside})")
    return found


def main(wheel: str, out_dir: str) -> int:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    nb = _notebook(out)
    problems: list[str] = []
    for name, page in _pages(nb, _lab_css(Path(wheel)), out).items():
        _chromium(page, f"--screenshot={out / f'{name}.png'}", "--window-size=1200,2200")
        dom = _chromium(page, "--dump-dom", "--virtual-time-budget=5000")
        probe = re.search(r'<pre id="probe">(.*?)</pre>', dom, flags=re.S)
        assert probe, f"{name}: the probe did not run"
        rows = json.loads(probe.group(1).replace("&quot;", '"').replace("&amp;", "&"))
        problems += _problems(name, rows)
        print(f"{name}: {len(rows)} table rows checked, screenshot {out / f'{name}.png'}")
    print("\n".join(problems) or "every cell aligned, no empty rows, no id broken mid-word")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
