"""Layouts (torch.layout): cudalite has one, ``strided`` (sizes, strides and an offset into
dense memory), which ``Tensor.layout`` reports and the ``layout=`` arguments of
``empty_strided`` and ``new_empty_strided`` accept."""

from __future__ import annotations

from cudalite._tensor import _methods

__all__ = ["layout", "strided"]


class layout:  # noqa: N801  (torch's name)
    """A memory layout; compare by identity, as torch's singletons."""

    __slots__ = ("_name",)

    def __init__(self, name):
        self._name = name

    def __repr__(self):
        return f"cudalite.{self._name}"

    def __reduce__(self):
        return self._name


strided = layout("strided")


# ``Tensor.layout``: every cudalite tensor is strided.
_methods["layout"] = property(lambda self: strided)
