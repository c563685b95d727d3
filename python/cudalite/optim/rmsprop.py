"""``optim.RMSprop`` (centered, momentum, weight decay, maximize), following torch's
single-tensor update order."""

from __future__ import annotations

from cudalite.optim import _functional as F
from cudalite.optim.optimizer import Optimizer, _check_lr, _check_nonnegative, _scalar

__all__ = ["RMSprop"]


class RMSprop(Optimizer):
    """Divides the gradient by a running root mean square of its recent magnitudes."""

    def __init__(
        self,
        params,
        lr=1e-2,
        alpha=0.99,
        eps=1e-8,
        weight_decay=0,
        momentum=0,
        centered=False,
        capturable=False,
        foreach=None,
        maximize=False,
        differentiable=False,
    ):
        _check_lr(lr)
        _check_nonnegative("epsilon", eps)
        _check_nonnegative("momentum", momentum)
        _check_nonnegative("weight_decay", weight_decay)
        _check_nonnegative("alpha", alpha)
        defaults = dict(
            lr=lr,
            momentum=momentum,
            alpha=alpha,
            eps=eps,
            centered=centered,
            weight_decay=weight_decay,
            capturable=capturable,
            foreach=foreach,
            maximize=maximize,
            differentiable=differentiable,
        )
        super().__init__(params, defaults)

    def _update(self, group):
        lr, alpha, eps = _scalar(group["lr"]), group["alpha"], group["eps"]
        wd, momentum, centered = group["weight_decay"], group["momentum"], group["centered"]
        params = [p for p in group["params"] if p.grad is not None]
        for p in params:
            st = self.state[p]
            if not st:
                st["step"] = F.scalar_step(p, group["capturable"])
                st["square_avg"] = F.zeros_like(p)
                if momentum > 0:
                    st["momentum_buffer"] = F.zeros_like(p)
                if centered:
                    st["grad_avg"] = F.zeros_like(p)
        for p in params:
            st = self.state[p]
            F.check_capturable(group, p)
            g = p.grad
            if group["maximize"]:
                g = F.unary(F.NEG, g, None)
            F.binary(F.ADD, st["step"], 1, st["step"])
            if wd != 0:
                g = F.add(g, p, wd)
            sq = st["square_avg"]
            F.mul_(sq, alpha)
            F.addcmul(sq, g, g, 1 - alpha, sq)
            if centered:
                ga = st["grad_avg"]
                F.lerp_(ga, g, 1 - alpha)
                avg = F.sqrt(F.addcmul(sq, ga, ga, -1))
            else:
                avg = F.sqrt(sq)
            F.binary(F.ADD, avg, eps, avg)
            self._check_inplace(group, p)
            if momentum > 0:
                buf = st["momentum_buffer"]
                F.mul_(buf, momentum)
                F.addcdiv(buf, g, avg, 1, buf)
                F.add(p, buf, -lr, p)
            else:
                F.addcdiv(p, g, avg, -lr, p)
