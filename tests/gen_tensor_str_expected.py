"""Regenerate ``tensor_str_expected.py`` from PyTorch 2.11 (not a test; CI has no torch).

Run by hand:  $TORCH_PYTHON tests/gen_tensor_str_expected.py

Every case of ``tensor_str_cases.py`` is turned into a torch tensor and its ``repr()`` is
recorded.  torch's own suffix layout runs on cudalite's names: "dtype=cudalite.float16" is
three characters longer than torch's, which can move a wrap, so the renaming happens before
torch decides where suffixes wrap (not by editing its output).  No GPU is needed:
``device='cuda:N'`` cases temporarily shadow ``Tensor.device`` (the only thing torch's
printer reads to decide that suffix) so a CPU tensor reports a CUDA device.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import sys
from pathlib import Path

import torch

HERE = Path(__file__).resolve().parent


def _load(name: str, path: Path | None = None):
    spec = importlib.util.spec_from_file_location(name, path or HERE / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


class MyTensor(torch.Tensor):
    # Ops on it return plain tensors, so torch's printer treats it like one except for the
    # "MyTensor(" prefix it derives from the class name.
    __torch_function__ = torch._C._disabled_torch_function_impl


_GRAD_FNS = {"MulBackward0": lambda t: t * 1, "CloneBackward0": lambda t: t.clone()}


@contextlib.contextmanager
def _fake_device(device: str | None):
    if device is None:
        yield
        return
    torch.Tensor.device = property(lambda self: torch.device(device))
    try:
        yield
    finally:
        del torch.Tensor.device


_torch_add_suffixes = torch._tensor_str._add_suffixes


def _add_cudalite_suffixes(tensor_str, suffixes, indent, force_newline):
    renamed = [s.replace("dtype=torch.", "dtype=cudalite.") for s in suffixes]
    return _torch_add_suffixes(tensor_str, renamed, indent, force_newline)


def _torch_repr(case, cases_module) -> str:
    arr = cases_module.input_array(case)
    kwargs = dict(case.kwargs)
    torch.set_printoptions(profile="default")
    torch.set_default_dtype(getattr(torch, kwargs.get("default_dtype_name", "float32")))
    torch.set_printoptions(**case.opts)
    t = torch.from_numpy(arr.copy()).to(getattr(torch, case.dtype))
    if kwargs.get("requires_grad") or "grad_fn" in kwargs:
        t.requires_grad_()
    if "grad_fn" in kwargs:
        t = _GRAD_FNS[kwargs["grad_fn"]](t)
        assert type(t.grad_fn).__name__ == kwargs["grad_fn"]
    if "prefix" in kwargs:
        assert kwargs["prefix"] == "MyTensor("
        t = t.as_subclass(MyTensor)
    try:
        with _fake_device(kwargs.get("device")):
            text = repr(t)
    finally:
        torch.set_printoptions(profile="default")
        torch.set_default_dtype(torch.float32)
    assert "torch" not in text, text
    return text


def main() -> None:
    torch._tensor_str._add_suffixes = _add_cudalite_suffixes
    cases_module = _load("tensor_str_cases")
    expected = {case.id: _torch_repr(case, cases_module) for case in cases_module.CASES}
    assert len(expected) == len(cases_module.CASES), "duplicate case ids"
    out = [
        f'"""Goldens from PyTorch {torch.__version__} by gen_tensor_str_expected.py."""',
        "",
        "# One source line per printed line; the formatter would join short ones.",
        "# fmt: off",
        "EXPECTED = {",
    ]
    for case_id, text in expected.items():
        # One source line per printed line keeps the goldens readable (json.dumps writes a
        # double-quoted Python string literal for ASCII text).
        pieces = [json.dumps(line) for line in text.splitlines(keepends=True)]
        if len(pieces) == 1:
            out.append(f"    {json.dumps(case_id)}: {pieces[0]},")
        else:
            out += [f"    {json.dumps(case_id)}: ("] + [f"        {p}" for p in pieces] + ["    ),"]
    out += ["}", "# fmt: on"]
    (HERE / "tensor_str_expected.py").write_text("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
