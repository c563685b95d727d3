"""torch.cuda.streams: filled in by its own issue; empty here so cudalite.cuda imports."""

__all__ = []
