"""Forward implementations and backward nodes of the neural-network ops that the foundation
does not have: softmax, log_softmax, mse_loss and nll_loss (cross_entropy composes the last
two). Each records itself when grad mode is on and its input requires grad."""

from __future__ import annotations

from cudalite import _C, _reductions
from cudalite._C import Tensor
from cudalite.autograd.functions._common import B, Node, U, edge, fix, mark, meta, out_meta

_MAX, _SUM = _reductions.MAX, _reductions.SUM
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
    __slots__ = ("_result", "dim")
    _saved = ("_result",)

    def apply(self, g):
        y = self.result
        return (y * (g - (g * y).sum(self.dim, keepdim=True)),)


class LogSoftmaxBackward0(SoftmaxBackward0):
    __slots__ = ()

    def apply(self, g):
        return (g - self.result.exp() * g.sum(self.dim, keepdim=True),)


def _shifted(x, dim):
    """``x - max(x, dim)``, the numerically safe argument of exp."""
    m = _C._reduce(_MAX, x, [dim], True, None)
    return _C._binary(B["sub"], x, m, None)


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
    _check_softmax(input, dim, "softmax", dtype)
    x = input if dtype is None else input.to(dtype)
    dim = _wrap_dim(dim, x.dim())
    if x.numel() == 0:
        return x.clone()
    e = _C._unary(U["exp"], _shifted(x, dim), None)
    r = _C._binary(B["div"], e, _C._reduce(_SUM, e, [dim], True, None), e, False)
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
    s = _shifted(x, dim)
    lse = _C._unary(
        U["log"], _C._reduce(_SUM, _C._unary(U["exp"], s, None), [dim], True, None), None
    )
    r = _C._binary(B["sub"], s, lse, s, False)
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
    weight for 'mean'); built as a one-hot product so no scatter kernel is needed."""

    __slots__ = (
        "self_",
        "target",
        "weight",
        "valid",
        "wvalid",
        "denom",
        "reduction",
        "shape",
        "classes",
    )
    # torch saves self, target and weight (kept here for their version check; the formula
    # uses what the forward derived from them)
    _saved = ("self_", "target", "weight", "valid", "wvalid", "denom")

    def apply(self, g):
        t, c = self.target, self.classes
        onehot = _onehot(t, c, g.device)
        if self.reduction == "none":
            scale = self.wvalid * g.reshape(-1)
        elif self.reduction == "mean":
            scale = self.wvalid * (g / self.denom)
        else:
            scale = self.wvalid * g
        # Only picked, not ignored, entries get a gradient (also when every target is ignored
        # and 'mean' divides by 0); the others get +0, as torch writes nothing there.
        keep = _C._binary(B["logical_and"], onehot, self.valid.unsqueeze(1), None)
        gi = _C._where(keep, _C._unary(U["neg"], scale, None).unsqueeze(1), 0.0)
        return (_from_rows(gi, self.shape),)


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


def _check_targets(t, classes, ignore_index):
    bad = _C._binary(B["logical_or"], t < 0, t >= classes, None)
    if ignore_index is not None:
        bad = _C._binary(B["logical_and"], bad, t != ignore_index, None)
    if bool(_C._reduce(_reductions.ANY, bad, None, False, None).item()):
        v = int(t[bad.nonzero()[0, 0]].item())
        raise IndexError(f"Target {v} is out of bounds.")


def nll_loss(input, target, weight=None, ignore_index=-100, reduction="mean"):
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
    _check_targets(t, classes, ignore_index)
    valid = _C._binary(B["ne"], t, ignore_index, None)
    if weight is not None:
        wc = weight.contiguous()
        pos = _C._binary(B["add"], _C._where(valid, t, 0), wc.storage_offset(), None)
        w = _C._gather_offsets(wc, pos)
        wvalid = _C._binary(B["mul"], w, valid, None)
    else:
        wvalid = _C._to(valid, None, rows.dtype, False, False)
    onehot = _onehot(t, classes, rows.device)
    # where, not a product with the one-hot: -inf log-probabilities of other classes stay out.
    picked = _C._reduce(_SUM, _C._where(onehot, rows, 0.0), [1], False, None)
    losses = _C._binary(B["mul"], picked, wvalid, None)
    _C._unary(U["neg"], losses, losses, False)
    denom = None
    if reduction == "none":
        r = losses.reshape(target.shape) if input.dim() > 1 else losses.reshape([])
    else:
        r = _C._reduce(_SUM, losses, None, False, None)
        if reduction == "mean":
            denom = _C._reduce(_SUM, wvalid, None, False, None)
            r = _C._binary(B["div"], r, denom, r, False)
    if _recording(input):
        node = NllLossBackward0((edge(input),))
        node.self_, node.target, node.weight = input, t, weight
        node.valid, node.wvalid, node.denom = valid, wvalid, denom
        node.reduction, node.shape, node.classes = reduction, input.shape, classes
        mark(r, node)
    return r
