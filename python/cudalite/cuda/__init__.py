from .memory import *  # noqa
