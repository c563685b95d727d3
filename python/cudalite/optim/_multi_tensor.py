"""The ``foreach=True`` and ``fused=True`` implementations of Adam/AdamW and SGD, as torch's
``_multi_tensor_adam``, ``_fused_adam``, ``_multi_tensor_sgd`` and ``_fused_sgd``: the
parameters of a group are split by device and dtype, and each part is updated with
``_foreach_*`` ops (a handful of multi-tensor launches per step on CUDA) or with one fused
kernel (``torch._fused_adam_``/``_fused_sgd_``, which also unscale the gradients and skip the
update on an inf when GradScaler hands them ``grad_scale`` and ``found_inf``).

On CUDA, foreach Adam/AdamW runs its update as the fused kernel too: torch's foreach update is
eight passes over the parameters and states (lerp, mul, addcmul, sqrt, div, add, addcdiv and
the weight decay), each reading and writing whole tensors, where one pass reads and writes each
element once; the result is the same update, rounded as the fused one (torch's foreach and
fused updates differ from each other by that rounding too). The CPU keeps the op sequence, so
that it agrees with torch's foreach bit for bit."""

from __future__ import annotations

from cudalite import _foreach, _fused
from cudalite._C import Tensor

_FUSED_DEVICES = ["mps", "cuda", "xpu", "hpu", "cpu", "privateuseone"]


def default_to_foreach(params, differentiable):
    """torch's default when neither foreach nor fused is given: foreach when every parameter
    is on CUDA, for-loop otherwise."""
    if differentiable:
        return False
    return all(p is None or p.device.type == "cuda" for p in params)


def check_fused_param(p):
    """torch's _device_dtype_check_for_fused."""
    if not p.dtype.is_floating_point:
        raise RuntimeError(
            "`fused=True` requires all the params to be floating point Tensors of supported "
            f"devices: {_FUSED_DEVICES} but {p.dtype} and {p.device.type}"
        )


def group_by_device_and_dtype(lists):
    """{(device, dtype): ([list of each kind], [indices])} keyed on the first list's tensors,
    in first-seen order (torch's _group_tensors_by_device_and_dtype)."""
    groups = {}
    for i, p in enumerate(lists[0]):
        key = (str(p.device), p.dtype)
        entry = groups.get(key)
        if entry is None:
            entry = groups[key] = ([[] for _ in lists], [])
        for k, lst in enumerate(lists):
            entry[0][k].append(lst[i] if lst else None)
        entry[1].append(i)
    return groups


def _value(x):
    return x.item() if isinstance(x, Tensor) else x


# ---- Adam / AdamW ----


def multi_tensor_adam(
    params,
    grads,
    exp_avgs,
    exp_avg_sqs,
    max_exp_avg_sqs,
    state_steps,
    *,
    amsgrad,
    beta1,
    beta2,
    lr,
    weight_decay,
    eps,
    maximize,
    capturable,
    decoupled_weight_decay,
):
    if not params:
        return
    if isinstance(lr, Tensor) and not capturable:
        raise RuntimeError("lr as a Tensor is not supported for capturable=False and foreach=True")
    if capturable:
        for p, step in zip(params, state_steps, strict=True):
            if not (p.device.type == step.device.type and p.device.type == "cuda"):
                raise AssertionError(
                    "If capturable=True, params and state_steps must be on supported devices: "
                    "['cuda', 'xpu', 'hpu', 'privateuseone']."
                )
    lr_arg = lr
    lr, beta1, beta2 = _value(lr), _value(beta1), _value(beta2)
    lists = [params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps]
    for (d_params, d_grads, d_avgs, d_sqs, d_max, d_steps), _ in group_by_device_and_dtype(
        lists
    ).values():
        if _one_pass(d_params, d_grads, d_avgs, d_sqs, d_max if amsgrad else []):
            _foreach._foreach_add_(d_steps, 1)
            wd = weight_decay
            if decoupled_weight_decay and weight_decay != 0:
                # torch's foreach decay, a write of its own (the parameters' version counts
                # two writes a step, as torch's), then the update without decay
                _foreach._foreach_mul_(d_params, 1 - lr * weight_decay)
                wd = 0.0
            _fused._fused_adam_(
                d_params,
                d_grads,
                d_avgs,
                d_sqs,
                d_max if amsgrad else [],
                d_steps if capturable else _device_steps(d_steps, d_params[0].device),
                amsgrad=amsgrad,
                lr=lr_arg if capturable and isinstance(lr_arg, Tensor) and lr_arg.is_cuda else lr,
                beta1=beta1,
                beta2=beta2,
                weight_decay=wd,
                eps=eps,
                maximize=maximize,
                grad_scale=None,
                found_inf=None,
            )
            continue
        if maximize:
            d_grads = list(_foreach._foreach_neg(d_grads))
        _foreach._foreach_add_(d_steps, 1)
        if weight_decay != 0:
            if decoupled_weight_decay:
                _foreach._foreach_mul_(d_params, 1 - lr * weight_decay)
            elif maximize:
                _foreach._foreach_add_(d_grads, d_params, alpha=weight_decay)
            else:
                d_grads = list(_foreach._foreach_add(d_grads, d_params, alpha=weight_decay))
        _foreach._foreach_lerp_(d_avgs, d_grads, 1 - beta1)
        _foreach._foreach_mul_(d_sqs, beta2)
        _foreach._foreach_addcmul_(d_sqs, d_grads, d_grads, 1 - beta2)
        del d_grads
        if capturable:
            bc1 = list(_foreach._foreach_pow(beta1, d_steps))
            bc2 = list(_foreach._foreach_pow(beta2, d_steps))
            _foreach._foreach_sub_(bc1, 1)
            _foreach._foreach_sub_(bc2, 1)
            _foreach._foreach_neg_(bc2)
            _foreach._foreach_div_(bc1, lr)
            _foreach._foreach_reciprocal_(bc1)
            _foreach._foreach_sqrt_(bc2)
            step_size, bc2_sqrt = bc1, bc2
            if amsgrad:
                _foreach._foreach_maximum_(d_max, d_sqs)
                denom = list(_foreach._foreach_sqrt(d_max))
            else:
                denom = list(_foreach._foreach_sqrt(d_sqs))
            _foreach._foreach_div_(denom, bc2_sqrt)
            _foreach._foreach_add_(denom, eps)
            _foreach._foreach_div_(denom, step_size)
            _foreach._foreach_addcdiv_(d_params, d_avgs, denom)
        else:
            steps = [s.item() for s in d_steps]
            bc1 = [1 - beta1**s for s in steps]
            bc2 = [1 - beta2**s for s in steps]
            step_size = [(lr / bc) * -1 for bc in bc1]
            bc2_sqrt = [bc**0.5 for bc in bc2]
            if amsgrad:
                _foreach._foreach_maximum_(d_max, d_sqs)
                denom = list(_foreach._foreach_sqrt(d_max))
            else:
                denom = list(_foreach._foreach_sqrt(d_sqs))
            _foreach._foreach_div_(denom, bc2_sqrt)
            _foreach._foreach_add_(denom, eps)
            _foreach._foreach_addcdiv_(d_params, d_avgs, denom, step_size)


def _one_pass(*lists):
    """Whether a device-and-dtype group of foreach Adam runs as one fused pass: on CUDA, every
    tensor dense (the fused kernel's layout) and of the parameters' dtype."""
    first = lists[0][0]
    if not first.is_cuda or not first.dtype.is_floating_point:
        return False
    return all(t.dtype == first.dtype and t.is_contiguous() for lst in lists for t in lst)


def _device_steps(steps, device):
    """The steps (host tensors, as torch keeps them without capturable) as one-element float32
    tensors on the device for the fused kernel: one per distinct value (usually one)."""
    from cudalite import _C, full

    made = {}
    out = []
    for s in steps:
        v = s.item()
        t = made.get(v)
        if t is None:
            t = made[v] = full((), v, dtype=_C.float32, device=device)
        out.append(t)
    return out


def _per_device(t, device, cache):
    if t is None:
        return None
    if device not in cache:
        cache[device] = t.to(device, non_blocking=True)
    return cache[device]


def fused_adam(
    params,
    grads,
    exp_avgs,
    exp_avg_sqs,
    max_exp_avg_sqs,
    state_steps,
    grad_scale,
    found_inf,
    *,
    amsgrad,
    beta1,
    beta2,
    lr,
    weight_decay,
    eps,
    maximize,
    decoupled_weight_decay,
):
    if not params:
        return
    beta1, beta2 = _value(beta1), _value(beta2)
    scales, infs, lrs = {}, {}, {}
    if grad_scale is not None:
        scales[str(grad_scale.device)] = grad_scale
    if found_inf is not None:
        infs[str(found_inf.device)] = found_inf
    if isinstance(lr, Tensor) and lr.is_cuda:
        lrs[str(lr.device)] = lr
    lists = [params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps]
    fn = _fused._fused_adamw_ if decoupled_weight_decay else _fused._fused_adam_
    for (device, _dtype), (
        (d_params, d_grads, d_avgs, d_sqs, d_max, d_steps),
        _,
    ) in group_by_device_and_dtype(lists).items():
        d_scale = _per_device(grad_scale, device, scales)
        d_inf = _per_device(found_inf, device, infs)
        d_lr = _per_device(lr, device, lrs) if isinstance(lr, Tensor) and lr.is_cuda else lr
        _foreach._foreach_add_(d_steps, 1)
        fn(
            d_params,
            d_grads,
            d_avgs,
            d_sqs,
            d_max if amsgrad else [],
            d_steps,
            amsgrad=amsgrad,
            lr=d_lr,
            beta1=beta1,
            beta2=beta2,
            weight_decay=weight_decay,
            eps=eps,
            maximize=maximize,
            grad_scale=d_scale,
            found_inf=d_inf,
        )
        if d_inf is not None:
            _foreach._foreach_sub_(d_steps, [d_inf] * len(d_steps))


# ---- SGD ----


def multi_tensor_sgd(
    params,
    grads,
    momentum_buffer_list,
    *,
    weight_decay,
    momentum,
    lr,
    dampening,
    nesterov,
    maximize,
):
    if not params:
        return
    lists = [params, grads, momentum_buffer_list]
    for (d_params, d_grads, d_bufs), indices in group_by_device_and_dtype(lists).values():
        if maximize:
            d_grads = list(_foreach._foreach_neg(d_grads))
        if weight_decay != 0:
            if maximize:
                _foreach._foreach_add_(d_grads, d_params, alpha=weight_decay)
            else:
                d_grads = list(_foreach._foreach_add(d_grads, d_params, alpha=weight_decay))
        if momentum != 0:
            if all(b is not None for b in d_bufs):
                bufs = d_bufs
                _foreach._foreach_mul_(bufs, momentum)
                _foreach._foreach_add_(bufs, d_grads, alpha=1 - dampening)
            else:
                from cudalite.optim import _functional as F

                bufs = []
                for i, b in enumerate(d_bufs):
                    if b is None:
                        b = d_bufs[i] = momentum_buffer_list[indices[i]] = (
                            d_grads[i].detach()._clone()
                        )
                    else:
                        F.mul_(b, momentum)
                        F.add(b, d_grads[i], 1 - dampening, b)
                    bufs.append(b)
            if nesterov:
                _foreach._foreach_add_(d_grads, bufs, alpha=momentum)
            else:
                d_grads = bufs
        _foreach._foreach_add_(d_params, d_grads, alpha=-_value(lr))


def fused_sgd(
    params,
    grads,
    momentum_buffer_list,
    grad_scale,
    found_inf,
    *,
    weight_decay,
    momentum,
    lr,
    dampening,
    nesterov,
    maximize,
):
    if not params:
        return
    no_momentum = momentum == 0
    is_first_step = all(b is None for b in momentum_buffer_list) and not no_momentum
    if is_first_step:
        import cudalite

        for i, g in enumerate(grads):
            momentum_buffer_list[i] = cudalite.empty_like(g)
    scales, infs, lrs = {}, {}, {}
    if grad_scale is not None:
        scales[str(grad_scale.device)] = grad_scale
    if found_inf is not None:
        infs[str(found_inf.device)] = found_inf
    lists = [params, grads, momentum_buffer_list]
    for (device, _dtype), ((d_params, d_grads, d_bufs), _) in group_by_device_and_dtype(
        lists
    ).items():
        d_lr = _per_device(lr, device, lrs) if isinstance(lr, Tensor) and lr.is_cuda else lr
        _fused._fused_sgd_(
            d_params,
            d_grads,
            [] if no_momentum else d_bufs,
            weight_decay=weight_decay,
            momentum=momentum,
            lr=d_lr,
            dampening=dampening,
            nesterov=nesterov,
            maximize=maximize,
            is_first_step=is_first_step,
            grad_scale=_per_device(grad_scale, device, scales),
            found_inf=_per_device(found_inf, device, infs),
        )


__all__ = [
    "check_fused_param",
    "default_to_foreach",
    "fused_adam",
    "fused_sgd",
    "group_by_device_and_dtype",
    "multi_tensor_adam",
    "multi_tensor_sgd",
]
