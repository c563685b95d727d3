"""The Python half of ``cudalite.Tensor``: conversions, devices, autograd slots, printing.

``Tensor`` is the C++ class ``cudalite._C.Tensor`` itself (so tensors that C++ ops return need
no re-wrapping); this module adds the methods that are compositions, in the way
``torch/_tensor.py`` extends ``torch._C.TensorBase``. Math methods are in ``_tensor_math.py``,
the random fills in ``_tensor_random.py``.
"""

from __future__ import annotations

import numbers

from cudalite import _C, _arg_parser, _indexing, _memory_format
from cudalite._C import Tensor

_methods = {}
_slow_methods = {}  # name -> the Python method a C++ fast method hands other calls to


def method(fn=None, *, name=None):
    """Registers ``fn`` as a Tensor method (installed by ``install``)."""

    def reg(f):
        _methods[name or f.__name__] = f
        return f

    return reg(fn) if fn is not None else reg


def fast_methods(**slow):
    """Installs the C++ versions of these methods (Note [Fast methods] in
    csrc/bindings/bind_methods.cpp), which hand every call they don't handle themselves to
    the full Python methods given here."""
    _C._set_slow_methods(slow)
    _slow_methods.update(slow)
    for name in slow:
        _methods[name] = _C.Tensor.__dict__[name]


# ---- autograd slots (the graph itself arrives with cudalite.autograd) ----


def _get_requires_grad(self):
    return self._requires_grad_flag


_GRAD_DTYPE_MSG = "only Tensors of floating point and complex dtype can require gradients"


def _set_requires_grad(self, value, *, msg=_GRAD_DTYPE_MSG):
    # torch words this differently in the setter, requires_grad_() and the factories.
    value = bool(value)
    if value and not self.dtype.is_floating_point:
        raise RuntimeError(msg)
    if not value and self.grad_fn is not None:
        raise RuntimeError(
            "you can only change requires_grad flags of leaf variables. If you want to use a "
            "computed variable in a subgraph that doesn't require differentiation use "
            "var_no_grad = var.detach()."
        )
    self._requires_grad_flag = value


@method
def requires_grad_(self, requires_grad=True):
    """Sets ``requires_grad`` in place and returns self."""
    if requires_grad is not True and requires_grad is not False:
        raise TypeError(
            "requires_grad_(): argument 'requires_grad' (position 1) must be bool, not "
            f"{_arg_parser.tp_name(requires_grad)}"
        )
    _set_requires_grad(
        self, requires_grad, msg="only Tensors of floating point dtype can require gradients"
    )
    return self


@method
def detach(self):
    """A view sharing storage, outside the autograd graph."""
    return self._alias()


DETACH_VIEW_MSG = (
    "Can't detach views in-place. Use detach() instead. If you are using "
    "DistributedDataParallel (DDP) for training, and gradient_as_bucket_view is set as True, "
    "gradients are views of DDP buckets, and hence detach_() cannot be called on these "
    "gradients. To fix this error, please refer to the Optimizer.zero_grad() function in "
    "torch/optim/optimizer.py as the solution."
)


@method
def detach_(self):
    """Removes self from the autograd graph in place; views refuse, as torch's do."""
    if self._is_view():
        raise RuntimeError(DETACH_VIEW_MSG)
    self.__dict__.pop("grad_fn", None)
    self._requires_grad_flag = False
    return self


def _get_data(self):
    """A detached alias that counts its versions apart from self's (torch's .data: writes
    through it are invisible to autograd's saved-tensor check)."""
    return self._variable_data()


def _set_data(self, new):
    if not isinstance(new, Tensor):
        raise TypeError(f"Variable data has to be a tensor, but got {type(new).__name__}")
    Tensor._set_data(self, new)  # self keeps its version counter, as in torch


# ---- conversions ----


@method
def item(self):
    """The single value of a one-element tensor as a Python number."""
    return _C._item(self)


@method
def tolist(self):
    """The values as (nested) Python lists; a 0-dim tensor gives a number."""
    if self.dim() == 0:
        return self.item()
    host = self.cpu()
    if host.dtype == _C.bfloat16:
        host = host.float()
    return _C._numpy(host).tolist()


@method
def numpy(self, *, force=False):
    """A NumPy array sharing this CPU tensor's memory."""
    if force is not False and force is not True:
        raise TypeError(f"numpy(): argument 'force' must be bool, not {_arg_parser.tp_name(force)}")
    if force:
        return _C._numpy(self.detach().cpu())
    if self.requires_grad:
        raise RuntimeError(
            "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead."
        )
    return _C._numpy(self)


@method
def __array__(self, dtype=None, copy=None):
    import numpy as np

    # As torch: no bfloat16 arrays, no arrays of tensors that require grad.
    if self.requires_grad:
        raise RuntimeError(
            "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead."
        )
    if copy is False and (
        self.is_cuda
        or (dtype is not None and np.dtype(dtype) != np.dtype(_C._numpy_dtype_name(self.dtype)))
    ):
        raise ValueError("Unable to avoid copy while creating an array as requested.")
    arr = _C._numpy(self.cpu())
    if dtype is not None:
        arr = arr.astype(dtype, copy=False)
    return arr.copy() if copy else arr


@method
def __array_wrap__(self, array, context=None, return_scalar=False):
    """NumPy ufuncs on tensors give tensors (bool results as uint8, as torch does)."""
    if array.dtype == bool:
        array = array.astype("uint8")
    return _C._from_numpy_quiet(array)


Tensor.__array_priority__ = 1000


def _parse_to(args, kwargs):
    device = kwargs.pop("device", None)
    dtype = kwargs.pop("dtype", None)
    non_blocking = kwargs.pop("non_blocking", False)
    copy = kwargs.pop("copy", False)
    fmt = kwargs.pop("memory_format", None)
    if kwargs:
        raise TypeError(f"to() got an unexpected keyword argument '{next(iter(kwargs))}'")
    args = list(args)
    if args and isinstance(args[0], Tensor):
        other = args.pop(0)
        device, dtype = other.device, other.dtype
    elif args and isinstance(args[0], (str, int, _C.device)) and not isinstance(args[0], bool):
        device = args.pop(0)
    if args and isinstance(args[0], _C.dtype):
        dtype = args.pop(0)
    if args and isinstance(args[0], bool):
        non_blocking = args.pop(0)
    if args and isinstance(args[0], bool):
        copy = args.pop(0)
    if args:
        raise TypeError(f"to() received an invalid combination of arguments: {args!r}")
    return device, dtype, non_blocking, copy, fmt


@method
def to(self, *args, **kwargs):
    """Converts dtype and/or device; returns self when nothing changes (unless copy=True)."""
    device, dtype, non_blocking, copy, fmt = _parse_to(args, kwargs)
    out = _C._to(self, device, dtype, non_blocking, copy)
    return out if fmt is None else _memory_format.apply(out, fmt, "to", self)


_CUDA = _C.device("cuda")  # the current CUDA device


@method
def cuda(self, device=None, non_blocking=False, memory_format=None):
    """A copy in CUDA memory (self if already on that device)."""
    if device is None:
        device = _CUDA
    elif isinstance(device, int):
        device = _C.device("cuda", device)
    else:
        device = _C.device(device) if isinstance(device, str) else device
        if device.type != "cuda":
            raise RuntimeError("Invalid device, must be cuda device")
    out = _C._to(self, device, None, non_blocking, False)
    return out if memory_format is None else _memory_format.apply(out, memory_format, "cuda", self)


@method
def cpu(self, memory_format=None):
    """A copy in host memory (self if already there)."""
    out = _C._to(self, "cpu", None, False, False)
    return out if memory_format is None else _memory_format.apply(out, memory_format, "cpu", self)


fast_methods(item=item, cuda=cuda, cpu=cpu)


def _cast(dtype_name):
    def fn(self, *, memory_format=None):
        out = _C._to(self, None, getattr(_C, dtype_name), False, False)
        return (
            out
            if memory_format is None
            else _memory_format.apply(out, memory_format, dtype_name, self)
        )

    fn.__doc__ = f"``self.to({dtype_name})``."
    return fn


for _name, _dt in [
    ("float", "float32"),
    ("double", "float64"),
    ("half", "float16"),
    ("bfloat16", "bfloat16"),
    ("long", "int64"),
    ("int", "int32"),
    ("short", "int16"),
    ("char", "int8"),
    ("byte", "uint8"),
    ("bool", "bool"),
]:
    _methods[_name] = _cast(_dt)
    _methods[_name].__name__ = _methods[_name].__qualname__ = _name


@method(name="type")
def _type(self, dtype=None, non_blocking=False):  # not named `type`: that shadows the builtin
    """The type name ('cudalite.FloatTensor'), or a copy converted to ``dtype``."""
    from cudalite import _legacy

    if dtype is None:
        return _legacy.type_name(self)
    if isinstance(dtype, str):
        return _legacy.convert_to_type_name(self, dtype)
    if isinstance(dtype, _legacy._LegacyMeta):  # x.type(cudalite.FloatTensor)
        return _legacy.convert_to_type_name(self, repr(dtype)[8:-2])
    return _C._to(self, None, dtype, non_blocking, False)


@method
def is_floating_point(self):
    return self.dtype.is_floating_point


@method
def is_signed(self):
    return self.dtype.is_signed


@method
def clone(self, *, memory_format=None):
    """A copy with its own memory (in ``memory_format``'s layout when given)."""
    out = self._clone()
    return out if memory_format is None else _memory_format.apply(out, memory_format, "clone")


@method
def copy_(self, src, non_blocking=False):
    """Copies ``src`` (broadcast, any device and dtype; or a number) into self."""
    if non_blocking is not False and non_blocking is not True:
        raise TypeError("non_blocking is a bool")  # worded by Note [Argument errors]
    if not isinstance(src, Tensor):
        if not isinstance(src, numbers.Number) or isinstance(src, complex):
            raise TypeError(
                f"copy_(): argument 'other' (position 1) must be Tensor, not {type(src).__name__}"
            )
        # torch's copy_(Number): the number as a 0-dim tensor of its Python type, copied
        # (converted as a copy converts, without fill_'s range check).
        dt = _C.bool if isinstance(src, bool) else _C.int64 if isinstance(src, int) else _C.float64
        src = _full0(src, dt)
    _C._copy_(self, src, non_blocking)
    return self


def _full0(value, dtype):
    t = _C._empty([], dtype, _C.device("cpu"), False)
    _C._fill_(t, value)
    return t


@method
def fill_(self, value):
    """Fills self with ``value``."""
    if isinstance(value, Tensor):
        if value.dim() != 0:
            raise RuntimeError(
                "fill_ only supports 0-dimension value tensor but got tensor with "
                f"{value.dim()} dimensions."
            )
        value = value.item()
    _C._fill_(self, value)
    return self


@method
def zero_(self):
    """Fills self with zeros."""
    _C._fill_(self, 0)
    return self


# ---- Python protocol ----


@method
def __iter__(self):
    if self.dim() == 0:
        raise TypeError("iteration over a 0-d tensor")
    return iter([self.select(0, i) for i in range(self.shape[0])])


@method
def __bool__(self):
    if self.numel() != 1:
        if self.numel() == 0:
            raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return bool(self.item())


def _one_element(self):
    if self.numel() != 1:
        raise ValueError("only one element tensors can be converted to Python scalars")
    return self.item()


@method
def __float__(self):
    return float(_one_element(self))


@method
def __int__(self):
    return int(_one_element(self))


@method
def __index__(self):
    if self.numel() != 1 or self.dtype.is_floating_point:
        raise TypeError("only integer tensors of a single element can be converted to an index")
    return int(self.item())


@method
def __complex__(self):
    return complex(_one_element(self))


@method
def __format__(self, spec):
    if self.dim() == 0:
        return self.item().__format__(spec)
    return object.__format__(self, spec)


@method
def __repr__(self, *, tensor_contents=None):
    from cudalite import _tensor_str, get_default_dtype

    host = self.detach().cpu()
    if host.dtype == _C.bfloat16:
        host = _C._to(host, None, _C.float32, False, False)
    try:
        grad_fn = self.grad_fn
        name = None if grad_fn is None else grad_fn.__class__.__name__
    except RuntimeError:  # a view made in no_grad mode whose base was modified in place
        grad_fn = name = "Invalid"
    return _tensor_str.tensor_repr(
        _C._numpy(host),
        dtype_name=self.dtype._name,
        default_dtype_name=get_default_dtype()._name,
        device=str(self.device) if self.is_cuda else None,
        requires_grad=self.requires_grad and grad_fn is None,
        grad_fn=name,
    )


def __getitem__(self, idx):
    return _indexing.getitem(self, idx)


fast_methods(__getitem__=__getitem__)


@method
def __setitem__(self, idx, value):
    _indexing.setitem(self, idx, value)


@method
def __deepcopy__(self, memo):
    out = self.clone()
    import copy  # (deep copies only: copy stays out of `import cudalite`)

    out.__dict__.update(copy.deepcopy({k: v for k, v in self.__dict__.items()}, memo))
    out._requires_grad_flag = self._requires_grad_flag
    return out


@method
def __copy__(self):
    """A shallow copy shares the storage, as torch's does."""
    out = self._alias()
    out.__dict__.update(self.__dict__)
    out._requires_grad_flag = self._requires_grad_flag
    return out


@method
def __reduce_ex__(self, protocol):
    """Pickles as torch's tensors do: a rebuild call on the whole storage (see _utils.py)."""
    from cudalite import _utils  # pickling is rare: keep it out of `import cudalite`

    return _utils.reduce_ex(self)


@method
def untyped_storage(self):
    """The storage under this tensor and its views (see storage.py)."""
    from cudalite.storage import UntypedStorage

    return UntypedStorage._of(self)


@method
def __contains__(self, element):
    if isinstance(element, (Tensor, int, float, bool)):
        return bool((self == element).any().item())
    raise RuntimeError(
        f"Tensor.__contains__ only supports Tensor or scalar, but you passed in a {type(element)}."
    )


@method
def pin_memory(self, device=None):
    """A copy in page-locked host memory (self if already pinned)."""
    if self.is_cuda:
        raise RuntimeError(
            f"cannot pin '{_legacy_type(self)}' only dense CPU tensors can be pinned"
        )
    if self.is_pinned():
        return self
    # From the caching pinned allocator, copied by several threads; the copy keeps the
    # strides of the original, as torch's does.
    return _C._cuda._pin_memory(self)


# ---- shared memory (core/shared_memory.h; cudalite.multiprocessing) ----


@method
def share_memory_(self):
    """Moves the storage to shared memory, in place (every view sees it), so that
    ``cudalite.multiprocessing`` sends the tensor without copying it. A no-op for CUDA tensors
    and storages already shared. Tensors in shared memory can't be resized."""
    nbytes = self._storage_nbytes()
    if self.is_cuda or nbytes == 0 or self._is_shared_memory():
        return self
    import os

    fd = os.memfd_create("cudalite_shared", os.MFD_CLOEXEC)
    try:
        os.ftruncate(fd, nbytes)
    except BaseException:
        os.close(fd)
        raise
    self._share_memory_fd(fd)  # takes the descriptor
    return self


@method
def is_shared(self):
    """Whether the storage is in shared memory (always True for CUDA tensors)."""
    return self.is_cuda or self._is_shared_memory()


@method
def record_stream(self, stream):
    """Marks the tensor as used by ``stream``: its memory is not reused for another tensor
    until the work queued on ``stream`` when this tensor is freed has completed."""
    if not isinstance(stream, _C._cuda._CudaStreamBase):
        raise TypeError(
            f"record_stream(): argument 's' (position 1) must be Stream, not "
            f"{stream.__class__.__name__}"
        )
    if not self.is_cuda:
        raise NotImplementedError(
            "Could not run 'aten::record_stream' with arguments from the 'CPU' backend."
        )
    _C._cuda._record_stream(self, stream)


def _view_grad_fn(t):
    from cudalite.autograd.functions.views import view_grad_fn

    return view_grad_fn(t)


def _legacy_type(t):
    from cudalite import _legacy

    return _legacy.type_name(t)


def install():
    """Attaches the methods and properties above to the C++ Tensor class."""
    for name, fn in _methods.items():
        setattr(Tensor, name, fn)
    Tensor.requires_grad = property(_get_requires_grad, _set_requires_grad)
    Tensor.data = property(_get_data, _set_data)
    Tensor.grad = None
    Tensor.grad_fn = _C._grad_fn_slot(_view_grad_fn)  # None, or a view's node (views.py)
    Tensor.is_leaf = property(lambda self: self.grad_fn is None)
    Tensor.__str__ = Tensor.__repr__
    Tensor.__module__ = "cudalite"
    # Sets the C type name too, so Python's own errors say 'Tensor' as torch's do.
    Tensor.__name__ = "Tensor"


def set_printoptions(
    precision=None, threshold=None, edgeitems=None, linewidth=None, profile=None, sci_mode=None
):
    """Sets how tensors print (torch's options and profiles 'default', 'short', 'full')."""
    from cudalite import _tensor_str

    _tensor_str.set_printoptions(precision, threshold, edgeitems, linewidth, profile, sci_mode)


def get_printoptions():
    """The current print options as a dict."""
    from cudalite import _tensor_str

    return _tensor_str.get_printoptions()
