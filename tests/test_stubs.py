"""The type stubs (scripts/gen_stubs.py): every public name has one, and mypy checks a small
training script against them, catching the mistakes they exist to catch."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

import cudalite
from conftest import mypy_env

PKG = Path(cudalite.__file__).parent
TYPING = Path(__file__).parent / "typing"


def _stub_names(path, cls=None):
    tree = ast.parse(path.read_text())
    body = tree.body
    if cls is not None:
        body = next(n for n in body if isinstance(n, ast.ClassDef) and n.name == cls).body
    names = set()
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.AnnAssign):
            names.add(node.target.id)
        elif isinstance(node, ast.ImportFrom):
            names.update(a.asname or a.name for a in node.names)
    return names


def test_package_is_typed():
    assert (PKG / "py.typed").exists()


def test_every_public_name_has_a_stub():
    missing = {n for n in dir(cudalite) if not n.startswith("_")} - _stub_names(
        PKG / "__init__.pyi"
    )
    missing -= {"annotations"}
    assert not missing, f"run scripts/gen_stubs.py: no stub for {sorted(missing)}"


def test_every_tensor_method_has_a_stub():
    public = {n for n in dir(cudalite.Tensor) if not n.startswith("_")}
    missing = public - _stub_names(PKG / "_C.pyi", "Tensor")
    assert not missing, f"run scripts/gen_stubs.py: no stub for Tensor.{sorted(missing)}"


def _mypy(script):
    pytest.importorskip("mypy")
    env = mypy_env(PKG)
    cmd = [sys.executable, "-m", "mypy", "--follow-imports=silent", "--no-incremental"]
    cmd += ["--cache-dir", os.devnull, str(TYPING / script)]
    return subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=TYPING, timeout=300)


def test_mypy_accepts_a_training_script():
    r = _mypy("train_mlp.py")
    assert r.returncode == 0, r.stdout + r.stderr


def test_mypy_catches_misuse():
    r = _mypy("misuse.py")
    errors = [line for line in r.stdout.splitlines() if ": error:" in line]
    lines = sorted(int(e.split(":")[1]) for e in errors)
    assert lines == [8, 9, 10], r.stdout


def test_the_training_script_runs():
    sys.path.insert(0, str(TYPING))
    try:
        import train_mlp
    finally:
        sys.path.remove(str(TYPING))
    loss = train_mlp.train(steps=3)
    assert loss == loss and loss >= 0.0
