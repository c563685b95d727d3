"""``apply_``, ``map_`` and ``map2_``: a Python function applied to every element of a CPU
tensor in place, as torch's (slow: one Python call per element; for tests and tools)."""

from __future__ import annotations

from cudalite._tensor import method


def _cpu_only(name, *tensors):
    if any(t.is_cuda for t in tensors):
        raise TypeError(f"{name} is only implemented on CPU tensors")


def _write(self, values):
    import cudalite

    for v in values:
        if not isinstance(v, (int, float, bool)):
            raise TypeError(f"must be real number, not {type(v).__name__}")
    if values:
        flat = cudalite.tensor(
            values, dtype=cudalite.float64 if self.dtype.is_floating_point else None
        )
        self.copy_(flat.view(list(self.shape)))
    return self


@method(name="apply_")
def _apply_(self, callable):  # noqa: A002 - torch's parameter name
    """``self[i] = callable(self[i])`` for every element; returns ``self``."""
    _cpu_only("apply_", self)
    return _write(self, [callable(v) for v in self.reshape(-1).tolist()])


@method(name="map_")
def _map_(self, tensor, callable):  # noqa: A002
    """``self[i] = callable(self[i], tensor[i])`` (``tensor`` broadcast to ``self``)."""
    _cpu_only("map_", self, tensor)
    other = tensor.expand(*self.shape).reshape(-1).tolist()
    vals = self.reshape(-1).tolist()
    return _write(self, [callable(a, b) for a, b in zip(vals, other, strict=True)])


@method(name="map2_")
def _map2_(self, x, y, callable):  # noqa: A002
    """``self[i] = callable(self[i], x[i], y[i])`` (``x`` and ``y`` broadcast to ``self``)."""
    _cpu_only("map2_", self, x, y)
    xs = x.expand(*self.shape).reshape(-1).tolist()
    ys = y.expand(*self.shape).reshape(-1).tolist()
    vals = self.reshape(-1).tolist()
    return _write(self, [callable(a, b, c) for a, b, c in zip(vals, xs, ys, strict=True)])
