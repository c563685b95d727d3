"""torch's Python argument parser (torch/csrc/utils/python_arg_parser.cpp) for functions
written in Python: the same matching of positional and keyword arguments against one or
more signatures, the same conversions and the same TypeErrors.

A signature is written as torch's are, ``"unfold(int dimension, int size, int step)"``, with
the types ``Tensor``, ``int``, ``int?`` (None allowed), ``int[]`` (torch's "tuple of ints",
which also takes the ints as varargs when it is the only positional parameter),
``ScalarType?``, ``Layout?``, ``Device?``, ``bool``, ``bool?`` and ``Dimname``; ``*`` starts the
keyword-only parameters. ``Parser(*signatures).parse(args, kwargs)`` returns the index of
the signature that matched and its values, in the signature's order (defaults filled in).

The "received an invalid combination of arguments" message lists torch's overloads when
the parser is given torch's texts of them (``_invalid_args``); without, it stops at "but
expected one of:".
"""

from __future__ import annotations

import builtins
import numbers
import operator

from cudalite import _C
from cudalite._C import Tensor
from cudalite._lazy import is_np_integer

_INT64_LIMIT = 1 << 63  # int and int[] arguments are int64: torch's unpacking errors beyond
_MISSING = object()
# Python's types as dtypes, as torch takes them
_PY_DTYPES = {float: _C.float64, int: _C.int64, bool: _C.bool}

# torch's names of the parameter types, as its messages print them
_TYPE_NAMES = {
    "Tensor": "Tensor",
    "int": "int",
    "int[]": "tuple of ints",
    "ScalarType": "torch.dtype",
    "Layout": "torch.layout",
    "Device": "torch.device",
    "bool": "bool",
    "Dimname": "name",
    "Dimname[]": "tuple of names",
    "float": "float",
    "Number": "Number",
    "Tensor[]": "tuple of Tensors",
    "Generator": "torch.Generator",
    "MemoryFormat": "torch.memory_format",
    "str": "str",
    "object": "object",
}


def as_dtype(d):
    """``d``, with Python's float, int and bool read as the dtypes torch reads them as."""
    return _PY_DTYPES.get(d, d) if isinstance(d, type) else d


def tp_name(obj):
    """The name torch's messages give ``obj``'s type (Python's ``tp_name``)."""
    tp = type(obj)
    if isinstance(obj, Tensor):
        return "Tensor"
    mod = tp.__module__
    if mod.startswith("cudalite"):
        return f"cudalite.{tp.__name__}"
    if mod == "builtins" or tp.__flags__ & (1 << 9):  # a built-in or a class made in Python
        return tp.__name__
    return f"{mod}.{tp.__name__}"


def _is_long(obj):
    """THPUtils_checkLong: a Python int (not a bool) or a NumPy integer."""
    return (isinstance(obj, int) and not isinstance(obj, bool)) or is_np_integer(obj)


def _is_int_like(obj):
    """is_int_or_symint: what the first element of an int list may be."""
    if _is_long(obj):
        return True
    if isinstance(obj, Tensor):  # one element of an integral dtype (bool included)
        return obj.numel() == 1 and not obj.dtype.is_floating_point
    if isinstance(obj, bool):
        return False
    try:
        operator.index(obj)
    except Exception:  # no __index__, or one that raises
        return False
    return True


def _is_int_list(obj, failed):
    """is_int_or_symint_list: a tuple or list whose first element is an int (torch looks at
    that one only); ``failed[0]`` becomes 0 when that element is not one."""
    if not isinstance(obj, (tuple, list)):
        return False
    if len(obj) == 0 or _is_int_like(obj[0]):
        return True
    failed[0] = 0
    return False


class _Param:
    __slots__ = (
        "type",
        "types",
        "name",
        "default",
        "optional",
        "allow_none",
        "keyword_only",
        "index",
    )

    def __init__(self, text, keyword_only):
        typ, _, rest = text.partition(" ")
        name, eq, default = rest.partition("=")
        self.allow_none = typ.endswith("?") or default == "None"
        # "int|int[]": any of these types (the signatures of _signatures.py)
        self.types = typ.rstrip("?").split("|")
        self.type = self.types[0]
        self.name = name
        self.optional = bool(eq)
        self.default = None if default == "None" else _literal(default) if eq else None
        self.keyword_only = keyword_only

    def check(self, obj, failed):
        try:
            if len(self.types) == 1:
                return self._check(self.type, obj, failed)
            return builtins.any(self._check(t, obj, failed) for t in self.types)
        except Exception as e:
            if isinstance(e, AssertionError) or getattr(e, "_cl_element", False):
                raise
            return False  # an object that breaks a check (a strange __eq__...) fits nothing

    def _check(self, t, obj, failed):
        if t == "int":
            if _is_long(obj):
                return True
            return (
                isinstance(obj, Tensor)
                and obj.dim() == 0
                and not obj.dtype.is_floating_point
                and obj.dtype != _C.bool
                and not obj.requires_grad
            )
        if t == "int[]":
            return _is_int_list(obj, failed)
        if t == "Tensor":
            return isinstance(obj, Tensor)
        if t == "bool":
            return isinstance(obj, bool)
        if t == "ScalarType":  # a dtype, or Python's int, float or bool
            return isinstance(obj, _C.dtype) or (isinstance(obj, type) and obj in _PY_DTYPES)
        if t == "Device":
            return _is_long(obj) or isinstance(obj, (str, _C.device))
        if t == "Layout":
            from cudalite._layout import layout

            return isinstance(obj, layout)
        if t == "Dimname":
            return obj is None or isinstance(obj, str)
        if t == "Dimname[]":  # names, or one name
            if isinstance(obj, str):
                return True
            return isinstance(obj, (tuple, list)) and builtins.all(
                x is None or isinstance(x, str) for x in obj
            )
        if t == "float":  # THPUtils_checkDouble, or a 0-dim tensor
            return isinstance(obj, numbers.Real) or _is_0dim(obj)
        if t == "Number":  # THPUtils_checkScalar, or a 0-dim tensor
            return isinstance(obj, numbers.Number) or _is_0dim(obj)
        if t == "Tensor[]":
            if not isinstance(obj, (tuple, list)):
                return False
            for i, x in enumerate(obj):  # torch names the element that is not a Tensor
                if not isinstance(x, Tensor):
                    e = TypeError(
                        f"expected Tensor as element {i} in argument {self.index}, but got "
                        f"{tp_name(x)}"
                    )
                    e._cl_element = True  # torch raises it while matching
                    raise e
            return True
        if t == "Generator":
            from cudalite.random import Generator

            return isinstance(obj, Generator)
        if t == "MemoryFormat":
            from cudalite._memory_format import memory_format

            return isinstance(obj, memory_format)
        if t == "str":
            return isinstance(obj, str)
        if t == "object":
            return True
        raise AssertionError(t)

    def type_name(self):
        return _TYPE_NAMES[self.type]


def _is_0dim(obj):
    return isinstance(obj, Tensor) and obj.dim() == 0


def _literal(s):
    if s in ("True", "False"):
        return s == "True"
    try:
        return int(s)
    except ValueError:
        return s  # defaults the checker never converts (floats, tuples, dtypes)


def _split_params(text):
    """The parameters of a signature's text, split at the commas outside brackets."""
    out, depth, cur = [], 0, ""
    for ch in text:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


class Signature:
    """One of torch's signatures (``FunctionSignature``)."""

    def __init__(self, fmt, hidden=False):
        # hidden: torch's deprecated signatures, matched but never named in its errors
        self.hidden = hidden
        self.name, _, rest = fmt.partition("(")
        self.params = []
        kw_only = False
        for p in _split_params(rest[:-1]):
            if p == "*":
                kw_only = True
            else:
                self.params.append(_Param(p, kw_only))
                self.params[-1].index = len(self.params) - 1
        self.max_args = len(self.params)
        self.min_args = sum(not p.optional for p in self.params)
        self.max_pos_args = sum(not p.keyword_only for p in self.params)

    def parse(self, args, kwargs, raise_exception):
        """The raw values (None where absent) or None when the call does not match; with
        ``raise_exception``, torch's TypeError instead of None."""
        nargs = len(args)
        remaining = len(kwargs)
        arg_pos = 0
        params = self.params
        varargs = False
        if self.max_pos_args == 1 and "int[]" in params[0].types:
            varargs = nargs == 0 or _is_int_list(args, [-1])
        if nargs > self.max_pos_args and not varargs:
            if raise_exception:
                self._extra_args(nargs)
            return None
        out = []
        for i, p in enumerate(params):
            obj, is_kwd = _MISSING, False
            if arg_pos < nargs:
                if p.keyword_only:
                    if raise_exception:
                        self._extra_args(nargs)
                    return None
                obj = args[arg_pos]
            elif kwargs:
                obj = kwargs.get(p.name, _MISSING)
                is_kwd = True
            failed = [-1]
            varargs_eligible = varargs and arg_pos == 0 and not is_kwd
            if (obj is _MISSING and p.optional) or (obj is None and p.allow_none):
                out.append(_MISSING)
            elif obj is _MISSING:
                if raise_exception:
                    self._missing_args(i)
                return None
            elif p.check(obj, failed):
                out.append(obj)
            elif varargs_eligible and _is_int_list(args, failed):
                out.append(args)  # f(1, 2, 3) as f((1, 2, 3))
                arg_pos = nargs
                continue
            elif raise_exception:
                self._bad_type(p, obj, args, arg_pos, is_kwd, failed[0])
            else:
                return None
            if not is_kwd:
                arg_pos += 1
            elif obj is not _MISSING:
                remaining -= 1
        if remaining > 0:
            if raise_exception:
                self._extra_kwargs(kwargs, nargs)
            return None
        return out

    def convert(self, raw):
        """The values of a parsed call (``PythonArgs``): ints and int lists unpacked,
        defaults filled in."""
        out = []
        for p, v in zip(self.params, raw, strict=True):
            if v is _MISSING:
                out.append(p.default)
            elif p.type == "int":
                v = int(v.item()) if isinstance(v, Tensor) else operator.index(v)
                if not -_INT64_LIMIT <= v < _INT64_LIMIT:
                    raise ValueError("Overflow when unpacking long long")
                out.append(v)
            elif p.type == "int[]":
                out.append(self._int_list(p, v))
            elif p.type == "ScalarType" and not isinstance(v, _C.dtype):
                out.append(_PY_DTYPES[v])
            else:
                out.append(v)
        return out

    def _int_list(self, p, seq):
        res = []
        for i, a in enumerate(seq):
            try:
                if isinstance(a, Tensor) and a.dtype.is_floating_point:
                    raise TypeError
                v = operator.index(a)
            except TypeError:
                raise TypeError(
                    f"{self.name}(): argument '{p.name}' failed to unpack the object at pos "
                    f'{i + 1} with error "type must be tuple of ints,but got {tp_name(a)}"'
                ) from None
            if not -_INT64_LIMIT <= v < _INT64_LIMIT:
                raise TypeError(
                    f"{self.name}(): argument '{p.name}' failed to unpack the object at pos "
                    f'{i + 1} with error "Overflow when unpacking long long"'
                )
            res.append(v)
        return res

    def _extra_args(self, nargs):
        if self.min_args != self.max_pos_args:
            raise TypeError(
                f"{self.name}() takes from {self.min_args} to {self.max_pos_args} positional "
                f"arguments but {nargs} were given"
            )
        n = self.max_pos_args
        raise TypeError(
            f"{self.name}() takes {n} positional argument{'' if n == 1 else 's'} but {nargs} "
            f"{'was' if nargs == 1 else 'were'} given"
        )

    def _missing_args(self, idx):
        names = [f'"{p.name}"' for p in self.params[idx:] if not p.optional]
        n = len(names)  # (torch's plural is the other way round)
        raise TypeError(
            f"{self.name}() missing {n} required positional argument{'s' if n == 1 else ''}: "
            + ", ".join(names)
        )

    def _extra_kwargs(self, kwargs, nargs):
        names = [p.name for p in self.params]
        for key in kwargs:
            if key not in names:
                raise TypeError(f"{self.name}() got an unexpected keyword argument '{key}'")
            if names.index(key) < nargs:
                raise TypeError(f"{self.name}() got multiple values for argument '{key}'")
        raise TypeError("invalid keyword arguments")

    def _bad_type(self, p, obj, args, arg_pos, is_kwd, failed):
        if is_kwd:
            raise TypeError(
                f"{self.name}(): argument '{p.name}' must be {p.type_name()}, not {tp_name(obj)}"
            )
        if failed != -1:
            seq = obj if isinstance(obj, (tuple, list)) else args
            raise TypeError(
                f"{self.name}(): argument '{p.name}' (position {arg_pos + 1}) must be "
                f"{p.type_name()}, but found element of type {tp_name(seq[failed])} at pos "
                f"{failed}"
            )
        raise TypeError(
            f"{self.name}(): argument '{p.name}' (position {arg_pos + 1}) must be "
            f"{p.type_name()}, not {tp_name(obj)}"
        )


class Parser:
    """torch's ``PythonArgParser``: the first signature that matches wins; when none does,
    the error of the only plausible one (by argument count), else "invalid combination"."""

    def __init__(self, *fmts, hidden=(), texts=None, single=False):
        self.signatures = [Signature(f, f in hidden) for f in fmts]
        self.name = self.signatures[0].name
        self.texts = texts  # torch's texts of the signatures, for its whole message
        self._text_sigs = None  # those texts parsed, on the first failure that needs them
        # torch's parser has one signature where this one has several (type stubs that
        # spell out one signature's forms): its errors are that signature's
        self.single = single

    def parse(self, args, kwargs):
        sigs = self.signatures
        if len(sigs) == 1 and not self.texts:  # (torch's may have several)
            return 0, sigs[0].convert(sigs[0].parse(args, kwargs, True))
        for i, s in enumerate(sigs):
            raw = s.parse(args, kwargs, False)
            if raw is not None:
                return i, s.convert(raw)
        n = len(args) + len(kwargs)
        if self.texts is not None:  # torch's own overloads decide, as in torch
            if self._text_sigs is None:
                self._text_sigs = [Signature(from_text(self.name, t)) for t in self.texts]
            sigs = self._text_sigs
        plausible = [s for s in sigs if s.min_args <= n <= s.max_args and not s.hidden]
        if len(plausible) == 1 or (self.single and plausible):
            plausible[0].parse(args, kwargs, True)
        if self.single:
            next(s for s in sigs if not s.hidden).parse(args, kwargs, True)
        raise invalid_combination(self.name, args, kwargs, self.texts)


# torch's printed parameter types -> this parser's
_TEXT_TYPES = {
    "tuple of ints": "int[]",
    "tuple of names": "Dimname[]",
    "tuple of Tensors": "Tensor[]",
    "name": "Dimname",
    "torch.dtype": "ScalarType",
    "torch.device": "Device",
    "torch.layout": "Layout",
    "torch.memory_format": "MemoryFormat",
    "torch.Generator": "Generator",
}


# The ops whose Tensor parameters torch's parser lets take a Python number
# (should_allow_numbers_as_tensors).
_NUMBERS_AS_TENSORS = frozenset(
    f"{op}{suffix}"
    for op in ("add", "div", "divide", "mul", "multiply", "sub", "subtract", "true_divide")
    for suffix in ("", "_")
) | {"to", "copy_", "copysign", "copysign_", "floor_divide", "floor_divide_"}


def from_text(name, text):
    """A signature in this parser's notation from torch's printed one ("(Tensor other, *,
    Number alpha = 1)", _signatures.json)."""
    tensor = "Tensor|Number" if name in _NUMBERS_AS_TENSORS else "Tensor"
    params = []
    for p in text[1:-1].split(", ") if text != "no arguments" else []:
        if p == "*":
            params.append(p)
            continue
        decl, eq, default = p.partition(" = ")
        typ, _, pname = decl.rpartition(" ")
        typ = tensor if typ == "Tensor" else _TEXT_TYPES.get(typ, typ)
        if eq and default == "None":
            params.append(f"{typ}? {pname}=None")
        else:
            params.append(f"{typ} {pname}" + (f"={default}" if eq else ""))
    return f"{name}({', '.join(params)})"


def invalid_combination(name, args, kwargs, options=None):
    """torch's TypeError when no signature matches: whole when ``options`` (torch's texts of
    the signatures, ``_signatures.json``) are given, else its first line (see the module's
    note). The keywords are listed as torch lists them, the last given first."""
    from cudalite import _invalid_args

    kwargs = dict(reversed(list(kwargs.items())))
    if options:
        return TypeError(_invalid_args.format_invalid_args(name, args, kwargs, options))
    return TypeError(
        f"{name}() received an invalid combination of arguments - got "
        f"({_invalid_args.given(args, kwargs)}), but expected one of:"
    )
