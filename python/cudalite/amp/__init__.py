"""``cudalite.amp``: automatic mixed precision, as ``torch.amp`` (docs/amp.md)."""

from cudalite.amp.autocast_mode import autocast, is_autocast_available
from cudalite.amp.custom import custom_bwd, custom_fwd
from cudalite.amp.grad_scaler import GradScaler

__all__ = ["GradScaler", "autocast", "custom_bwd", "custom_fwd", "is_autocast_available"]
