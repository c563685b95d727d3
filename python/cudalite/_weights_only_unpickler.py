"""The unpickler of ``cudalite.load(..., weights_only=True)``, the default: it builds only
tensors, Parameters, storages, dtypes, devices, ``Size``, ``OrderedDict``/``Counter`` and
Python's primitive containers, as ``torch._weights_only_unpickler`` does.

torch interprets the pickle opcodes itself; cudalite subclasses Python's C unpickler and
restricts ``find_class``, the one door through which a pickle reaches code ("Restricting
Globals" in the ``pickle`` docs): every global must be in the allowlist below or added with
``cudalite.serialization.add_safe_globals``. The errors are torch's ``UnpicklingError``\\ s.
"""

from __future__ import annotations

import _codecs
import _compat_pickle
import collections
import pickle
from pickle import UnpicklingError

from cudalite import _torch_names

# Modules never allowed, even when a user allowlists one of their globals.
_BLOCKLISTED_MODULES = ("sys", "os", "posix", "nt")

_marked_safe_globals_set = set()


def _add_safe_globals(safe_globals):
    global _marked_safe_globals_set
    _marked_safe_globals_set = _marked_safe_globals_set.union(set(safe_globals))


def _get_safe_globals():
    return list(_marked_safe_globals_set)


def _clear_safe_globals():
    global _marked_safe_globals_set
    _marked_safe_globals_set = set()


def _remove_safe_globals(globals_to_remove):
    global _marked_safe_globals_set
    _marked_safe_globals_set = _marked_safe_globals_set - set(globals_to_remove)


class _safe_globals:
    """Context manager: the globals are allowed inside the ``with`` block."""

    def __init__(self, safe_globals):
        self.safe_globals = safe_globals

    def __enter__(self):
        _add_safe_globals(self.safe_globals)

    def __exit__(self, type, value, tb):
        _remove_safe_globals(self.safe_globals)


def _get_user_allowed_globals():
    """Full name -> object for the globals users added (``{module}.{qualname}`` by default,
    or the name given in a ``(global, name)`` pair)."""
    rc = {}
    for f in _marked_safe_globals_set:
        if isinstance(f, tuple):
            if len(f) != 2:
                raise ValueError(
                    "Expected tuple of length 2 (global, str of callable full path), but got "
                    f"tuple of length: {len(f)}"
                )
            if type(f[1]) is not str:
                raise TypeError(
                    "Expected second item in tuple to be str of callable full path, but got: "
                    f"{type(f[1])}"
                )
            f, name = f
            rc[name] = f
        else:
            rc[f"{f.__module__}.{f.__qualname__}"] = f
    return rc


_ALLOWED_BUILTINS = {
    "collections.OrderedDict": collections.OrderedDict,
    "collections.Counter": collections.Counter,
    "_codecs.encode": _codecs.encode,  # bytes, in protocol 2
    "builtins.bytearray": bytearray,
    "builtins.set": set,
    "builtins.complex": complex,
}


def _python3_name(module, name):
    """Python 2's module names, as protocol-2 pickles from Python 3 write them, in Python 3's
    spelling (``__builtin__.set`` is ``builtins.set``)."""
    if (module, name) in _compat_pickle.NAME_MAPPING:
        return _compat_pickle.NAME_MAPPING[(module, name)]
    return _compat_pickle.IMPORT_MAPPING.get(module, module), name


def _unsupported_global(full_path):
    if full_path.startswith("builtins."):
        full_path = full_path[len("builtins.") :]
    return UnpicklingError(
        f"Unsupported global: GLOBAL {full_path} was not an allowed global by default. Please "
        f"use `cudalite.serialization.add_safe_globals([{full_path}])` or the "
        f"`cudalite.serialization.safe_globals([{full_path}])` context manager to allowlist "
        "this global if you trust this class/function."
    )


class Unpickler(pickle.Unpickler):
    """Python's unpickler, allowed to look up only the weights-only globals."""

    def find_class(self, module, name):
        module, name = _python3_name(module, name)
        full_path = f"{module}.{name}"
        if module in _BLOCKLISTED_MODULES:
            raise UnpicklingError(
                f"Trying to load unsupported GLOBAL {full_path} whose module {module} is blocked."
            )
        if full_path in _ALLOWED_BUILTINS:
            return _ALLOWED_BUILTINS[full_path]
        obj = _torch_names.lookup(module, name)
        if obj is not None:
            return obj
        user = _get_user_allowed_globals()
        if full_path in user:
            return user[full_path]
        raise _unsupported_global(full_path)


def check_persistent_id(pid):
    """Only storages may be persistent ids (torch's check)."""
    if type(pid) is not tuple and type(pid) is not int:
        raise UnpicklingError(f"persistent_load id must be tuple or int, but got {type(pid)}")
    if type(pid) is tuple and len(pid) > 0 and _ascii(pid[0]) != "storage":
        raise UnpicklingError(f"Only persistent_load of storage is allowed, but got {type(pid[0])}")


def _ascii(s):
    return s.decode("ascii") if isinstance(s, bytes) else s
