"""Forward implementations and backward nodes of the neural-network ops that the foundation
does not have: softmax, log_softmax, mse_loss and nll_loss (cross_entropy composes the last
two). Each records itself when grad mode is on and its input requires grad."""

from __future__ import annotations

from cudalite import _C, _reductions
from cudalite._C import Tensor
from cudalite.autograd.functions._common import B, Node, edge, fix, mark, meta, out_meta

_SUM = _reductions.SUM
# The in-place steps below write into tensors made here (their bump_version argument is False:
# the results are new, at version 0 as torch's).
_grad_on = _C._is_grad_enabled


def _recording(*ts):
    for t in ts:
        if isinstance(t, Tensor) and t._rg:
            return _grad_on()
    return False


def _wrap_dim(dim, ndim):
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})"
        )
    return dim % n


class SoftmaxBackward0(Node):
    """One kernel (``_C._softmax_backward``); composed of recorded ops when the backward
    builds a graph (``create_graph=True``)."""

    __slots__ = ("_result", "dim")
    _saved = ("_result",)
    _log = False

    def apply(self, g):
        if _grad_on():
            y = self.result
            return (y * (g - (g * y).sum(self.dim, keepdim=True)),)
        return (_C._softmax_backward(g, self._result, self.dim, self._log),)


class LogSoftmaxBackward0(SoftmaxBackward0):
    __slots__ = ()
    _log = True

    def apply(self, g):
        if _grad_on():
            return (g - self.result.exp() * g.sum(self.dim, keepdim=True),)
        return (_C._softmax_backward(g, self._result, self.dim, True),)


def _check_softmax(x, dim, name, dtype=None):
    """torch's softmax kernels: the dim is wrapped first, then integer and bool inputs
    (non-empty) raise NotImplementedError with the name of the kernel torch dispatches to."""
    if isinstance(dim, str):  # torch's Dimname overload
        names = ", ".join(["None"] * x.dim())
        raise RuntimeError(f"Name '{dim}' not found in Tensor[{names}].")
    n = max(x.dim(), 1)
    if not -n <= dim < n:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})"
        )
    if (dtype or x.dtype).is_floating_point or x.numel() == 0:
        return
    if x.is_cuda:
        kernel = "host_softmax"
    else:
        kernel = f"{name}_lastdim_kernel_impl" if dim % n == n - 1 else f"{name}_kernel_impl"
    raise NotImplementedError(
        f"\"{kernel}\" not implemented for '{(dtype or x.dtype)._short_name}'"
    )


def softmax(input, dim, dtype=None):
    """One kernel (``_C._softmax``), float32 inside for float16/bfloat16."""
    _check_softmax(input, dim, "softmax", dtype)
    x = input if dtype is None else input.to(dtype)
    dim = _wrap_dim(dim, x.dim())
    if x.numel() == 0:
        return x.clone()
    r = _C._softmax(x, dim, False)
    if _recording(x):
        node = SoftmaxBackward0((edge(x),))
        node.result, node.dim = r, dim
        mark(r, node)
    return r


def log_softmax(input, dim, dtype=None):
    _check_softmax(input, dim, "log_softmax", dtype)
    x = input if dtype is None else input.to(dtype)
    dim = _wrap_dim(dim, x.dim())
    if x.numel() == 0:
        return x.clone()
    r = _C._softmax(x, dim, True)
    if _recording(x):
        node = LogSoftmaxBackward0((edge(x),))
        node.result, node.dim = r, dim
        mark(r, node)
    return r


_REDUCTIONS = ("none", "mean", "sum")


def _check_reduction(reduction):
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")


class MseLossBackward0(Node):
    """torch saves input and target; the formula uses their difference (computed by the
    forward), the inputs are kept for their version check."""

    __slots__ = ("self_", "target", "diff", "reduction", "n", "m0", "m1")
    _saved = ("self_", "target", "diff")

    def apply(self, g):
        if self.reduction == "mean":
            gi = self.diff * (g * (2.0 / self.n))
        else:
            gi = self.diff * (g * 2.0)
        nx = self._next
        return (
            fix(gi, self.m0) if nx[0] is not None else None,
            fix(-gi, self.m1) if nx[1] is not None else None,
        )


def mse_loss(input, target, reduction="mean"):
    _check_reduction(reduction)
    d = _C._binary(B["sub"], input, target, None)
    sq = _C._binary(B["mul"], d, d, None)
    n = sq.numel()
    if reduction == "none":
        r = sq
    else:
        r = _C._reduce(_SUM, sq, None, False, None)
        if reduction == "mean":
            r = _C._binary(B["div"], r, n, r, False) if n else r * float("nan")
    if _recording(input, target):
        node = MseLossBackward0((edge(input), edge(target) if target._rg else None))
        node.self_, node.target, node.diff = input, target, d
        node.reduction, node.n = reduction, n
        om = out_meta(d)
        node.m0, node.m1 = meta(input, d, om), meta(target, d, om)
        mark(r, node)
    return r


class NllLossBackward0(Node):
    """Only the picked log-probabilities get a gradient: ``-weight[t] * g`` (over the total
    weight for 'mean'), written with the zeros around it by one kernel
    (``_C._nll_loss_backward``); composed of recorded ops (a one-hot product) when the
    backward builds a graph."""

    __slots__ = (
        "self_",
        "target",
        "weight",
        "total_weight",
        "ignore_index",
        "reduction",
        "shape",
        "classes",
    )
    # torch saves self, target, weight and total_weight
    _saved = ("self_", "target", "weight", "total_weight")

    def apply(self, g):
        if _grad_on():
            return (self._composed(g),)
        x = self.self_
        if x.dim() == 2:
            rows = x.detach()
        else:  # only its shape, dtype and device are read: no copy of the input
            rows = _C._full([], 0, x.dtype, x.device).expand(len(self.target), self.classes)
        gx = _C._nll_loss_backward(
            g.reshape(-1) if self.reduction == "none" else g,
            rows,
            self.target,
            self.weight,
            _REDUCTION_CODES[self.reduction],
            self.ignore_index,
            self.total_weight,
        )
        return (_from_rows(gx, self.shape),)

    def _composed(self, g):
        t, c = self.target, self.classes
        valid = t != self.ignore_index
        if self.weight is not None:
            wv = self.weight[_C._where(valid, t, 0)] * valid
        else:
            wv = valid.to(g.dtype)
        onehot = _onehot(t, c, g.device)
        if self.reduction == "none":
            scale = wv * g.reshape(-1)
        elif self.reduction == "mean":
            scale = wv * (g / self.total_weight)
        else:
            scale = wv * g
        # Only picked, not ignored, entries get a gradient (also when every target is ignored
        # and 'mean' divides by 0); the others get +0, as torch writes nothing there.
        keep = onehot & valid.unsqueeze(1)
        gi = (-scale).unsqueeze(1).where(keep, 0.0)
        return _from_rows(gi, self.shape)


_REDUCTION_CODES = {"none": 0, "mean": 1, "sum": 2}


def _onehot(target, classes, device):
    pos = _C._arange(0, classes, 1, _C.int64, device)
    return _C._binary(B["eq"], pos, target.unsqueeze(1), None)


def _to_rows(x):
    """(N, C, d1, ...) -> (N * d1 * ..., C); (C,) -> (1, C)."""
    if x.dim() == 1:
        return x.unsqueeze(0)
    if x.dim() == 2:
        return x
    c = x.shape[1]
    return x.permute(0, *range(2, x.dim()), 1).reshape(-1, c)


def _from_rows(g, shape):
    if len(shape) == 1:
        return g.squeeze(0)
    if len(shape) == 2:
        return g
    n, c, rest = shape[0], shape[1], list(shape[2:])
    g = g.reshape([n] + rest + [c])
    return g.permute(0, len(shape) - 1, *range(1, len(shape) - 1))


def nll_loss(input, target, weight=None, ignore_index=-100, reduction="mean"):
    """One kernel: the picked, weighted log-probabilities and, for 'mean' and 'sum', their
    reduction with the total weight. Targets outside the classes (other than ignore_index)
    raise IndexError on the CPU and stop the kernel on CUDA (torch's device-side assert)."""
    _check_reduction(reduction)
    if target.dtype.is_floating_point or target.dtype == _C.bool:
        raise RuntimeError(f"expected scalar type Long but found {target.dtype._short_name}")
    if input.dim() < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {input.dim()})")
    n_in = input.shape[0] if input.dim() > 1 else 1
    n_t = target.shape[0] if target.dim() else 1
    if input.dim() > 1 and n_in != n_t:
        raise ValueError(f"Expected input batch_size ({n_in}) to match target batch_size ({n_t}).")
    classes = input.shape[1] if input.dim() > 1 else input.shape[0]
    rows = _to_rows(input.detach())
    t = target.reshape(-1)
    if t.device != rows.device:
        t = t.to(rows.device)
    if t.dtype != _C.int64:
        t = t.to(_C.int64)
    w = weight.detach() if weight is not None else None
    out, total = _C._nll_loss(rows, t, w, _REDUCTION_CODES[reduction], int(ignore_index))
    if reduction == "none":
        r = out.reshape(target.shape) if input.dim() > 1 else out.reshape([])
    else:
        r = out
    if _recording(input):
        node = NllLossBackward0((edge(input),))
        node.self_, node.target, node.weight, node.total_weight = input, t, w, total
        node.ignore_index, node.reduction = int(ignore_index), reduction
        node.shape, node.classes = input.shape, classes
        mark(r, node)
    return r
