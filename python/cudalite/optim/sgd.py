"""``optim.SGD``: stochastic gradient descent with momentum, dampening, weight decay,
Nesterov momentum and maximize, following torch's single-tensor update order."""

from __future__ import annotations

from cudalite import _C, _ops
from cudalite.autograd import enable_grad
from cudalite.optim.optimizer import Optimizer

__all__ = ["SGD"]

_ADD, _MUL = _ops.BINARY["add"], _ops.BINARY["mul"]
_binary = _C._binary


def _axpy(y, x, a):
    """``y += a * x`` in place."""
    if a == 1:
        _binary(_ADD, y, x, y)
    else:
        _binary(_ADD, y, _binary(_MUL, x, a, None), y)


class SGD(Optimizer):
    """p <- p - lr * g, where g includes weight decay and momentum as torch computes them."""

    def __init__(
        self,
        params,
        lr=1e-3,
        momentum=0,
        dampening=0,
        weight_decay=0,
        nesterov=False,
        *,
        maximize=False,
        foreach=None,
        differentiable=False,
        fused=None,
    ):
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(
            lr=lr,
            momentum=momentum,
            dampening=dampening,
            weight_decay=weight_decay,
            nesterov=nesterov,
            maximize=maximize,
            foreach=foreach,
            differentiable=differentiable,
            fused=fused,
        )
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, defaults)
        self._check_fused(fused, foreach, differentiable)

    def step(self, closure=None):
        """One update of every parameter that has a gradient; returns closure()'s loss."""
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        prev = _C._is_grad_enabled()
        _C._set_grad_enabled(False)
        try:
            for group in self.param_groups:
                self._update(group)
        finally:
            _C._set_grad_enabled(prev)
        return loss

    def _update(self, group):
        lr, momentum, dampening = group["lr"], group["momentum"], group["dampening"]
        wd, nesterov, maximize = group["weight_decay"], group["nesterov"], group["maximize"]
        state = self.state
        for p in group["params"]:
            g = p.grad
            if g is None:
                continue
            self._check_inplace(group, p)  # torch stores no momentum buffer then
            if maximize:
                g = -g
            if wd != 0:
                g = _binary(_ADD, g, _binary(_MUL, p, wd, None), None)
            if momentum != 0:
                st = state[p]
                buf = st.get("momentum_buffer")
                if buf is None:
                    buf = st["momentum_buffer"] = g.detach()._clone()
                else:
                    _binary(_MUL, buf, momentum, buf)
                    _axpy(buf, g, 1 - dampening)
                if nesterov:
                    g = _binary(_ADD, g, _binary(_MUL, buf, momentum, None), None)
                else:
                    g = buf
            _axpy(p, g, -lr)
