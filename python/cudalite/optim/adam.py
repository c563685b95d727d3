"""``optim.Adam`` (with amsgrad, weight decay, decoupled weight decay and maximize),
following torch's single-tensor update order so that results agree bit for bit on the CPU."""

from __future__ import annotations

from cudalite._C import Tensor
from cudalite.optim import _functional as F
from cudalite.optim import _multi_tensor as MT
from cudalite.optim.optimizer import Optimizer, _check_betas, _check_lr, _check_nonnegative, _scalar

__all__ = ["Adam"]


class Adam(Optimizer):
    """Adam: moving averages of the gradient and its square, bias-corrected."""

    def __init__(
        self,
        params,
        lr=1e-3,
        betas=(0.9, 0.999),
        eps=1e-8,
        weight_decay=0,
        amsgrad=False,
        *,
        foreach=None,
        maximize=False,
        capturable=False,
        differentiable=False,
        fused=None,
        decoupled_weight_decay=False,
    ):
        _check_lr(lr)
        _check_nonnegative("epsilon", eps)
        _check_betas(betas)
        _check_nonnegative("weight_decay", weight_decay)
        if not (
            (isinstance(betas[0], float) and isinstance(betas[1], float))
            or (isinstance(betas[0], Tensor) and isinstance(betas[1], Tensor))
        ):
            raise ValueError("betas must be either both floats or both Tensors")
        defaults = dict(
            lr=lr,
            betas=betas,
            eps=eps,
            weight_decay=weight_decay,
            amsgrad=amsgrad,
            maximize=maximize,
            foreach=foreach,
            capturable=capturable,
            differentiable=differentiable,
            fused=fused,
            decoupled_weight_decay=decoupled_weight_decay,
        )
        if isinstance(lr, Tensor) and foreach and not capturable:
            raise ValueError(
                "lr as a Tensor is not supported for capturable=False and foreach=True"
            )
        super().__init__(params, defaults)
        self._check_fused(fused, foreach, differentiable)
        if fused:
            # GradScaler hands the scale and the inf flag to the fused kernel (no host sync)
            self._step_supports_amp_scaling = True

    def _update(self, group):
        lr, eps = _scalar(group["lr"]), group["eps"]
        beta1, beta2 = (_scalar(b) for b in group["betas"])
        wd, amsgrad, maximize = group["weight_decay"], group["amsgrad"], group["maximize"]
        decoupled = group["decoupled_weight_decay"]
        on_device = group["capturable"] or group["fused"]
        params = [p for p in group["params"] if p.grad is not None]
        for p in params:
            st = self.state[p]
            if not st:
                if group["fused"]:
                    MT.check_fused_param(p)
                # torch keeps `step` on the CPU unless capturable or fused
                st["step"] = F.scalar_step(p, on_device)
                st["exp_avg"] = F.zeros_like(p)
                st["exp_avg_sq"] = F.zeros_like(p)
                if amsgrad:
                    st["max_exp_avg_sq"] = F.zeros_like(p)
        if self._multi_tensor_update(group, params):
            return
        for p in params:
            g = p.grad
            st = self.state[p]
            F.check_capturable(group, p)
            if maximize:
                g = F.unary(F.NEG, g, None)
            step_t = st["step"]
            F.binary(F.ADD, step_t, 1, step_t)
            if wd != 0:
                if decoupled:
                    self._check_inplace(group, p)
                    F.mul_(p, 1 - lr * wd)
                else:
                    g = F.add(g, p, wd)
            m, v = st["exp_avg"], st["exp_avg_sq"]
            F.lerp_(m, g, 1 - beta1)
            F.mul_(v, beta2)
            F.addcmul(v, g, g, 1 - beta2, v)
            step = step_t.item()
            bias_correction1 = 1 - beta1**step
            bias_correction2 = 1 - beta2**step
            step_size = lr / bias_correction1
            bc2_sqrt = bias_correction2**0.5
            if amsgrad:
                mx = st["max_exp_avg_sq"]
                F.binary(F.MAX, mx, v, mx)
                denom = F.sqrt(mx)
            else:
                denom = F.sqrt(v)
            F.binary(F.DIV, denom, bc2_sqrt, denom)
            F.binary(F.ADD, denom, eps, denom)
            self._check_inplace(group, p)
            F.addcdiv(p, m, denom, -step_size, p)

    def _multi_tensor_update(self, group, params):
        """The fused or foreach update of the group (torch's choice between them); False when
        the for-loop update runs instead."""
        fused, foreach = group["fused"], group["foreach"]
        lr = group["lr"]
        if fused is None and foreach is None:
            foreach = MT.default_to_foreach(params, group["differentiable"])
            if foreach and isinstance(lr, Tensor) and not group["capturable"]:
                foreach = False
        if not (fused or foreach) or not params:
            return False
        st = [self.state[p] for p in params]
        lists = dict(
            params=params,
            grads=[p.grad for p in params],
            exp_avgs=[s["exp_avg"] for s in st],
            exp_avg_sqs=[s["exp_avg_sq"] for s in st],
            max_exp_avg_sqs=[s["max_exp_avg_sq"] for s in st] if group["amsgrad"] else [],
            state_steps=[s["step"] for s in st],
        )
        beta1, beta2 = group["betas"]
        hyper = dict(
            amsgrad=group["amsgrad"],
            beta1=beta1,
            beta2=beta2,
            lr=lr,
            weight_decay=group["weight_decay"],
            eps=group["eps"],
            maximize=group["maximize"],
            decoupled_weight_decay=group["decoupled_weight_decay"],
        )
        if fused:
            MT.fused_adam(
                *lists.values(),
                getattr(self, "grad_scale", None),
                getattr(self, "found_inf", None),
                **hyper,
            )
        else:
            MT.multi_tensor_adam(*lists.values(), capturable=group["capturable"], **hyper)
        return True
