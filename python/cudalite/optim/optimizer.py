"""``optim.Optimizer``: parameter groups, per-parameter state, zero_grad and state_dict, as
in torch."""

from __future__ import annotations

import copy
import functools
import warnings
from collections import OrderedDict, defaultdict
from itertools import chain

from cudalite import _C
from cudalite._C import Tensor
from cudalite.autograd import enable_grad

__all__ = [
    "Optimizer",
    "required",
    "register_optimizer_step_pre_hook",
    "register_optimizer_step_post_hook",
]

# hooks run around every optimizer's step (torch.optim.optimizer's globals)
_global_optimizer_pre_hooks = OrderedDict()
_global_optimizer_post_hooks = OrderedDict()
_HOOK_DICTS = (
    "_optimizer_step_pre_hooks",
    "_optimizer_step_post_hooks",
    "_optimizer_state_dict_pre_hooks",
    "_optimizer_state_dict_post_hooks",
    "_optimizer_load_state_dict_pre_hooks",
    "_optimizer_load_state_dict_post_hooks",
)


def _handle(hooks, hook, prepend=False):
    from cudalite.nn.modules._hooks import RemovableHandle

    handle = RemovableHandle(hooks)
    hooks[handle.id] = hook
    if prepend:
        hooks.move_to_end(handle.id, last=False)
    return handle


def register_optimizer_step_pre_hook(hook):
    """A hook ``hook(optimizer, args, kwargs)`` run before every optimizer's step; it may
    return ``(new_args, new_kwargs)``."""
    return _handle(_global_optimizer_pre_hooks, hook)


def register_optimizer_step_post_hook(hook):
    """A hook ``hook(optimizer, args, kwargs)`` run after every optimizer's step."""
    return _handle(_global_optimizer_post_hooks, hook)


def _hooked_step(func):
    """``step`` wrapped to run the step pre- and post-hooks, as torch's profile_hook_step."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        self = args[0]
        for pre_hook in chain(
            _global_optimizer_pre_hooks.values(), self._optimizer_step_pre_hooks.values()
        ):
            result = pre_hook(self, args, kwargs)
            if result is not None:
                if isinstance(result, tuple) and len(result) == 2:
                    args, kwargs = result
                else:
                    raise RuntimeError(
                        f"{func} must return None or a tuple of (new_args, new_kwargs), but "
                        f"got {result}."
                    )
        out = func(*args, **kwargs)
        for post_hook in chain(
            self._optimizer_step_post_hooks.values(), _global_optimizer_post_hooks.values()
        ):
            post_hook(self, args, kwargs)
        return out

    wrapper.hooked = True
    return wrapper


class _RequiredParameter:
    """Marks a hyperparameter that has no default."""

    def __repr__(self):
        return "<required parameter>"


required = _RequiredParameter()


def _check_lr(lr):
    """torch's checks of a learning rate (a number or a one-element Tensor)."""
    if isinstance(lr, Tensor) and lr.numel() != 1:
        raise ValueError("Tensor lr must be 1-element")
    if not 0.0 <= lr:
        raise ValueError(f"Invalid learning rate: {lr}")


def _check_betas(betas):
    if not 0.0 <= betas[0] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
    if not 0.0 <= betas[1] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")


def _check_nonnegative(what, value):
    """torch's "Invalid <what> value: <value>" for a hyperparameter below 0 (or NaN)."""
    if not 0.0 <= value:
        raise ValueError(f"Invalid {what} value: {value}")


def _scalar(x):
    """A hyperparameter given as a one-element Tensor, as a number."""
    return x.item() if isinstance(x, Tensor) else x


def _typename(obj):
    from cudalite.nn.module import typename

    return typename(obj)


class Optimizer:
    """Base class: holds ``param_groups`` (dicts with 'params' and hyperparameters) and
    ``state`` (per-parameter dicts); subclasses implement ``step``."""

    def __init__(self, params, defaults):
        self.defaults = defaults
        for name in _HOOK_DICTS:
            setattr(self, name, OrderedDict())
        self._patch_step_function()
        self.state = defaultdict(dict)
        self.param_groups = []
        if isinstance(params, Tensor):
            raise TypeError(
                "params argument given to the optimizer should be an iterable of Tensors or "
                f"dicts, but got {_typename(params)}"
            )
        groups = list(params)
        if len(groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for g in groups:
            self.add_param_group(g)

    def add_param_group(self, param_group):
        """Adds a group of parameters with its own hyperparameters. The parameters may be
        given as ``(name, tensor)`` pairs (``named_parameters()``): the names are kept in the
        group's ``param_names``."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise TypeError(
                "optimizer parameters need to be organized in ordered collections, but the "
                "ordering of tensors in sets will change between runs. Please use a list instead."
            )
        else:
            param_group["params"] = list(params)
        tensors, names = [], []
        for p in param_group["params"]:
            if isinstance(p, tuple):
                names.append(p[0])
                tensors.append(p[1])
            else:
                tensors.append(p)
        param_group["params"] = tensors
        if names:
            if len(names) != len(tensors):
                raise ValueError(
                    "all optimizer params should be with/without names. Some param names are "
                    "missing"
                )
            param_group["param_names"] = names
        differentiable = self.defaults.get("differentiable", None)
        for p in tensors:
            if not isinstance(p, Tensor):
                raise TypeError(
                    f"optimizer can only optimize Tensors, but one of the params is {_typename(p)}"
                )
            if not differentiable and not (p.is_leaf or p.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(
                    "parameter group didn't specify a value of required optimization parameter "
                    f"{name}"
                )
            param_group.setdefault(name, default)
        if len({id(p) for p in tensors}) != len(tensors):
            warnings.warn(
                "optimizer contains a parameter group with duplicate parameters; "
                "in future, this will cause an error; "
                "see github.com/pytorch/pytorch/issues/40967 for more information",
                stacklevel=3,
            )
        seen = set()
        for g in self.param_groups:
            seen.update(id(p) for p in g["params"])
            if ("param_names" in param_group) != ("param_names" in g):
                which = "with names" if "param_names" in param_group else "without names"
                raise ValueError(
                    "all optimizer param groups should be with/without names. "
                    f"cannot add param group {which} to the optimizer"
                )
        if any(id(p) in seen for p in tensors):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    def zero_grad(self, set_to_none=True):
        """Resets the gradients of all optimized parameters (to None by default)."""
        for group in self.param_groups:
            for p in group["params"]:
                g = p.grad
                if g is None:
                    continue
                if set_to_none:
                    p.grad = None
                else:
                    if g.grad_fn is not None:
                        g.detach_()
                    else:
                        g.requires_grad_(False)
                    g.zero_()

    def step(self, closure=None):
        """One update of every parameter that has a gradient; returns ``closure()``'s loss
        (the closure runs with gradients enabled, the update without)."""
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
        raise NotImplementedError

    @staticmethod
    def _check_inplace(group, p):
        """torch runs a ``differentiable=True`` step with grad mode on, so updating a leaf that
        requires grad in place fails there (at the same point of the update)."""
        if group["differentiable"] and p.requires_grad and p.is_leaf:
            raise RuntimeError(
                "a leaf Variable that requires grad is being used in an in-place operation."
            )

    def _check_fused(self, fused, foreach, differentiable):
        """torch's checks of ``fused`` (made after the groups are built, as torch does)."""
        if fused:
            if differentiable:
                raise RuntimeError("`fused` does not support `differentiable`")
            if foreach:
                raise RuntimeError("`fused` and `foreach` cannot be `True` together.")

    def _patch_step_function(self):
        """Wraps the class's ``step`` (once per class) so that it runs the step hooks."""
        cls = type(self)
        if not getattr(cls.step, "hooked", False):
            cls.step = _hooked_step(cls.step)

    def register_step_pre_hook(self, hook):
        """``hook(optimizer, args, kwargs)`` runs before each ``step``; it may return
        ``(new_args, new_kwargs)``. Returns a handle whose ``remove()`` unregisters it."""
        return _handle(self._optimizer_step_pre_hooks, hook)

    def register_step_post_hook(self, hook):
        """``hook(optimizer, args, kwargs)`` runs after each ``step``."""
        return _handle(self._optimizer_step_post_hooks, hook)

    def register_state_dict_pre_hook(self, hook, prepend=False):
        """``hook(optimizer)`` runs before ``state_dict()`` builds the dict."""
        return _handle(self._optimizer_state_dict_pre_hooks, hook, prepend)

    def register_state_dict_post_hook(self, hook, prepend=False):
        """``hook(optimizer, state_dict)`` runs on the dict ``state_dict()`` returns; it may
        return a replacement."""
        return _handle(self._optimizer_state_dict_post_hooks, hook, prepend)

    def register_load_state_dict_pre_hook(self, hook, prepend=False):
        """``hook(optimizer, state_dict)`` runs before ``load_state_dict()`` loads; it may
        return the dict to load instead."""
        return _handle(self._optimizer_load_state_dict_pre_hooks, hook, prepend)

    def register_load_state_dict_post_hook(self, hook, prepend=False):
        """``hook(optimizer)`` runs after ``load_state_dict()``."""
        return _handle(self._optimizer_load_state_dict_post_hooks, hook, prepend)

    def state_dict(self):
        """{'state': {index: state}, 'param_groups': [group with params as indices]}."""
        for pre_hook in self._optimizer_state_dict_pre_hooks.values():
            pre_hook(self)
        state_dict = self._packed_state()
        for post_hook in self._optimizer_state_dict_post_hooks.values():
            result = post_hook(self, state_dict)
            if result is not None:
                state_dict = result
        return state_dict

    def _packed_state(self):
        mapping = {}
        start = 0
        groups = []
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            for i, p in enumerate(group["params"], start):
                mapping.setdefault(id(p), i)
            packed["params"] = [mapping[id(p)] for p in group["params"]]
            start += len(packed["params"])
            groups.append(packed)
        state = {(mapping[id(k)] if isinstance(k, Tensor) else k): v for k, v in self.state.items()}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict):
        """Restores hyperparameters and state saved by ``state_dict`` (state tensors move to
        their parameter's device)."""
        state_dict = state_dict.copy()
        for pre_hook in self._optimizer_load_state_dict_pre_hooks.values():
            result = pre_hook(self, state_dict)
            if result is not None:
                state_dict = result
        self._load(state_dict)
        for post_hook in self._optimizer_load_state_dict_post_hooks.values():
            post_hook(self)

    def _load(self, state_dict):
        state_dict = copy.deepcopy(state_dict)
        groups = self.param_groups
        saved = state_dict["param_groups"]
        if len(groups) != len(saved):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved, strict=True)):
            raise ValueError(
                "loaded state dict contains a parameter group that doesn't match the size of "
                "optimizer's group"
            )
        id_map, on_device = {}, {}
        for g, s in zip(groups, saved, strict=True):
            for old, p in zip(s["params"], g["params"], strict=True):
                id_map[old] = p
                on_device[old] = bool(s.get("capturable") or s.get("fused"))
        state = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                p = id_map[k]
                state[p] = {key: self._cast(p, key, val, on_device[k]) for key, val in v.items()}
            else:
                state[k] = v
        new_groups = []
        for g, s in zip(groups, saved, strict=True):
            s = dict(s)
            s["params"] = g["params"]
            if "param_names" in g and "param_names" not in s:
                s["param_names"] = g["param_names"]
            new_groups.append(s)
        self.state = state
        self.param_groups = new_groups

    @staticmethod
    def _cast(param, key, value, on_device=False):
        if not isinstance(value, Tensor):
            return value
        if key == "step":
            # torch: `step` follows the parameter only for capturable or fused optimizers
            if on_device:
                return value.to(dtype=_C.float32, device=param.device)
            return value
        if value.dtype.is_floating_point:
            return value.to(dtype=param.dtype, device=param.device)
        return value.to(device=param.device)

    def __getstate__(self):
        return {
            "defaults": self.defaults,
            "state": self.state,
            "param_groups": self.param_groups,
        }

    def __setstate__(self, state):
        self.__dict__.update(state)
        for name in _HOOK_DICTS:  # hooks are not pickled
            if name not in self.__dict__:
                setattr(self, name, OrderedDict())
        self._patch_step_function()
        self.defaults.setdefault("differentiable", False)

    def __repr__(self):
        s = self.__class__.__name__ + " ("
        for i, group in enumerate(self.param_groups):
            s += "\n"
            s += f"Parameter Group {i}\n"
            for key in sorted(group.keys()):
                if key != "params":
                    s += f"    {key}: {group[key]}\n"
        s += ")"
        return s
