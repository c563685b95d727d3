"""``cudalite.Size``: the shape of a tensor, a tuple subclass printed like torch's."""


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

    def __getitem__(self, key):
        out = tuple.__getitem__(self, key)
        return Size(out) if isinstance(key, slice) else out

    def __add__(self, other):
        return Size(tuple(self) + tuple(other))

    def __radd__(self, other):
        return Size(tuple(other) + tuple(self))

    def __reduce__(self):
        return (Size, (tuple(self),))
