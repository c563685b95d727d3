"""``optim.Muon``: momentum orthogonalised by Newton-Schulz iterations (in bfloat16, as
torch), for 2-D parameters, following torch's single-tensor update."""

from __future__ import annotations

import math

from cudalite.optim import _functional as F
from cudalite.optim.optimizer import Optimizer, _scalar

__all__ = ["Muon"]

EPS = 1e-7
DEFAULT_A = 3.4445
DEFAULT_B = -4.775
DEFAULT_C = 2.0315
DEFAULT_NS_STEPS = 5


def _addmm_bf16(c, a, b, beta, alpha=1):
    """``beta * c + alpha * (a @ b)`` for bfloat16 matrices, computed in float32 and rounded
    to bfloat16 once, as torch's bfloat16 addmm (CPU and cuBLAS) rounds it."""
    import cudalite

    return cudalite.addmm(c.float(), a.float(), b.float(), beta=beta, alpha=alpha).bfloat16()


def _zeropower_via_newtonschulz(grad, ns_coefficients, ns_steps, eps):
    """An approximately orthogonal matrix with ``grad``'s singular vectors: ``ns_steps``
    quintic Newton-Schulz iterations on the normalised bfloat16 matrix (its shorter side
    first)."""
    if ns_steps >= 100:
        raise ValueError("Number of steps must be less than 100 for computational efficiency")
    if len(grad.shape) != 2:
        raise ValueError("Input tensor gradient must be a 2D matrix")
    if len(ns_coefficients) != 3:
        raise ValueError("Coefficients must be a tuple of exactly 3 values")
    a, b, c = ns_coefficients
    x = grad.bfloat16()
    tall = grad.size(0) > grad.size(1)
    if tall:
        x = x.T
    x.div_(x.norm().clamp(min=eps))
    for _ in range(ns_steps):
        gram = x @ x.T
        gram_update = _addmm_bf16(gram, gram, gram, beta=b, alpha=c)
        x = _addmm_bf16(x, gram_update, x, beta=a)
    return x.T if tall else x


def _adjust_lr(lr, adjust_lr_fn, param_shape):
    """lr scaled for the parameter's shape: sqrt(max(1, rows / cols)) ('original', the
    default) or 0.2 * sqrt(max(rows, cols)) ('match_rms_adamw')."""
    rows, cols = param_shape[:2]
    if adjust_lr_fn is None or adjust_lr_fn == "original":
        ratio = math.sqrt(max(1, rows / cols))
    elif adjust_lr_fn == "match_rms_adamw":
        ratio = 0.2 * math.sqrt(max(rows, cols))
    else:
        ratio = 1.0
    return lr * ratio


class Muon(Optimizer):
    """SGD with (Nesterov) momentum whose update is orthogonalised, with decoupled weight
    decay; 2-D parameters only."""

    def __init__(
        self,
        params,
        lr=1e-3,
        weight_decay=0.1,
        momentum=0.95,
        nesterov=True,
        ns_coefficients=(DEFAULT_A, DEFAULT_B, DEFAULT_C),
        eps=EPS,
        ns_steps=DEFAULT_NS_STEPS,
        adjust_lr_fn=None,
    ):
        from cudalite._C import Tensor

        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 <= momentum:
            raise ValueError(f"momentum should be >= 0 but is: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight decay should be >= 0 but is: {weight_decay}")
        if adjust_lr_fn is not None and adjust_lr_fn not in ["original", "match_rms_adamw"]:
            raise ValueError(f"Adjust learning rate function {adjust_lr_fn} is not supported")
        defaults = dict(
            lr=lr,
            weight_decay=weight_decay,
            momentum=momentum,
            nesterov=nesterov,
            ns_coefficients=ns_coefficients,
            eps=eps,
            ns_steps=ns_steps,
            adjust_lr_fn=adjust_lr_fn,
        )
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                if p.ndim != 2:
                    raise ValueError(
                        "Muon only supports 2D parameters whereas we found a parameter with "
                        f"size: {p.size()}"
                    )

    def _update(self, group):
        lr, wd, momentum = _scalar(group["lr"]), group["weight_decay"], group["momentum"]
        params = [p for p in group["params"] if p.grad is not None]
        for p in params:
            if "momentum_buffer" not in self.state[p]:
                self.state[p]["momentum_buffer"] = F.zeros_like(p.grad)
        for p in params:
            g = p.grad
            if g.ndim != 2:
                raise ValueError("Param gradient must be a 2D matrix")
            buf = self.state[p]["momentum_buffer"]
            F.lerp_(buf, g, 1 - momentum)
            update = F.lerp_(g.clone(), buf, momentum) if group["nesterov"] else buf
            update = _zeropower_via_newtonschulz(
                update, group["ns_coefficients"], group["ns_steps"], group["eps"]
            )
            adjusted_lr = _adjust_lr(lr, group["adjust_lr_fn"], p.shape)
            F.mul_(p, 1 - lr * wd)
            F.add(p, update, -adjusted_lr, p)
