"""``optim.Adamax``: Adam with the infinity norm, following torch's single-tensor update
order."""

from __future__ import annotations

from cudalite.optim import _functional as F
from cudalite.optim.optimizer import Optimizer, _check_betas, _check_lr, _check_nonnegative, _scalar

__all__ = ["Adamax"]


class Adamax(Optimizer):
    """Adam whose second moment is a decaying maximum of the gradient's magnitude."""

    def __init__(
        self,
        params,
        lr=2e-3,
        betas=(0.9, 0.999),
        eps=1e-8,
        weight_decay=0,
        foreach=None,
        *,
        maximize=False,
        differentiable=False,
        capturable=False,
    ):
        _check_lr(lr)
        _check_nonnegative("epsilon", eps)
        _check_betas(betas)
        _check_nonnegative("weight_decay", weight_decay)
        defaults = dict(
            lr=lr,
            betas=betas,
            eps=eps,
            weight_decay=weight_decay,
            foreach=foreach,
            maximize=maximize,
            differentiable=differentiable,
            capturable=capturable,
        )
        super().__init__(params, defaults)

    def _update(self, group):
        lr, (beta1, beta2), eps = _scalar(group["lr"]), group["betas"], group["eps"]
        wd = group["weight_decay"]
        params = [p for p in group["params"] if p.grad is not None]
        for p in params:
            st = self.state[p]
            if not st:
                st["step"] = F.scalar_step(p, group["capturable"])
                st["exp_avg"] = F.zeros_like(p)
                st["exp_inf"] = F.zeros_like(p)
        for p in params:
            st = self.state[p]
            g = p.grad
            if group["maximize"]:
                g = F.unary(F.NEG, g, None)
            F.check_capturable(group, p)
            step_t = st["step"]
            F.binary(F.ADD, step_t, 1, step_t)
            if wd != 0:
                g = F.add(g, p, wd)
            m, inf = st["exp_avg"], st["exp_inf"]
            F.lerp_(m, g, 1 - beta1)
            F.mul_(inf, beta2)
            gabs = F.unary(F.ABS, g, None)
            F.binary(F.ADD, gabs, eps, gabs)
            F.binary(F.MAX, inf, gabs, inf)
            clr = lr / (1 - beta1 ** step_t.item())
            self._check_inplace(group, p)
            F.addcdiv(p, m, inf, -clr, p)
