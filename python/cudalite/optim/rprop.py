"""``optim.Rprop``: resilient backpropagation (per-coordinate step sizes grown or shrunk by
the sign of successive gradients), following torch's single-tensor update order."""

from __future__ import annotations

from cudalite import _C
from cudalite.optim import _functional as F
from cudalite.optim.optimizer import Optimizer, _check_lr, _scalar

__all__ = ["Rprop"]

_GT, _LT, _EQ = F._B["gt"], F._B["lt"], F._B["eq"]
_SIGN = F._U["sign"]


class Rprop(Optimizer):
    """Moves each coordinate by its own step size against the gradient's sign; the step
    size is multiplied by etas[1] while the sign holds and by etas[0] when it flips (that
    step is then skipped), within step_sizes."""

    def __init__(
        self,
        params,
        lr=1e-2,
        etas=(0.5, 1.2),
        step_sizes=(1e-6, 50),
        *,
        capturable=False,
        foreach=None,
        maximize=False,
        differentiable=False,
    ):
        _check_lr(lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        defaults = dict(
            lr=lr,
            etas=etas,
            step_sizes=step_sizes,
            foreach=foreach,
            maximize=maximize,
            differentiable=differentiable,
            capturable=capturable,
        )
        super().__init__(params, defaults)

    def _update(self, group):
        etaminus, etaplus = group["etas"]
        step_size_min, step_size_max = group["step_sizes"]
        params = [p for p in group["params"] if p.grad is not None]
        for p in params:
            st = self.state[p]
            if not st:
                st["step"] = F.scalar_step(p, group["capturable"])
                st["prev"] = F.zeros_like(p)
                st["step_size"] = F.full_like(p.grad, _scalar(group["lr"]))
        for p in params:
            st = self.state[p]
            g = p.grad
            if group["maximize"]:
                g = F.unary(F.NEG, g, None)
            prev, step_size = st["prev"], st["step_size"]
            F.check_capturable(group, p)
            F.binary(F.ADD, st["step"], 1, st["step"])
            sign = F.unary(_SIGN, F.binary(F.MUL, g, prev, None), None)
            sign = _C._where(F.binary(_GT, sign, 0, None), etaplus, sign)
            sign = _C._where(F.binary(_LT, sign, 0, None), etaminus, sign)
            sign = _C._where(F.binary(_EQ, sign, 0, None), 1, sign)
            F.mul_(step_size, sign)
            _C._clamp(step_size, step_size_min, step_size_max, step_size)
            # a flipped sign: no step this time, and no sign to compare with next time
            g = _C._where(F.binary(_EQ, sign, etaminus, None), 0, g)
            self._check_inplace(group, p)
            F.addcmul(p, F.unary(_SIGN, g, None), step_size, -1, p)
            prev.copy_(g)
