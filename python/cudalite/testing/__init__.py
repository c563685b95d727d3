"""Testing helpers, as ``torch.testing``: ``assert_close`` and ``make_tensor``.

Loaded on first use (``cudalite.testing`` or ``import cudalite.testing``), not by
``import cudalite``. ``assert_allclose`` is kept as torch keeps it: deprecated, with a
FutureWarning.
"""

from cudalite.testing._comparison import assert_allclose, assert_close
from cudalite.testing._creation import make_tensor

__all__ = ["assert_allclose", "assert_close", "make_tensor"]
