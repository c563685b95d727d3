"""``assert_close`` and ``assert_allclose``, as ``torch.testing``'s.

The comparison runs in two passes, as torch's: first the inputs are paired up (nested
sequences and mappings are walked, each leaf pair gets a comparison object, and structural
problems such as a length mismatch or an unsupported type raise at once), then every pair is
compared and the first failure is raised, with ``msg`` applied. Tensors are compared on their
device with cudalite's own ops (``isclose``, ``max``, ...), so the numbers in the messages
come from the same dtype arithmetic as torch's. Nothing is recorded by autograd.
"""

from __future__ import annotations

import cmath
import collections.abc
import contextlib
import sys
import warnings

import cudalite

__all__ = ["assert_close", "assert_allclose"]

# {dtype: (rtol, atol)}; every other dtype (integers, bool) is compared exactly.
_DTYPE_PRECISIONS = {
    cudalite.float16: (0.001, 1e-5),
    cudalite.bfloat16: (0.016, 1e-5),
    cudalite.float32: (1.3e-6, 1e-5),
    cudalite.float64: (1e-7, 1e-7),
}
# Python scalars use the tolerances of their torch dtypes (int64, float64, complex128).
_SCALAR_PRECISIONS = {int: (0.0, 0.0), float: (1e-7, 1e-7), complex: (1e-7, 1e-7)}

_BUG_REPORT = (
    "If you are a user and see this message during normal operation "
    "please file an issue at https://github.com/pytorch/pytorch/issues. "
    "If you are a developer and working on the comparison functions, "
)


class _Failure(Exception):
    """A user-facing error (its type and message) and the item it occurred for."""

    def __init__(self, type, msg, id=()):
        super().__init__(msg)
        self.type, self.msg, self.id = type, msg, id

    def to_error(self, msg=None):
        """The exception to raise; ``msg`` (a string or a callable) replaces or edits the text."""
        if isinstance(msg, str):
            return self.type(msg)
        text = self.msg
        if self.id:
            text += f"\n\nThe failure occurred for item {_item_path(self.id)}"
        return self.type(msg(text) if callable(msg) else text)


class _Unsupported(Exception):
    """A pair type cannot handle the inputs; the next one is tried."""


def _numpy_type(name):
    """``numpy.<name>`` as a one-type tuple for isinstance, or () when NumPy is not loaded."""
    np = sys.modules.get("numpy")
    return (getattr(np, name),) if np is not None else ()


def _item_path(id):
    return "".join(str([item]) for item in id)


def _loosest(precisions):
    """The greatest rtol and the greatest atol of some (rtol, atol) pairs."""
    rtols, atols = zip(*precisions, strict=True)
    return max(rtols), max(atols)


def _tolerances(precisions, rtol, atol, id):
    """The (rtol, atol) to use: both given, or the loosest defaults of the inputs' dtypes."""
    if (rtol is None) ^ (atol is None):
        raise _Failure(
            ValueError,
            "Both 'rtol' and 'atol' must be either specified or omitted, "
            f"but got no {'rtol' if rtol is None else 'atol'}.",
            id,
        )
    return (rtol, atol) if rtol is not None else _loosest(precisions)


def _mismatch_msg(identifier, extra, abs_diff, abs_idx, atol, rel_diff, rel_idx, rtol):
    """torch's "... are not close!" message; ``abs_idx`` None means a scalar comparison."""
    equality = rtol == 0 and atol == 0

    def diff_line(kind, diff, idx, tol):
        if idx is None:
            line = f"{kind.title()} difference: {diff}"
        else:
            line = f"Greatest {kind} difference: {diff} at index {idx}"
        return line + ("" if equality else f" (up to {tol} allowed)") + "\n"

    msg = f"{identifier} are not {'equal' if equality else 'close'}!\n\n{extra.strip()}\n"
    msg += diff_line("absolute", abs_diff, abs_idx, atol)
    msg += diff_line("relative", rel_diff, rel_idx, rtol)
    return msg.strip()


def _scalar_mismatch_msg(actual, expected, rtol, atol):
    abs_diff = abs(actual - expected)
    rel_diff = float("inf") if expected == 0 else abs_diff / abs(expected)
    extra = f"Expected {expected} but got {actual}."
    return _mismatch_msg("Scalars", extra, abs_diff, None, atol, rel_diff, None, rtol)


def _tensor_mismatch_msg(actual, expected, matches, rtol, atol):
    """Mismatch count and the greatest absolute and relative differences among mismatches."""
    shape = tuple(matches.shape)

    def unravel(flat):
        index = []
        for size in reversed(shape):
            flat, mod = divmod(flat, size)
            index.append(mod)
        return tuple(reversed(index))

    total = matches.numel()
    mismatches = total - int(cudalite.sum(matches))
    extra = f"Mismatched elements: {mismatches} / {total} ({mismatches / total:.1%})"
    actual, expected, matches = actual.flatten(), expected.flatten(), matches.flatten()
    if not actual.dtype.is_floating_point:
        actual, expected = actual.to(cudalite.int64), expected.to(cudalite.int64)
    abs_diff = cudalite.abs(actual - expected).masked_fill(matches, 0)
    max_abs, abs_idx = cudalite.max(abs_diff, 0)
    rel_diff = (abs_diff / cudalite.abs(expected)).masked_fill(matches, 0)
    max_rel, rel_idx = cudalite.max(rel_diff, 0)
    return _mismatch_msg(
        "Tensor-likes",
        extra,
        max_abs.item(),
        unravel(int(abs_idx)),
        atol,
        max_rel.item(),
        unravel(int(rel_idx)),
        rtol,
    )


class _Pair:
    """One leaf comparison; constructors raise ``_Unsupported`` for inputs they don't handle."""

    _options = ()

    def __init__(self, actual, expected, id):
        self.actual, self.expected, self.id = actual, expected, id

    def _fail(self, msg, type=AssertionError):
        raise _Failure(type, msg, self.id)

    def __repr__(self):
        fields = [("id", self.id), ("actual", self.actual), ("expected", self.expected)]
        fields += [(name, getattr(self, name)) for name in self._options]
        body = [f"    {name}={value!s}," for name, value in fields]
        return "\n".join((f"{type(self).__name__}(", *body, ")"))


class NonePair(_Pair):
    """``None`` on either side: both must be ``None``."""

    def __init__(self, actual, expected, *, id, **options):
        if actual is not None and expected is not None:
            raise _Unsupported
        super().__init__(actual, expected, id)

    def compare(self):
        if not (self.actual is None and self.expected is None):
            self._fail(f"None mismatch: {self.actual} is not {self.expected}")


class BooleanPair(_Pair):
    """Two ``bool`` (or ``numpy.bool_``) values: they must be the same."""

    def __init__(self, actual, expected, *, id, **options):
        bool_types = (bool, *_numpy_type("bool_"))
        if not (isinstance(actual, bool_types) and isinstance(expected, bool_types)):
            raise _Unsupported
        # torch's BooleanPair drops the id, so its failures never name the item.
        super().__init__(bool(actual), bool(expected), ())

    def compare(self):
        if self.actual is not self.expected:
            self._fail(f"Booleans mismatch: {self.actual} is not {self.expected}")


class NumberPair(_Pair):
    """Two Python (or NumPy) numbers, compared with the tolerances of their types."""

    _options = ("rtol", "atol", "equal_nan", "check_dtype")

    def __init__(self, actual, expected, *, id, rtol, atol, equal_nan, check_dtype, **options):
        number_types = (int, float, complex, *_numpy_type("number"))
        if not (isinstance(actual, number_types) and isinstance(expected, number_types)):
            raise _Unsupported
        actual, expected = (x.item() if hasattr(x, "item") else x for x in (actual, expected))
        super().__init__(actual, expected, id)
        precisions = [_SCALAR_PRECISIONS[type(x)] for x in (actual, expected)]
        self.rtol, self.atol = _tolerances(precisions, rtol, atol, id)
        self.equal_nan, self.check_dtype = equal_nan, check_dtype

    def compare(self):
        actual, expected = self.actual, self.expected
        if self.check_dtype and type(actual) is not type(expected):
            self._fail(f"The (d)types do not match: {type(actual)} != {type(expected)}.")
        if actual == expected:
            return
        if self.equal_nan and cmath.isnan(actual) and cmath.isnan(expected):
            return
        diff = abs(actual - expected)
        if cmath.isfinite(diff) and diff <= self.atol + self.rtol * abs(expected):
            return
        self._fail(_scalar_mismatch_msg(actual, expected, self.rtol, self.atol))


class TensorLikePair(_Pair):
    """Tensors, or two objects of related types that ``cudalite.as_tensor`` accepts."""

    _options = (
        "rtol",
        "atol",
        "equal_nan",
        "check_device",
        "check_dtype",
        "check_layout",
        "check_stride",
    )

    def __init__(
        self,
        actual,
        expected,
        *,
        id,
        allow_subclasses,
        rtol,
        atol,
        equal_nan,
        check_device,
        check_dtype,
        check_layout,
        check_stride,
        **options,
    ):
        if not (isinstance(actual, type(expected)) or isinstance(expected, type(actual))):
            raise _Unsupported
        if not allow_subclasses and type(actual) is not type(expected):
            raise _Unsupported
        actual, expected = self._to_tensor(actual), self._to_tensor(expected)
        super().__init__(actual, expected, id)
        precisions = [_DTYPE_PRECISIONS.get(t.dtype, (0.0, 0.0)) for t in (actual, expected)]
        self.rtol, self.atol = _tolerances(precisions, rtol, atol, id)
        self.equal_nan, self.check_device, self.check_dtype = equal_nan, check_device, check_dtype
        self.check_layout, self.check_stride = check_layout, check_stride

    @staticmethod
    def _to_tensor(x):
        if isinstance(x, cudalite.Tensor):
            return x
        try:
            return cudalite.as_tensor(x)
        except Exception:
            raise _Unsupported from None

    def compare(self):
        actual, expected = self.actual, self.expected
        # cudalite tensors are all strided, so layouts always match (check_layout is accepted).
        checks = [("shape", actual.shape, expected.shape)]
        if self.check_stride:
            checks.append(("stride()", actual.stride(), expected.stride()))
        if self.check_device:
            checks.append(("device", actual.device, expected.device))
        if self.check_dtype:
            checks.append(("dtype", actual.dtype, expected.dtype))
        for name, a, e in checks:
            if a != e:
                self._fail(f"The values for attribute '{name}' do not match: {a} != {e}.")
        with cudalite.no_grad():
            if actual.device != expected.device:
                actual, expected = actual.cpu(), expected.cpu()
            if actual.dtype != expected.dtype:
                dtype = cudalite.promote_types(actual.dtype, expected.dtype)
                actual, expected = actual.to(dtype), expected.to(dtype)
            self._compare_values(actual.detach(), expected.detach())

    def _compare_values(self, actual, expected):
        rtol, atol = self.rtol, self.atol
        matches = cudalite.isclose(actual, expected, rtol=rtol, atol=atol, equal_nan=self.equal_nan)
        if cudalite.all(matches):
            return
        if actual.dim() == 0:
            msg = _scalar_mismatch_msg(actual.item(), expected.item(), rtol, atol)
        else:
            msg = _tensor_mismatch_msg(actual, expected, matches, rtol, atol)
        self._fail(msg)


_PAIR_TYPES = (NonePair, BooleanPair, NumberPair, TensorLikePair)


def _originate_pairs(actual, expected, id, options):
    """The leaf pairs of (possibly nested) inputs; raises ``_Failure`` on structural mismatches."""
    sequence, mapping = collections.abc.Sequence, collections.abc.Mapping
    if (
        isinstance(actual, sequence)
        and not isinstance(actual, str)
        and isinstance(expected, sequence)
        and not isinstance(expected, str)
    ):
        if len(actual) != len(expected):
            raise _Failure(
                AssertionError,
                f"The length of the sequences mismatch: {len(actual)} != {len(expected)}",
                id,
            )
        pairs = []
        for i in range(len(actual)):
            pairs += _originate_pairs(actual[i], expected[i], (*id, i), options)
        return pairs
    if isinstance(actual, mapping) and isinstance(expected, mapping):
        actual_keys, expected_keys = set(actual.keys()), set(expected.keys())
        if actual_keys != expected_keys:
            raise _Failure(
                AssertionError,
                "The keys of the mappings do not match:\n"
                f"Missing keys in the actual mapping: {sorted(expected_keys - actual_keys)}\n"
                f"Additional keys in the actual mapping: {sorted(actual_keys - expected_keys)}",
                id,
            )
        keys = actual_keys
        with contextlib.suppress(Exception):  # sorted when possible, for a deterministic order
            keys = sorted(keys)
        pairs = []
        for key in keys:
            pairs += _originate_pairs(actual[key], expected[key], (*id, key), options)
        return pairs
    for pair_type in _PAIR_TYPES:
        try:
            return [pair_type(actual, expected, id=id, **options)]
        except _Unsupported:
            continue
        except _Failure:
            raise
        except Exception as error:
            raise RuntimeError(
                f"Originating a {pair_type.__name__}() at item {_item_path(id)} with\n\n"
                f"{type(actual).__name__}(): {actual}\n\n"
                f"and\n\n"
                f"{type(expected).__name__}(): {expected}\n\n"
                f"resulted in the unexpected exception above. {_BUG_REPORT}"
                "please except the previous error and raise an expressive `ErrorMeta` instead."
            ) from error
    raise _Failure(
        TypeError,
        "No comparison pair was able to handle inputs of type "
        f"{type(actual)} and {type(expected)}.",
        id,
    )


def assert_close(
    actual,
    expected,
    *,
    allow_subclasses=True,
    rtol=None,
    atol=None,
    equal_nan=False,
    check_device=True,
    check_dtype=True,
    check_layout=True,
    check_stride=False,
    msg=None,
):
    """Asserts that ``actual`` and ``expected`` are close, as ``torch.testing.assert_close``.

    Tensors (and pairs of NumPy arrays) are close when their shapes match, ``device`` and
    ``dtype`` match (unless ``check_device`` / ``check_dtype`` is False: then they are moved to
    the CPU / promoted to a common dtype), strides match if ``check_stride``, and every element
    satisfies ``|actual - expected| <= atol + rtol * |expected|`` (infinities must be equal, NaNs
    match only with ``equal_nan``). Python scalars are compared with the tolerances of their
    types; sequences and mappings are compared item by item.

    Default tolerances (rtol, atol), the loosest of the two dtypes: float16 (1e-3, 1e-5),
    bfloat16 (1.6e-2, 1e-5), float32 (1.3e-6, 1e-5), float64 (1e-7, 1e-7), else (0, 0).
    ``rtol`` and ``atol`` must be given together. ``msg`` replaces the failure message, or, if
    callable, is called with it and returns the new one.

    Raises:
        AssertionError: the inputs are not close (torch's messages, with cudalite's reprs).
        ValueError: only one of ``rtol`` and ``atol`` is given.
        TypeError: inputs of types that cannot be compared with each other.
    """
    __tracebackhide__ = True
    options = dict(
        allow_subclasses=allow_subclasses,
        rtol=rtol,
        atol=atol,
        equal_nan=equal_nan,
        check_device=check_device,
        check_dtype=check_dtype,
        check_layout=check_layout,
        check_stride=check_stride,
    )
    try:
        pairs = _originate_pairs(actual, expected, (), options)
    except _Failure as failure:
        raise failure.to_error() from None
    # As torch, every pair is compared (an unexpected error in a later one wins), and the
    # first failure is raised.
    failures = []
    for pair in pairs:
        try:
            pair.compare()
        except _Failure as failure:
            # Without its traceback: it would refer to this frame, a cycle that keeps tensors alive.
            failures.append(failure.with_traceback(None))
        except Exception as error:
            raise RuntimeError(
                f"Comparing\n\n{pair}\n\nresulted in the unexpected exception above. "
                f"{_BUG_REPORT}please except the previous error and raise an expressive "
                "`ErrorMeta` instead."
            ) from error
    if failures:
        raise failures[0].to_error(msg)


def assert_allclose(actual, expected, rtol=None, atol=None, equal_nan=True, msg=""):
    """Deprecated in torch (a FutureWarning): ``assert_close`` with older defaults.

    Non-tensors become tensors (``expected`` in ``actual``'s dtype), dtypes are promoted rather
    than checked, NaNs compare equal, and the default tolerances are float16 (1e-3, 1e-3),
    float32 (1e-4, 1e-5), float64 (1e-5, 1e-8), else (0, 0).
    """
    warnings.warn(
        "`cudalite.testing.assert_allclose()` is deprecated since 1.12 and will be removed in a "
        "future release. Please use `cudalite.testing.assert_close()` instead. You can find "
        "detailed upgrade instructions in https://github.com/pytorch/pytorch/issues/61844.",
        FutureWarning,
        stacklevel=2,
    )
    if not isinstance(actual, cudalite.Tensor):
        actual = cudalite.tensor(actual)
    if not isinstance(expected, cudalite.Tensor):
        expected = cudalite.tensor(expected, dtype=actual.dtype)
    if rtol is None and atol is None:
        precisions = {
            cudalite.float16: (1e-3, 1e-3),
            cudalite.float32: (1e-4, 1e-5),
            cudalite.float64: (1e-5, 1e-8),
        }
        rtol, atol = _loosest([precisions.get(t.dtype, (0.0, 0.0)) for t in (actual, expected)])
    assert_close(
        actual,
        expected,
        rtol=rtol,
        atol=atol,
        equal_nan=equal_nan,
        check_device=True,
        check_dtype=False,
        check_stride=False,
        msg=msg or None,
    )
