"""``cudalite.amp.GradScaler``: torch's dynamic loss scaling for float16 training.

``scaler.scale(loss).backward()`` multiplies the loss by the scale so that small float16
gradients do not flush to zero; ``scaler.step(optimizer)`` unscales the gradients, checks
them for inf/NaN and skips the step when any is found; ``scaler.update()`` halves the scale
after a skipped step and doubles it after ``growth_interval`` clean ones. The check and the
update run on the device (the found-inf flag and the scale are tensors there): ``unscale_``
is one ``_amp_foreach_non_finite_check_and_unscale_`` launch per device and dtype of the
gradients, ``update`` one ``_amp_update_scale_`` launch; the one host sync per iteration is
in ``step``, as in torch, and none at all with a fused optimizer (which reads the scale and
the flag itself).
"""

from __future__ import annotations

import inspect
import warnings
from enum import Enum

from cudalite import _C

__all__ = ["GradScaler", "OptState"]


class OptState(Enum):
    READY = 0
    UNSCALED = 1
    STEPPED = 2


def _refresh_per_optimizer_state():
    return {"stage": OptState.READY, "found_inf_per_device": {}}


class GradScaler:
    """``GradScaler(device='cuda', init_scale=2.**16, growth_factor=2.0, backoff_factor=0.5,
    growth_interval=2000, enabled=True)``, as torch's ``torch.amp.GradScaler``."""

    def __init__(
        self,
        device: str = "cuda",
        init_scale: float = 2.0**16,
        growth_factor: float = 2.0,
        backoff_factor: float = 0.5,
        growth_interval: int = 2000,
        enabled: bool = True,
    ) -> None:
        self._device = device
        self._enabled = enabled
        if self._device == "cuda":
            from cudalite import cuda

            if enabled and not cuda.is_available():
                warnings.warn(
                    "torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling.",
                    stacklevel=2,
                )
                self._enabled = False
        if self._enabled:
            if growth_factor <= 1.0:
                raise AssertionError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise AssertionError("The backoff factor must be < 1.0.")
            self._init_scale = init_scale
            self._scale = None
            self._growth_factor = growth_factor
            self._backoff_factor = backoff_factor
            self._growth_interval = growth_interval
            self._init_growth_tracker = 0
            self._growth_tracker = None
            self._per_optimizer_states = {}

    def _check_scale_growth_tracker(self, funcname):
        fix = (
            "This may indicate your script did not use scaler.scale(loss or outputs) earlier "
            "in the iteration."
        )
        if self._scale is None:
            raise AssertionError(f"Attempted {funcname} but _scale is None.  " + fix)
        if self._growth_tracker is None:
            raise AssertionError(f"Attempted {funcname} but _growth_tracker is None.  " + fix)
        return self._scale, self._growth_tracker

    def _lazy_init_scale_growth_tracker(self, dev):
        import cudalite

        self._scale = cudalite.full((), self._init_scale, dtype=_C.float32, device=dev)
        self._growth_tracker = cudalite.full(
            (), self._init_growth_tracker, dtype=_C.int32, device=dev
        )

    def _state(self, optimizer):
        st = self._per_optimizer_states.get(id(optimizer))
        if st is None:
            st = self._per_optimizer_states[id(optimizer)] = _refresh_per_optimizer_state()
        return st

    def scale(self, outputs):
        """``outputs`` (a tensor, or tensors in lists/tuples) multiplied by the scale."""
        if not self._enabled:
            return outputs
        if isinstance(outputs, _C.Tensor):
            if self._scale is None:
                self._lazy_init_scale_growth_tracker(outputs.device)
            return outputs * self._scale.to(device=outputs.device, non_blocking=True)
        if isinstance(outputs, (list, tuple)):
            out = [self.scale(o) for o in outputs]
            return type(outputs)(out) if isinstance(outputs, tuple) else out
        raise ValueError("outputs must be a Tensor or an iterable of Tensors")

    def _unscale_grads_(self, optimizer, inv_scale, found_inf, allow_fp16):
        groups = {}
        for group in optimizer.param_groups:
            for param in group["params"]:
                if param.grad is None:
                    continue
                if (not allow_fp16) and param.grad.dtype == _C.float16:
                    raise ValueError("Attempting to unscale FP16 gradients.")
                groups.setdefault((param.grad.device, param.grad.dtype), []).append(param.grad)
        # one _amp_foreach_non_finite_check_and_unscale_ launch per (device, dtype), with the
        # scale's and the flag's copies on each device made once (torch's
        # _MultiDeviceReplicator)
        per_device, inv_per_device = {}, {}
        for (device, _dtype), grads in groups.items():
            flag = per_device.get(device)
            if flag is None:
                flag = per_device[device] = found_inf.to(device)
                inv_per_device[device] = inv_scale.to(device)
            _C._amp_foreach_non_finite_check_and_unscale_(grads, flag, inv_per_device[device])
        return per_device

    def unscale_(self, optimizer):
        """Divides the optimizer's gradients by the scale (once per step)."""
        if not self._enabled:
            return
        self._check_scale_growth_tracker("unscale_")
        state = self._state(optimizer)
        if state["stage"] is OptState.UNSCALED:
            raise RuntimeError(
                "unscale_() has already been called on this optimizer since the last update()."
            )
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        import cudalite

        inv_scale = self._scale.double().reciprocal().float()
        found_inf = cudalite.full((), 0.0, dtype=_C.float32, device=self._scale.device)
        state["found_inf_per_device"] = self._unscale_grads_(optimizer, inv_scale, found_inf, False)
        state["stage"] = OptState.UNSCALED

    def step(self, optimizer, *args, **kwargs):
        """Unscales if needed, then runs ``optimizer.step()`` unless a gradient held inf or
        NaN; returns what ``optimizer.step`` returned, or None when skipped."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        self._check_scale_growth_tracker("step")
        state = self._state(optimizer)
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if getattr(optimizer, "_step_supports_amp_scaling", False):
            return self._fused_step(optimizer, state, args, kwargs)
        if state["stage"] is OptState.READY:
            self.unscale_(optimizer)
        if not state["found_inf_per_device"]:
            raise AssertionError("No inf checks were recorded for this optimizer.")
        retval = None
        if not sum(v.item() for v in state["found_inf_per_device"].values()):
            retval = optimizer.step(*args, **kwargs)
        state["stage"] = OptState.STEPPED
        return retval

    def _fused_step(self, optimizer, state, args, kwargs):
        """A fused optimizer unscales and skips by itself: it gets the scale and the summed
        found-inf flag as ``optimizer.grad_scale`` / ``optimizer.found_inf`` (torch's
        protocol), so the step makes no host sync at all."""
        if "grad_scaler" in inspect.signature(optimizer.step).parameters:
            warnings.warn(
                "GradScaler is going to stop passing itself as a keyword argument to the passed "
                "optimizer. In the near future GradScaler registers `grad_scale: Tensor` and "
                "`found_inf: Tensor` to the passed optimizer and let the optimizer use them "
                "directly.",
                FutureWarning,
                stacklevel=3,
            )
            kwargs = dict(kwargs, grad_scaler=self)
            retval = optimizer.step(*args, **kwargs)
            state["stage"] = OptState.STEPPED
            return retval
        if state["stage"] is OptState.READY:
            self._check_inf_per_device(optimizer)
        scaler = self._scale
        # (torch's sum: 0 when no parameter had a gradient)
        found_inf = sum(
            t.to(scaler.device, non_blocking=True) for t in state["found_inf_per_device"].values()
        )
        optimizer.grad_scale = (
            getattr(optimizer, "grad_scale", None)
            if state["stage"] is OptState.UNSCALED
            else scaler * getattr(optimizer, "grad_scale", 1)
        )
        optimizer.found_inf = found_inf
        retval = optimizer.step(*args, **kwargs)
        state["stage"] = OptState.STEPPED
        del optimizer.grad_scale
        del optimizer.found_inf
        return retval

    def _check_inf_per_device(self, optimizer):
        """Checks the gradients for inf/NaN without unscaling them (an inverse scale of 1)."""
        import cudalite

        scale, _ = self._check_scale_growth_tracker("_check_inf_per_device")
        dummy_inv_scale = cudalite.full((), 1.0, dtype=_C.float32, device=scale.device)
        found_inf = cudalite.full((), 0.0, dtype=_C.float32, device=scale.device)
        state = self._state(optimizer)
        state["found_inf_per_device"] = self._unscale_grads_(
            optimizer, dummy_inv_scale, found_inf, True
        )
        return state["found_inf_per_device"]

    def _found_inf_per_device(self, optimizer):
        return self._state(optimizer)["found_inf_per_device"]

    def update(self, new_scale=None):
        """Updates the scale: after a skipped step it backs off, after ``growth_interval``
        clean ones it grows; or sets ``new_scale`` (a number or a one-element tensor)."""
        if not self._enabled:
            return
        scale, tracker = self._check_scale_growth_tracker("update")
        if new_scale is not None:
            if isinstance(new_scale, float):
                self._scale.fill_(new_scale)
            else:
                reason = (
                    "new_scale should be a float or a 1-element torch.cuda.FloatTensor or "
                    "torch.FloatTensor with requires_grad=False."
                )
                if not (
                    isinstance(new_scale, _C.Tensor)
                    and new_scale.numel() == 1
                    and not new_scale.requires_grad
                ):
                    raise AssertionError(reason)
                self._scale.copy_(new_scale)
        else:
            found_infs = [
                f.to(device=scale.device, non_blocking=True)
                for st in self._per_optimizer_states.values()
                for f in st["found_inf_per_device"].values()
            ]
            if len(found_infs) == 0:
                raise AssertionError("No inf checks were recorded prior to update.")
            found_inf = found_infs[0]
            for f in found_infs[1:]:
                found_inf = found_inf + f
            _C._amp_update_scale_(
                scale,
                tracker,
                found_inf,
                self._growth_factor,
                self._backoff_factor,
                self._growth_interval,
            )
        self._per_optimizer_states = {}

    def get_scale(self):
        """The scale as a Python float (syncs); 1.0 when disabled."""
        if not self._enabled:
            return 1.0
        return self._init_scale if self._scale is None else self._scale.item()

    def get_growth_factor(self):
        return self._growth_factor

    def set_growth_factor(self, new_factor):
        self._growth_factor = new_factor

    def get_backoff_factor(self):
        return self._backoff_factor

    def set_backoff_factor(self, new_factor):
        self._backoff_factor = new_factor

    def get_growth_interval(self):
        return self._growth_interval

    def set_growth_interval(self, new_interval):
        self._growth_interval = new_interval

    def _get_growth_tracker(self):
        if not self._enabled:
            return 0
        if self._growth_tracker is None:
            return self._init_growth_tracker
        return self._growth_tracker.item()

    def is_enabled(self):
        return self._enabled

    def state_dict(self):
        """``{scale, growth_factor, backoff_factor, growth_interval, _growth_tracker}``, or
        an empty dict when disabled."""
        if not self._enabled:
            return {}
        return {
            "scale": self.get_scale(),
            "growth_factor": self._growth_factor,
            "backoff_factor": self._backoff_factor,
            "growth_interval": self._growth_interval,
            "_growth_tracker": self._get_growth_tracker(),
        }

    def load_state_dict(self, state_dict):
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError(
                "The source state dict is empty, possibly because it was saved from a "
                "disabled instance of GradScaler."
            )
        self._init_scale = state_dict["scale"]
        if self._scale is not None:
            self._scale.fill_(state_dict["scale"])
        self._growth_factor = state_dict["growth_factor"]
        self._backoff_factor = state_dict["backoff_factor"]
        self._growth_interval = state_dict["growth_interval"]
        self._init_growth_tracker = state_dict["_growth_tracker"]
        if self._growth_tracker is not None:
            self._growth_tracker.fill_(state_dict["_growth_tracker"])

    def __getstate__(self):
        state = self.__dict__.copy()
        if self._enabled:
            if len(self._per_optimizer_states) != 0:
                raise AssertionError(
                    "A GradScaler instance may only be pickled at the beginning "
                    "of an iteration, or at the end after scaler.update()."
                )
            state["_init_scale"] = self.get_scale()
            state["_init_growth_tracker"] = self._get_growth_tracker()
            state["_scale"] = None
            state["_growth_tracker"] = None
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
