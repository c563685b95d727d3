"""The tutorial notebooks in docs/notebooks run as they are, so they never rot.

Every code cell runs, on any machine: a cell that needs a GPU checks
``torch.cuda.is_available()`` itself and, without one, says what it would show. The cells run
in order in one namespace here, once as the machine is and once with no GPU visible, and
through a real Jupyter kernel (nbclient and ipykernel, in the ``[test]`` extra; skipped where
they are missing). ``python scripts/run_notebooks.py`` saves the outputs into the notebooks.
"""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

import pytest

BOOKS = sorted((pathlib.Path(__file__).parent.parent / "docs" / "notebooks").glob("*.ipynb"))


def _code_cells(path):
    return [c for c in json.loads(path.read_text())["cells"] if c["cell_type"] == "code"]


@pytest.mark.parametrize("path", BOOKS, ids=[p.name for p in BOOKS])
def test_notebook_runs(path, capsys):
    cells = _code_cells(path)
    assert cells, "a notebook without code"
    ns: dict = {}
    for cell in cells:
        exec(compile("".join(cell["source"]), f"{path.name}", "exec"), ns)  # noqa: S102
    assert capsys.readouterr().out  # every notebook prints what it shows


@pytest.mark.parametrize("path", BOOKS, ids=[p.name for p in BOOKS])
def test_notebook_runs_without_a_gpu(path):
    # With no GPU visible (as on a laptop), every cell still runs: the GPU cells say what they
    # would show.
    code = (
        "import json, sys\n"
        "cells = [c for c in json.load(open(sys.argv[1]))['cells'] if c['cell_type'] == 'code']\n"
        "ns = {}\n"
        "for c in cells:\n"
        "    exec(compile(''.join(c['source']), sys.argv[1], 'exec'), ns)\n"
    )
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="")
    out = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True,
                         env=env, timeout=300)  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert out.stdout


@pytest.mark.parametrize("path", BOOKS, ids=[p.name for p in BOOKS])
def test_notebook_runs_in_a_kernel(path, tmp_path, monkeypatch):
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    import nbformat

    import cudalite

    # The kernel runs in tmp_path: it finds the cudalite under test by an absolute path.
    paths = [str(pathlib.Path(cudalite.__file__).parents[1])]
    paths += [os.path.abspath(p) for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(paths))

    nb = nbformat.reads(path.read_text(), as_version=4)
    nbclient.NotebookClient(
        nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    ).execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert outputs
    assert not [o for o in outputs if o.get("output_type") == "error"]


def test_all_tutorials_are_here():
    assert len(BOOKS) >= 5


def test_saving_outputs_without_a_kernel(tmp_path, monkeypatch):
    # scripts/run_notebooks.py --in-process (for a GPU machine without Jupyter) records what a
    # kernel would: printed text as streams, a last expression's value as an execute_result.
    import cudalite

    paths = [str(pathlib.Path(cudalite.__file__).parents[1])]
    paths += [os.path.abspath(p) for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(paths))
    book = tmp_path / BOOKS[0].name
    book.write_text(BOOKS[0].read_text())
    script = pathlib.Path(__file__).parent.parent / "scripts" / "run_notebooks.py"
    out = subprocess.run([sys.executable, str(script), "--in-process", str(book)],
                         capture_output=True, text=True, timeout=300)  # fmt: skip
    assert out.returncode == 0, out.stderr
    cells = _code_cells(book)
    assert [c["execution_count"] for c in cells] == list(range(1, len(cells) + 1))
    kinds = {o["output_type"] for c in cells for o in c["outputs"]}
    assert kinds == {"stream", "execute_result"}
    results = [o for c in cells for o in c["outputs"] if o["output_type"] == "execute_result"]
    assert "device(type=" in "".join(results[0]["data"]["text/plain"])
