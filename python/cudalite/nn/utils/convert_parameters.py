"""``parameters_to_vector`` / ``vector_to_parameters``: all parameters as one flat vector and
back, as torch's."""

from __future__ import annotations

from cudalite._C import Tensor

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def _check_param_device(param, old_param_device):
    """The CUDA device index of the parameters seen so far (-1: the CPU); raises when a
    parameter is elsewhere."""
    if old_param_device is None:
        return param.get_device() if param.device.type == "cuda" else -1
    if param.device.type == "cuda":
        different = param.get_device() != old_param_device
    else:
        different = old_param_device != -1
    if different:
        raise TypeError(
            "Found two parameters on different devices, this is currently not supported."
        )
    return old_param_device


def parameters_to_vector(parameters):
    """The parameters flattened and concatenated into one vector (a copy)."""
    import cudalite

    param_device = None
    vec = []
    for param in parameters:
        param_device = _check_param_device(param, param_device)
        vec.append(param.view(-1))
    return cudalite.cat(vec)


def vector_to_parameters(vec, parameters):
    """Points each parameter's data at its slice of ``vec`` (shaped as the parameter)."""
    if not isinstance(vec, Tensor):
        from cudalite.nn.module import typename

        raise TypeError(f"expected torch.Tensor, but got: {typename(vec)}")
    param_device = None
    pointer = 0
    for param in parameters:
        param_device = _check_param_device(param, param_device)
        n = param.numel()
        param.data = vec[pointer : pointer + n].view_as(param).data
        pointer += n
