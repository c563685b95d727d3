"""``optim.Adafactor``: second moments factored into row and column means for matrices,
following torch's single-tensor update order (its norms are reductions: results agree with
torch's to rounding)."""

from __future__ import annotations

from cudalite.optim import _functional as F
from cudalite.optim.optimizer import Optimizer, _scalar

__all__ = ["Adafactor"]


class Adafactor(Optimizer):
    """Adafactor as torch implements it: relative step size ``min(lr, 1 / sqrt(t))`` scaled
    by the parameter's RMS, ``beta2_t = 1 - t ** beta2_decay``, updates clipped to RMS
    ``d``, decoupled weight decay ``lr * weight_decay``."""

    def __init__(
        self,
        params,
        lr=1e-2,
        beta2_decay=-0.8,
        eps=(None, 1e-3),
        d=1.0,
        weight_decay=0.0,
        *,
        foreach=None,
        maximize=False,
    ):
        from cudalite._C import Tensor

        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 >= beta2_decay:
            raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
        if eps[0] is not None and not 0.0 <= eps[0]:
            raise ValueError(f"epsilon1 should be >= 0 but is: {eps[0]}")
        if not 0.0 <= eps[1]:
            raise ValueError(f"epsilon2 should be >= 0 but is: {eps[1]}")
        if not 1.0 <= d:
            raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight_decay should be >= 0 but is: {weight_decay}")
        defaults = dict(
            lr=lr,
            beta2_decay=beta2_decay,
            eps=eps,
            d=d,
            weight_decay=weight_decay,
            foreach=foreach,
            maximize=maximize,
        )
        super().__init__(params, defaults)

    def _update(self, group):
        import cudalite

        lr, beta2_decay, d = _scalar(group["lr"]), group["beta2_decay"], group["d"]
        eps1, eps2 = group["eps"]
        wd = group["weight_decay"]
        params = [p for p in group["params"] if p.grad is not None]
        for p in params:
            st = self.state[p]
            if not st:
                st["step"] = F.scalar_step(p, False)
                g = p.grad
                if g.dim() > 1:
                    st["row_var"] = F.zeros_like(g)[..., :1].contiguous()
                    st["col_var"] = F.zeros_like(g)[..., :1, :].contiguous()
                else:
                    st["variance"] = F.zeros_like(g)
        for p in params:
            st = self.state[p]
            g = p.grad
            if group["maximize"]:
                g = F.unary(F.NEG, g, None)
            if eps1 is None:  # as torch: the first parameter's dtype sets it for the group
                eps1 = cudalite.finfo(p.dtype).eps
            step_t = st["step"]
            F.binary(F.ADD, step_t, 1, step_t)
            step = step_t.item()
            one_minus_beta2_t = step**beta2_decay
            rho_t = min(lr, 1 / step**0.5)
            alpha = max(eps2, p.norm(2).item() / p.numel() ** 0.5) * rho_t
            if wd != 0:
                F.mul_(p, 1 - lr * wd)
            if g.dim() > 1:
                row_var, col_var = st["row_var"], st["col_var"]
                row_mean = cudalite.norm(g, dim=-1, keepdim=True).square_().div_(g.size(-1))
                F.lerp_(row_var, row_mean, one_minus_beta2_t)
                col_mean = cudalite.norm(g, dim=-2, keepdim=True).square_().div_(g.size(-2))
                F.lerp_(col_var, col_mean, one_minus_beta2_t)
                var_estimate = row_var @ col_var
                var_estimate.div_(row_var.mean(dim=-2, keepdim=True).clamp_(min=eps1))
            else:
                variance = st["variance"]
                F.lerp_(variance, F.binary(F.MUL, g, g, None), one_minus_beta2_t)
                var_estimate = variance.clone()
            update = var_estimate.clamp_(min=eps1 * eps1).rsqrt_()
            update.mul_(g)
            denom = max(1.0, update.norm(2).item() / (update.numel() ** 0.5 * d))
            F.add(p, update, -alpha / denom, p)
