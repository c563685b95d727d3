"""NumPy is imported on first use, not at ``import cudalite`` (it is most of the import time).

If NumPy is not imported yet, no object can be a NumPy array, so type checks need no import.
"""

import sys


def numpy():
    """The numpy module, importing it if needed."""
    import numpy as np

    return np


def is_ndarray(x):
    np = sys.modules.get("numpy")
    return np is not None and isinstance(x, np.ndarray)


def is_np_integer(x):
    np = sys.modules.get("numpy")
    return np is not None and isinstance(x, np.integer)
