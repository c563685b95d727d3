"""torch.cuda.memory: filled in by its own issue; empty here so cudalite.cuda imports."""

__all__ = []
