"""The cudalite namespace: lazily loaded names in dir(), no helper modules leaking, types."""

from __future__ import annotations

import pathlib
import subprocess
import sys
import types

import pytest

import cudalite
from conftest import mypy_env

ROOT = pathlib.Path(__file__).resolve().parents[1]
LAZY = [
    "nn",
    "optim",
    "utils",
    "testing",
    "serialization",
    "accelerator",
    "multiprocessing",
    "save",
    "load",
    "UntypedStorage",
]
# The submodules cudalite's namespace holds (torch's names).
SUBMODULES = {
    "autograd",
    "backends",
    "cuda",
    "random",
    "version",
    "nn",
    "optim",
    "utils",
    "testing",
    "serialization",
    "accelerator",
    "return_types",
    "storage",
    "amp",
    "distributed",
    "multiprocessing",
}


@pytest.mark.parametrize("name", LAZY)
def test_lazy_names_are_listed_and_load(name):
    assert name in dir(cudalite)
    assert getattr(cudalite, name) is not None


def test_lazy_names_are_not_imported_by_import():
    code = (
        "import sys, cudalite; "
        "print(sorted(m for m in ('nn', 'optim', 'utils', 'testing', 'serialization', "
        "'accelerator', 'storage') if f'cudalite.{m}' in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_dir_has_what_torch_scripts_use():
    names = set(dir(cudalite))
    for n in (
        "device",
        "tensor",
        "zeros",
        "set_num_threads",
        "get_num_threads",
        "version",
        "use_deterministic_algorithms",
        "are_deterministic_algorithms_enabled",
        "backends",
        "cuda",
        "__version__",
        "nn",
        "optim",
        "save",
        "load",
    ):
        assert n in names, n
    assert dir(cudalite) == sorted(dir(cudalite))


def test_no_helper_module_leaks():
    public_modules = {
        n
        for n in dir(cudalite)
        if not n.startswith("_") and isinstance(getattr(cudalite, n), types.ModuleType)
    }
    assert public_modules <= SUBMODULES, public_modules - SUBMODULES
    for helper in (
        "os",
        "sys",
        "math",
        "warnings",
        "typing",
        "importlib",
        "builtins",
        "TYPE_CHECKING",
        "Any",
    ):
        assert helper not in dir(cudalite), helper
        msg = f"^module 'cudalite' has no attribute '{helper}'$"
        with pytest.raises(AttributeError, match=msg):
            getattr(cudalite, helper)


def test_unknown_attribute():
    with pytest.raises(AttributeError, match="^module 'cudalite' has no attribute 'nope'$"):
        cudalite.nope  # noqa: B018


def test_mypy_infers_lazy_names(tmp_path, monkeypatch):
    mypy = pytest.importorskip("mypy.api")
    env = mypy_env(pathlib.Path(cudalite.__file__).parent)
    if "MYPYPATH" in env:
        monkeypatch.setenv("MYPYPATH", env["MYPYPATH"])
    else:
        monkeypatch.delenv("MYPYPATH", raising=False)
    src = tmp_path / "use.py"
    src.write_text(
        "import cudalite as torch\n"
        "reveal_type(torch.nn.Linear)\n"
        "reveal_type(torch.save)\n"
        "reveal_type(torch.optim)\n"
        "reveal_type(torch.version.cuda)\n"
        "reveal_type(torch.backends.cudnn.benchmark)\n"
    )
    args = [str(src), "--ignore-missing-imports", "--follow-imports=silent", "--no-incremental",
            "--cache-dir=/dev/null", "--python-version=3.10"]  # fmt: skip
    out, err, _ = mypy.run(args)
    revealed = [
        line.split("Revealed type is ")[1] for line in out.splitlines() if "Revealed" in line
    ]
    assert len(revealed) == 5, out + err
    assert revealed[0].endswith('-> cudalite.nn.linear.Linear"'), revealed[0]
    assert revealed[1].startswith('"def (obj: Any, f: Any'), revealed[1]
    assert revealed[2] == '"types.ModuleType"', revealed[2]
    assert revealed[3] in ('"str | None"', '"builtins.str | None"', '"Union[builtins.str, None]"')
    assert revealed[4] in ('"bool"', '"builtins.bool"'), revealed[4]
