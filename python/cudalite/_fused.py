"""torch's fused kernels behind mixed precision and the fused optimizers, with torch's
signatures: ``torch._amp_foreach_non_finite_check_and_unscale_``,
``torch._amp_update_scale_``, ``torch._fused_adam_``, ``torch._fused_adamw_`` and
``torch._fused_sgd_``. On CUDA each is one multi-tensor launch per list (the scale update one
single-thread launch) that reads its scalars (scale, found-inf flag, step counts, a tensor
learning rate) on the device, so none of them waits for the GPU; on the CPU a loop runs the
same per-element arithmetic."""

from __future__ import annotations

from cudalite import _C
from cudalite._C import Tensor

__all__ = [
    "_amp_foreach_non_finite_check_and_unscale_",
    "_amp_update_scale_",
    "_fused_adam_",
    "_fused_adamw_",
    "_fused_sgd_",
]


def _amp_foreach_non_finite_check_and_unscale_(self, found_inf, inv_scale):
    """Multiplies every tensor of ``self`` by ``inv_scale`` (a one-element float32 tensor;
    not at all when it is 1) in place, and sets ``found_inf`` (one-element float32) to 1 if
    any element was inf or NaN. ``found_inf`` is never cleared: zero it first."""
    _C._amp_foreach_non_finite_check_and_unscale_(list(self), found_inf, inv_scale)


def _amp_update_scale_(
    self, growth_tracker, found_inf, scale_growth_factor, scale_backoff_factor, growth_interval
):
    """GradScaler's update of ``self`` (the scale) and ``growth_tracker`` in place: after an
    inf (``found_inf`` nonzero) the scale is multiplied by ``scale_backoff_factor`` and the
    tracker reset; otherwise the tracker counts the clean step, and after
    ``growth_interval`` of them the scale grows by ``scale_growth_factor`` (unless that
    overflows float32) and the tracker restarts. Returns ``self``."""
    return _C._amp_update_scale_(
        self,
        growth_tracker,
        found_inf,
        float(scale_growth_factor),
        float(scale_backoff_factor),
        int(growth_interval),
    )


def _lr_args(lr):
    if isinstance(lr, Tensor):
        if lr.is_cuda:  # read on the device, no sync
            return 0.0, lr.to(dtype=_C.float32)
        return lr.item(), None
    return float(lr), None


def _adam(
    adamw,
    self,
    grads,
    exp_avgs,
    exp_avg_sqs,
    max_exp_avg_sqs,
    state_steps,
    *,
    lr,
    beta1,
    beta2,
    weight_decay,
    eps,
    amsgrad,
    maximize,
    grad_scale,
    found_inf,
):
    lists = [list(self), list(grads), list(exp_avgs), list(exp_avg_sqs)]
    if amsgrad:
        lists.append(list(max_exp_avg_sqs))
    lr_value, lr_tensor = _lr_args(lr)
    _C._fused_adam(
        lists,
        list(state_steps),
        lr_value,
        lr_tensor,
        float(beta1),
        float(beta2),
        float(weight_decay),
        float(eps),
        bool(amsgrad),
        bool(maximize),
        adamw,
        grad_scale,
        found_inf,
    )


def _fused_adam_(
    self,
    grads,
    exp_avgs,
    exp_avg_sqs,
    max_exp_avg_sqs,
    state_steps,
    *,
    lr,
    beta1,
    beta2,
    weight_decay,
    eps,
    amsgrad,
    maximize,
    grad_scale=None,
    found_inf=None,
):
    """One Adam update of every parameter of ``self`` (torch's FusedAdamMathFunctor):
    ``state_steps`` (float32 tensors on the parameters' device) must already count this step;
    ``grad_scale`` unscales the gradients (written back unscaled), and nothing changes when
    ``found_inf`` is 1."""
    _adam(
        False,
        self,
        grads,
        exp_avgs,
        exp_avg_sqs,
        max_exp_avg_sqs,
        state_steps,
        lr=lr,
        beta1=beta1,
        beta2=beta2,
        weight_decay=weight_decay,
        eps=eps,
        amsgrad=amsgrad,
        maximize=maximize,
        grad_scale=grad_scale,
        found_inf=found_inf,
    )


def _fused_adamw_(
    self,
    grads,
    exp_avgs,
    exp_avg_sqs,
    max_exp_avg_sqs,
    state_steps,
    *,
    lr,
    beta1,
    beta2,
    weight_decay,
    eps,
    amsgrad,
    maximize,
    grad_scale=None,
    found_inf=None,
):
    """``_fused_adam_`` with decoupled weight decay (``p -= lr * weight_decay * p``)."""
    _adam(
        True,
        self,
        grads,
        exp_avgs,
        exp_avg_sqs,
        max_exp_avg_sqs,
        state_steps,
        lr=lr,
        beta1=beta1,
        beta2=beta2,
        weight_decay=weight_decay,
        eps=eps,
        amsgrad=amsgrad,
        maximize=maximize,
        grad_scale=grad_scale,
        found_inf=found_inf,
    )


def _fused_sgd_(
    self,
    grads,
    momentum_buffer_list,
    *,
    weight_decay,
    momentum,
    lr,
    dampening,
    nesterov,
    maximize,
    is_first_step,
    grad_scale=None,
    found_inf=None,
):
    """One SGD update of every parameter of ``self`` (torch's FusedSgdMathFunctor); an empty
    ``momentum_buffer_list`` means no momentum, ``is_first_step`` initialises the buffers
    from the gradients."""
    lists = [list(self), list(grads)]
    if momentum_buffer_list:
        lists.append(list(momentum_buffer_list))
    lr_value, lr_tensor = _lr_args(lr)
    _C._fused_sgd(
        lists,
        lr_value,
        lr_tensor,
        float(weight_decay),
        float(momentum),
        float(dampening),
        bool(nesterov),
        bool(maximize),
        bool(is_first_step),
        grad_scale,
        found_inf,
    )
