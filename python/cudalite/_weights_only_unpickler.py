"""The unpickler of ``cudalite.load(..., weights_only=True)``, the default: it builds only
tensors, Parameters, storages, dtypes, devices, ``Size``, ``OrderedDict``/``Counter`` and
Python's primitive values and containers, as ``torch._weights_only_unpickler`` does.

Like torch's, it is a restricted pickle interpreter written in Python, not Python's
unpickler with a filter on globals: every opcode is checked, not only ``GLOBAL``.

- Globals come from the allowlist below (torch's names for cudalite's objects, a few
  builtins) or from ``cudalite.serialization.add_safe_globals``; modules ``sys``, ``os``,
  ``posix`` and ``nt`` never.
- Only those globals may be called (``REDUCE``, ``NEWOBJ``), and the built-in ones only with
  the arguments a checkpoint holds (``_weights_only_calls.py``): nothing allocates more than
  the file's size, nothing recurses over self-referential data.
- ``BUILD`` sets state only on a Tensor, a Parameter, an ``OrderedDict`` or an instance of
  a user-allowlisted class, never on a class or a shared object; ``APPEND`` only extends
  lists, ``SETITEM`` only fills dicts.
- The memo is a dict (an index in the file allocates nothing), every read is checked
  against the data's end, and the opcodes of protocols 0 and 1 and out-of-band buffers are
  refused.

The errors are torch's ``UnpicklingError``\\ s (``cudalite.load`` wraps them in torch's
explanation).
"""

from __future__ import annotations

import _codecs
import _compat_pickle
import collections
import pickle
from pickle import UnpicklingError
from struct import unpack as _unpack

from cudalite import _torch_names
from cudalite import _weights_only_calls as _wo_calls

# The opcodes, as ints (the loop compares the byte it read).
_GLOBAL, _STACK_GLOBAL, _REDUCE, _NEWOBJ, _NEWOBJ_EX, _BUILD = (
    pickle.GLOBAL[0],
    pickle.STACK_GLOBAL[0],
    pickle.REDUCE[0],
    pickle.NEWOBJ[0],
    pickle.NEWOBJ_EX[0],
    pickle.BUILD[0],
)
_APPEND, _APPENDS, _SETITEM, _SETITEMS, _ADDITEMS, _BINPERSID = (
    pickle.APPEND[0],
    pickle.APPENDS[0],
    pickle.SETITEM[0],
    pickle.SETITEMS[0],
    pickle.ADDITEMS[0],
    pickle.BINPERSID[0],
)
_MARK, _BINPUT, _LONG_BINPUT, _MEMOIZE, _BINGET, _LONG_BINGET = (
    pickle.MARK[0],
    pickle.BINPUT[0],
    pickle.LONG_BINPUT[0],
    pickle.MEMOIZE[0],
    pickle.BINGET[0],
    pickle.LONG_BINGET[0],
)
_TUPLE, _TUPLE1, _TUPLE2, _TUPLE3, _FROZENSET, _FRAME = (
    pickle.TUPLE[0],
    pickle.TUPLE1[0],
    pickle.TUPLE2[0],
    pickle.TUPLE3[0],
    pickle.FROZENSET[0],
    pickle.FRAME[0],
)
_BININT, _BININT1, _BININT2, _BINFLOAT, _LONG1, _LONG4 = (
    pickle.BININT[0],
    pickle.BININT1[0],
    pickle.BININT2[0],
    pickle.BINFLOAT[0],
    pickle.LONG1[0],
    pickle.LONG4[0],
)
_BINUNICODE, _SHORT_BINUNICODE, _BINUNICODE8, _SHORT_BINSTRING = (
    pickle.BINUNICODE[0],
    pickle.SHORT_BINUNICODE[0],
    pickle.BINUNICODE8[0],
    pickle.SHORT_BINSTRING[0],
)
_SHORT_BINBYTES, _BINBYTES, _BINBYTES8, _BYTEARRAY8 = (
    pickle.SHORT_BINBYTES[0],
    pickle.BINBYTES[0],
    pickle.BINBYTES8[0],
    pickle.BYTEARRAY8[0],
)
_NONE, _NEWFALSE, _NEWTRUE, _EMPTY_TUPLE, _EMPTY_LIST, _EMPTY_DICT, _EMPTY_SET = (
    pickle.NONE[0],
    pickle.NEWFALSE[0],
    pickle.NEWTRUE[0],
    pickle.EMPTY_TUPLE[0],
    pickle.EMPTY_LIST[0],
    pickle.EMPTY_DICT[0],
    pickle.EMPTY_SET[0],
)
_PROTO, _STOP = pickle.PROTO[0], pickle.STOP[0]

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


def _find_global(module, name):
    """The object a weights-only file may name as ``module.name``; torch's errors otherwise."""
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


def _builtin_ids():
    """The ids of every object a file may name without the user's allowlist."""
    return {id(o) for o in (*_ALLOWED_BUILTINS.values(), *_torch_names.torch_globals().values())}


_TRUNCATED = "pickle data was truncated"


class Unpickler:
    """Reads a pickle, building only what a weights-only file may hold.

    Args:
        file: a binary stream (``read`` and ``readline``) positioned at the pickle.
        encoding: how protocol-2 byte strings (``SHORT_BINSTRING``) decode (``"bytes"``:
            they stay bytes).
        max_bytes: the most bytes a call in the file may make a tensor or buffer hold; the
            size of the file the pickle came from (None: no bound).
    """

    def __init__(self, file, *, encoding="bytes", max_bytes=None, **_ignored):
        self.encoding = encoding
        self.read = file.read
        self.readline = file.readline
        self.memo = {}
        self.proto = -1
        self.calls = _wo_calls.Calls(max_bytes)

    def persistent_load(self, pid):
        raise UnpicklingError("unsupported persistent id encountered")

    def _read(self, n):
        data = self.read(n)
        if len(data) != n:
            raise UnpicklingError(_TRUNCATED)
        return data

    def load(self):
        """The object the pickle describes."""
        user = _get_user_allowed_globals()
        builtin_ids = _builtin_ids()
        user_ids = {id(o) for o in user.values()}
        allowed_ids = builtin_ids | user_ids
        calls = self.calls
        self.metastack = []
        stack = self.stack = []
        read, _read, memo = self.read, self._read, self.memo
        while True:
            key = read(1)
            if not key:
                raise EOFError("Ran out of input")
            op = key[0]
            # ---- the most frequent first (a state dict's pickle is mostly these) ----
            if op == _BINPUT:
                index = read(1)
                if not index:
                    raise UnpicklingError(_TRUNCATED)
                memo[index[0]] = stack[-1]
            elif op == _BINGET:
                index = read(1)
                if not index:
                    raise UnpicklingError(_TRUNCATED)
                stack.append(memo[index[0]])
            elif op == _BINUNICODE:
                size = read(4)
                data = read(_unpack("<I", size)[0]) if len(size) == 4 else b""
                if len(size) != 4 or len(data) != _unpack("<I", size)[0]:
                    raise UnpicklingError(_TRUNCATED)
                stack.append(str(data, "utf-8", "surrogatepass"))
            elif op == _MARK:
                self.metastack.append(stack)
                stack = self.stack = []
            elif op == _BININT1:
                value = read(1)
                if not value:
                    raise UnpicklingError(_TRUNCATED)
                stack.append(value[0])
            elif op == _TUPLE:
                items = self._pop_mark()
                stack = self.stack
                stack.append(tuple(items))
            elif op == _TUPLE1:
                stack[-1] = (stack[-1],)
            elif op == _TUPLE2:
                stack[-2:] = [(stack[-2], stack[-1])]
            elif op == _NEWFALSE:
                stack.append(False)
            # ---- the operands that build or change objects: the allowlist's business ----
            elif op == _GLOBAL:
                module = self.readline()[:-1].decode("utf-8")
                name = self.readline()[:-1].decode("utf-8")
                stack.append(_find_global(module, name))
            elif op == _STACK_GLOBAL:
                name = stack.pop()
                module = stack.pop()
                if type(name) is not str or type(module) is not str:
                    raise UnpicklingError("STACK_GLOBAL requires str")
                stack.append(_find_global(module, name))
            elif op == _REDUCE:
                args = stack.pop()
                func = stack[-1]
                if id(func) not in allowed_ids:
                    msg = f"Trying to call reduce for unrecognized function {_short(func)}"
                    if hasattr(func, "__self__"):
                        msg += f" which belongs to {_short(func.__self__)}"
                    raise UnpicklingError(msg)
                if type(args) is not tuple:
                    raise UnpicklingError("REDUCE's arguments must be a tuple")
                stack[-1] = calls.call(func, args, id(func) in builtin_ids)
            elif op == _NEWOBJ or op == _NEWOBJ_EX:
                kwargs = stack.pop() if op == _NEWOBJ_EX else {}
                args = stack.pop()
                cls = stack.pop()
                if type(args) is not tuple or type(kwargs) is not dict:
                    raise UnpicklingError("NEWOBJ's arguments must be a tuple (and a dict)")
                stack.append(calls.new(cls, args, kwargs, builtin_ids, user_ids))
            elif op == _BUILD:
                state = stack.pop()
                calls.build(stack[-1], state, user_ids | builtin_ids)
            elif op == _APPEND:
                item = stack.pop()
                target = stack[-1]
                if type(target) is not list:
                    raise UnpicklingError(f"Can only append to lists, but got {type(target)}")
                target.append(item)
            elif op == _APPENDS:
                items = self._pop_mark()
                stack = self.stack
                target = stack[-1]
                if type(target) is not list:
                    raise UnpicklingError(f"Can only extend lists, but got {type(target)}")
                target.extend(items)
            elif op == _SETITEM:
                v = stack.pop()
                k = _check_key(stack.pop())
                _check_set_item_target(stack[-1], "SETITEM")
                stack[-1][k] = v
            elif op == _SETITEMS:
                items = self._pop_mark()
                stack = self.stack
                target = stack[-1]
                _check_set_item_target(target, "SETITEMS")
                for i in range(0, len(items), 2):
                    target[_check_key(items[i])] = items[i + 1]
            elif op == _ADDITEMS:
                items = self._pop_mark()
                stack = self.stack
                if type(stack[-1]) is not set:
                    raise UnpicklingError(f"Can only add items to sets, but got {type(stack[-1])}")
                stack[-1].update(_check_key(item) for item in items)
            elif op == _BINPERSID:
                pid = stack.pop()
                check_persistent_id(pid)
                stack.append(self.persistent_load(pid))
            # ---- the stack and the memo ----
            elif op == _LONG_BINPUT:
                memo[_unpack("<I", _read(4))[0]] = stack[-1]
            elif op == _MEMOIZE:
                memo[len(memo)] = stack[-1]
            elif op == _LONG_BINGET:
                stack.append(memo[_unpack("<I", _read(4))[0]])
            elif op == _TUPLE3:
                stack[-3:] = [(stack[-3], stack[-2], stack[-1])]
            elif op == _FROZENSET:
                items = self._pop_mark()
                stack = self.stack
                stack.append(frozenset(_check_key(item) for item in items))
            elif op == _FRAME:
                _read(8)  # a frame's length: the reads below are bounded by the data anyway
            # ---- values ----
            elif op == _BININT:
                stack.append(_unpack("<i", _read(4))[0])
            elif op == _BININT2:
                stack.append(_unpack("<H", _read(2))[0])
            elif op == _BINFLOAT:
                stack.append(_unpack(">d", _read(8))[0])
            elif op == _LONG1:
                stack.append(pickle.decode_long(_read(_read(1)[0])))
            elif op == _LONG4:
                n = _unpack("<i", _read(4))[0]
                if n < 0:
                    raise UnpicklingError("LONG pickle has negative byte count")
                stack.append(pickle.decode_long(_read(n)))
            elif op == _SHORT_BINUNICODE:
                stack.append(str(_read(_read(1)[0]), "utf-8", "surrogatepass"))
            elif op == _BINUNICODE8:
                stack.append(str(_read(_unpack("<Q", _read(8))[0]), "utf-8", "surrogatepass"))
            elif op == _SHORT_BINSTRING:
                data = _read(_read(1)[0])
                stack.append(data if self.encoding == "bytes" else data.decode(self.encoding))
            elif op == _SHORT_BINBYTES:
                stack.append(_read(_read(1)[0]))
            elif op == _BINBYTES:
                stack.append(_read(_unpack("<I", _read(4))[0]))
            elif op == _BINBYTES8:
                stack.append(_read(_unpack("<Q", _read(8))[0]))
            elif op == _BYTEARRAY8:
                stack.append(bytearray(_read(_unpack("<Q", _read(8))[0])))
            elif op == _NONE:
                stack.append(None)
            elif op == _NEWTRUE:
                stack.append(True)
            elif op == _EMPTY_TUPLE:
                stack.append(())
            elif op == _EMPTY_LIST:
                stack.append([])
            elif op == _EMPTY_DICT:
                stack.append({})
            elif op == _EMPTY_SET:
                stack.append(set())
            # ---- the first and the last ----
            elif op == _PROTO:
                self.proto = _read(1)[0]
                if self.proto > pickle.HIGHEST_PROTOCOL:
                    raise ValueError(f"unsupported pickle protocol: {self.proto}")
            elif op == _STOP:
                return stack.pop()
            else:
                raise UnpicklingError(f"Unsupported operand {op}")

    def _pop_mark(self):
        """The items pushed since the last MARK, which is popped."""
        items = self.stack
        self.stack = self.metastack.pop()
        return items


_check_key = _wo_calls.check_key


short_repr = _wo_calls.short_repr


def _short(obj):
    """``repr(obj)`` cut short: the file's data may be huge once its shared parts are
    expanded."""
    return _wo_calls.short_repr(obj)


def _check_set_item_target(target, opcode):
    if type(target) not in (dict, collections.OrderedDict, collections.Counter):
        raise UnpicklingError(
            f"Can only {opcode} for dict, collections.OrderedDict, collections.Counter, but got "
            f"{type(target)}"
        )


def check_persistent_id(pid):
    """Only storages may be persistent ids (torch's check)."""
    if type(pid) is not tuple and type(pid) is not int:
        raise UnpicklingError(f"persistent_load id must be tuple or int, but got {type(pid)}")
    if type(pid) is tuple and len(pid) > 0 and _ascii(pid[0]) != "storage":
        raise UnpicklingError(f"Only persistent_load of storage is allowed, but got {type(pid[0])}")


def _ascii(s):
    return s.decode("ascii") if isinstance(s, bytes) else s
