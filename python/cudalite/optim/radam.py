"""``optim.RAdam``: Adam with a rectified adaptive learning rate (decoupled weight decay
optional), following torch's single-tensor update order."""

from __future__ import annotations

from cudalite.optim import _functional as F
from cudalite.optim.optimizer import Optimizer, _check_betas, _check_lr, _check_nonnegative, _scalar

__all__ = ["RAdam"]


class RAdam(Optimizer):
    """Adam that takes plain momentum steps until the variance estimate is tractable
    (rho_t > 5), then rectified adaptive steps."""

    def __init__(
        self,
        params,
        lr=1e-3,
        betas=(0.9, 0.999),
        eps=1e-8,
        weight_decay=0,
        decoupled_weight_decay=False,
        *,
        foreach=None,
        maximize=False,
        capturable=False,
        differentiable=False,
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
            maximize=maximize,
            foreach=foreach,
            capturable=capturable,
            decoupled_weight_decay=decoupled_weight_decay,
            differentiable=differentiable,
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
                st["exp_avg_sq"] = F.zeros_like(p)
        for p in params:
            st = self.state[p]
            g = p.grad
            if group["maximize"]:
                g = F.unary(F.NEG, g, None)
            F.check_capturable(group, p)
            step_t = st["step"]
            F.binary(F.ADD, step_t, 1, step_t)
            step = step_t.item()
            if wd != 0:
                if group["decoupled_weight_decay"]:
                    self._check_inplace(group, p)
                    F.mul_(p, 1 - lr * wd)
                else:
                    g = F.add(g, p, wd)
            m, v = st["exp_avg"], st["exp_avg_sq"]
            F.lerp_(m, g, 1 - beta1)
            F.mul_(v, beta2)
            F.addcmul(v, g, g, 1 - beta2, v)
            bias_correction1 = 1 - beta1**step
            bias_correction2 = 1 - beta2**step
            corrected = F.binary(F.DIV, m, bias_correction1, None)
            rho_inf = 2 / (1 - beta2) - 1
            rho_t = rho_inf - 2 * step * (beta2**step) / bias_correction2
            update = F.binary(F.MUL, corrected, lr, None)
            if rho_t > 5.0:
                rect = (
                    (rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)
                ) ** 0.5
                sq = F.sqrt(v)
                F.binary(F.ADD, sq, eps, sq)
                # torch's number / tensor is reciprocal(tensor) * number
                adaptive = F.binary(
                    F.MUL, F.unary(F.RECIPROCAL, sq, None), bias_correction2**0.5, None
                )
                F.binary(F.MUL, update, adaptive, update)
                F.binary(F.MUL, update, rect, update)
            self._check_inplace(group, p)
            F.add(p, update, -1.0, p)
