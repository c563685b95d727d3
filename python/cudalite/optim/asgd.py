"""``optim.ASGD``: averaged stochastic gradient descent, following torch's single-tensor
update order."""

from __future__ import annotations

from cudalite.optim import _functional as F
from cudalite.optim.optimizer import Optimizer, _check_lr, _check_nonnegative, _scalar

__all__ = ["ASGD"]


class ASGD(Optimizer):
    """SGD with a decaying step size ``eta = lr / (1 + lambd * lr * t) ** alpha`` that also
    keeps ``ax``, a running average of the parameters from step ``t0`` on. As in torch, the
    state (``step``, ``eta``, ``mu``: 0-dim float32 tensors) lives on the parameter's
    device."""

    def __init__(
        self,
        params,
        lr=1e-2,
        lambd=1e-4,
        alpha=0.75,
        t0=1e6,
        weight_decay=0,
        foreach=None,
        maximize=False,
        differentiable=False,
        capturable=False,
    ):
        _check_lr(lr)
        _check_nonnegative("weight_decay", weight_decay)
        defaults = dict(
            lr=lr,
            lambd=lambd,
            alpha=alpha,
            t0=t0,
            weight_decay=weight_decay,
            foreach=foreach,
            maximize=maximize,
            differentiable=differentiable,
            capturable=capturable,
        )
        super().__init__(params, defaults)

    def _update(self, group):
        lr, lambd, alpha, t0 = _scalar(group["lr"]), group["lambd"], group["alpha"], group["t0"]
        wd = group["weight_decay"]
        params = [p for p in group["params"] if p.grad is not None]
        for p in params:
            st = self.state[p]
            if not st:
                st["step"] = F.scalar_step(p, True)
                st["eta"] = F.scalar_step(p, True, lr)
                st["mu"] = F.scalar_step(p, True, 1.0)
                st["ax"] = F.zeros_like(p)
        for p in params:
            st = self.state[p]
            g = p.grad
            if group["maximize"]:
                g = F.unary(F.NEG, g, None)
            mu, ax, eta, step_t = st["mu"], st["ax"], st["eta"], st["step"]
            F.check_capturable(group, p, ", mus, etas,")
            F.binary(F.ADD, step_t, 1, step_t)
            if wd != 0:
                g = F.add(g, p, wd)
            eta_value = eta.item()
            self._check_inplace(group, p)
            F.mul_(p, 1 - lambd * eta_value)
            F.add(p, g, -eta_value, p)
            if mu.item() != 1:
                F.binary(F.ADD, ax, F.binary(F.MUL, F.binary(F.SUB, p, ax, None), mu, None), ax)
            else:
                ax.copy_(p)
            step = step_t.item()
            eta.fill_(lr / ((1 + lambd * lr * step) ** alpha))
            mu.fill_(1 / max(1, step - t0))
