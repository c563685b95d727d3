"""Runs the notebooks in docs/notebooks through a Jupyter kernel and saves their outputs.

Run it on a GPU machine so that the saved outputs show the GPU cells' results:

    pip install '.[test]' && python scripts/run_notebooks.py [notebook.ipynb ...]
"""

import pathlib
import sys

import nbclient
import nbformat

ROOT = pathlib.Path(__file__).resolve().parents[1]


def main(paths):
    for path in paths or sorted((ROOT / "docs" / "notebooks").glob("*.ipynb")):
        path = pathlib.Path(path)
        nb = nbformat.reads(path.read_text(), as_version=4)
        nbclient.NotebookClient(nb, timeout=300, kernel_name="python3").execute()
        path.write_text(nbformat.writes(nb) + "\n")
        print(f"{path.name}: {sum(c.cell_type == 'code' for c in nb.cells)} code cells run")


if __name__ == "__main__":
    main(sys.argv[1:])
