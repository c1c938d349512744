"""The notebooks in examples/ run top to bottom on the shipped samples (nbclient, a real kernel)."""

from __future__ import annotations

from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat", reason="needs nbformat ([dev] extra)")
nbclient = pytest.importorskip("nbclient", reason="needs nbclient ([dev] extra)")
pytest.importorskip("ipykernel", reason="needs ipykernel ([dev] extra)")

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
NOTEBOOKS = sorted(EXAMPLES.glob("*.ipynb"))


def test_the_four_notebooks_are_there() -> None:
    names = {p.stem for p in NOTEBOOKS}
    assert {"quickstart", "langchain_agent", "custom_store", "hana"} <= names


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs_without_errors_or_warnings(path: Path, tmp_path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code"), (
        f"{path.name} is committed with outputs; clear them"
    )
    client = nbclient.NotebookClient(
        nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    )
    client.execute()  # raises CellExecutionError on the first failing cell
    stderr = [
        o["text"]
        for c in nb.cells
        if c.cell_type == "code"
        for o in c.outputs
        if o.get("name") == "stderr"
    ]
    assert not any("Warning" in text for text in stderr), stderr
    if path.stem == "quickstart":
        html = [
            o for c in nb.cells for o in c.get("outputs", []) if "text/html" in o.get("data", {})
        ]
        assert any(
            "Citations" in o["data"]["text/html"] or "<table" in o["data"]["text/html"]
            for o in html
        )
