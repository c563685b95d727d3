"""``optim.Optimizer``: parameter groups, per-parameter state, zero_grad and state_dict, as
in torch."""

from __future__ import annotations

import copy
import warnings
from collections import defaultdict

from cudalite import _C
from cudalite._C import Tensor
from cudalite.autograd import enable_grad

__all__ = ["Optimizer", "required"]


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

    def state_dict(self):
        """{'state': {index: state}, 'param_groups': [group with params as indices]}."""
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
