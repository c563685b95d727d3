"""Runs the notebooks in docs/notebooks and saves their outputs into them.

Run it on a GPU machine so that the saved outputs show the GPU cells' results:

    pip install '.[test]' && python scripts/run_notebooks.py [notebook.ipynb ...]

With nbclient and ipykernel (the ``[test]`` extra) the cells run in a Jupyter kernel. Where they
are missing (an offline GPU machine), ``--in-process`` (chosen automatically) runs the cells in
order in one namespace of this interpreter, as a kernel would, and records what a kernel
records: each cell's printed output and the value of its last expression.
"""

import ast
import contextlib
import io
import json
import os
import pathlib
import subprocess
import sys
import traceback

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _run_with_kernel(path):
    import nbclient
    import nbformat

    nb = nbformat.reads(path.read_text(), as_version=4)
    nbclient.NotebookClient(nb, timeout=300, kernel_name="python3").execute()
    path.write_text(nbformat.writes(nb) + "\n")
    return sum(c.cell_type == "code" for c in nb.cells)


def _lines(text):
    return text.splitlines(keepends=True)


def _run_cell(source, ns, name):
    """A cell's outputs as a kernel records them: the streams, then the last expression's repr."""
    tree = ast.parse(source, name)
    last = None
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = ast.Expression(tree.body.pop().value)
    out, err = io.StringIO(), io.StringIO()
    value = None
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        exec(compile(tree, name, "exec"), ns)  # noqa: S102
        if last is not None:
            value = eval(compile(last, name, "eval"), ns)  # noqa: S307
    outputs = [
        {"name": stream, "output_type": "stream", "text": _lines(buf.getvalue())}
        for stream, buf in (("stdout", out), ("stderr", err))
        if buf.getvalue()
    ]
    return outputs, value


def _run_in_process(path):
    nb = json.loads(path.read_text())
    ns = {"__name__": "__main__"}
    count = 0
    for cell in nb["cells"]:
        if cell["cell_type"] != "code":
            continue
        count += 1
        try:
            outputs, value = _run_cell("".join(cell["source"]), ns, f"{path.name}[{count}]")
        except Exception as e:
            raise RuntimeError(
                f"{path.name}, code cell {count} failed:\n{traceback.format_exc()}"
            ) from e
        if value is not None:
            outputs.append(
                {
                    "data": {"text/plain": _lines(repr(value))},
                    "execution_count": count,
                    "metadata": {},
                    "output_type": "execute_result",
                }
            )
        cell["execution_count"] = count
        cell["outputs"] = outputs
    path.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n")
    return count


def main(argv):
    in_process = "--in-process" in argv
    paths = [a for a in argv if a != "--in-process"]
    if not in_process:
        try:
            import ipykernel  # noqa: F401
            import nbclient  # noqa: F401
        except ImportError:
            in_process = True
    paths = [pathlib.Path(p).resolve() for p in paths] or sorted(
        (ROOT / "docs" / "notebooks").glob("*.ipynb")
    )
    if in_process and len(paths) > 1:
        # One process per notebook, as each gets its own kernel.
        for path in paths:
            subprocess.run([sys.executable, __file__, "--in-process", str(path)], check=True)
        return
    for path in paths:
        if in_process:
            os.chdir(path.parent)  # a kernel starts in the notebook's folder
            print(f"{path.name}: {_run_in_process(path)} code cells run (in process)")
        else:
            print(f"{path.name}: {_run_with_kernel(path)} code cells run")


if __name__ == "__main__":
    main(sys.argv[1:])
