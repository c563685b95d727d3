"""``torch.utils.dlpack``: DLPack capsules in and out (the functions live in
``cudalite._interop``; interop.md)."""

from cudalite._interop import from_dlpack, to_dlpack

__all__ = ["from_dlpack", "to_dlpack"]
