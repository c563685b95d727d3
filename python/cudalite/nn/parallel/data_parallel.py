"""``DataParallel``: one process, several GPUs. Each forward scatters the batch over the
GPUs, replicates the module (a coalesced broadcast of its parameters and buffers), runs
the replicas in one thread per GPU and gathers the outputs on ``output_device``; backward
sums the replicas' gradients into the original parameters (on ``device_ids[0]``)."""

from __future__ import annotations

import itertools
import operator
import warnings

import cudalite
from cudalite.cuda._device import _get_device_index
from cudalite.nn.module import Module
from cudalite.nn.parallel.parallel_apply import parallel_apply
from cudalite.nn.parallel.replicate import replicate
from cudalite.nn.parallel.scatter_gather import gather, scatter_kwargs

__all__ = ["DataParallel", "data_parallel"]


def _check_balance(device_ids) -> None:
    imbalance_warn = """
    There is an imbalance between your GPUs. You may want to exclude GPU {} which
    has less than 75% of the memory or cores of GPU {}. You can do so by setting
    the device_ids argument to DataParallel, or by setting the CUDA_VISIBLE_DEVICES
    environment variable."""
    device_ids = [_get_device_index(x, True) for x in device_ids]
    props = [cudalite.cuda.get_device_properties(d) for d in device_ids]

    def warn_imbalance(get_prop) -> bool:
        values = [get_prop(p) for p in props]
        min_pos, min_val = min(enumerate(values), key=operator.itemgetter(1))
        max_pos, max_val = max(enumerate(values), key=operator.itemgetter(1))
        if min_val / max_val < 0.75:
            warnings.warn(
                imbalance_warn.format(device_ids[min_pos], device_ids[max_pos]), stacklevel=3
            )
            return True
        return False

    if warn_imbalance(lambda p: p.total_memory):
        return
    warn_imbalance(lambda p: p.multi_processor_count)


class DataParallel(Module):
    """torch.nn.DataParallel(module, device_ids=None, output_device=None, dim=0)."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        if not cudalite.cuda.is_available():
            self.module = module
            self.device_ids = []
            return
        if device_ids is None:
            device_ids = list(range(cudalite.cuda.device_count()))
        if output_device is None:
            output_device = device_ids[0]
        self.dim = dim
        self.module = module
        self.device_ids = [_get_device_index(x, True) for x in device_ids]
        self.output_device = _get_device_index(output_device, True)
        self.src_device_obj = cudalite.device("cuda", self.device_ids[0])
        if len(self.device_ids) > 1:
            _check_balance(self.device_ids)
        if len(self.device_ids) == 1:
            self.module.to(self.src_device_obj)

    def forward(self, *inputs, **kwargs):
        if not self.device_ids:
            return self.module(*inputs, **kwargs)
        for t in itertools.chain(self.module.parameters(), self.module.buffers()):
            if t.device != self.src_device_obj:
                raise RuntimeError(
                    "module must have its parameters and buffers on device "
                    f"{self.src_device_obj} (device_ids[0]) but found one of them on "
                    f"device: {t.device}"
                )
        inputs, module_kwargs = self.scatter(inputs, kwargs, self.device_ids)
        if not inputs and not module_kwargs:
            inputs = ((),)
            module_kwargs = ({},)
        if len(self.device_ids) == 1:
            return self.module(*inputs[0], **module_kwargs[0])
        replicas = self.replicate(self.module, self.device_ids[: len(inputs)])
        outputs = self.parallel_apply(replicas, inputs, module_kwargs)
        return self.gather(outputs, self.output_device)

    def replicate(self, module, device_ids):
        return replicate(module, device_ids, not cudalite.is_grad_enabled())

    def scatter(self, inputs, kwargs, device_ids):
        return scatter_kwargs(inputs, kwargs, device_ids, dim=self.dim)

    def parallel_apply(self, replicas, inputs, kwargs):
        return parallel_apply(replicas, inputs, kwargs, self.device_ids[: len(replicas)])

    def gather(self, outputs, output_device):
        return gather(outputs, output_device, dim=self.dim)


def data_parallel(module, inputs, device_ids=None, output_device=None, dim=0, module_kwargs=None):
    """DataParallel's forward as a function (torch.nn.parallel.data_parallel)."""
    if not isinstance(inputs, tuple):
        inputs = (inputs,) if inputs is not None else ()
    device_ids = list(range(cudalite.cuda.device_count())) if device_ids is None else device_ids
    if output_device is None:
        output_device = device_ids[0]
    device_ids = [_get_device_index(x, True) for x in device_ids]
    output_device = _get_device_index(output_device, True)
    src = cudalite.device("cuda", device_ids[0])
    for t in itertools.chain(module.parameters(), module.buffers()):
        if t.device != src:
            raise RuntimeError(
                "module must have its parameters and buffers on device "
                f"{src} (device_ids[0]) but found one of them on device: {t.device}"
            )
    inputs, module_kwargs = scatter_kwargs(inputs, module_kwargs, device_ids, dim)
    if not inputs and not module_kwargs:
        inputs = ((),)
        module_kwargs = ({},)
    if len(device_ids) == 1:
        return module(*inputs[0], **module_kwargs[0])
    used = device_ids[: len(inputs)]
    replicas = replicate(module, used)
    outputs = parallel_apply(replicas, inputs, module_kwargs, used)
    return gather(outputs, output_device, dim)
