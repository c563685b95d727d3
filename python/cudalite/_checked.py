"""torch's TypeErrors for calls whose arguments fit none of torch's signatures.

Note [Argument errors]
torch checks every call's arguments against its signatures before doing anything
(torch/csrc/utils/python_arg_parser.cpp), so ``t.dot(5)`` raises "dot(): argument 'tensor'
(position 1) must be Tensor, not int". cudalite's functions check what they need as they go,
which is cheaper but lets a wrong argument surface as whatever it breaks first (an
AttributeError of ``int``, a RuntimeError about shapes). Parsing every call as torch does would
cost microseconds per call in Python, more than many of the ops themselves.

So the check runs only when a call has failed: every Tensor method and ``cudalite``
function that has torch signatures (``_signature_table.py``, generated from torch's type
stubs by tests/gen_signatures.py, loaded on the first failure) is wrapped; when the call
raises, its arguments are matched against those signatures (``_arg_parser``), and when none
accepts them, torch's TypeError replaces the error. When one does, the original error
stands (a wrong shape is still the op's RuntimeError). A call that succeeds pays one C call.
Types the table does not know match anything, so the check never rejects a call torch would
accept.
Python methods without parameters are not wrapped (Python's own TypeError already says
what torch's does); pybind11's methods are (their "incompatible function arguments" lists C++
types), the C++ fast methods are not (their fallbacks to Python are). The wrapper
(``_C._Checked``) is written in C: it adds no Python frame, so the stack levels of warnings
raised inside are unchanged.
"""

from __future__ import annotations

import re
import types

from cudalite import _C, _arg_parser, _signatures
from cudalite import _deprecated_overloads as _deprecated
from cudalite._reductions import _Absent

_parsers = {}


def _parser(kind, name):
    key = (kind, name)
    p = _parsers.get(key)
    if p is None:
        from cudalite import _signature_table as t

        sigs = list((t.METHODS if kind == "m" else t.FUNCTIONS)[name])
        hidden = ()
        if key in _deprecated.DEPRECATED:  # Note [Deprecated overloads]
            sigs += [fmt for fmt, *_ in _deprecated.DEPRECATED[key] if fmt not in sigs]
            hidden = [f for f in sigs if _deprecated.SCALAR_FIRST.search(f)]
        from cudalite import _signature_texts as tx

        texts = (tx.METHOD_TEXTS if kind == "m" else tx.FUNCTION_TEXTS).get(name)
        # No texts: torch's parser has a single signature (its errors never list one).
        p = _parsers[key] = _arg_parser.Parser(
            *sigs, hidden=hidden, texts=texts, single=texts is None
        )
    return p


def _param_names(kind, name):
    """The parameter names of ``name``'s signatures, and those that take None."""
    params = [p for s in _parser(kind, name).signatures for p in s.params]
    return {p.name for p in params}, {p.name for p in params if p.allow_none}


def _forwarded(key, value, known, nullable):
    return isinstance(value, _Absent) or (value is None and (key in nullable or key not in known))


def _unpack_int_lists(sig, raw):
    """torch's "failed to unpack" TypeError for an int list whose later element is not an
    int (matching looks at the first only)."""
    for p, v in zip(sig.params, raw, strict=True):
        if "int[]" in p.types and isinstance(v, (tuple, list)):
            sig._int_list(p, v)


def _as_called(kind, name, args, kwargs):
    """The arguments as the caller gave them (without self)."""
    call_args = args[1:] if kind == "m" else args
    # Methods that forward to functions pass their unset parameters as _Absent markers.
    if any(isinstance(a, _Absent) for a in call_args):
        call_args = tuple(a for a in call_args if not isinstance(a, _Absent))
    # ... and wrappers pass None along for keywords the caller left out (out=None,
    # dtype=None), which torch's message would not list.
    known, nullable = _param_names(kind, name)
    if any(_forwarded(k, v, known, nullable) for k, v in kwargs.items()):
        kwargs = {k: v for k, v in kwargs.items() if not _forwarded(k, v, known, nullable)}
    return call_args, kwargs


def complete_combination(kind, name, args, kwargs, exc):
    """An "invalid combination of arguments" TypeError that a function raised itself, with
    its first line only: raises torch's whole message in its place, where torch's texts of
    the overloads are known."""
    texts = _parser(kind, name).texts
    if not texts:
        return
    from cudalite import _invalid_args

    call_args, kwargs = _as_called(kind, name, args, kwargs)
    kwargs = dict(reversed(list(kwargs.items())))  # as torch lists them
    # The function's own list of the arguments, where it names keywords that the cleaning
    # above took for forwarded Nones (memory_format=None given to a factory).
    m = re.search(r"arguments - got \((.*)\), but expected one of:$", str(exc))
    got = None
    if m and len(texts) > 1 and m.group(1).count("=") > len(kwargs):
        got = m.group(1)
    e = TypeError(_invalid_args.format_invalid_args(name, call_args, kwargs, texts, got))
    e._cl_checked = True
    raise e from None


def reject(kind, name, args, kwargs, exc=None):
    """Raises torch's error when no signature of ``name`` accepts ``args`` and ``kwargs``
    (``kind`` "m": a Tensor method, ``args`` starting with self; "f": a function): its
    TypeError, or the RuntimeError torch raises for a dimension name where the call failed
    otherwise (``exc``, the original error, not a RuntimeError)."""
    parser = _parser(kind, name)
    call_args, kwargs = _as_called(kind, name, args, kwargs)
    try:
        for sig in parser.signatures:
            raw = sig.parse(call_args, kwargs, False)
            if raw is not None:
                _unpack_int_lists(sig, raw)
                break
        else:
            parser.parse(call_args, kwargs)  # raises torch's TypeError
            return
    except TypeError as e:
        e._cl_checked = True
        raise e from None
    except Exception:  # a value the parser cannot read: the original error stands
        return
    for p, v in zip(sig.params, raw, strict=True):
        # An int beyond int64, which pybind11 calls an incompatible argument: torch's error.
        if p.type == "int" and type(v) is int and not -(1 << 63) <= v < 1 << 63:
            raise ValueError("Overflow when unpacking long long") from None
    # (pybind11's "Unable to cast" RuntimeError is a failed argument conversion)
    if (
        not isinstance(exc, RuntimeError)
        or getattr(exc, "_cl_checked", False)
        or str(exc).startswith("Unable to cast Python instance")
    ):
        try:
            _check_names(name, sig, raw, args)
        except RuntimeError as e:
            e._cl_checked = True
            raise e from None


# torch's text for these ops; the others look the name up in the tensor's (absent) names.
_NO_DIMNAME = {"all": "all", "any": "any", "squeeze_": "squeeze"}


def _check_names(name, sig, raw, args):
    for p, v in zip(sig.params, raw, strict=True):
        if p.type not in ("Dimname", "Dimname[]") or v is _arg_parser._MISSING:
            continue
        if v is None and p.type == "Dimname[]":
            continue
        if p.type == "Dimname" and v is None and name not in _NO_DIMNAME:
            raise RuntimeError("Please look up dimensions by name, got: name = None.") from None
        first = v if isinstance(v, str) else next((x for x in v if x is not None), None)
        if first is None and name in _NO_DIMNAME and p.type == "Dimname":
            first = "None"
        if first is None:
            continue
        if name in _NO_DIMNAME:
            raise RuntimeError(
                f"{_NO_DIMNAME[name]}: You passed a dimname (string) to this op in place of a "
                "dimension index but it does not yet support this behavior. Please pass a "
                "dimension index to work around this."
            ) from None
        t = _first_tensor(args)
        dims = ", ".join(["None"] * (t.dim() if t is not None else 0))
        raise RuntimeError(f"Name '{first}' not found in Tensor[{dims}].") from None


def _first_tensor(args):
    for a in args:
        if isinstance(a, _C.Tensor):
            return a
        if isinstance(a, (tuple, list)) and a and isinstance(a[0], _C.Tensor):
            return a[0]
    return None


# Python's own errors for a call that misses an argument or has an unknown keyword, which
# torch words differently ('arguments: "size"'; "invalid combination" where it has overloads).
_PYTHON_CALL_ERRORS = re.compile(
    r"\(\) (missing \d+ required [a-z-]+ arguments?: '|got an unexpected keyword argument"
    r"|takes .*positional arguments? but \d+ .*(was|were) given)"
)


def _deliberate(e, name):
    """A TypeError the function raised about its own arguments, in torch's words ("sum():
    ...", "sum() received ..."), not Python's about the call."""
    if type(e) is not TypeError:
        return False
    msg = str(e)
    return (
        msg.startswith((name + "(", name.rstrip("_") + "("))
        and not _PYTHON_CALL_ERRORS.search(msg)
        and "incompatible function arguments" not in msg  # pybind11's
    )


# torch's parser takes NumPy's keyword names too (numpy_compatibility_arg_names)
_NUMPY_NAMES = {
    "axis": "dim",
    "keepdims": "keepdim",
    "x": "input",
    "a": "input",
    "x1": "input",
    "x2": "other",
}


def _numpy_names(kind, name, exc, kwargs):
    """The keywords with NumPy's names replaced by torch's, when the call failed only because
    the function does not know NumPy's (Python's TypeError, raised before the function ran);
    else None."""
    if type(exc) is not TypeError or "unexpected keyword argument" not in str(exc):
        return None
    if not any(k in _NUMPY_NAMES for k in kwargs):
        return None
    known, _ = _param_names(kind, name)
    out = {}
    for k, v in kwargs.items():
        t = _NUMPY_NAMES.get(k)
        if t is not None and t in known and t not in kwargs and k not in known:
            k = t
        out[k] = v
    return out if out.keys() != kwargs.keys() else None


def _wrap(fn, kind, name):
    def on_error(exc, args, kwargs):
        if type(exc) is TypeError and (kind, name) in _deprecated.DEPRECATED:
            call = _deprecated.call(kind, name, args, kwargs)
            if call is not None:
                return (checked(*call[0], **call[1]),)
        renamed = _numpy_names(kind, name, exc, kwargs)
        if renamed is not None:
            try:
                return (checked(*args, **renamed),)
            except TypeError as e:
                if getattr(e, "_cl_checked", False):  # word it with the caller's names
                    reject(kind, name, args, kwargs, e)
                raise
        if (
            type(exc) is TypeError
            and not getattr(exc, "_cl_checked", False)
            and "() received an invalid combination of arguments" in str(exc)
        ):
            complete_combination(kind, name, args, kwargs, exc)
        # An inner wrapper's error is checked again here: an outer wrapper (autograd's
        # methods) sees the arguments as the caller wrote them.
        if (
            getattr(exc, "_cl_checked", False)
            or not _deliberate(exc, name)
            # Python's words are torch's for a single signature, not for overloads
            or ("got multiple values for argument" in str(exc) and _parser(kind, name).texts)
        ):
            reject(kind, name, args, kwargs, exc)

    # __name__, __doc__...: fn's; __wrapped__: fn; pickled as a lookup by name
    checked = _C._Checked(fn, on_error, (_lookup, (kind, name)))
    return checked


def _lookup(kind, name):
    """A wrapped method or function by name (how pickle finds one again)."""
    import cudalite

    return getattr(cudalite.Tensor if kind == "m" else cudalite, name)


def _target(fn, takes_arguments):
    """What to wrap for the class attribute ``fn``: a Python function, or the C++ function
    of a pybind11 method (wrapping that instead of the ``instancemethod`` around it also
    saves the latter's call through an argument tuple); None when not wrapped."""
    if isinstance(fn, types.FunctionType):
        return fn if takes_arguments else None
    if type(fn).__name__ == "instancemethod" and isinstance(fn.__func__, types.BuiltinFunctionType):
        return fn.__func__
    return None


def install_methods():
    """Wraps Tensor's Python methods (again after autograd swaps its own in: only functions
    are wrapped, and a wrapper is not one)."""
    from cudalite import _tensor

    T = _C.Tensor
    for name, takes_arguments in _signatures.METHODS.items():
        fn = T.__dict__.get(name)
        target = _target(fn, takes_arguments)
        if target is not None:
            w = _wrap(target, "m", name)
            setattr(T, name, w)
            if _tensor._methods.get(name) is fn:
                _tensor._methods[name] = w
    slow = {}
    for name, fn in _tensor._slow_methods.items():
        if isinstance(fn, types.FunctionType) and _signatures.METHODS.get(name):
            slow[name] = _tensor._slow_methods[name] = _wrap(fn, "m", name)
    if slow:
        _C._set_slow_methods(slow)


def install():
    """Wraps Tensor's methods and the ``cudalite`` functions; run once at import."""
    import cudalite

    install_methods()
    g = cudalite.__dict__
    for name, takes_arguments in _signatures.FUNCTIONS.items():
        fn = g.get(name)
        if isinstance(fn, types.FunctionType) and takes_arguments:
            g[name] = _wrap(fn, "f", name)
    # empty, zeros and ones are C functions that hand their uncommon calls to Python ones
    # (Note [empty in one call]): those are wrapped, the C fast path pays nothing.
    from cudalite import _creation

    for name, slow in _creation.FACTORY_SLOW.items():
        _C._set_factory_slow(name, _wrap(slow, "f", name))
