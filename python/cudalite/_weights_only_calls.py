"""What a weights-only checkpoint may call, and with which arguments.

``_weights_only_unpickler.Unpickler`` lets a file call only allowlisted globals; this module
checks the arguments of the built-in ones before they run, so that a file of a few hundred
bytes cannot make a call allocate gigabytes, recurse without end or reach code through an
argument:

- ``Tensor(...)`` takes sizes whose tensor fits in the file's size, or a (nested) list of
  numbers: rectangular, not self-referential, at most 64 dimensions, and no more numbers
  than the file has bytes;
- ``bytearray(...)`` and ``_codecs.encode(...)`` only copy the data the file holds (no
  ``bytearray(n)``, no codec but latin-1, ASCII and UTF-8);
- ``_rebuild_from_type_v2`` may only call the tensor rebuild functions, and only make
  Tensor subclasses;
- the attributes a file restores on a tensor, a Parameter or an ``OrderedDict`` are plain
  names: no ``__dunder__`` and none of cudalite's autograd bookkeeping;
- a tensor rebuilt on a storage of another dtype copies that storage once per dtype, not
  once per tensor.

User-allowlisted globals (``add_safe_globals``) are called as they are: the user vouched for
them.
"""

from __future__ import annotations

import collections
import functools
import reprlib
from pickle import UnpicklingError

from cudalite import _C, _utils

_MAX_DIMS = 64  # torch's limit on the dimensions of a tensor built from nested lists
_NUMBER_TYPES = (int, float, bool, complex)
_CODECS = frozenset(
    "latin1 latin-1 latin_1 iso-8859-1 iso8859-1 l1 ascii us-ascii utf-8 utf8 utf_8".split()
)


_REPR = reprlib.Repr()
_REPR.maxlevel, _REPR.maxother, _REPR.maxstring = 4, 80, 80


def short_repr(obj):
    """``repr(obj)`` with nesting and lengths cut short (the file's data can expand to
    billions of items through shared parts)."""
    return _REPR.repr(obj)


def _refuse(message):
    return UnpicklingError(f"weights_only: {message}")


def _check_state(state, what):
    """A state dict (or torch's ``(dict, slots)`` pair) a file may set on ``what``."""
    parts = state if type(state) is tuple else (state,)
    if type(state) is tuple and len(state) != 2:
        raise _refuse(f"the state of {what} must be a dict or a (dict, dict) pair")
    for part in parts:
        if part is None:
            continue
        if type(part) not in (dict, collections.OrderedDict):
            raise _refuse(f"the state of {what} must be a dict, but got {type(part)}")
        for key in part:
            if type(key) is not str:
                raise _refuse(f"the attribute names of {what} must be str, but got {type(key)}")
            if key.startswith("__") or key in _utils._AUTOGRAD_STATE:
                raise _refuse(f"a file may not set the attribute {short_repr(key)} of {what}")


_KEY_NODES = 100_000  # the most tuple items hashing one key may visit


def check_key(key):
    """A dict key or set item whose hash costs little: Python hashes a tuple by hashing its
    items every time, so a tuple that shares its parts (``x = (x0, x0)``, forty times over)
    would take 2**40 steps."""
    if type(key) not in (tuple, frozenset):
        return key
    todo, seen = [key], 0
    while todo:
        node = todo.pop()
        if type(node) in (tuple, frozenset):
            seen += len(node)
            if seen > _KEY_NODES:
                raise _refuse(f"a dict key or set item of more than {_KEY_NODES} items")
            todo.extend(node)
    return key


def _check_items(items, pairs=False):
    for item in items:
        if pairs and type(item) in (tuple, list) and len(item) == 2:
            item = item[0]
        check_key(item)


def _nested_shape(data):
    """The shape of a rectangular nested list of numbers; torch's errors otherwise. Walks the
    data without recursion and never follows a list into itself."""
    shape = []
    seq = data
    on_path = set()
    while type(seq) in (list, tuple):
        if id(seq) in on_path:
            raise ValueError("new(): self-referential lists are incompatible")
        on_path.add(id(seq))
        shape.append(len(seq))
        if len(shape) > _MAX_DIMS:
            raise ValueError(f"too many dimensions '{type(seq).__name__}'")
        if not seq:
            break
        seq = seq[0]
    return shape


def _check_nested(data, shape):
    """Every list at depth d has shape[d] items, and the items below the last are numbers."""
    ndim = len(shape)
    todo = [(data, 0)]
    while todo:
        node, depth = todo.pop()
        if depth == ndim:
            if type(node) not in _NUMBER_TYPES:
                raise TypeError(f"must be real number, not {type(node).__name__}")
            continue
        if type(node) not in (list, tuple):
            raise ValueError(f"expected sequence of length {shape[depth]} at dim {depth}")
        if len(node) != shape[depth]:
            raise ValueError(
                f"expected sequence of length {shape[depth]} at dim {depth} (got {len(node)})"
            )
        todo.extend((item, depth + 1) for item in node)


class Calls:
    """The calls of one load: checks arguments against ``max_bytes`` (the file's size; None:
    no bound) and remembers the storages it reinterpreted."""

    def __init__(self, max_bytes=None):
        self.max_bytes = max_bytes
        self._reinterpreted = {}  # (id(storage), dtype) -> (storage, copy)
        self._guards = _guards()

    def _check_bytes(self, nbytes, what):
        if self.max_bytes is not None and nbytes > self.max_bytes:
            raise _refuse(
                f"{what} would hold {nbytes} bytes, more than the whole file ({self.max_bytes} "
                "bytes)"
            )

    # ---- REDUCE and NEWOBJ ----

    def call(self, func, args, builtin):
        """``func(*args)``, through its guard when ``func`` is a built-in global."""
        guard = self._guards.get(id(func)) if builtin else None
        return func(*args) if guard is None else guard(self, func, args)

    def new(self, cls, args, kwargs, builtin_ids, user_ids):
        """NEWOBJ: a built-in class is constructed in full (through its guard: a C type's
        ``__new__`` alone leaves the object unset); a user-allowlisted one as pickle does."""
        if isinstance(cls, type) and id(cls) in builtin_ids:
            if kwargs:
                raise _refuse(f"{cls.__name__} may not be made with keyword arguments")
            return self.call(cls, args, True)
        if isinstance(cls, type) and id(cls) in user_ids:
            return cls.__new__(cls, *args, **kwargs)
        raise UnpicklingError(
            "Can only create new object for nn.Parameter or classes allowlisted via "
            f"`add_safe_globals` but got {short_repr(cls)}"
        )

    # ---- BUILD ----

    def build(self, inst, state, user_ids):
        """BUILD: state only for a Tensor, a Parameter, an OrderedDict (their own
        attributes) or an instance of a user-allowlisted class."""
        from cudalite.nn.parameter import Parameter

        kind = type(inst)
        if kind is _C.Tensor or kind is Parameter:
            _check_state(state, kind.__name__)
            _utils._set_obj_state(inst, state)
        elif kind is collections.OrderedDict:
            _check_state(state, "an OrderedDict")
            if state:
                inst.__dict__.update(state)
        elif id(kind) in user_ids:
            if hasattr(inst, "__setstate__"):
                inst.__setstate__(state)
            else:  # pickle's BUILD
                slotstate = None
                if isinstance(state, tuple) and len(state) == 2:
                    state, slotstate = state
                if state:
                    inst.__dict__.update(state)
                if slotstate:
                    for k, v in slotstate.items():
                        setattr(inst, k, v)
        else:
            raise UnpicklingError(
                "Can only build Tensor, Parameter, OrderedDict or types allowlisted via "
                f"`add_safe_globals`, but got {kind}"
            )

    # ---- the guards of the built-in globals ----

    def _tensor(self, cls, args):
        if not args:
            return cls()
        if all(type(a) is int for a in args):
            numel = 1
            for a in args:
                numel *= max(a, 0)
            self._check_bytes(numel * 8, f"Tensor{args}")
            return cls(*args)
        if len(args) == 1 and type(args[0]) in (list, tuple):
            shape = _nested_shape(args[0])
            numel = functools.reduce(lambda a, b: a * b, shape, 1)
            self._check_bytes(numel, "a tensor of the file's numbers")
            _check_nested(args[0], shape)
            return cls(args[0])
        raise _refuse(
            "Tensor() may be called with sizes or a list of numbers, but got "
            f"({', '.join(type(a).__name__ for a in args)})"
        )

    def _collection(self, cls, args):
        """set, Counter, OrderedDict: of the file's containers, their keys cheap to hash."""
        if len(args) > 1 or (args and type(args[0]) not in (list, tuple, dict, str)):
            raise _refuse(f"{cls.__name__}() may only be made from a list, tuple or dict")
        if args and type(args[0]) in (list, tuple):
            _check_items(args[0], pairs=cls is collections.OrderedDict)
        return cls(*args)

    def _size(self, cls, args):
        if len(args) > 1 or (args and type(args[0]) not in (list, tuple)):
            raise _refuse("Size() may only be made from a list or tuple of ints")
        if args and any(type(n) is not int for n in args[0]):
            raise _refuse("Size() may only be made from a list or tuple of ints")
        return cls(*args)

    def _device(self, cls, args):
        if not 1 <= len(args) <= 2 or any(type(a) not in (str, int) for a in args):
            raise _refuse("device() may only be made from a str and an int")
        return cls(*args)

    def _parameter(self, cls, args):
        if len(args) > 1 and type(args[1]) is not bool:
            raise _refuse("Parameter()'s requires_grad must be a bool")
        data = args[0] if args else None
        if data is not None and not isinstance(data, _C.Tensor):
            raise TypeError(
                f"Parameter(): argument 'data' must be Tensor, not {type(data).__name__}"
            )
        return cls(*args)

    def _bytearray(self, cls, args):
        if args and type(args[0]) not in (bytes, bytearray, str, list, tuple):
            raise _refuse(
                f"bytearray() may only copy data the file holds, not a {type(args[0]).__name__}"
            )
        return cls(*args)

    def _encode(self, func, args):
        if (
            not 1 <= len(args) <= 2
            or type(args[0]) is not str
            or (len(args) == 2 and (type(args[1]) is not str or args[1].lower() not in _CODECS))
        ):
            raise _refuse("_codecs.encode may only encode a str in latin-1, ASCII or UTF-8")
        return func(*args)

    def _rebuild_v3(self, func, args):
        from cudalite.storage import UntypedStorage

        if len(args) >= 7:
            storage, dtype = args[0], args[6]
            if (
                isinstance(storage, UntypedStorage)
                and isinstance(dtype, _C.dtype)
                and storage.dtype != dtype
            ):
                key = (id(storage), dtype._name)
                hit = self._reinterpreted.get(key)
                if hit is None:
                    hit = self._reinterpreted[key] = (storage, storage._reinterpret(dtype))
                args = (hit[1], *args[1:])
        return func(*args)

    def _rebuild_parameter(self, func, args):
        if len(args) > 1 and type(args[1]) is not bool:
            raise _refuse("a Parameter's requires_grad must be a bool")
        if len(args) == 4:
            _check_state(args[3], "a Parameter")
        return func(*args)

    def _from_type(self, func, args):
        if len(args) != 4:
            raise TypeError(
                f"_rebuild_from_type_v2() takes 4 positional arguments but {len(args)} were given"
            )
        rebuild, new_type, rebuild_args, state = args
        if id(rebuild) not in _rebuild_ids():
            raise _refuse(
                f"_rebuild_from_type_v2 may only call torch's tensor rebuild functions, not "
                f"{short_repr(rebuild)}"
            )
        if not (isinstance(new_type, type) and issubclass(new_type, _C.Tensor)):
            raise _refuse(
                f"_rebuild_from_type_v2 may only make tensors, not {short_repr(new_type)}"
            )
        if type(rebuild_args) is not tuple:
            raise _refuse("_rebuild_from_type_v2's arguments must be a tuple")
        _check_state(state, new_type.__name__)
        ret = self.call(rebuild, rebuild_args, True)
        return func(lambda: ret, new_type, (), state)


@functools.cache
def _rebuild_ids():
    g = _torch_names_globals()
    return frozenset(id(g[f"torch._utils.{name}"]) for name in _REBUILDS)


_REBUILDS = (
    "_rebuild_tensor",
    "_rebuild_tensor_v2",
    "_rebuild_tensor_v3",
    "_rebuild_parameter",
    "_rebuild_parameter_with_state",
)


def _torch_names_globals():
    from cudalite import _torch_names

    return _torch_names.torch_globals()


@functools.cache
def _guards():
    """id(global) -> the Calls method that checks its arguments."""
    import _codecs

    from cudalite.nn.parameter import Parameter

    g = _torch_names_globals()
    return {
        id(_C.Tensor): Calls._tensor,
        id(Parameter): Calls._parameter,
        id(bytearray): Calls._bytearray,
        id(_codecs.encode): Calls._encode,
        id(g["torch._utils._rebuild_tensor_v3"]): Calls._rebuild_v3,
        id(g["torch._utils._rebuild_parameter"]): Calls._rebuild_parameter,
        id(g["torch._utils._rebuild_parameter_with_state"]): Calls._rebuild_parameter,
        id(set): Calls._collection,
        id(collections.Counter): Calls._collection,
        id(collections.OrderedDict): Calls._collection,
        id(g["torch.Size"]): Calls._size,
        id(g["torch.device"]): Calls._device,
        id(g["torch._tensor._rebuild_from_type_v2"]): Calls._from_type,
    }
