"""Writes python/cudalite/_signatures.json: torch 2.11's Python signatures (the overloads
its argument parser accepts) for the Tensor methods and ``torch`` functions that cudalite
has, read from torch's type stubs (torch/_C/__init__.pyi and _VariableFunctions.pyi), and
torch's texts of those overloads as its errors list them, after a first line that indexes
them (the names whose signatures take arguments, which import reads alone). cudalite's
C++ parser (csrc/bindings/arg_parser.cpp) matches each call against the
signatures on the way in (Note [Argument errors] in docs/design.md). Run with torch installed:

    python tests/gen_signatures.py
"""

from __future__ import annotations

import ast
import json
import os

import torch

import cudalite

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STUBS = os.path.join(os.path.dirname(torch.__file__), "_C")

# Stub annotations -> the parser's type names (csrc/bindings/arg_parser.h). Anything not
# listed becomes "object", which matches every value: a call is never rejected for a type
# the table does not know.
_BASE = {
    "Tensor": "Tensor",
    "_int": "int",
    "SymInt": "int",
    "_int | SymInt": "int",
    "_float": "float",
    "_bool": "bool",
    "Number | _complex": "Number",
    "Number": "Number",
    "_complex": "Number",
    "torch.SymInt": "int",
    "torch.SymFloat": "float",
    "torch.memory_format": "MemoryFormat",
    "Literal[False]": "bool",
    "Literal[True]": "bool",
    "_size": "int[]",
    "Sequence[_int | SymInt]": "int[]",
    "Sequence[_int]": "int[]",
    "_dtype": "ScalarType",
    "DeviceLikeType": "Device",
    "_device": "Device",
    "_layout": "Layout",
    "memory_format": "MemoryFormat",
    "Generator": "Generator",
    "str": "str",
    "tuple[Tensor, ...] | list[Tensor]": "Tensor[]",
    "Sequence[Tensor]": "Tensor[]",
    "tuple[Tensor, ...]": "Tensor[]",
    "list[Tensor]": "Tensor[]",
}
# Dimension names: cudalite has no named tensors, but a name where torch takes one is a
# RuntimeError there, not a TypeError (python/cudalite/_checked.py).
_NAMES = {
    "str | EllipsisType | None": "Dimname",
    "Sequence[str | EllipsisType | None]": "Dimname[]",
}


def param_type(ann):
    """The parser's type for a stub annotation, with "?" when None is allowed."""
    if ann is None:
        return "object"
    text = ast.unparse(ann)
    if text in _NAMES:
        return _NAMES[text]
    parts = [p.strip() for p in text.split(" | ")]
    optional = "None" in parts
    parts = [p for p in parts if p != "None"]
    joined = " | ".join(parts)
    if joined in _BASE:
        types = [_BASE[joined]]
    else:
        types = [_BASE.get(p, "object") for p in parts] or ["object"]
    if "object" in types:
        types = ["object"]
    elif "Number" in types:  # a Number covers ints and floats
        types = [t for t in types if t not in ("int", "float")]
    if types == ["Tensor[]"]:  # the stubs allow None for tensor lists; torch's parser doesn't
        optional = False
    return "|".join(dict.fromkeys(types)) + ("?" if optional else "")


# Parameters that torch's parser names otherwise than its stubs: a Python keyword the stubs
# escape ("from_"), and names of the stubs' own.
_KEYWORD_NAMES = {"from_": "from"}
_PARSER_NAMES = {("requires_grad_", "mode"): "requires_grad", ("numel", "self"): "input"}


def _param_name(name, arg):
    return _PARSER_NAMES.get((name, arg), _KEYWORD_NAMES.get(arg, arg))


def signature(name, fn, is_method):
    args = fn.args
    params = []
    positional = args.posonlyargs + args.args
    if is_method:
        positional = positional[1:]  # self
    defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    for a, d in zip(positional, defaults, strict=True):
        t = param_type(a.annotation)
        params.append(
            f"{t} {_param_name(name, a.arg)}" + ("" if d is None else "=" + ast.unparse(d))
        )
    if args.vararg is not None:  # f(*size): the ints as varargs, as an int[] parameter
        t = param_type(args.vararg.annotation)
        params.append(f"{'int[]' if t == 'int' else t} {args.vararg.arg}")
    kwonly = list(zip(args.kwonlyargs, args.kw_defaults, strict=True))
    if is_method:  # the stubs give some methods out=, which torch's methods don't take
        kwonly = [(a, d) for a, d in kwonly if a.arg != "out"]
    if kwonly:
        params.append("*")
        for a, d in kwonly:
            t = param_type(a.annotation)
            d = "" if d is None else "=" + ast.unparse(d)
            params.append(f"{t} {_param_name(name, a.arg)}{d}")
    return f"{name}({', '.join(params)})"


def collect(tree_body, wanted, is_method):
    out = {}
    for node in tree_body:
        if isinstance(node, ast.FunctionDef) and node.name in wanted:
            s = signature(node.name, node, is_method)
            out.setdefault(node.name, [])
            if s not in out[node.name]:
                out[node.name].append(s)
    return out


class _Odd:
    """An argument no signature takes."""


def overload_texts(names, is_method):
    """torch's own texts of each name's overloads, as its "invalid combination" message
    lists them (csrc/bindings/arg_parser.cpp): provoked with 40 arguments no overload
    takes. Names whose parser has a single signature never list theirs and are left out."""
    out = {}
    t = torch.zeros(1)
    for name in sorted(names):
        fn = getattr(torch.Tensor if is_method else torch, name, None)
        if fn is None:
            continue
        args = [_Odd()] * 40
        try:
            fn(t, *args) if is_method else fn(*args)
        except TypeError as e:
            msg = str(e)
        except Exception:  # noqa: BLE001 - not torch's parser
            continue
        else:
            continue
        if "received an invalid combination of arguments" not in msg:
            continue
        if "but expected one of:\n" in msg:
            body = msg.split("but expected one of:\n", 1)[1]
            out[name] = [line[3:] for line in body.splitlines() if line.startswith(" * ")]
        else:
            out[name] = [msg.split(", but expected ", 1)[1]]
    return out


# torch's deprecated argument orders, scalar first (tools/autograd/deprecated.yaml; its type
# stubs leave them out): {kind name: [(signature, as torch's warning shows it, the
# signatures it names instead)]}. Note [Deprecated overloads] in docs/design.md.
def _alpha_first(n, kind):
    if kind == "m":
        return [
            (
                f"{n}(Number alpha, Tensor|Number other)",
                f"{n}(Number alpha, Tensor other)",
                [f"{n}(Tensor other, *, Number alpha = 1)"],
            )
        ]
    return [
        (
            f"{n}(Tensor input, Number alpha, Tensor|Number other, *, Tensor? out=None)",
            f"{n}(Tensor input, Number alpha, Tensor other, *, Tensor out = None)",
            [f"{n}(Tensor input, Tensor other, *, Number alpha = 1, Tensor out = None)"],
        )
    ]


_ADDMM_NEW = [
    "addmm(Tensor input, Tensor mat1, Tensor mat2, *, Number beta = 1, Number alpha = 1, "
    "Tensor out = None)",
    "addmm(Tensor input, Tensor mat1, Tensor mat2, torch.dtype out_dtype, *, Number beta = 1, "
    "Number alpha = 1, Tensor out = None)",
]
_ADDMM_METHOD_NEW = ["addmm(Tensor mat1, Tensor mat2, *, Number beta = 1, Number alpha = 1)"]
DEPRECATED = {
    **{f"m {n}": _alpha_first(n, "m") for n in ("add", "add_", "sub", "sub_")},
    **{f"f {n}": _alpha_first(n, "f") for n in ("add", "sub")},
    "f addmm": [
        (
            "addmm(Number beta, Tensor input, Number alpha, Tensor mat1, Tensor mat2, *, "
            "Tensor? out=None)",
            "addmm(Number beta, Tensor input, Number alpha, Tensor mat1, Tensor mat2, *, "
            "Tensor out = None)",
            _ADDMM_NEW,
        ),
        (
            "addmm(Number beta, Tensor input, Tensor mat1, Tensor mat2, *, Tensor? out=None)",
            "addmm(Number beta, Tensor input, Tensor mat1, Tensor mat2, *, Tensor out = None)",
            _ADDMM_NEW,
        ),
    ],
    "m addmm": [
        (
            "addmm(Number beta, Number alpha, Tensor mat1, Tensor mat2)",
            "addmm(Number beta, Number alpha, Tensor mat1, Tensor mat2)",
            _ADDMM_METHOD_NEW,
        ),
        (
            "addmm(Number beta, Tensor mat1, Tensor mat2)",
            "addmm(Number beta, Tensor mat1, Tensor mat2)",
            _ADDMM_METHOD_NEW,
        ),
    ],
}


# Functions whose stubs torch has but whose arguments torch checks by hand, with errors of
# their own ("set_num_threads expects an int, but got float"), not its argument parser's.
_PARSED_BY_HAND = {"set_num_threads", "set_num_interop_threads"}


def main():
    with open(os.path.join(STUBS, "__init__.pyi")) as f:
        init = ast.parse(f.read())
    with open(os.path.join(STUBS, "_VariableFunctions.pyi")) as f:
        funcs = ast.parse(f.read())
    cls = next(n for n in init.body if isinstance(n, ast.ClassDef) and n.name == "TensorBase")
    methods = {n for n in dir(cudalite.Tensor) if not n.startswith("_")}
    functions = {n for n in dir(cudalite) if not n.startswith("_")} - _PARSED_BY_HAND
    table = {
        "methods": collect(cls.body, methods, True),
        "functions": collect(funcs.body, functions, False),
    }
    version = torch.__version__.split("+")[0]
    pkg = os.path.join(ROOT, "python", "cudalite")
    texts = {
        "method_texts": overload_texts(table["methods"], True),
        "function_texts": overload_texts(table["functions"], False),
    }
    # One data file, read on the first failed call (Note [Argument errors]).
    deprecated = {
        key: [{"signature": f, "shown": shown, "instead": new} for f, shown, new in forms]
        for key, forms in DEPRECATED.items()
    }
    data = {"torch": version, **table, **texts, "deprecated": deprecated}
    # The first line is the index: the names whose signatures take arguments (the ones
    # whose calls are parsed), one string per kind, read at import without the rest
    # (cudalite._checked.signature_index); the signatures load on a wrapped function's
    # first call.
    index = {
        kind: " ".join(
            sorted(n for n, sigs in table[kind].items() if any(not s.endswith("()") for s in sigs))
        )
        for kind in ("functions", "methods")
    }
    body = json.dumps(data, indent=0, sort_keys=True)
    assert body.startswith("{\n")
    with open(os.path.join(pkg, "_signatures.json"), "w") as f:
        f.write('{"index": ' + json.dumps(index, sort_keys=True) + "," + body[1:] + "\n")
    print(pkg, len(table["methods"]), "methods", len(table["functions"]), "functions")


if __name__ == "__main__":
    main()
