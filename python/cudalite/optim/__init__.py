"""``cudalite.optim``: Optimizer, SGD and Adam, with torch's hyperparameters, update rules
and state_dict layout."""

from __future__ import annotations

from cudalite.optim.adam import Adam
from cudalite.optim.optimizer import Optimizer
from cudalite.optim.sgd import SGD

__all__ = ["Optimizer", "SGD", "Adam"]
