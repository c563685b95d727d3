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


def is_np_number(x):
    np = sys.modules.get("numpy")
    return np is not None and isinstance(x, (np.number, np.bool_))


def np_number_types():
    """NumPy's scalar types when NumPy is loaded (for isinstance checks), else ()."""
    np = sys.modules.get("numpy")
    return (np.number, np.bool_) if np is not None else ()
