"""``cudalite.optim``: torch's optimizers (SGD, Adam, AdamW, RMSprop, Adagrad, Adadelta,
Adamax, NAdam, RAdam, Rprop, ASGD, LBFGS, Adafactor, Muon) with their hyperparameters, update
rules and state_dict layout, ``optim.lr_scheduler`` and ``optim.swa_utils``. See
docs/optim.md."""

from __future__ import annotations

from cudalite.optim import lr_scheduler, swa_utils
from cudalite.optim.adadelta import Adadelta
from cudalite.optim.adafactor import Adafactor
from cudalite.optim.adagrad import Adagrad
from cudalite.optim.adam import Adam
from cudalite.optim.adamax import Adamax
from cudalite.optim.adamw import AdamW
from cudalite.optim.asgd import ASGD
from cudalite.optim.lbfgs import LBFGS
from cudalite.optim.muon import Muon
from cudalite.optim.nadam import NAdam
from cudalite.optim.optimizer import Optimizer
from cudalite.optim.radam import RAdam
from cudalite.optim.rmsprop import RMSprop
from cudalite.optim.rprop import Rprop
from cudalite.optim.sgd import SGD

__all__ = [
    "Optimizer",
    "SGD",
    "Adam",
    "AdamW",
    "RMSprop",
    "Adagrad",
    "Adadelta",
    "Adamax",
    "NAdam",
    "RAdam",
    "Rprop",
    "ASGD",
    "LBFGS",
    "Adafactor",
    "Muon",
    "lr_scheduler",
    "swa_utils",
]
