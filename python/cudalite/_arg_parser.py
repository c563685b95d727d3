"""torch's argument parser (torch/csrc/utils/python_arg_parser.cpp), written in C++
(csrc/bindings/arg_parser.cpp): matching of positional and keyword arguments against one or
more signatures, the same conversions and the same TypeErrors (Note [Argument errors]).

A signature is written as torch's are, ``"unfold(int dimension, int size, int step)"``, with
the types ``Tensor``, ``int``, ``int[]`` (torch's "tuple of ints", which also takes the ints
as varargs when it is the only positional parameter), ``float``, ``Number``, ``bool``,
``ScalarType``, ``Layout``, ``Device``, ``MemoryFormat``, ``Generator``, ``str``,
``Dimname``, ``Dimname[]``, ``Tensor[]`` and ``object``; ``T?`` also takes None and ``A|B``
either type; ``*`` starts the keyword-only parameters. ``Parser(*signatures).parse(args,
kwargs)`` returns the index of the signature that matched and its values, in the
signature's order (defaults filled in), or raises torch's error. With torch's texts of the
overloads (``texts=``, ``_signatures.json``), the "received an invalid combination of
arguments" message lists them as torch's does.
"""

from __future__ import annotations

from cudalite import _C

# Python's types as dtypes, as torch takes them
_PY_DTYPES = {float: _C.float64, int: _C.int64, bool: _C.bool}

# The name torch's messages give an object's type (Python's ``tp_name``): "Tensor", "int",
# "cudalite.dtype" (torch's "torch.dtype"), "numpy.int64".
tp_name = _C._tp_name

# The value match() gives a parameter that was not given.
MISSING = _C._ARG_MISSING


def parsed(fn):
    """Marks ``fn`` as taking the parser's values (Note [Parsed calls] in
    csrc/bindings/bind_checked.cpp): its entry matches each call against the function's
    torch signatures (``_signatures.json``) and calls ``fn`` as the signature that fits is
    written, every value converted and defaulted (``self``, positional parameters by
    position, keyword-only ones by keyword), so ``fn``'s parameters are the signature's and
    it parses nothing itself. Overloads with other parameter names (dimension names) arrive
    as keywords ``fn`` also takes, with ``MISSING`` as their default to tell them apart."""
    fn._cl_parsed = True
    return fn


def as_dtype(d):
    """``d``, with Python's float, int and bool read as the dtypes torch reads them as."""
    return _PY_DTYPES.get(d, d) if isinstance(d, type) else d


def Parser(*fmts, hidden=(), texts=None, single=False):  # noqa: N802 (a class's name)
    """torch's ``PythonArgParser`` for these signatures (compiled once, in C++).
    ``hidden``: signatures matched but never named in errors (torch's deprecated ones);
    ``texts``: torch's texts of the overloads, for its whole message; ``single``: torch has
    one signature where ``fmts`` spell out its forms (its errors are that signature's)."""
    return _C._ArgParser(list(fmts), list(hidden), texts, single)


def invalid_combination(name, args, kwargs, options):
    """torch's TypeError when no signature matches, listing ``options`` (torch's texts of
    the signatures). The keywords are listed as torch lists them, the last given first."""
    kwargs = dict(reversed(list(kwargs.items())))
    return TypeError(_C._invalid_arguments(name, args, kwargs, options))
