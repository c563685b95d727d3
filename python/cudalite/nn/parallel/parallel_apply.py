"""``parallel_apply``: calls each module on its inputs in a thread of its own, on its GPU
(and that GPU's current stream), with the caller's grad mode."""

from __future__ import annotations

import threading

import cudalite
from cudalite.cuda._device import _get_device_index

__all__ = ["parallel_apply"]


def _first_device(obj):
    if isinstance(obj, cudalite.Tensor):
        return obj.get_device() if obj.is_cuda else None
    if isinstance(obj, (list, tuple)):
        for x in obj:
            d = _first_device(x)
            if d is not None:
                return d
    if isinstance(obj, dict):
        return _first_device(list(obj.values()))
    return None


def parallel_apply(modules, inputs, kwargs_tup=None, devices=None):
    """[modules[i](*inputs[i], **kwargs_tup[i])] computed concurrently, one thread per GPU."""
    if len(modules) != len(inputs):
        raise AssertionError(
            f"The number of modules {len(modules)} is not equal to the number of inputs "
            f"{len(inputs)}"
        )
    if kwargs_tup is not None:
        if len(modules) != len(kwargs_tup):
            raise AssertionError("The number of modules and kwargs_tup must be equal")
    else:
        kwargs_tup = tuple({} for _ in modules)
    if devices is not None:
        if len(modules) != len(devices):
            raise AssertionError("The number of modules and devices must be equal")
    else:
        devices = [None] * len(modules)
    devices = [_get_device_index(x, True) if x is not None else None for x in devices]
    streams = [cudalite.cuda.current_stream(d) if d is not None else None for d in devices]
    results: dict[int, object] = {}
    grad_enabled = cudalite.is_grad_enabled()

    def worker(i, module, inp, kwargs, device, stream):
        cudalite.set_grad_enabled(grad_enabled)
        if device is None:
            device = _first_device(inp)
            if device is None:
                results[i] = RuntimeError(
                    f"in replica {i}, no device was provided and no tensor input was found; "
                    "device cannot be resolved"
                )
                return
        if stream is None:
            stream = cudalite.cuda.current_stream(device)
        try:
            with cudalite.cuda.device(device), cudalite.cuda.stream(stream):
                if not isinstance(inp, (list, tuple)):
                    inp = (inp,)
                results[i] = module(*inp, **kwargs)
        except Exception as e:  # re-raised in the caller's thread
            results[i] = e

    if len(modules) > 1:
        threads = [
            threading.Thread(target=worker, args=(i, m, x, k, d, s))
            for i, (m, x, k, d, s) in enumerate(
                zip(modules, inputs, kwargs_tup, devices, streams, strict=True)
            )
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    else:
        worker(0, modules[0], inputs[0], kwargs_tup[0], devices[0], streams[0])
    outputs = []
    for i in range(len(inputs)):
        out = results[i]
        if isinstance(out, Exception):
            raise out
        outputs.append(out)
    return outputs
