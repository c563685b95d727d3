"""``replicate``: copies of a module on several GPUs whose parameters are outputs of one
Broadcast, so backward sums the copies' gradients into the original parameters."""

from __future__ import annotations

from cudalite.cuda._device import _get_device_index
from cudalite.nn.parallel import comm
from cudalite.nn.parallel._functions import Broadcast

__all__ = ["replicate"]


def _replica(module):
    """A shallow copy sharing submodule registrations; parameters are set afterwards as
    plain attributes (non-leaf tensors, as torch's _replicate_for_data_parallel does)."""
    r = module.__new__(type(module))
    r.__dict__ = module.__dict__.copy()
    r._parameters = {}
    r._buffers = dict(r._buffers)
    r._modules = dict(r._modules)
    r._is_replica = True
    return r


def _broadcast_coalesced_reshape(tensors, devices, detach=False):
    if not tensors:
        return []
    if not detach:
        flat = Broadcast.apply(devices, *tensors)
        n = len(tensors)
        return [flat[i : i + n] for i in range(0, len(flat), n)]
    return comm.broadcast_coalesced(tensors, devices)


def replicate(network, devices, detach=False):
    """One copy of ``network`` per device (the first on devices[0] uses its parameters)."""
    devices = [_get_device_index(x, True) for x in devices]
    num_replicas = len(devices)
    params = list(network.parameters())
    param_indices = {id(p): i for i, p in enumerate(params)}
    param_copies = _broadcast_coalesced_reshape(params, devices, detach)
    buffers = list(network.buffers())
    buffers_rg = [b for b in buffers if b.requires_grad]
    buffers_not_rg = [b for b in buffers if not b.requires_grad]
    buffer_indices_rg = {id(b): i for i, b in enumerate(buffers_rg)}
    buffer_indices_not_rg = {id(b): i for i, b in enumerate(buffers_not_rg)}
    buffer_copies_rg = _broadcast_coalesced_reshape(buffers_rg, devices, detach)
    buffer_copies_not_rg = _broadcast_coalesced_reshape(buffers_not_rg, devices, True)

    modules = list(network.modules())
    module_copies = [[] for _ in devices]
    module_indices = {}
    for i, module in enumerate(modules):
        module_indices[id(module)] = i
        for j in range(num_replicas):
            module_copies[j].append(_replica(module))

    for i, module in enumerate(modules):
        for key, child in module._modules.items():
            for j in range(num_replicas):
                replica = module_copies[j][i]
                replica._modules[key] = (
                    None if child is None else module_copies[j][module_indices[id(child)]]
                )
        for key, param in module._parameters.items():
            for j in range(num_replicas):
                replica = module_copies[j][i]
                value = None if param is None else param_copies[j][param_indices[id(param)]]
                object.__setattr__(replica, key, value)
        for key, buf in module._buffers.items():
            for j in range(num_replicas):
                replica = module_copies[j][i]
                if buf is None:
                    replica._buffers[key] = None
                elif buf.requires_grad and not detach:
                    replica._buffers[key] = buffer_copies_rg[j][buffer_indices_rg[id(buf)]]
                else:
                    replica._buffers[key] = buffer_copies_not_rg[j][buffer_indices_not_rg[id(buf)]]
    return [module_copies[j][0] for j in range(num_replicas)]
