"""Mistakes the stubs make mypy catch (tests/test_stubs.py expects these errors)."""

from __future__ import annotations

import cudalite as torch

x = torch.ones(3)
torch.hypot(x)  # E: missing argument
torch.not_a_function(x)  # E: not in cudalite
y: int = torch.exp(x)  # E: a Tensor is not an int
