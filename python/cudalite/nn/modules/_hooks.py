"""nn.Module's forward hooks: torch's ``_call_impl`` (pre-hooks, forward, hooks, the
``with_kwargs`` and ``always_call`` flags) and torch.utils.hooks.RemovableHandle."""

from __future__ import annotations

import warnings
import weakref
from collections import OrderedDict

__all__ = ["RemovableHandle", "HOOK_DICTS", "add_hook", "call_with_hooks"]

HOOK_DICTS = (
    "_forward_hooks",
    "_forward_hooks_with_kwargs",
    "_forward_hooks_always_called",
    "_forward_pre_hooks",
    "_forward_pre_hooks_with_kwargs",
)


class RemovableHandle:
    """Removes a hook from its dict (and its flags from the extra dicts), as
    torch.utils.hooks.RemovableHandle; usable as a context manager."""

    next_id = 0

    def __init__(self, hooks_dict, *, extra_dict=None):
        self.hooks_dict_ref = weakref.ref(hooks_dict)
        self.id = RemovableHandle.next_id
        RemovableHandle.next_id += 1
        if isinstance(extra_dict, dict):
            extra_dict = [extra_dict]
        self.extra_dict_ref = tuple(weakref.ref(d) for d in extra_dict or ())

    def remove(self):
        for ref in (self.hooks_dict_ref, *self.extra_dict_ref):
            d = ref()
            if d is not None:
                d.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


def _flags(module, name):
    # modules pickled before a flag dict existed have none
    return module.__dict__.get(name) or ()


def call_with_hooks(self, args, kwargs):
    """torch's ``_call_impl``: pre-hooks, forward, forward hooks; when any of these raises,
    the forward hooks registered with ``always_call`` that did not run yet still run."""
    result = None
    called = set()
    always = _flags(self, "_forward_hooks_always_called")
    try:
        pre_kw = _flags(self, "_forward_pre_hooks_with_kwargs")
        for hook_id, hook in list(self._forward_pre_hooks.items()):
            if hook_id in pre_kw:
                r = hook(self, args, kwargs)
                if r is not None:
                    if isinstance(r, tuple) and len(r) == 2:
                        args, kwargs = r
                    else:
                        raise RuntimeError(
                            "forward pre-hook must return None or a tuple of "
                            f"(new_args, new_kwargs), but got {r}."
                        )
            else:
                r = hook(self, args)
                if r is not None:
                    args = r if isinstance(r, tuple) else (r,)
        result = self.forward(*args, **kwargs)
        with_kw = _flags(self, "_forward_hooks_with_kwargs")
        for hook_id, hook in list(self._forward_hooks.items()):
            if hook_id in always:
                called.add(hook_id)
            if hook_id in with_kw:
                r = hook(self, args, kwargs, result)
            else:
                r = hook(self, args, result)
            if r is not None:
                result = r
        return result
    except Exception:
        with_kw = _flags(self, "_forward_hooks_with_kwargs")
        for hook_id, hook in list(self._forward_hooks.items()):
            if hook_id not in always or hook_id in called:
                continue
            try:
                if hook_id in with_kw:
                    r = hook(self, args, kwargs, result)
                else:
                    r = hook(self, args, result)
                if r is not None:
                    result = r
            except Exception as e:
                warnings.warn(
                    "module forward hook with ``always_call=True`` raised an exception "
                    f"that was silenced as another error was raised in forward: {e}",
                    stacklevel=3,
                )
        raise


def add_hook(module, name, hook, prepend, flags):
    """Registers ``hook`` in ``module.<name>`` and, where on, in the flag dicts ``flags``
    ([(dict name, on)]); ``prepend`` puts it first, as torch's ``move_to_end``."""
    d = module.__dict__
    for key in (name, *(k for k, _ in flags)):
        if not isinstance(d.get(key), OrderedDict):  # old pickles: a plain dict or none
            d[key] = OrderedDict(d.get(key) or ())
    hooks = d[name]
    handle = RemovableHandle(hooks, extra_dict=[d[k] for k, _ in flags])
    hooks[handle.id] = hook
    for key, on in flags:
        if on:
            d[key][handle.id] = True
    if prepend:
        hooks.move_to_end(handle.id, last=False)
    return handle
