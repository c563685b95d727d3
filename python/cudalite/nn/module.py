"""``nn.Module``: parameters, buffers and submodules registered by attribute assignment,
with torch's traversal, state_dict, device/dtype moves, modes and printing."""

from __future__ import annotations

import warnings
from collections import OrderedDict, namedtuple

from cudalite import _C, _memory_format
from cudalite._C import Tensor
from cudalite.autograd import no_grad
from cudalite.nn.modules import _hooks
from cudalite.nn.parameter import Parameter

__all__ = ["Module"]


def typename(obj):
    """torch.typename: 'cudalite.FloatTensor' for tensors, the qualified type otherwise."""
    if isinstance(obj, Tensor):
        return obj.type()
    module = getattr(obj, "__module__", "") or ""
    qualname = getattr(obj, "__qualname__", None) or type(obj).__qualname__
    if not hasattr(obj, "__qualname__"):
        module = type(obj).__module__
    return qualname if module in ("", "builtins") else f"{module}.{qualname}"


def _addindent(s, n):
    lines = s.split("\n")
    if len(lines) == 1:
        return s
    first = lines.pop(0)
    return first + "\n" + "\n".join((n * " ") + ln if ln.strip() else "" for ln in lines)


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    __slots__ = ()

    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


_STATE_DICT_ARGS_MSG = (
    "Positional args are being deprecated, use kwargs instead. Refer to "
    "https://pytorch.org/docs/main/generated/torch.nn.Module.html#torch.nn.Module.state_dict"
    " for details."
)


class Module:
    """Base class for all neural network modules."""

    training: bool
    call_super_init = False
    _version = 1

    def __init__(self, *args, **kwargs):
        if kwargs:
            raise TypeError(
                f"{type(self).__name__}.__init__() got an unexpected keyword argument "
                f"'{next(iter(kwargs))}'"
            )
        if args:
            raise TypeError(
                f"{type(self).__name__}.__init__() takes 1 positional argument but "
                f"{len(args) + 1} were given"
            )
        d = self.__dict__
        d["training"] = True
        d["_parameters"] = {}
        d["_buffers"] = {}
        d["_non_persistent_buffers_set"] = set()
        d["_modules"] = {}
        for name in _hooks.HOOK_DICTS:
            d[name] = OrderedDict()

    def forward(self, *input):
        raise NotImplementedError(
            f'Module [{type(self).__name__}] is missing the required "forward" function'
        )

    def __call__(self, *args, **kwargs):
        if self._forward_pre_hooks or self._forward_hooks:
            return _hooks.call_with_hooks(self, args, kwargs)
        return self.forward(*args, **kwargs)

    def register_forward_pre_hook(self, hook, *, prepend=False, with_kwargs=False):
        """``hook(module, args)`` runs before forward and may return replacement args; with
        ``with_kwargs``, ``hook(module, args, kwargs)`` may return ``(args, kwargs)``."""
        flags = [("_forward_pre_hooks_with_kwargs", with_kwargs)]
        return _hooks.add_hook(self, "_forward_pre_hooks", hook, prepend, flags)

    def register_forward_hook(self, hook, *, prepend=False, with_kwargs=False, always_call=False):
        """``hook(module, args, output)`` (with ``with_kwargs``: ``hook(module, args, kwargs,
        output)``) runs after forward and may return a new output; with ``always_call`` it
        also runs when forward raises."""
        flags = [
            ("_forward_hooks_with_kwargs", with_kwargs),
            ("_forward_hooks_always_called", always_call),
        ]
        return _hooks.add_hook(self, "_forward_hooks", hook, prepend, flags)

    # ---- registration ----

    def register_buffer(self, name, tensor, persistent=True):
        """Registers a tensor that is part of the module's state but not a parameter."""
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        self._check_name(name, "buffer")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(
                f"cannot assign '{typename(tensor)}' object to buffer '{name}' "
                "(cudalite Tensor or None required)"
            )
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def register_parameter(self, name, param):
        """Adds a parameter (or None) under ``name``."""
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        self._check_name(name, "parameter")
        if param is None:
            self._parameters[name] = None
            return
        if not isinstance(param, Parameter):
            raise TypeError(
                f"cannot assign '{typename(param)}' object to parameter '{name}' "
                "(cudalite.nn.Parameter or None required)"
            )
        if param.grad_fn is not None:
            raise ValueError(
                f"Cannot assign non-leaf Tensor to parameter '{name}'. Model parameters must "
                f"be created explicitly. To express '{name}' as a function of another Tensor, "
                "compute the value in the forward() method."
            )
        self._parameters[name] = param

    def _check_name(self, name, kind):
        if not isinstance(name, str):
            raise TypeError(f"{kind} name should be a string. Got {typename(name)}")
        if "." in name:
            raise KeyError(f'{kind} name can\'t contain "."')
        if name == "":
            raise KeyError(f'{kind} name can\'t be empty string ""')
        store = self._parameters if kind == "parameter" else self._buffers
        if hasattr(self, name) and name not in store:
            raise KeyError(f"attribute '{name}' already exists")

    def add_module(self, name, module):
        """Adds a child module (or None) under ``name``."""
        if not isinstance(module, Module) and module is not None:
            raise TypeError(f"{typename(module)} is not a Module subclass")
        if not isinstance(name, str):
            raise TypeError(f"module name should be a string. Got {typename(name)}")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        if "." in name:
            raise KeyError(f'module name can\'t contain ".", got: {name}')
        if name == "":
            raise KeyError('module name can\'t be empty string ""')
        self._modules[name] = module

    register_module = add_module

    def __getattr__(self, name):
        d = self.__dict__
        if "_parameters" in d and name in d["_parameters"]:
            return d["_parameters"][name]
        if "_buffers" in d and name in d["_buffers"]:
            return d["_buffers"][name]
        if "_modules" in d and name in d["_modules"]:
            return d["_modules"][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name, value):
        d = self.__dict__
        params = d.get("_parameters")

        def remove_from(*stores):
            for s in stores:
                if name in s:
                    if isinstance(s, dict):
                        del s[name]
                    else:
                        s.discard(name)

        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            remove_from(d, self._buffers, self._modules, self._non_persistent_buffers_set)
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{typename(value)}' as parameter '{name}' "
                    "(cudalite.nn.Parameter or None expected)"
                )
            self.register_parameter(name, value)
        else:
            modules = d.get("_modules")
            if isinstance(value, Module):
                if modules is None:
                    raise AttributeError("cannot assign module before Module.__init__() call")
                remove_from(d, self._parameters, self._buffers, self._non_persistent_buffers_set)
                modules[name] = value
            elif modules is not None and name in modules:
                if value is not None:
                    raise TypeError(
                        f"cannot assign '{typename(value)}' as child module '{name}' "
                        "(cudalite.nn.Module or None expected)"
                    )
                modules[name] = value
            else:
                buffers = d.get("_buffers")
                if buffers is not None and name in buffers:
                    if value is not None and not isinstance(value, Tensor):
                        raise TypeError(
                            f"cannot assign '{typename(value)}' as buffer '{name}' "
                            "(cudalite.Tensor or None expected)"
                        )
                    buffers[name] = value
                else:
                    object.__setattr__(self, name, value)

    def __delattr__(self, name):
        for store in ("_parameters", "_buffers", "_modules"):
            s = self.__dict__.get(store)
            if s is not None and name in s:
                del s[name]
                self._non_persistent_buffers_set.discard(name)
                return
        object.__delattr__(self, name)

    def __dir__(self):
        keys = list(super().__dir__())
        keys += list(self._parameters) + list(self._buffers) + list(self._modules)
        return sorted(k for k in set(keys) if not k[0].isdigit())

    # ---- traversal ----

    def _named_members(self, get_members, prefix="", recurse=True, remove_duplicate=True):
        memo = set()
        modules = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate)
        if not recurse:
            modules = [(prefix, self)]
        for module_prefix, module in modules:
            for k, v in get_members(module):
                if v is None or (remove_duplicate and id(v) in memo):
                    continue
                if remove_duplicate:
                    memo.add(id(v))
                yield (module_prefix + ("." if module_prefix else "") + k, v)

    def parameters(self, recurse=True):
        """The module's parameters (and, with recurse, its submodules')."""
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        """(name, parameter) pairs, e.g. ('0.weight', ...)."""
        yield from self._named_members(
            lambda m: m._parameters.items(), prefix, recurse, remove_duplicate
        )

    def buffers(self, recurse=True):
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
        yield from self._named_members(
            lambda m: m._buffers.items(), prefix, recurse, remove_duplicate
        )

    def children(self):
        for _, m in self.named_children():
            yield m

    def named_children(self):
        memo = set()
        for name, m in self._modules.items():
            if m is not None and id(m) not in memo:
                memo.add(id(m))
                yield name, m

    def modules(self, remove_duplicate=True):
        for _, m in self.named_modules(remove_duplicate=remove_duplicate):
            yield m

    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        if memo is None:
            memo = set()
        if id(self) in memo:
            return
        if remove_duplicate:
            memo.add(id(self))
        yield prefix, self
        for name, m in self._modules.items():
            if m is None:
                continue
            sub = prefix + ("." if prefix else "") + name
            yield from m.named_modules(memo, sub, remove_duplicate)

    def get_submodule(self, target):
        if target == "":
            return self
        mod = self
        for item in target.split("."):
            if not hasattr(mod, item):
                raise AttributeError(mod._get_name() + " has no attribute `" + item + "`")
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                raise AttributeError("`" + item + "` is not an nn.Module")
        return mod

    def get_parameter(self, target):
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, name):
            raise AttributeError(mod._get_name() + " has no attribute `" + name + "`")
        p = getattr(mod, name)
        if not isinstance(p, Parameter):
            raise AttributeError("`" + name + "` is not an nn.Parameter")
        return p

    def apply(self, fn):
        """Calls ``fn`` on every submodule (children first), then on self."""
        for m in self.children():
            m.apply(fn)
        fn(self)
        return self

    # ---- state ----

    def state_dict(self, *args, destination=None, prefix="", keep_vars=False):
        """An OrderedDict of parameters and persistent buffers, keyed like '0.weight'.
        ``destination``, ``prefix`` and ``keep_vars`` may still be given by position (with
        torch's FutureWarning)."""
        if args:
            warnings.warn(_STATE_DICT_ARGS_MSG, FutureWarning, stacklevel=2)
            if destination is None:
                destination = args[0]
            if len(args) > 1 and prefix == "":
                prefix = args[1]
            if len(args) > 2 and keep_vars is False:
                keep_vars = args[2]
        if destination is None:
            destination = OrderedDict()
        for name, p in self._parameters.items():
            if p is not None:
                destination[prefix + name] = p if keep_vars else p.detach()
        for name, b in self._buffers.items():
            if b is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = b if keep_vars else b.detach()
        for name, m in self._modules.items():
            if m is not None:
                m.state_dict(
                    destination=destination, prefix=prefix + name + ".", keep_vars=keep_vars
                )
        return destination

    def _load_from_state_dict(
        self, state_dict, prefix, strict, missing, unexpected, errors, assign
    ):
        persistent = {
            k: v for k, v in self._buffers.items() if k not in self._non_persistent_buffers_set
        }
        local = {k: v for k, v in {**self._parameters, **persistent}.items() if v is not None}
        for name, param in local.items():
            key = prefix + name
            if key not in state_dict:
                if strict:
                    missing.append(key)
                continue
            value = state_dict[key]
            if not isinstance(value, Tensor):
                errors.append(
                    f'While copying the parameter named "{key}", expected cudalite.Tensor or '
                    f"Tensor-like object from checkpoint but received {type(value)}"
                )
                continue
            if tuple(value.shape) != tuple(param.shape):
                errors.append(
                    f"size mismatch for {key}: copying a param with shape {value.shape} from "
                    f"checkpoint, the shape in current model is {param.shape}."
                )
                continue
            try:
                with no_grad():
                    if assign:
                        new = (
                            value
                            if not isinstance(param, Parameter)
                            else Parameter(value, param.requires_grad)
                        )
                        setattr(self, name, new)
                    else:
                        param.copy_(value)
            except Exception as ex:  # torch reports the failure and carries on
                errors.append(
                    f'While copying the parameter named "{key}", whose dimensions in the model '
                    f"are {param.shape} and whose dimensions in the checkpoint are "
                    f"{value.shape}, an exception occurred : {ex.args}."
                )
        if strict:
            for key in state_dict:
                if key.startswith(prefix):
                    first = key[len(prefix) :].split(".", 1)[0]
                    if first not in self._modules and first not in local:
                        unexpected.append(key)

    def load_state_dict(self, state_dict, strict=True, assign=False):
        """Copies parameters and buffers from ``state_dict``; with ``strict``, the keys must
        match exactly (torch's error text lists the missing and unexpected ones)."""
        if not hasattr(state_dict, "keys") or not hasattr(state_dict, "__getitem__"):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing, unexpected, errors = [], [], []

        def load(module, local, prefix=""):
            # keys are always collected; strict only decides whether they are an error
            module._load_from_state_dict(local, prefix, True, missing, unexpected, errors, assign)
            for name, child in module._modules.items():
                if child is not None:
                    child_prefix = prefix + name + "."
                    sub = {k: v for k, v in local.items() if k.startswith(child_prefix)}
                    load(child, sub, child_prefix)

        load(self, dict(state_dict))
        if strict:
            if unexpected:
                keys = ", ".join(f'"{k}"' for k in unexpected)
                errors.insert(0, f"Unexpected key(s) in state_dict: {keys}. ")
            if missing:
                keys = ", ".join(f'"{k}"' for k in missing)
                errors.insert(0, f"Missing key(s) in state_dict: {keys}. ")
        if errors:
            raise RuntimeError(
                f"Error(s) in loading state_dict for {type(self).__name__}:\n\t"
                + "\n\t".join(errors)
            )
        return _IncompatibleKeys(missing, unexpected)

    # ---- devices, dtypes, modes ----

    def _apply(self, fn, recurse=True):
        if recurse:
            for m in self.children():
                m._apply(fn)
        for p in self._parameters.values():
            if p is None:
                continue
            with no_grad():
                applied = fn(p)
            # In place, like torch: the Parameter objects (and optimizers holding them) stay.
            p.data = applied
            g = p.grad
            if g is not None:
                with no_grad():
                    g.data = fn(g)
        for key, b in self._buffers.items():
            if b is not None:
                self._buffers[key] = fn(b)
        return self

    def to(self, *args, **kwargs):
        """Moves and/or casts parameters and buffers in place (floating point ones only get
        the dtype); returns self."""
        from cudalite._tensor import _parse_to

        device, dtype, non_blocking, _, fmt = _parse_to(args, dict(kwargs))
        if dtype is not None and not dtype.is_floating_point:
            raise TypeError(
                "nn.Module.to only accepts floating point or complex dtypes, but got desired "
                f"dtype={dtype}"
            )

        def convert(t):
            dt = dtype if t.dtype.is_floating_point else None
            out = _C._to(t, device if device is not None else t.device, dt, non_blocking, False)
            if fmt is not None and t.dim() in (4, 5):  # torch: the format is for 4-D/5-D ones
                out = _memory_format.apply(out, fmt, "to")
            return out

        return self._apply(convert)

    def cuda(self, device=None):
        return self._apply(lambda t: t.cuda(device))

    def cpu(self):
        return self._apply(lambda t: t.cpu())

    def type(self, dst_type):
        return self._apply(lambda t: t.type(dst_type))

    def _cast(self, dtype):
        return self._apply(lambda t: t.to(dtype) if t.dtype.is_floating_point else t)

    def float(self):
        return self._cast(_C.float32)

    def double(self):
        return self._cast(_C.float64)

    def half(self):
        return self._cast(_C.float16)

    def bfloat16(self):
        return self._cast(_C.bfloat16)

    def train(self, mode=True):
        """Sets training mode on this module and its submodules."""
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for m in self.children():
            m.train(mode)
        return self

    def eval(self):
        return self.train(False)

    def requires_grad_(self, requires_grad=True):
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none=True):
        """Resets the gradients of all parameters (to None by default)."""
        for p in self.parameters():
            if p.grad is not None:
                if set_to_none:
                    p.grad = None
                else:
                    g = p.grad
                    if g.grad_fn is not None:
                        g.detach_()
                    else:
                        g.requires_grad_(False)
                    g.zero_()

    # ---- printing ----

    def _get_name(self):
        return self.__class__.__name__

    def extra_repr(self):
        return ""

    def __repr__(self):
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [f"({key}): " + _addindent(repr(m), 2) for key, m in self._modules.items()]
        lines = extra_lines + child_lines
        main = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                main += extra_lines[0]
            else:
                main += "\n  " + "\n  ".join(lines) + "\n"
        return main + ")"
