"""``cudalite.Size``: the shape of a tensor, a tuple subclass printed like torch's."""

from cudalite import _C


class Size(tuple):
    """A tuple of ints describing a tensor's shape, e.g. ``Size([2, 3])``."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"cudalite.Size([{', '.join(str(int(s)) for s in self)}])"

    __str__ = __repr__

    def numel(self) -> int:
        """The number of elements a tensor of this shape holds."""
        n = 1
        for s in self:
            n *= s
        return n

    def __add__(self, other):
        return Size(tuple(self) + tuple(other))

    def __radd__(self, other):
        return Size(tuple(other) + tuple(self))

    def __reduce__(self):
        return (Size, (tuple(self),))


# Size.__getitem__ (slices give a Size) is written in C: x.shape[0] is read in loops.
_C._install_size_getitem(Size)
