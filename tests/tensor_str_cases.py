"""Inputs for the tensor-printing golden tests, shared by the test and its generator.

Each case builds a NumPy array; ``input_array`` casts it to what both sides start from
(float32 for float16/bfloat16/float32, so that both round float32 -> dtype once).  The
generator (``gen_tensor_str_expected.py``, run by hand with PyTorch 2.11) turns the same array
into a torch tensor and records ``repr()`` in ``tensor_str_expected.py``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

nan, inf = float("nan"), float("inf")


class Case(NamedTuple):
    id: str
    make: Callable[[], Any]
    dtype: str = "float32"
    opts: dict[str, Any] = {}
    kwargs: dict[str, Any] = {}


_INPUT_DTYPE = {
    "float16": np.float32,
    "bfloat16": np.float32,
    "float32": np.float32,
    "float64": np.float64,
    "bool": np.bool_,
    "uint8": np.uint8,
    "int8": np.int8,
    "int16": np.int16,
    "int32": np.int32,
    "int64": np.int64,
}


def input_array(case: Case) -> np.ndarray:
    return np.asarray(case.make()).astype(_INPUT_DTYPE[case.dtype])


def _rand(*shape: int, seed: int = 0, scale: float = 1.0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape) * scale


def _ar(n: int, *shape: int) -> np.ndarray:
    return np.arange(n, dtype=np.float64).reshape(shape or (n,))


C = Case
CASES = [
    # floating values: fixed point, integer mode, scientific notation
    C("float_basic", lambda: [1.5, 2.25, -3.125]),
    C("float_precision4", lambda: [1 / 3, 2 / 3, 0.1]),
    C("float_round_up", lambda: [0.99999, 9.99996, 1.5]),
    C("int_valued", lambda: [1.0, 2.0, 3.0]),
    C("int_valued_neg_2d", lambda: [[1.0, -20.0], [300.0, 4.0]]),
    C("int_valued_big", lambda: [123456789.0, 1.0]),
    C("int_valued_1e10", lambda: [1e10, 2.0]),
    C("sci_small", lambda: [1e-8, 1.0]),
    C("sci_small_only", lambda: [1e-8, 2e-8]),
    C("sci_large", lambda: [1e9, 1.5]),
    C("sci_ratio", lambda: [0.001, 2.0]),
    C("no_sci_ratio", lambda: [0.01, 5.0]),
    C("sci_ratio_exact_1000", lambda: [0.5, 500.0, 1.5]),
    C("large_values", lambda: [12345.678, 23456.789, 34567.891]),
    C("large_mixed", lambda: [123456.789, 1.25]),
    C("mixed_magnitudes", lambda: [1e-3, 1.0, 1e3, -1e5]),
    C("sci_exp3", lambda: [1e-100, 1e100, 5.5], "float64"),
    C("float64_many_digits", lambda: [np.pi, np.e, -np.sqrt(2)], "float64"),
    C("float64_tiny", lambda: [5e-324, 1.0], "float64"),
    # nan, inf, zeros
    C("nan_inf", lambda: [1.5, nan, inf, -inf]),
    C("nan_inf_int_mode", lambda: [1.0, nan, -inf, 20.0]),
    C("nan_inf_sci", lambda: [1e-8, nan, inf, 1.0]),
    C("nan_only", lambda: [nan]),
    C("inf_only", lambda: [inf, -inf, nan]),
    C("zeros", lambda: [0.0, 0.0]),
    C("neg_zero", lambda: [-0.0]),
    C("neg_zero_mixed", lambda: [0.0, -0.0, 1.5]),
    C("neg_zero_int_mode", lambda: [-0.0, 2.0, -3.0]),
    C("zeros_and_nan", lambda: [[0.0, nan], [-0.0, inf]]),
    # 0-dim
    C("scalar_int_valued", lambda: 3.0),
    C("scalar_frac", lambda: 3.5),
    C("scalar_neg_zero", lambda: -0.0),
    C("scalar_nan", lambda: nan),
    C("scalar_neg_inf", lambda: -inf),
    C("scalar_sci", lambda: 1e-8),
    C("scalar_bool", lambda: True, "bool"),
    C("scalar_bool_false", lambda: False, "bool"),
    C("scalar_int64", lambda: 7, "int64"),
    C("scalar_int8", lambda: -5, "int8"),
    C("scalar_float16", lambda: 0.1, "float16"),
    C("scalar_float64", lambda: 2.5, "float64"),
    C("scalar_bfloat16", lambda: -82.51, "bfloat16"),
    # integer and bool dtypes
    C("int64", lambda: [1, -20, 300], "int64"),
    C("int32", lambda: [[1, 2], [3, -4]], "int32"),
    C("int16", lambda: [-32768, 32767], "int16"),
    C("int8", lambda: [-128, 0, 127], "int8"),
    C("uint8", lambda: [0, 7, 255], "uint8"),
    C("int64_extremes", lambda: [-(2**63), 2**63 - 1], "int64"),
    C("int64_wrap", lambda: np.arange(40) * 1000, "int64"),
    C("bool", lambda: [True, False, True], "bool"),
    C("bool_all_true", lambda: [[True, True], [True, True]], "bool"),
    C("bool_2d", lambda: np.arange(6).reshape(2, 3) % 2 == 0, "bool"),
    # reduced precision floats
    C("float16", lambda: [0.1, 0.2, 1 / 3], "float16"),
    C("float16_max", lambda: [65504.0, 1.0], "float16"),
    C("float16_overflow", lambda: [1e5, 1.0, -1e5], "float16"),
    C("float16_subnormal", lambda: [6e-8, 1.0], "float16"),
    C("float16_int_mode", lambda: [3.0, 2048.0, 2049.0], "float16"),
    C("bfloat16", lambda: [0.1, 1 / 3, 1000.5], "bfloat16"),
    C("bfloat16_big", lambda: [3e38, 1.0, 257.0], "bfloat16"),
    C("bfloat16_rand", lambda: _rand(3, 4, seed=2), "bfloat16"),
    C("float64", lambda: [1.5, 2.0], "float64"),
    C("float64_default", lambda: [1.5, 2.0], "float64", {}, {"default_dtype_name": "float64"}),
    C("float32_not_default", lambda: [1.5], "float32", {}, {"default_dtype_name": "float64"}),
    C("int64_not_default", lambda: [1], "int64", {}, {"default_dtype_name": "float64"}),
    # shapes, alignment, wrapping
    C("rand_2d", lambda: _rand(4, 5)),
    C("rand_2d_sci", lambda: _rand(3, 3, seed=1, scale=1e5)),
    C("rand_3d", lambda: _rand(2, 3, 4, seed=3)),
    C("arange_4d", lambda: _ar(16, 2, 2, 2, 2)),
    C("arange_5d", lambda: _ar(32, 2, 2, 2, 2, 2), "int64"),
    C("wrap_2d", lambda: _ar(30, 3, 10) / 3),
    C("wrap_1d", lambda: _rand(25, seed=4)),
    C("wrap_1d_ints", lambda: np.arange(100), "int64"),
    C("wrap_3d", lambda: _rand(2, 2, 12, seed=5)),
    C("column_1", lambda: _ar(3, 3, 1)),
    C("row_1", lambda: _ar(3, 1, 3)),
    C("size_one_dims", lambda: [[[7.25]]]),
    # summarisation
    C("summ_1d_ints", lambda: np.arange(2000), "int64"),
    C("summ_1d_floats", lambda: _ar(1001) / 7),
    C("summ_2d", lambda: _ar(10000, 100, 100) / 3),
    C("summ_2d_short_rows", lambda: _ar(3000, 1000, 3)),
    C("summ_2d_long_rows", lambda: _ar(3000, 3, 1000)),
    C("summ_3d", lambda: np.arange(1200).reshape(10, 10, 12), "int64", {"edgeitems": 2}),
    C("summ_hidden_big", lambda: np.where(np.arange(2000) == 1000, 1e10, np.arange(2000.0))),
    C("summ_float16", lambda: _rand(40, 40, seed=6), "float16"),
    C("summ_bool", lambda: np.arange(1500) % 3 == 0, "bool"),
    C("summ_small_edge_dims", lambda: np.arange(1200).reshape(6, 200), "int64"),
    # print options
    C("opt_precision2", lambda: [1 / 3, 2 / 3], "float32", {"precision": 2}),
    C("opt_precision10", lambda: [1 / 3, 2 / 3], "float64", {"precision": 10}),
    C("opt_precision0", lambda: [1.5, 2.25], "float32", {"precision": 0}),
    C("opt_precision0_sci", lambda: [1e-8, 2.5], "float32", {"precision": 0}),
    C("opt_threshold5", lambda: np.arange(10), "int64", {"threshold": 5}),
    C("opt_threshold0_scalar", lambda: 2.5, "float32", {"threshold": 0}),
    C("opt_edgeitems1", lambda: _ar(100, 10, 10), "float32", {"edgeitems": 1, "threshold": 10}),
    C("opt_edgeitems0_small", lambda: [1.5, 2.5], "float32", {"edgeitems": 0}),
    C("opt_edgeitems0_summ", lambda: _ar(2000, 20, 100), "float32", {"edgeitems": 0}),
    C("opt_edgeitems0_1d", lambda: np.arange(2000), "int64", {"edgeitems": 0}),
    C("opt_linewidth40", lambda: _rand(3, 8, seed=7), "float32", {"linewidth": 40}),
    C("opt_linewidth10", lambda: [1.5, 22.25, 333.125], "float32", {"linewidth": 10}),
    C("opt_profile_short", lambda: _ar(2000) / 3, "float32", {"profile": "short"}),
    C("opt_profile_short_prec", lambda: [1 / 3], "float32", {"profile": "short", "precision": 6}),
    C("opt_sci_true", lambda: [1.0, 2.0], "float32", {"sci_mode": True}),
    C("opt_sci_true_frac", lambda: [1.5, -20.25], "float32", {"sci_mode": True}),
    C("opt_sci_false", lambda: [1e-8, 1.0], "float32", {"sci_mode": False}),
    C("opt_sci_false_big", lambda: [1e10, 1.5], "float32", {"sci_mode": False}),
    C("opt_sci_true_zeros", lambda: [0.0, nan], "float32", {"sci_mode": True}),
    # empty tensors
    C("empty", lambda: np.zeros(0)),
    C("empty_2d", lambda: np.zeros((0, 3))),
    C("empty_3d_int64", lambda: np.zeros((2, 0, 3)), "int64"),
    C("empty_int64", lambda: np.zeros(0), "int64"),
    C("empty_bool", lambda: np.zeros(0), "bool"),
    C("empty_float16", lambda: np.zeros((0, 2)), "float16"),
    C("empty_float64", lambda: np.zeros(0), "float64"),
    C("empty_default_f64", lambda: np.zeros(0), "float64", {}, {"default_dtype_name": "float64"}),
    C(
        "empty_f32_default_f64",
        lambda: np.zeros(0),
        "float32",
        {},
        {"default_dtype_name": "float64"},
    ),
    C("empty_grad", lambda: np.zeros((0, 4)), "float32", {}, {"requires_grad": True}),
    C("empty_device", lambda: np.zeros(0), "int32", {}, {"device": "cuda:0"}),
    C("empty_edgeitems0", lambda: np.zeros((0, 2)), "float32", {"edgeitems": 0}),
    # suffixes
    C("device", lambda: [1.5, 2.5], "float32", {}, {"device": "cuda:0"}),
    C("device1_int8", lambda: [1, 2], "int8", {}, {"device": "cuda:1"}),
    C("device_2d", lambda: _ar(30, 3, 10) / 3, "float32", {}, {"device": "cuda:0"}),
    C("requires_grad", lambda: [1.5, 2.5], "float32", {}, {"requires_grad": True}),
    C("grad_fn", lambda: [[1.5], [2.5]], "float32", {}, {"grad_fn": "MulBackward0"}),
    C("grad_fn_f64", lambda: [1.5], "float64", {}, {"grad_fn": "CloneBackward0"}),
    C(
        "all_suffixes",
        lambda: [1.5],
        "float16",
        {},
        {"device": "cuda:0", "grad_fn": "MulBackward0"},
    ),
    C("suffix_wraps_1d", lambda: _ar(10) / 3, "float64", {}, {"requires_grad": True}),
    C("suffix_wraps_2d", lambda: _rand(2, 9, seed=8), "float64", {}, {"device": "cuda:0"}),
    C("suffix_edge_1", lambda: _ar(8) / 3, "float64", {}, {"device": "cuda:0"}),
    C("suffix_edge_2", lambda: _ar(7) / 3, "float64", {}, {"device": "cuda:0"}),
    C("suffix_edge_3", lambda: _ar(6) / 3, "float16", {}, {"device": "cuda:0"}),
    C(
        "suffix_many_wrap",
        lambda: _ar(9) / 3,
        "float16",
        {},
        {"device": "cuda:0", "requires_grad": True},
    ),
    C("prefix", lambda: _ar(12, 2, 6) / 3, "float32", {}, {"prefix": "MyTensor("}),
]
