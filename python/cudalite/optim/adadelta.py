"""``optim.Adadelta`` (weight decay, maximize), following torch's single-tensor update
order."""

from __future__ import annotations

from cudalite.optim import _functional as F
from cudalite.optim.optimizer import Optimizer, _check_lr, _check_nonnegative, _scalar

__all__ = ["Adadelta"]


class Adadelta(Optimizer):
    """Steps by the ratio of running root mean squares of past updates and gradients."""

    def __init__(
        self,
        params,
        lr=1.0,
        rho=0.9,
        eps=1e-6,
        weight_decay=0,
        foreach=None,
        *,
        capturable=False,
        maximize=False,
        differentiable=False,
    ):
        _check_lr(lr)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        _check_nonnegative("epsilon", eps)
        _check_nonnegative("weight_decay", weight_decay)
        defaults = dict(
            lr=lr,
            rho=rho,
            eps=eps,
            weight_decay=weight_decay,
            maximize=maximize,
            capturable=capturable,
            foreach=foreach,
            differentiable=differentiable,
        )
        super().__init__(params, defaults)

    def _update(self, group):
        lr, rho, eps, wd = _scalar(group["lr"]), group["rho"], group["eps"], group["weight_decay"]
        params = [p for p in group["params"] if p.grad is not None]
        for p in params:
            st = self.state[p]
            if not st:
                st["step"] = F.scalar_step(p, group["capturable"])
                st["square_avg"] = F.zeros_like(p)
                st["acc_delta"] = F.zeros_like(p)
        for p in params:
            st = self.state[p]
            F.check_capturable(group, p, xla=False)
            g = p.grad
            F.binary(F.ADD, st["step"], 1, st["step"])
            if group["maximize"]:
                g = F.unary(F.NEG, g, None)
            if wd != 0:
                g = F.add(g, p, wd)
            sq, acc = st["square_avg"], st["acc_delta"]
            F.mul_(sq, rho)
            F.addcmul(sq, g, g, 1 - rho, sq)
            std = F.binary(F.ADD, sq, eps, None)
            F.unary(F.SQRT, std, std)
            delta = F.binary(F.ADD, acc, eps, None)
            F.unary(F.SQRT, delta, delta)
            F.binary(F.DIV, delta, std, delta)
            F.binary(F.MUL, delta, g, delta)
            F.mul_(acc, rho)
            F.addcmul(acc, delta, delta, 1 - rho, acc)
            self._check_inplace(group, p)
            F.add(p, delta, -lr, p)
