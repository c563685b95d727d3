"""The tutorial notebooks in docs/notebooks run as they are, so they never rot.

Code cells run in order in one namespace (no Jupyter needed); a cell whose first line is
``# requires: cuda`` runs only where a GPU is visible.
"""

from __future__ import annotations

import json
import pathlib

import pytest

import cudalite

BOOKS = sorted((pathlib.Path(__file__).parent.parent / "docs" / "notebooks").glob("*.ipynb"))


@pytest.mark.parametrize("path", BOOKS, ids=[p.name for p in BOOKS])
def test_notebook_runs(path, capsys):
    cells = [c for c in json.loads(path.read_text())["cells"] if c["cell_type"] == "code"]
    assert cells, "a notebook without code"
    ns: dict = {}
    ran = 0
    for cell in cells:
        src = "".join(cell["source"])
        if src.startswith("# requires: cuda") and not cudalite.cuda.is_available():
            continue
        exec(compile(src, f"{path.name}", "exec"), ns)  # noqa: S102 - our own notebooks
        ran += 1
    assert ran >= 1
    assert capsys.readouterr().out  # every notebook prints what it shows


def test_all_tutorials_are_here():
    assert len(BOOKS) >= 5
