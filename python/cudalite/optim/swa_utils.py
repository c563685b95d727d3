"""``optim.swa_utils``: weight averaging (stochastic weight averaging and exponential moving
averages) with ``AveragedModel``, its averaging functions, ``SWALR`` and ``update_bn``, as
torch's."""

from __future__ import annotations

import itertools
import math
import warnings
from copy import deepcopy

from cudalite import _C
from cudalite._C import Tensor
from cudalite.nn.module import Module
from cudalite.optim import _functional as F
from cudalite.optim.lr_scheduler import LRScheduler, _per_group

__all__ = [
    "AveragedModel",
    "update_bn",
    "SWALR",
    "get_ema_multi_avg_fn",
    "get_swa_multi_avg_fn",
    "get_ema_avg_fn",
    "get_swa_avg_fn",
]


_ADDCDIV_INTEGER = (
    "Integer division with addcdiv is no longer supported, and in a future  release addcdiv "
    "will perform a true division of tensor1 and tensor2. The historic addcdiv behavior can "
    "be implemented as (input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for "
    "integer inputs and as (input + value * tensor1 / tensor2) for float inputs. The future "
    "addcdiv behavior is just the latter implementation: (input + value * tensor1 / "
    "tensor2), for all dtypes."
)


def _no_grad(fn):
    def wrapper(*args, **kwargs):
        prev = _C._is_grad_enabled()
        _C._set_grad_enabled(False)
        try:
            return fn(*args, **kwargs)
        finally:
            _C._set_grad_enabled(prev)

    wrapper.__name__, wrapper.__doc__ = fn.__name__, fn.__doc__
    return wrapper


def _check_decay(decay):
    if decay < 0.0 or decay > 1.0:
        raise ValueError(
            f"Invalid decay value {decay} provided. Please provide a value in [0,1] range."
        )


def get_ema_multi_avg_fn(decay=0.999):
    """In-place exponential moving average of lists of tensors:
    ``ema += (1 - decay) * (current - ema)`` (a lerp)."""
    _check_decay(decay)

    @_no_grad
    def ema_update(ema_param_list, current_param_list, _):
        if ema_param_list[0].dtype.is_floating_point:
            for p_ema, p_model in zip(ema_param_list, current_param_list, strict=True):
                F.lerp_(p_ema, p_model, 1 - decay)
        else:
            for p_ema, p_model in zip(ema_param_list, current_param_list, strict=True):
                p_ema.copy_(p_ema * decay + p_model * (1 - decay))

    return ema_update


def get_swa_multi_avg_fn():
    """In-place running mean of lists of tensors: ``avg += (current - avg) / (n + 1)``."""

    @_no_grad
    def swa_update(averaged_param_list, current_param_list, num_averaged):
        if averaged_param_list[0].dtype.is_floating_point:
            weight = 1 / (num_averaged + 1)
            weight = weight.item() if isinstance(weight, Tensor) else weight
            for p_avg, p_model in zip(averaged_param_list, current_param_list, strict=True):
                F.lerp_(p_avg, p_model, weight)
        elif isinstance(num_averaged, Tensor):  # torch's addcdiv refuses integers
            raise RuntimeError(_ADDCDIV_INTEGER)
        else:  # a float alpha: torch's error for integer tensors
            for p_avg, p_model in zip(averaged_param_list, current_param_list, strict=True):
                p_avg.add_(p_model - p_avg, alpha=1.0 / (num_averaged + 1))

    return swa_update


def get_ema_avg_fn(decay=0.999):
    """``decay * ema + (1 - decay) * current``, a new tensor."""
    _check_decay(decay)

    @_no_grad
    def ema_update(ema_param, current_param, num_averaged):
        return decay * ema_param + (1 - decay) * current_param

    return ema_update


def get_swa_avg_fn():
    """``averaged + (current - averaged) / (num_averaged + 1)``, a new tensor."""

    @_no_grad
    def swa_update(averaged_param, current_param, num_averaged):
        return averaged_param + (current_param - averaged_param) / (num_averaged + 1)

    return swa_update


class AveragedModel(Module):
    """A copy of ``model`` whose parameters (and buffers, with ``use_buffers``) are an
    average of the model's over the calls of ``update_parameters(model)``: the running mean
    by default, or what ``avg_fn`` (one tensor at a time, returning the new average) or
    ``multi_avg_fn`` (lists of tensors, in place) computes. ``n_averaged`` counts the
    updates; calling it runs the averaged copy."""

    def __init__(self, model, device=None, avg_fn=None, multi_avg_fn=None, use_buffers=False):
        import cudalite

        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", cudalite.tensor(0, dtype=cudalite.long, device=device))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)

    @_no_grad
    def update_parameters(self, model):
        """Folds ``model``'s current parameters into the average (the first call copies)."""
        if self.use_buffers:
            self_param = itertools.chain(self.module.parameters(), self.module.buffers())
            model_param = itertools.chain(model.parameters(), model.buffers())
        else:
            self_param, model_param = self.parameters(), model.parameters()
        averaged, current = [], []
        copy_param = bool(self.n_averaged == 0)
        for p_avg, p_model in zip(self_param, model_param, strict=False):
            p_model_ = p_model.detach().to(p_avg.device)
            averaged.append(p_avg.detach())
            current.append(p_model_)
            if copy_param:
                p_avg.detach().copy_(p_model_)
        if self.n_averaged > 0:
            if self.multi_avg_fn is not None or self.avg_fn is None:
                groups = {}
                for a, c in zip(averaged, current, strict=True):
                    groups.setdefault((a.device, a.dtype), ([], []))
                    groups[(a.device, a.dtype)][0].append(a)
                    groups[(a.device, a.dtype)][1].append(c)
                for (device, _), (avgs, curs) in groups.items():
                    n = self.n_averaged.to(device)
                    if self.multi_avg_fn:
                        self.multi_avg_fn(avgs, curs, n)
                    elif device.type == "cuda":  # torch's foreach path: a lerp
                        get_swa_multi_avg_fn()(avgs, curs, n)
                    else:
                        avg_fn = get_swa_avg_fn()
                        for p_avg, p_model in zip(avgs, curs, strict=True):
                            p_avg.copy_(avg_fn(p_avg, p_model, n))
            else:
                for p_avg, p_model in zip(averaged, current, strict=True):
                    n = self.n_averaged.to(p_avg.device)
                    p_avg.detach().copy_(self.avg_fn(p_avg.detach(), p_model, n))
        if not self.use_buffers:
            # buffers (e.g. batch-norm statistics) follow the model
            for b_swa, b_model in zip(self.module.buffers(), model.buffers(), strict=True):
                b_swa.detach().copy_(b_model.detach().to(b_swa.device))
        self.n_averaged += 1


def _is_batchnorm(module):
    return any(c.__name__ == "_BatchNorm" for c in type(module).__mro__)


@_no_grad
def update_bn(loader, model, device=None):
    """Recomputes the running statistics of ``model``'s batch-norm layers with one pass over
    ``loader`` (inputs, or (input, ...) tuples whose first item is the input)."""
    momenta = {}
    for module in model.modules():
        if _is_batchnorm(module):
            module.reset_running_stats()
            momenta[module] = module.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for module in momenta:
        module.momentum = None
    for input in loader:
        if isinstance(input, (list, tuple)):
            input = input[0]
        if device is not None:
            input = input.to(device)
        model(input)
    for module in momenta:
        module.momentum = momenta[module]
    model.train(was_training)


class SWALR(LRScheduler):
    """Anneals each group's lr to ``swa_lr`` over ``anneal_epochs`` epochs ('cos' or
    'linear'), then keeps it there."""

    def __init__(self, optimizer, swa_lr, anneal_epochs=10, anneal_strategy="cos", last_epoch=-1):
        swa_lrs = _per_group("swa_lr", optimizer, swa_lr)
        for lr, group in zip(swa_lrs, optimizer.param_groups, strict=True):
            group["swa_lr"] = lr
        if anneal_strategy not in ["cos", "linear"]:
            raise ValueError(
                f"anneal_strategy must by one of 'cos' or 'linear', instead got {anneal_strategy}"
            )
        self._set_anneal_func(anneal_strategy)
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _linear_anneal(t):
        return t

    @staticmethod
    def _cosine_anneal(t):
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr, swa_lr, alpha):
        if alpha == 1:
            return swa_lr
        return (lr - alpha * swa_lr) / (1 - alpha)

    def get_lr(self):
        if not self._get_lr_called_within_step:
            warnings.warn(
                "To get the last learning rate computed by the scheduler, please use "
                "`get_last_lr()`.",
                UserWarning,
                stacklevel=2,
            )
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        # the lr before annealing, recovered from the current one
        prev_t = max(0, min(1, (step - 1) / max(1, self.anneal_epochs)))
        prev_alpha = self.anneal_func(prev_t)
        prev_lrs = [
            self._get_initial_lr(group["lr"], group["swa_lr"], prev_alpha)
            for group in self.optimizer.param_groups
        ]
        t = max(0, min(1, step / max(1, self.anneal_epochs)))
        alpha = self.anneal_func(t)
        return [
            group["swa_lr"] * alpha + lr * (1 - alpha)
            for group, lr in zip(self.optimizer.param_groups, prev_lrs, strict=True)
        ]

    def _set_anneal_func(self, anneal_strategy):
        self._anneal_strategy = anneal_strategy
        self.anneal_func = self._cosine_anneal if anneal_strategy == "cos" else self._linear_anneal

    def state_dict(self):
        return {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "anneal_func")}

    def load_state_dict(self, state_dict):
        self.__dict__.update(state_dict)
        self._set_anneal_func(self._anneal_strategy)
