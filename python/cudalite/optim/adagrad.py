"""``optim.Adagrad`` (learning-rate decay, weight decay, an initial accumulator value,
maximize), following torch's single-tensor update order."""

from __future__ import annotations

from cudalite.optim import _functional as F
from cudalite.optim.optimizer import Optimizer, _check_lr, _check_nonnegative, _scalar

__all__ = ["Adagrad"]


class Adagrad(Optimizer):
    """Scales each coordinate's step by the root of its summed squared gradients. As in
    torch, the state of every parameter is created with the optimizer."""

    def __init__(
        self,
        params,
        lr=1e-2,
        lr_decay=0,
        weight_decay=0,
        initial_accumulator_value=0,
        eps=1e-10,
        foreach=None,
        *,
        maximize=False,
        differentiable=False,
        fused=None,
    ):
        _check_lr(lr)
        _check_nonnegative("lr_decay", lr_decay)
        _check_nonnegative("weight_decay", weight_decay)
        if not 0.0 <= initial_accumulator_value:
            raise ValueError(
                f"Invalid initial_accumulator_value value: {initial_accumulator_value}"
            )
        _check_nonnegative("epsilon", eps)
        defaults = dict(
            lr=lr,
            lr_decay=lr_decay,
            eps=eps,
            weight_decay=weight_decay,
            initial_accumulator_value=initial_accumulator_value,
            foreach=foreach,
            maximize=maximize,
            differentiable=differentiable,
            fused=fused,
        )
        super().__init__(params, defaults)
        self._check_fused(fused, foreach, differentiable)
        for group in self.param_groups:
            for p in group["params"]:
                st = self.state[p]
                st["step"] = F.scalar_step(p, group["fused"])
                st["sum"] = F.full_like(p, initial_accumulator_value)

    def _update(self, group):
        lr, lr_decay, eps = _scalar(group["lr"]), group["lr_decay"], group["eps"]
        wd = group["weight_decay"]
        for p in group["params"]:
            if p.grad is None:
                continue
            st = self.state[p]
            g = p.grad
            step_t, state_sum = st["step"], st["sum"]
            F.binary(F.ADD, step_t, 1, step_t)
            step = step_t.item()
            if group["maximize"]:
                g = F.unary(F.NEG, g, None)
            if wd != 0:
                g = F.add(g, p, wd)
            clr = lr / (1 + (step - 1) * lr_decay)
            F.addcmul(state_sum, g, g, 1, state_sum)
            std = F.sqrt(state_sum)
            F.binary(F.ADD, std, eps, std)
            self._check_inplace(group, p)
            F.addcdiv(p, g, std, -clr, p)
