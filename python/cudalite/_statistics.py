"""Order statistics, counts and covariances: aminmax, median, nanmedian, mode, quantile,
nanquantile, histc, bincount, cov and corrcoef.

They are made of sort, gather and the reductions; the values they return are gathered from
a recorded sort, so their gradients flow back to the elements they picked, as torch's do.
"""

from __future__ import annotations

import builtins

from cudalite import _C, _creation, _finfo
from cudalite._C import Tensor
from cudalite._reductions import _out, return_types
from cudalite._tensor import method
from cudalite._tensor_scatter import out_no_grad

__all__ = [
    "aminmax",
    "median",
    "nanmedian",
    "mode",
    "quantile",
    "nanquantile",
    "histc",
    "bincount",
    "cov",
    "corrcoef",
]


def _pair_out(kind, r, out, input):
    if out is None:
        return r
    out_no_grad(kind.__name__, out[0], input)
    return kind(_out(r[0], out[0]), _out(r[1], out[1]))


def _kernel(name, x):
    return f'"{name}_{"cuda" if x.is_cuda else "cpu"}"'


# ---- aminmax ----


def _aminmax(x, dim, keepdim):
    if x.numel() == 0 and (dim is None or x.dim() == 0 or x.shape[dim] == 0):
        raise RuntimeError(
            "aminmax(): cannot compute aminmax over an empty dimension as the operation has "
            "no identity."
        )
    if dim is None:
        lo, hi = x.amin(), x.amax()
        if keepdim:
            shape = [1] * x.dim()
            lo, hi = lo.reshape(shape), hi.reshape(shape)
        return return_types.aminmax(lo, hi)
    return return_types.aminmax(x.amin(dim, keepdim), x.amax(dim, keepdim))


def aminmax(input, *, dim=None, keepdim=False, out=None):
    """The smallest and largest values (over ``dim``, or over everything)."""
    return _pair_out(return_types.aminmax, _aminmax(input, dim, keepdim), out, input)


@method(name="aminmax")
def _m_aminmax(self, *, dim=None, keepdim=False):
    return _aminmax(self, dim, keepdim)


# ---- median, nanmedian ----


def _pick(values, indices, dim, pos, keepdim):
    """``values`` and ``indices`` at position ``pos`` (a tensor shaped as the reduced result
    with ``dim`` kept) along ``dim``."""
    v, i = values.gather(dim, pos), indices.gather(dim, pos)
    if not keepdim:
        v, i = v.squeeze(dim), i.squeeze(dim)
    return v, i


def _no_bool(x, kernel):
    if x.dtype == _C.bool:
        raise NotImplementedError(f"\"{kernel}\" not implemented for 'Bool'")


def _median_dim(name, x, dim, keepdim, ignore_nan):
    _no_bool(x, "median_out")
    d = _C._wrap_dim(dim, x.dim())
    if x.dim() == 0:
        return x.clone(), x.new_zeros((), dtype=_C.int64)
    n = x.shape[d]
    if n == 0:
        raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")
    values, indices = x.sort(d, stable=True)  # NaN sorts last, in input order
    if x.dtype.is_floating_point:
        valid = (~values.isnan()).sum(d, keepdim=True)
    else:
        valid = x.new_full((), n, dtype=_C.int64)
        valid = valid.expand([1 if k == d else s for k, s in enumerate(x.shape)])
    if ignore_nan:
        pos = ((valid - 1).clamp(min=0)) // 2
    else:
        # the lower median, or the first NaN of a row that has one
        pos = (valid == n).long() * ((n - 1) // 2) + (valid != n).long() * valid
    return _pick(values, indices, d, pos.contiguous(), keepdim)


def _median_all(x, ignore_nan):
    _no_bool(x, "median_cuda" if x.is_cuda else "median_cpu")
    flat = x.reshape(-1)
    if flat.numel() == 0:
        if x.dtype.is_floating_point:
            return x.new_full((), float("nan"))
        # torch's NaN converted to the integer type, as x86 converts it
        wide = x.dtype in (_C.int32, _C.int64)
        return x.new_full((), _finfo.iinfo(x.dtype).min if wide else 0)
    return _median_dim("median", flat, 0, False, ignore_nan)[0]


def _median(name, x, dim, keepdim, ignore_nan):
    if dim is None:
        return _median_all(x, ignore_nan)
    kind = getattr(return_types, name)
    return kind(*_median_dim(name, x, dim, keepdim, ignore_nan))


def median(input, dim=None, keepdim=False, *, out=None):
    """The lower median (of everything, or values and indices along ``dim``); NaN where a
    NaN is present."""
    r = _median("median", input, dim, keepdim, False)
    if dim is None:
        return _out(r, out)
    return _pair_out(return_types.median, r, out, input)


def nanmedian(input, dim=None, keepdim=False, *, out=None):
    """``median`` of the values that are not NaN."""
    r = _median("nanmedian", input, dim, keepdim, True)
    if dim is None:
        return _out(r, out)
    return _pair_out(return_types.nanmedian, r, out, input)


@method(name="median")
def _m_median(self, dim=None, keepdim=False):
    return _median("median", self, dim, keepdim, False)


@method(name="nanmedian")
def _m_nanmedian(self, dim=None, keepdim=False):
    return _median("nanmedian", self, dim, keepdim, True)


# ---- mode ----


def _mode(x, dim, keepdim):
    d = _C._wrap_dim(dim, x.dim())
    if x.dim() == 0:
        return return_types.mode(x.clone(), x.new_zeros((), dtype=_C.int64))
    n = x.shape[d]
    if n == 0:
        raise IndexError(f"mode(): Expected reduction dim {d} to have non-zero size.")
    values, indices = x.sort(d, stable=True)
    values, indices = values.movedim(d, -1), indices.movedim(d, -1)
    # Runs of equal values: the length of the run up to each position; the first position
    # where a row's longest run ends is its smallest most frequent value, and (the sort being
    # stable) holds that value's last index.
    pos = _creation.arange(n, device=x.device).expand(values.shape)
    new_run = x.new_ones(values.shape, dtype=_C.bool)
    if n > 1:
        new_run[..., 1:] = values[..., 1:] != values[..., :-1]
    start = (pos * new_run.long()).cummax(-1)[0]
    length = pos - start
    end = (length == length.amax(-1, keepdim=True)).long().argmax(-1, keepdim=True)
    v, i = values.gather(-1, end), indices.gather(-1, end)
    if keepdim:
        v, i = v.movedim(-1, d), i.movedim(-1, d)
    else:
        v, i = v.squeeze(-1), i.squeeze(-1)
    return return_types.mode(v.contiguous(), i.contiguous())


def mode(input, dim=-1, keepdim=False, *, out=None):
    """The most frequent value along ``dim`` (the smallest of ties) and its last index."""
    return _pair_out(return_types.mode, _mode(input, dim, keepdim), out, input)


@method(name="mode")
def _m_mode(self, dim=-1, keepdim=False):
    return _mode(self, dim, keepdim)


# ---- quantile, nanquantile ----

_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile(name, x, q, dim, keepdim, interpolation, ignore_nan):
    if x.numel() == 0:
        raise RuntimeError(f"{name}() input tensor must be non-empty")
    if x.dtype not in (_C.float32, _C.float64):
        raise RuntimeError(f"{name}() input tensor must be either float or double dtype")
    scalar_q = not isinstance(q, Tensor)
    if scalar_q:
        if not 0 <= q <= 1:
            raise RuntimeError(f"{name}() q must be in the range [0, 1] but got {q}")
        qt = x.new_tensor([float(q)])
    else:
        if q.dim() > 1:
            raise RuntimeError(f"{name}() q must be a scalar or 1D tensor")
        if q.dtype != x.dtype:
            raise RuntimeError(f"{name}() q tensor must be same dtype as the input tensor")
        if q.device != x.device:
            raise RuntimeError(f"{name}() q tensor must be on the same device as the input tensor")
        scalar_q = q.dim() == 0
        qt = q.reshape(-1)
        if qt.numel() and not bool(((qt >= 0) & (qt <= 1)).all()):
            raise RuntimeError(f"{name}() q values must be in the range [0, 1]")
    if interpolation not in _INTERPOLATIONS:
        raise RuntimeError(
            f"{name}() interpolation must be one of linear, lower, higher, midpoint or "
            f"nearest, but got {interpolation}"
        )
    if dim is None:
        src, out_shape = x.reshape(-1), [1] * x.dim() if keepdim else []
    else:
        d = _C._wrap_dim(dim, x.dim())
        src = x.movedim(d, -1) if x.dim() else x.reshape(1)
        out_shape = list(x.shape)
        if x.dim():
            if keepdim:
                out_shape[d] = 1
            else:
                del out_shape[d]
    values = src.sort(-1)[0]  # NaN last
    n = values.shape[-1]
    valid = (~values.isnan()).sum(-1, keepdim=True).to(x.dtype)  # [..., 1]
    if ignore_nan:
        last = (valid - 1).clamp(min=0)
    else:
        last = x.new_full((), n - 1)
    rank = last * qt  # [..., Q]
    if interpolation == "nearest":
        rank = rank.round()
    lo, hi = rank.floor(), rank.ceil()
    if interpolation == "lower":
        hi = lo
    elif interpolation == "higher":
        lo = hi
    vlo = values.gather(-1, lo.long().expand(*values.shape[:-1], rank.shape[-1]).contiguous())
    vhi = values.gather(-1, hi.long().expand(*values.shape[:-1], rank.shape[-1]).contiguous())
    if interpolation == "midpoint":
        r = vlo.lerp(vhi, 0.5)
    elif interpolation == "linear":
        r = vlo.lerp(vhi, rank - lo)
    else:
        r = vlo
    nan = (valid == 0) if ignore_nan else (valid < n)
    r = r.masked_fill(nan.expand(r.shape), float("nan"))
    r = r.reshape(*out_shape, qt.numel()) if out_shape or not src.dim() else r.reshape(-1)
    r = r.movedim(-1, 0)
    return r[0] if scalar_q else r.contiguous()


def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear", out=None):
    """The ``q``-th quantiles (a number or a 1-D tensor of them) over ``dim`` or everything,
    interpolated between the two nearest values as ``interpolation`` says."""
    r = _quantile("quantile", input, q, dim, keepdim, interpolation, False)
    out_no_grad("quantile", out, input)
    return _out(r, out)


def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear", out=None):
    """``quantile`` of the values that are not NaN."""
    r = _quantile("nanquantile", input, q, dim, keepdim, interpolation, True)
    out_no_grad("nanquantile", out, input)
    return _out(r, out)


@method(name="quantile")
def _m_quantile(self, q, dim=None, keepdim=False, *, interpolation="linear"):
    return _quantile("quantile", self, q, dim, keepdim, interpolation, False)


@method(name="nanquantile")
def _m_nanquantile(self, q, dim=None, keepdim=False, *, interpolation="linear"):
    return _quantile("nanquantile", self, q, dim, keepdim, interpolation, True)


# ---- histc, bincount ----


def _histc(x, bins, min, max):
    if not x.dtype.is_floating_point:
        raise NotImplementedError(
            f"{_kernel('histogram', x)} not implemented for '{x.dtype._short_name}'"
        )
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    lo, hi = float(min), float(max)
    if lo > hi:
        raise RuntimeError("torch.histc: max must be larger than min")
    flat = x.detach().reshape(-1)
    if lo == hi and flat.numel():
        lo, hi = float(flat.amin()), float(flat.amax())
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    d = flat.to(_C.float64)
    inside = (d >= lo) & (d <= hi)
    idx = ((d - lo) * (bins / (hi - lo))).floor().clamp(0, bins - 1).long()
    counts = x.new_zeros(bins, dtype=_C.float64)
    counts = counts.index_add(0, idx, inside.double())
    return counts.to(x.dtype)


def histc(input, bins=100, min=0, max=0, *, out=None):
    """Counts of ``input``'s values in ``bins`` equal bins over [min, max] (the data's range
    when both are 0); values outside are not counted."""
    return _out(_histc(input, bins, min, max), out)


@method(name="histc")
def _m_histc(self, bins=100, min=0, max=0):
    return _histc(self, bins, min, max)


def _bincount(x, weights, minlength):
    if x.dtype.is_floating_point or x.dtype == _C.bool:
        raise NotImplementedError(
            f"{_kernel('bincount', x)} not implemented for '{x.dtype._short_name}'"
        )
    if x.dim() != 1 or (x.numel() and bool((x < 0).any())):
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if weights is not None and (weights.dim() != 1 or weights.shape[0] != x.shape[0]):
        raise RuntimeError("weights should be 1-d and have the same length as input")
    size = builtins.max(int(x.max()) + 1 if x.numel() else 0, minlength)
    if weights is None:
        dtype, w = _C.int64, x.new_ones(x.shape, dtype=_C.int64)
    else:
        dtype = weights.dtype if weights.dtype in (_C.float32, _C.float64) else _C.float64
        w = weights.to(dtype)
    counts = x.new_zeros(size, dtype=dtype)
    return counts.index_add(0, x.long(), w)


def bincount(input, weights=None, minlength=0):
    """How often each value 0, 1, ... occurs in a 1-D tensor of non-negative integers (the
    sum of ``weights`` at its positions, when given)."""
    return _bincount(input, weights, minlength)


method(name="bincount")(lambda self, weights=None, minlength=0: _bincount(self, weights, minlength))


# ---- cov, corrcoef ----


def _cov(x, correction, fweights, aweights):
    if x.dim() > 2:
        raise RuntimeError(
            "cov(): expected input to have two or fewer dimensions but got an input with "
            f"{x.dim()} dimensions"
        )
    if x.dtype == _C.bool:
        raise RuntimeError("cov(): bool dtype is not supported for input")
    obs = x if x.dim() == 2 else x.reshape(1, -1)
    if not obs.dtype.is_floating_point:
        obs = obs.to(_C.get_default_dtype())
    n = obs.shape[1]
    w = None
    if fweights is not None:
        if fweights.dtype.is_floating_point:
            raise RuntimeError(
                "cov(): expected fweights to have integral dtype but got fweights with "
                f"{fweights.dtype._short_name} dtype"
            )
        w = fweights
    if aweights is not None:
        if not aweights.dtype.is_floating_point:
            raise RuntimeError(
                "cov(): expected aweights to have floating point dtype but got aweights with "
                f"{aweights.dtype._short_name} dtype"
            )
        w = aweights if w is None else w * aweights
    if w is None:
        wsum = float(n)
        avg = obs.mean(1, keepdim=True)
        norm = wsum - correction
        centered = obs - avg
        c = centered @ centered.t()
    else:
        w = w.to(obs.dtype)
        wsum = w.sum()
        avg = (obs * w).sum(1, keepdim=True) / wsum
        if correction == 0:
            norm = wsum
        elif aweights is None:
            norm = wsum - correction
        else:
            norm = wsum - correction * (w * aweights.to(obs.dtype)).sum() / wsum
        centered = obs - avg
        c = (centered * w) @ centered.t()
    if isinstance(norm, Tensor):
        norm = norm.clamp(min=0)
    else:
        norm = builtins.max(norm, 0)
    c = c / norm
    return c.squeeze() if x.dim() < 2 or c.numel() == 1 else c


def cov(input, *, correction=1, fweights=None, aweights=None):
    """The covariance matrix of the variables in ``input``'s rows (observations in columns)."""
    return _cov(input, correction, fweights, aweights)


def _corrcoef(x):
    c = _cov(x, 1, None, None)
    if c.dim() == 0:
        return c / c
    d = c.diagonal()
    sd = d.sqrt()
    c = c / sd.unsqueeze(1) / sd.unsqueeze(0)
    return c.clamp(-1, 1)


def corrcoef(input):
    """Pearson correlation coefficients of the variables in ``input``'s rows."""
    return _corrcoef(input)


method(name="cov")(
    lambda self, *, correction=1, fweights=None, aweights=None: _cov(
        self, correction, fweights, aweights
    )
)
method(name="corrcoef")(lambda self: _corrcoef(self))


# ---- histogram ----


def _histogram(x, bins, range, weight, density):
    if not x.dtype.is_floating_point:
        raise NotImplementedError(f"\"histogramdd\" not implemented for '{x.dtype._short_name}'")
    flat = x.detach().reshape(-1)
    if isinstance(bins, Tensor):
        edges = bins.to(x.dtype)
    else:
        if bins <= 0:
            raise RuntimeError(
                f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0"
            )
        if range is not None:
            lo, hi = float(range[0]), float(range[1])
        elif flat.numel():
            lo, hi = float(flat.amin()), float(flat.amax())
        else:
            lo, hi = 0.0, 0.0
        if lo > hi:
            raise RuntimeError(
                f"torch.histogram(): min should not exceed max, but got min {lo:g} max {hi:g} "
                "for dimension 0"
            )
        if lo == hi:
            lo, hi = lo - 0.5, hi + 0.5
        edges = _creation.linspace(lo, hi, bins + 1, dtype=x.dtype, device=x.device)
    nb = edges.numel() - 1
    # the bin of each value: the last edge at or below it; the last bin holds its right edge
    inside = (flat >= edges[0]) & (flat <= edges[-1])
    idx = (flat.unsqueeze(1) >= edges[1:-1].unsqueeze(0)).sum(1) if nb > 1 else flat.long() * 0
    w = inside.to(x.dtype) if weight is None else weight.detach().reshape(-1).to(x.dtype) * inside
    hist = x.new_zeros(nb).index_add(0, idx.long(), w)
    if density:
        hist = hist / (hist.sum() * (edges[1:] - edges[:-1]))
    return return_types.histogram(hist, edges)


def histogram(input, bins, *, range=None, weight=None, density=False, out=None):
    """Counts (or ``weight`` sums) of ``input``'s values in ``bins`` equal bins over ``range``
    (the data's range by default), or between the edges of a 1-D tensor ``bins``; returns
    (hist, bin_edges)."""
    r = _histogram(input, bins, range, weight, density)
    if out is None:
        return r
    return return_types.histogram(_out(r[0], out[0]), _out(r[1], out[1]))


__all__ += ["histogram"]
method(name="histogram")(
    lambda self, bins, *, range=None, weight=None, density=False: _histogram(
        self, bins, range, weight, density
    )
)
