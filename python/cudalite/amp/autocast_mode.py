"""``cudalite.autocast``: torch's automatic mixed precision regions.

Inside ``with cudalite.autocast("cuda"):`` the ops in torch's lists run in the precision
torch picks for them: matrix products in float16 (or the region's dtype), ops that need
range in float32, ops of several inputs in the widest input's dtype. The lists are torch's
(aten/src/ATen/autocast_mode.h and autocast_mode.cpp), one per device type, and they are a
property of each op's entry, not a wrapper per op (Note [Autocast at the entry] in
csrc/bindings/bind_checked.cpp): the first region enabled in the process writes each listed
op's policy into its entry, and from then on a call inside an enabled region goes through
``_cast_call`` below.

Eligible arguments are floating tensors other than float64 on the region's device type;
integers, float64 and tensors on other devices pass through. In-place and ``out=`` forms are
not cast. A float32 leaf weight that requires grad is cast once per region (the cast cache).
"""

from __future__ import annotations

import functools
import threading
import warnings

from cudalite import _C

__all__ = [
    "autocast",
    "clear_autocast_cache",
    "get_autocast_dtype",
    "is_autocast_available",
    "is_autocast_cache_enabled",
    "is_autocast_enabled",
    "set_autocast_cache_enabled",
    "set_autocast_dtype",
    "set_autocast_enabled",
]

# ---- the lists: op name -> policy, per device type ----

LOWER, FP32, FP32_DTYPE, PROMOTE = 1, 2, 3, 4
BANNED = 6  # raises in an enabled region (CUDA's binary_cross_entropy)

_CUDA_LISTS = {
    LOWER: (
        "conv1d conv2d conv3d conv_tbc conv_transpose1d conv_transpose2d conv_transpose3d "
        "convolution prelu addmm addmv addr matmul einsum mm mv linalg_vecdot linear addbmm "
        "baddbmm bmm chain_matmul lstm_cell gru_cell rnn_tanh_cell rnn_relu_cell "
        "scaled_dot_product_attention __matmul__ __rmatmul__"
    ),
    FP32: (
        "acos asin cosh erfinv exp expm1 log log10 log2 log1p reciprocal rsqrt sinh tan pow "
        "__pow__ __rpow__ float_power softplus layer_norm group_norm frobenius_norm nuclear_norm "
        "cosine_similarity poisson_nll_loss cosine_embedding_loss nll_loss hinge_embedding_loss "
        "kl_div l1_loss smooth_l1_loss huber_loss mse_loss margin_ranking_loss "
        "multilabel_margin_loss soft_margin_loss triplet_margin_loss multi_margin_loss "
        "binary_cross_entropy_with_logits dist pdist cdist renorm logsumexp interpolate"
    ),
    FP32_DTYPE: "prod softmax log_softmax cumprod cumsum sum norm",
    BANNED: "binary_cross_entropy",
    PROMOTE: (
        "addcdiv addcmul atan2 arctan2 bilinear cross dot vdot grid_sample index_put "
        "tensordot scatter_add "
        # not in torch's list, but torch's inner is its dot or tensordot, which are
        "inner"
    ),
}
_CPU_LISTS = {
    LOWER: (
        "conv1d conv2d conv3d bmm mm linalg_vecdot baddbmm addmm addbmm linear matmul "
        "conv_tbc conv_transpose1d conv_transpose2d conv_transpose3d prelu "
        "scaled_dot_product_attention __matmul__ __rmatmul__"
    ),
    FP32: (
        "avg_pool3d binary_cross_entropy grid_sample polar prod quantile nanquantile stft cdist "
        "trace view_as_complex cholesky cholesky_inverse cholesky_solve inverse lu_solve orgqr "
        "ormqr pinverse max_pool3d max_unpool2d max_unpool3d adaptive_avg_pool3d "
        "adaptive_max_pool3d fractional_max_pool2d fractional_max_pool3d ctc_loss "
        "mse_loss cosine_embedding_loss nll_loss hinge_embedding_loss poisson_nll_loss "
        "smooth_l1_loss cross_entropy l1_loss huber_loss margin_ranking_loss soft_margin_loss "
        "triplet_margin_loss multi_margin_loss kl_div multilabel_margin_loss "
        "binary_cross_entropy_with_logits"
    ),
    FP32_DTYPE: "",
    BANNED: "",
    PROMOTE: "stack cat index_copy",
}


# Ops in no list of a device type that torch runs as one kernel, but cudalite composes from
# listed ops (sum, exp, matmul...): they run with autocast suspended inside, so that their
# parts are not cast where torch's kernel casts nothing.
NATIVE = 5
_NATIVE = (
    "avg_pool1d avg_pool2d avg_pool3d adaptive_avg_pool1d adaptive_avg_pool2d "
    "adaptive_avg_pool3d logsigmoid elu selu celu mish nansum embedding_bag inner"
)


def _table(lists):
    table = dict.fromkeys(_NATIVE.split(), NATIVE)
    table.update({name: policy for policy, names in lists.items() for name in names.split()})
    # in-place forms (x.addmm_(...), x.exp_()) are not cast, nor are the ops they run
    table.update({f"{name}_": NATIVE for name in list(table) if not name.startswith("_")})
    return table


_POLICIES = {"cuda": _table(_CUDA_LISTS), "cpu": _table(_CPU_LISTS)}
_DEVICE_BITS = {"cuda": 0, "cpu": 3}  # an entry's policy: cuda's in bits 0-2, cpu's in 3-5

# ---- per-thread state, as torch's (thread-local) ----

_DEFAULT_DTYPES = {"cuda": "float16", "cpu": "bfloat16"}


class _State(threading.local):
    def __init__(self):
        self.enabled = {"cuda": False, "cpu": False}
        self.dtype = {d: getattr(_C, n) for d, n in _DEFAULT_DTYPES.items()}
        self.cache_enabled = True
        self.depth = 0  # nested regions (entered autocast objects, enabled or not)
        self.cache = {}


_state = _State()


def _check_device(device_type):
    if device_type not in ("cuda", "cpu"):
        raise RuntimeError(f"User specified an unsupported autocast device_type '{device_type}'")


def is_autocast_available(device_type: str) -> bool:
    """Whether autocast supports ``device_type`` ('cuda' and 'cpu' here)."""
    return device_type in ("cuda", "cpu")


def is_autocast_enabled(device_type=None) -> bool:
    """Whether an autocast region is enabled for ``device_type`` (default 'cuda')."""
    device_type = "cuda" if device_type is None else device_type
    _check_device(device_type)
    return _state.enabled[device_type]


def set_autocast_enabled(device_type, enabled=None):
    """Enables or disables autocast for ``device_type`` in this thread (what a region does)."""
    if enabled is None:  # torch's deprecated one-argument form: set_autocast_enabled(bool)
        device_type, enabled = "cuda", device_type
    _check_device(device_type)
    _state.enabled[device_type] = bool(enabled)
    if enabled:
        _arm()
    _C._set_autocast_active(any(_state.enabled.values()))


def get_autocast_dtype(device_type: str):
    """The dtype autocast casts to on ``device_type``: float16 on CUDA, bfloat16 on the CPU,
    unless a region or ``set_autocast_dtype`` chose another."""
    _check_device(device_type)
    return _state.dtype[device_type]


def set_autocast_dtype(device_type: str, dtype):
    _check_device(device_type)
    _state.dtype[device_type] = dtype


def is_autocast_cache_enabled() -> bool:
    return _state.cache_enabled


def set_autocast_cache_enabled(enabled: bool):
    _state.cache_enabled = bool(enabled)


def clear_autocast_cache():
    """Drops the casts of weights kept for the current region."""
    _state.cache.clear()


# ---- the region ----


class autocast:  # noqa: N801 (torch's name)
    """``autocast(device_type, dtype=None, enabled=True, cache_enabled=None)``: a context
    manager (or decorator) inside which the ops of torch's lists run in mixed precision."""

    def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        _check_device(device_type)
        self.device = device_type
        self.fast_dtype = get_autocast_dtype(device_type) if dtype is None else dtype
        self._cache_enabled = (
            is_autocast_cache_enabled() if cache_enabled is None else cache_enabled
        )
        self._enabled = enabled
        if device_type == "cuda":
            from cudalite import cuda

            if enabled and not cuda.is_available():
                warnings.warn(
                    "User provided device_type of 'cuda', but CUDA is not available. Disabling",
                    stacklevel=2,
                )
                self._enabled = False
            elif self._enabled and self.fast_dtype == _C.bfloat16 and not cuda.is_bf16_supported():
                raise RuntimeError(
                    "Current CUDA Device does not support bfloat16. Please switch dtype to float16."
                )
        elif device_type == "cpu":
            if self._enabled and self.fast_dtype not in (_C.bfloat16, _C.float16):
                warnings.warn(
                    "In CPU autocast, but the target dtype is not supported. Disabling "
                    "autocast.\nCPU Autocast only supports dtype of torch.bfloat16, "
                    "torch.float16 currently.",
                    stacklevel=2,
                )
                self._enabled = False

    def __enter__(self):
        s = _state
        self._prev = (s.enabled[self.device], s.dtype[self.device], s.cache_enabled)
        s.depth += 1
        s.dtype[self.device] = self.fast_dtype
        s.cache_enabled = self._cache_enabled
        set_autocast_enabled(self.device, self._enabled)
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        s = _state
        s.depth -= 1
        if s.depth == 0:
            s.cache.clear()  # the casts of weights live as long as the outermost region
        enabled, s.dtype[self.device], s.cache_enabled = self._prev
        set_autocast_enabled(self.device, enabled)
        return False

    def __call__(self, func):
        @functools.wraps(func)
        def decorate_autocast(*args, **kwargs):
            with self:
                return func(*args, **kwargs)

        decorate_autocast.__autocast_instance = self
        return decorate_autocast


# ---- casting at the entry ----

_armed = []


def _arm():
    """Writes each listed op's policy into its entry, once (Note [Autocast at the entry])."""
    if _armed:
        return
    _armed.append(True)
    import cudalite
    from cudalite import _checked, _tensor

    names = set(_POLICIES["cuda"]) | set(_POLICIES["cpu"])
    for name in names:
        policy = _policy_bits(name)
        for owner in (vars(_C.Tensor), _tensor._slow_methods, vars(cudalite)):
            entry = owner.get(name)
            if isinstance(entry, _C._Checked):
                entry._set_cast_policy(policy)
    # torch's Python functions (torch.functional: einsum, norm...) are entries here too
    make_entries(vars(cudalite), names, (_checked._lookup, ("f",)))
    _C._set_autocast_hook(_cast_call)


def _policy_bits(name):
    return sum(_POLICIES[d].get(name, 0) << _DEVICE_BITS[d] for d in ("cuda", "cpu"))


def make_entries(namespace, names=None, lookup=None):
    """Makes the listed functions of a module (``nn.functional``) entries with their
    autocast policies: what ``_C._Checked`` gives Tensor's methods and ``cudalite``'s
    functions. ``lookup`` is ``(function, leading arguments)`` that finds one by name
    (pickling), ``nn.functional``'s by default."""
    from cudalite import _checked

    find, lead = lookup or (_lookup_functional, ())
    for name in names or (set(_POLICIES["cuda"]) | set(_POLICIES["cpu"])):
        fn = namespace.get(name)
        if fn is None or isinstance(fn, (_C._Checked, type)) or not callable(fn):
            continue
        entry = _C._Checked(fn, _checked._passes, (find, (*lead, name)))
        entry._set_cast_policy(_policy_bits(name))
        namespace[name] = entry


def _lookup_functional(name):
    from cudalite.nn import functional

    return getattr(functional, name)


def _device_of(args, kwargs):
    for a in (*args, *kwargs.values()):
        if isinstance(a, _C.Tensor):
            return a.device.type
        if isinstance(a, (list, tuple)):
            for b in a:
                if isinstance(b, _C.Tensor):
                    return b.device.type
    return None


def _eligible(t, device):
    return (
        isinstance(t, _C.Tensor)
        and t.is_floating_point()
        and t.dtype != _C.float64
        and t.device.type == device
    )


def _cached_cast(t, dtype):
    s = _state
    if t.dtype == dtype:
        return t
    use_cache = (
        s.cache_enabled
        and t.dtype == _C.float32
        and t.requires_grad
        and t.grad_fn is None
        and not t._is_view()
        and not _inference_mode()
    )
    if use_cache:
        hit = s.cache.get(id(t))
        if hit is not None and hit[0] is t:
            return hit[1]
    out = t.to(dtype)
    if use_cache:
        s.cache[id(t)] = (t, out)
    return out


def _inference_mode():
    from cudalite.autograd.graph import INFERENCE

    return INFERENCE.depth > 0


def _map(args, kwargs, fn):
    def one(a):
        if isinstance(a, (list, tuple)) and any(isinstance(b, _C.Tensor) for b in a):
            return type(a)(fn(b) for b in a)
        return fn(a)

    return tuple(one(a) for a in args), {k: one(v) for k, v in kwargs.items()}


def _widest(args, kwargs, device):
    widest = None
    for a in (*args, *kwargs.values()):
        for t in a if isinstance(a, (list, tuple)) else (a,):
            if _eligible(t, device):
                widest = t.dtype if widest is None else _C.promote_types(widest, t.dtype)
    return widest


_BANNED_MESSAGE = (
    "torch.nn.functional.binary_cross_entropy and torch.nn.BCELoss are unsafe to autocast.\n"
    "Many models use a sigmoid layer right before the binary cross entropy layer.\n"
    "In this case, combine the two layers using "
    "torch.nn.functional.binary_cross_entropy_with_logits\n"
    "or torch.nn.BCEWithLogitsLoss.  binary_cross_entropy_with_logits and BCEWithLogits are\n"
    "safe to autocast."
)


def _cast_call(bits, entry, args, kwargs):
    """What an entry calls inside an enabled region: the call with its arguments cast by
    the op's policy on their device type, and autocast suspended inside (the op itself
    then records for autograd as usual)."""
    device = _device_of(args, kwargs)
    policy = (bits >> _DEVICE_BITS[device]) & 7 if device in _DEVICE_BITS else 0
    if not policy or not _state.enabled[device]:
        # Not in this device type's lists: the op runs as written, and autocast stays on
        # for the ops it calls (cross_entropy's log_softmax on CUDA).
        return entry._call_bypassing_autocast(*args, **kwargs)
    if policy == BANNED:
        raise RuntimeError(_BANNED_MESSAGE)
    if "out" in kwargs or policy == NATIVE:
        return _suspended(entry, args, kwargs)
    if policy == LOWER:
        dtype = _state.dtype[device]
        args, kwargs = _map(
            args, kwargs, lambda a: _cached_cast(a, dtype) if _eligible(a, device) else a
        )
    elif policy == FP32:
        args, kwargs = _map(args, kwargs, lambda a: a.float() if _eligible(a, device) else a)
    elif policy == FP32_DTYPE:
        # torch's fp32_set_opt_dtype: a lower-precision input runs with dtype=float32,
        # unless the call chose a dtype.
        if kwargs.get("dtype") is None and any(
            _eligible(a, device) and a.dtype != _C.float32 for a in args[:1]
        ):
            kwargs = dict(kwargs, dtype=_C.float32)
    elif policy == PROMOTE:
        widest = _widest(args, kwargs, device)
        if widest is not None:
            args, kwargs = _map(args, kwargs, lambda a: a.to(widest) if _eligible(a, device) else a)
    return _suspended(entry, args, kwargs)


def fp32_if_listed(device_type, t):
    """``t`` in float32 where an enabled region of ``device_type`` would cast it (for the
    list entries that are one mode of a function: torch's reflection_pad1d is F.pad's
    mode "reflect" on a 3-d input)."""
    if _state.enabled[device_type] and _eligible(t, device_type):
        return t.float()
    return t


def _suspended(entry, args, kwargs):
    _C._set_autocast_active(False)
    try:
        return entry(*args, **kwargs)
    finally:
        _C._set_autocast_active(any(_state.enabled.values()))
