"""``optim.NAdam``: Adam with Nesterov momentum (momentum decay, decoupled weight decay),
following torch's single-tensor update order."""

from __future__ import annotations

from cudalite.optim import _functional as F
from cudalite.optim.optimizer import Optimizer, _check_betas, _check_lr, _check_nonnegative, _scalar

__all__ = ["NAdam"]


class NAdam(Optimizer):
    """Adam whose first moment looks one step ahead, with torch's momentum schedule
    ``mu_t = beta1 * (1 - 0.5 * 0.96 ** (t * momentum_decay))``."""

    def __init__(
        self,
        params,
        lr=2e-3,
        betas=(0.9, 0.999),
        eps=1e-8,
        weight_decay=0,
        momentum_decay=4e-3,
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
        _check_nonnegative("momentum_decay", momentum_decay)
        defaults = dict(
            lr=lr,
            betas=betas,
            eps=eps,
            weight_decay=weight_decay,
            momentum_decay=momentum_decay,
            decoupled_weight_decay=decoupled_weight_decay,
            maximize=maximize,
            foreach=foreach,
            capturable=capturable,
            differentiable=differentiable,
        )
        super().__init__(params, defaults)

    def _update(self, group):
        lr, (beta1, beta2), eps = _scalar(group["lr"]), group["betas"], group["eps"]
        wd, momentum_decay = group["weight_decay"], group["momentum_decay"]
        params = [p for p in group["params"] if p.grad is not None]
        for p in params:
            st = self.state[p]
            if not st:
                st["step"] = F.scalar_step(p, group["capturable"])
                st["mu_product"] = F.scalar_step(p, group["capturable"], 1.0)
                st["exp_avg"] = F.zeros_like(p)
                st["exp_avg_sq"] = F.zeros_like(p)
        for p in params:
            st = self.state[p]
            g = p.grad
            if group["maximize"]:
                g = F.unary(F.NEG, g, None)
            F.check_capturable(group, p, ", mu_products")
            step_t, mu_product = st["step"], st["mu_product"]
            F.binary(F.ADD, step_t, 1, step_t)
            step = step_t.item()
            bias_correction2 = 1 - beta2**step
            if wd != 0:
                if group["decoupled_weight_decay"]:
                    self._check_inplace(group, p)
                    F.mul_(p, 1 - lr * wd)
                else:
                    g = F.add(g, p, wd)
            mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * momentum_decay)))
            mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * momentum_decay)))
            F.mul_(mu_product, mu)
            m, v = st["exp_avg"], st["exp_avg_sq"]
            F.lerp_(m, g, 1 - beta1)
            F.mul_(v, beta2)
            F.addcmul(v, g, g, 1 - beta2, v)
            denom = F.sqrt(F.binary(F.DIV, v, bias_correction2, None))
            mu_prod = mu_product.item()
            mu_product_next = mu_prod * mu_next
            F.binary(F.ADD, denom, eps, denom)
            self._check_inplace(group, p)
            F.addcdiv(p, g, denom, -lr * (1.0 - mu) / (1.0 - mu_prod), p)
            F.addcdiv(p, m, denom, (-lr * mu_next) / (1.0 - mu_product_next), p)
