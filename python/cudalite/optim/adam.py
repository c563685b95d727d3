"""``optim.Adam`` (with amsgrad, weight decay, decoupled weight decay and maximize),
following torch's single-tensor update order so results agree to float rounding."""

from __future__ import annotations

from cudalite import _C, _ops
from cudalite._C import Tensor
from cudalite.autograd import enable_grad
from cudalite.optim.optimizer import Optimizer

__all__ = ["Adam"]

_B = _ops.BINARY
_ADD, _SUB, _MUL, _DIV, _MAX = _B["add"], _B["sub"], _B["mul"], _B["div"], _B["maximum"]
_SQRT = _ops.UNARY["sqrt"]
_binary, _unary = _C._binary, _C._unary


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
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
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
        super().__init__(params, defaults)
        self._check_fused(fused, foreach, differentiable)

    def step(self, closure=None):
        """One Adam update of every parameter that has a gradient."""
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        prev = _C._is_grad_enabled()
        _C._set_grad_enabled(False)
        try:
            for group in self.param_groups:
                self._update(group)
        finally:
            _C._set_grad_enabled(prev)
        return loss

    def _update(self, group):
        lr, (beta1, beta2), eps = group["lr"], group["betas"], group["eps"]
        wd, amsgrad, maximize = group["weight_decay"], group["amsgrad"], group["maximize"]
        decoupled = group["decoupled_weight_decay"]
        on_device = group["capturable"] or group["fused"]
        params = [p for p in group["params"] if p.grad is not None]
        for p in params:
            st = self.state[p]
            if not st:
                # torch keeps `step` on the CPU unless capturable or fused
                st["step"] = _C._full([], 0.0, _C.float32, p.device if on_device else "cpu")
                st["exp_avg"] = _C._full(list(p.shape), 0, p.dtype, p.device)
                st["exp_avg_sq"] = _C._full(list(p.shape), 0, p.dtype, p.device)
                if amsgrad:
                    st["max_exp_avg_sq"] = _C._full(list(p.shape), 0, p.dtype, p.device)
        for p in params:
            g = p.grad
            st = self.state[p]
            if group["capturable"] and p.device.type != "cuda":
                raise AssertionError(
                    "If capturable=True, params and state_steps must be on supported devices: "
                    "['cuda', 'xpu', 'hpu', 'privateuseone', 'xla']."
                )
            if maximize:
                g = -g
            step_t = st["step"]
            _binary(_ADD, step_t, 1, step_t)
            if wd != 0:
                if decoupled:
                    self._check_inplace(group, p)
                    _binary(_MUL, p, 1 - lr * wd, p)
                else:
                    g = _binary(_ADD, g, _binary(_MUL, p, wd, None), None)
            m, v = st["exp_avg"], st["exp_avg_sq"]
            # m.lerp_(g, 1 - beta1): m + w * (g - m) for w < 0.5
            w = 1 - beta1
            _binary(_ADD, m, _binary(_MUL, _binary(_SUB, g, m, None), w, None), m)
            # v.mul_(beta2).addcmul_(g, g, value=1 - beta2)
            _binary(_MUL, v, beta2, v)
            _binary(_ADD, v, _binary(_MUL, _binary(_MUL, g, g, None), 1 - beta2, None), v)
            step = step_t.item()
            bias_correction1 = 1 - beta1**step
            bias_correction2 = 1 - beta2**step
            step_size = lr / bias_correction1
            bc2_sqrt = bias_correction2**0.5
            if amsgrad:
                mx = st["max_exp_avg_sq"]
                _binary(_MAX, mx, v, mx)
                denom = _unary(_SQRT, mx, None)
            else:
                denom = _unary(_SQRT, v, None)
            _binary(_DIV, denom, bc2_sqrt, denom)
            _binary(_ADD, denom, eps, denom)
            # p.addcdiv_(m, denom, value=-step_size)
            self._check_inplace(group, p)
            _binary(_ADD, p, _binary(_MUL, _binary(_DIV, m, denom, None), -step_size, None), p)
