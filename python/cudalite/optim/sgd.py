"""``optim.SGD``: stochastic gradient descent with momentum, dampening, weight decay,
Nesterov momentum and maximize, following torch's single-tensor update order."""

from __future__ import annotations

from cudalite.optim import _functional as F
from cudalite.optim import _multi_tensor as MT
from cudalite.optim.optimizer import Optimizer, _check_lr, _scalar

__all__ = ["SGD"]


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
        _check_lr(lr)
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
        if fused:
            self._step_supports_amp_scaling = True

    def _update(self, group):
        lr, momentum, dampening = _scalar(group["lr"]), group["momentum"], group["dampening"]
        wd, nesterov, maximize = group["weight_decay"], group["nesterov"], group["maximize"]
        state = self.state
        if self._multi_tensor_update(group):
            return
        for p in group["params"]:
            g = p.grad
            if g is None:
                continue
            self._check_inplace(group, p)  # torch stores no momentum buffer then
            if maximize:
                g = F.unary(F.NEG, g, None)
            if wd != 0:
                g = F.add(g, p, wd)
            if momentum != 0:
                st = state[p]
                buf = st.get("momentum_buffer")
                if buf is None:
                    buf = st["momentum_buffer"] = g.detach()._clone()
                else:
                    F.mul_(buf, momentum)
                    F.add(buf, g, 1 - dampening, buf)
                g = F.add(g, buf, momentum) if nesterov else buf
            F.add(p, g, -lr, p)

    def _multi_tensor_update(self, group):
        """The fused or foreach update (torch's _fused_sgd / _multi_tensor_sgd); False when the
        for-loop update runs instead."""
        params = [p for p in group["params"] if p.grad is not None]
        fused, foreach = group["fused"], group["foreach"]
        if fused is None and foreach is None:
            foreach = MT.default_to_foreach(params, group["differentiable"])
        if not (fused or foreach) or not params:
            return False
        if fused:
            for p in params:
                if not self.state.get(p):
                    MT.check_fused_param(p)
        momentum = group["momentum"]
        # torch keeps no state for a parameter without momentum (state_dict()["state"] is empty)
        if momentum != 0:
            bufs = [self.state[p].get("momentum_buffer") for p in params]
        else:
            bufs = [None] * len(params)
        hyper = dict(
            weight_decay=group["weight_decay"],
            momentum=momentum,
            lr=group["lr"],
            dampening=group["dampening"],
            nesterov=group["nesterov"],
            maximize=group["maximize"],
        )
        grads = [p.grad for p in params]
        if fused:
            MT.fused_sgd(
                params,
                grads,
                bufs,
                getattr(self, "grad_scale", None),
                getattr(self, "found_inf", None),
                **hyper,
            )
        else:
            MT.multi_tensor_sgd(params, grads, bufs, **hyper)
        if momentum != 0:
            for p, b in zip(params, bufs, strict=True):
                self.state[p]["momentum_buffer"] = b
        return True
