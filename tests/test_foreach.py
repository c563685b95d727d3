"""torch._foreach_* ops (cudalite._foreach) on the CPU and CUDA, and the core's multi-tensor
loop (_C._foreach_pointwise) that the CUDA fast path launches: each op against the per-tensor
ops it stands for, on lists of several shapes (a 0-dim tensor, an empty one, a matrix),
long lists and tensors larger than one launch's chunks, and lists that must take the
per-tensor path (mixed dtypes, non-dense views)."""

import math

import numpy as np
import pytest

import cudalite
from conftest import to_np
from cudalite import _C, _foreach

FLOATS = ["float32", "float64", "float16", "bfloat16"]


@pytest.fixture(autouse=True, params=["torch_path", "multi_tensor_path"])
def path(request):
    """Each test as it is, and on the CPU also with the multi-tensor path forced (the core's
    CPU loop behind the Python glue that CUDA takes), so that the glue runs without a GPU."""
    if request.param == "multi_tensor_path":
        if "device" not in request.fixturenames or request.getfixturevalue("device") != "cpu":
            pytest.skip("only the CPU tests change with the multi-tensor path forced")
        mp = pytest.MonkeyPatch()
        mp.setattr(_foreach, "_multi_tensor_device", lambda t: True)
        yield request.param
        mp.undo()
    else:
        yield request.param


# float16/bfloat16 compute in float32 in both paths; results differ by one rounding at most
TOL = {"float32": 1e-6, "float64": 1e-12, "float16": 2e-3, "bfloat16": 1.6e-2}


def _mk(values, dtype, device):
    return cudalite.tensor(values, dtype=getattr(cudalite, dtype), device=device)


def _lists(device, dtype="float32", seed=0):
    rng = np.random.default_rng(seed)
    shapes = [(7,), (3, 4), (), (0,), (2, 3, 5)]
    a = [_mk(rng.uniform(-2, 2, s).tolist() if s else 0.75, dtype, device) for s in shapes]
    b = [_mk(rng.uniform(0.5, 2, s).tolist() if s else 1.5, dtype, device) for s in shapes]
    c = [_mk(rng.uniform(0.5, 2, s).tolist() if s else 0.6, dtype, device) for s in shapes]
    return a, b, c


def _close(got, want, dtype):
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype and g.shape == w.shape and g.device == w.device
        np.testing.assert_allclose(to_np(g), to_np(w), rtol=TOL[dtype], atol=TOL[dtype])


def _zip(*lists):
    return zip(*lists, strict=True)


def _clone(ts):
    return [t.clone() for t in ts]


# op name -> (foreach call, per-tensor reference) on lists a, b (positive), c (positive)
BINARY_CASES = {
    "add_list_alpha": (lambda a, b, c: cudalite._foreach_add(a, b, alpha=-0.5),
                       lambda a, b, c: [x.add(y, alpha=-0.5) for x, y in _zip(a, b)]),
    "add_scalar": (lambda a, b, c: cudalite._foreach_add(a, 1.25),
                   lambda a, b, c: [x + 1.25 for x in a]),
    "sub_scalarlist": (lambda a, b, c: cudalite._foreach_sub(a, [0.5, 1, 2, 3, -1]),
                       lambda a, b, c: [x - s for x, s in _zip(a, [0.5, 1, 2, 3, -1])]),
    "mul_tensor": (lambda a, b, c: cudalite._foreach_mul(a, b[2]),
                   lambda a, b, c: [x * b[2] for x in a]),
    "mul_list": (lambda a, b, c: cudalite._foreach_mul(a, b),
                 lambda a, b, c: [x * y for x, y in _zip(a, b)]),
    "div_list": (lambda a, b, c: cudalite._foreach_div(a, b),
                 lambda a, b, c: [x / y for x, y in _zip(a, b)]),
    "div_scalar": (lambda a, b, c: cudalite._foreach_div(a, 3.0),
                   lambda a, b, c: [x / 3.0 for x in a]),
    "maximum": (lambda a, b, c: cudalite._foreach_maximum(a, c),
                lambda a, b, c: [cudalite.maximum(x, y) for x, y in _zip(a, c)]),
    "minimum_scalar": (lambda a, b, c: cudalite._foreach_minimum(a, 0.25),
                       lambda a, b, c: [cudalite.clamp(x, max=0.25) for x in a]),
    "clamp_min": (lambda a, b, c: cudalite._foreach_clamp_min(a, -0.5),
                  lambda a, b, c: [cudalite.clamp(x, min=-0.5) for x in a]),
    "pow_scalar": (lambda a, b, c: cudalite._foreach_pow(b, 2.5),
                   lambda a, b, c: [x**2.5 for x in b]),
    "pow_list": (lambda a, b, c: cudalite._foreach_pow(b, c),
                 lambda a, b, c: [x**y for x, y in _zip(b, c)]),
    "rpow": (lambda a, b, c: cudalite._foreach_pow(0.9, b),
             lambda a, b, c: [cudalite.pow(0.9, x) for x in b]),
    "neg": (lambda a, b, c: cudalite._foreach_neg(a), lambda a, b, c: [-x for x in a]),
    "sqrt": (lambda a, b, c: cudalite._foreach_sqrt(b), lambda a, b, c: [x.sqrt() for x in b]),
    "rsqrt": (lambda a, b, c: cudalite._foreach_rsqrt(b), lambda a, b, c: [x.rsqrt() for x in b]),
    "abs": (lambda a, b, c: cudalite._foreach_abs(a), lambda a, b, c: [x.abs() for x in a]),
    "exp": (lambda a, b, c: cudalite._foreach_exp(a), lambda a, b, c: [x.exp() for x in a]),
    "log": (lambda a, b, c: cudalite._foreach_log(b), lambda a, b, c: [x.log() for x in b]),
    "reciprocal": (lambda a, b, c: cudalite._foreach_reciprocal(b),
                   lambda a, b, c: [x.reciprocal() for x in b]),
    "sign": (lambda a, b, c: cudalite._foreach_sign(a), lambda a, b, c: [x.sign() for x in a]),
    "addcmul": (lambda a, b, c: cudalite._foreach_addcmul(a, b, c, 0.3),
                lambda a, b, c: [x + 0.3 * (y * z) for x, y, z in _zip(a, b, c)]),
    "addcdiv_scalarlist": (
        lambda a, b, c: cudalite._foreach_addcdiv(a, b, c, [1, -2, 0.5, 3, 0.25]),
        lambda a, b, c: [x + v * (y / z)
                         for x, y, z, v in _zip(a, b, c, [1, -2, 0.5, 3, 0.25])]),
    "lerp_scalar": (lambda a, b, c: cudalite._foreach_lerp(a, b, 0.3),
                    lambda a, b, c: [x.lerp(y, 0.3) for x, y in _zip(a, b)]),
    "lerp_high": (lambda a, b, c: cudalite._foreach_lerp(a, b, 0.9),
                  lambda a, b, c: [x.lerp(y, 0.9) for x, y in _zip(a, b)]),
    "lerp_list": (lambda a, b, c: cudalite._foreach_lerp(a, b, [x * 0.4 for x in c]),
                  lambda a, b, c: [x.lerp(y, z * 0.4) for x, y, z in _zip(a, b, c)]),
}  # fmt: skip


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", sorted(BINARY_CASES))
def test_out_of_place(device, dtype, name):
    call, ref = BINARY_CASES[name]
    a, b, c = _lists(device, dtype)
    want = ref(_clone(a), _clone(b), _clone(c))
    before = [to_np(t) for t in a]
    got = call(a, b, c)
    assert isinstance(got, tuple)
    _close(list(got), want, dtype)
    for t, v in zip(a, before, strict=True):  # the inputs are left alone
        np.testing.assert_array_equal(to_np(t), v)


# ---- every op of the registry (csrc/ops/ops.def) with the Foreach flag ----

REGISTRY_UNARY = sorted(r[0] for r in _C._foreach_ops if r[2] == "unary")
REGISTRY_BINARY = sorted(r[0] for r in _C._foreach_ops if r[2] == "binary")


def test_registry_functions():
    """Each row gives torch's functions, in cudalite and in cudalite._foreach.__all__."""
    names = set(_foreach.__all__)
    for name, _code, form, *_ in _C._foreach_ops:
        want = {
            "unary": [f"_foreach_{name}", f"_foreach_{name}_"],
            "binary": [f"_foreach_{name}", f"_foreach_{name}_"],
            "scaled": [f"_foreach_{name}", f"_foreach_{name}_"],
            "lerp": [f"_foreach_{name}", f"_foreach_{name}_"],
            "reversed": [f"_foreach_{name}"],
            "zero": [f"_foreach_{name}_"],
            "copy": [f"_foreach_{name}_"],
            "norm": [f"_foreach_{name}"],
        }[form]
        for fname in want:
            assert fname in names and getattr(cudalite, fname).__name__ == fname
    assert {"sin", "neg", "sigmoid", "trunc"} <= set(REGISTRY_UNARY)
    assert {"add", "maximum", "clamp_min", "pow"} <= set(REGISTRY_BINARY)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", REGISTRY_UNARY)
def test_registry_unary(device, dtype, name):
    """_foreach_<name>(a) and _foreach_<name>_(a) equal the per-tensor method (values in
    (0.1, 0.9), inside every op's domain)."""
    _, b, c = _lists(device, dtype)
    a = [x * 0.4 + 0.05 for x in c]  # (0.25, 0.85)
    want = [getattr(x, name)() for x in _clone(a)]
    _close(list(getattr(cudalite, f"_foreach_{name}")(a)), want, dtype)
    got = getattr(cudalite, f"_foreach_{name}_")(a)
    assert got is a or got == a
    _close(a, want, dtype)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", REGISTRY_BINARY)
def test_registry_binary(device, dtype, name):
    """_foreach_<name> with a list and with numbers equals the per-tensor function of the row
    whose functor it runs."""
    runs = {r[0]: r[5] for r in _C._foreach_ops}[name]
    fn = getattr(cudalite, runs)
    _, b, c = _lists(device, dtype)
    want = [fn(x, y) for x, y in _zip(b, c)]
    _close(list(getattr(cudalite, f"_foreach_{name}")(b, c)), want, dtype)
    scalars = [0.5, 1.5, 2.0, 0.75, 1.25]
    want = [fn(x, cudalite.full_like(x, s)) for x, s in _zip(b, scalars)]
    got = getattr(cudalite, f"_foreach_{name}_")(b, scalars)
    _close(got, want, dtype)


INPLACE_CASES = {
    "add_": (lambda a, b, c: cudalite._foreach_add_(a, b, alpha=2.5),
             lambda a, b, c: [x.add_(y, alpha=2.5) for x, y in _zip(a, b)]),
    "sub_": (lambda a, b, c: cudalite._foreach_sub_(a, 1),
             lambda a, b, c: [x.sub_(1) for x in a]),
    "mul_scalarlist": (lambda a, b, c: cudalite._foreach_mul_(a, [2, 3, 4, 5, 6]),
                       lambda a, b, c: [x.mul_(s) for x, s in _zip(a, [2, 3, 4, 5, 6])]),
    "mul_tensor": (lambda a, b, c: cudalite._foreach_mul_(a, b[2]),
                   lambda a, b, c: [x.mul_(b[2]) for x in a]),
    "div_": (lambda a, b, c: cudalite._foreach_div_(a, b),
             lambda a, b, c: [x.div_(y) for x, y in _zip(a, b)]),
    "addcmul_": (lambda a, b, c: cudalite._foreach_addcmul_(a, b, c, -0.75),
                 lambda a, b, c: [x.add_(-0.75 * (y * z)) for x, y, z in _zip(a, b, c)]),
    "addcdiv_": (lambda a, b, c: cudalite._foreach_addcdiv_(a, b, c, 0.5),
                 lambda a, b, c: [x.add_(0.5 * (y / z)) for x, y, z in _zip(a, b, c)]),
    "lerp_": (lambda a, b, c: cudalite._foreach_lerp_(a, b, 0.1),
              lambda a, b, c: [x.copy_(x.lerp(y, 0.1)) for x, y in _zip(a, b)]),
    "maximum_": (lambda a, b, c: cudalite._foreach_maximum_(a, c),
                 lambda a, b, c: [x.copy_(cudalite.maximum(x, y)) for x, y in _zip(a, c)]),
    "clamp_max_": (lambda a, b, c: cudalite._foreach_clamp_max_(a, 0.5),
                   lambda a, b, c: [x.clamp_(max=0.5) for x in a]),
    "sqrt_": (lambda a, b, c: cudalite._foreach_sqrt_(a),
              lambda a, b, c: [x.abs_().sqrt_() for x in a]),
    "neg_": (lambda a, b, c: cudalite._foreach_neg_(a), lambda a, b, c: [x.neg_() for x in a]),
    "reciprocal_": (lambda a, b, c: cudalite._foreach_reciprocal_(a),
                    lambda a, b, c: [x.reciprocal_() for x in a]),
    "pow_": (lambda a, b, c: cudalite._foreach_pow_(a, 2),
             lambda a, b, c: [x.pow_(2) for x in a]),
    "zero_": (lambda a, b, c: cudalite._foreach_zero_(a), lambda a, b, c: [x.zero_() for x in a]),
    "copy_": (lambda a, b, c: cudalite._foreach_copy_(a, b),
              lambda a, b, c: [x.copy_(y) for x, y in _zip(a, b)]),
}  # fmt: skip


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", sorted(INPLACE_CASES))
def test_in_place(device, dtype, name):
    call, ref = INPLACE_CASES[name]
    a, b, c = _lists(device, dtype)
    if name == "sqrt_":
        a = [x.abs() for x in a]
    want = ref(_clone(a), _clone(b), _clone(c))
    versions = [x._version for x in a]
    got = call(a, b, c)
    assert got is a  # torch returns the list it updated
    _close(a, want, dtype)
    assert all(x._version > v for x, v in zip(a, versions, strict=True) if x.numel())


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("ord", [1, 2, math.inf, 3])
def test_norm(device, dtype, ord):
    a, _, _ = _lists(device, dtype)
    if ord == math.inf:
        with pytest.raises(
            RuntimeError, match="^_foreach_norm cannot compute the infinity norm on"
        ):
            cudalite._foreach_norm(a, ord)
        a = [x for x in a if x.numel()]
    got = cudalite._foreach_norm(a, ord)
    want = [cudalite.norm(x.double(), p=ord).to(x.dtype) for x in a]
    _close(list(got), want, dtype)
    got64 = cudalite._foreach_norm(a, ord, dtype=cudalite.float64)
    assert all(g.dtype == cudalite.float64 and g.shape == () for g in got64)


def test_norm_large_and_many(device):
    # more chunks and more tensors than one launch takes (_C._multi_tensor_limits, on CUDA)
    chunks = MAX_BLOCKS + 1 if device == "cuda" else 320
    big = cudalite.ones(chunks * CHUNK + 1000, device=device) * 0.5
    count = MAX_TENSORS[0] + 40
    many = [cudalite.full((i + 1,), float(i), device=device) for i in range(count)]
    norms = cudalite._foreach_norm([big, *many])
    assert norms[0].item() == pytest.approx(0.5 * math.sqrt(big.numel()), rel=1e-5)
    for i, n in enumerate(norms[1:]):
        assert n.item() == pytest.approx(i * math.sqrt(i + 1), rel=1e-5)
    inf = cudalite._foreach_norm([big, *many], math.inf)
    assert [x.item() for x in inf[1:]] == [float(i) for i in range(count)]


def test_many_tensors_and_chunks(device):
    # lists longer than one launch's tensor slots, and tensors cut into chunks across launches
    # (_C._multi_tensor_limits, on CUDA; the CPU loop takes the same lists, smaller)
    step, chunks = (3000, MAX_BLOCKS + 10) if device == "cuda" else (30, 3)
    ts = [cudalite.full((i * step + 1,), 1.0, device=device) for i in range(MAX_TENSORS[2] + 30)]
    ts.insert(60, cudalite.zeros(chunks * CHUNK, device=device))
    others = [cudalite.full(t.shape, 2.0, device=device) for t in ts]
    cudalite._foreach_add_(ts, others, alpha=0.25)
    cudalite._foreach_addcmul_(ts, others, others, 0.5)
    for i, t in enumerate(ts):
        want = 2.5 if i == 60 else 3.5
        assert cudalite.all(t == want).item(), i
    # a list that ends with empty tensors still gets its last launch
    tail = [cudalite.ones(5, device=device), cudalite.ones(0, device=device)]
    cudalite._foreach_mul_(tail, 3.0)
    assert tail[0].tolist() == [3.0] * 5


def test_slow_path_mixed_lists(device):
    # mixed dtypes and a non-dense view take the per-tensor path, with the same results
    a = [
        cudalite.arange(6.0, device=device).reshape(2, 3).t(),
        cudalite.arange(4.0, device=device, dtype=cudalite.float64),
        cudalite.arange(8.0, device=device)[::2],
    ]
    b = [cudalite.ones_like(x) for x in a]
    got = cudalite._foreach_add(a, b, alpha=2)
    for g, x in zip(got, a, strict=True):
        assert g.dtype == x.dtype and g.shape == x.shape
        np.testing.assert_array_equal(to_np(g), to_np(x) + 2)
    ints = [cudalite.arange(3, device=device)]
    assert cudalite._foreach_add(ints, 1.5)[0].dtype == cudalite.float32
    assert cudalite._foreach_mul(ints, 2)[0].tolist() == [0, 2, 4]


def test_errors(device):
    a, b, _ = _lists(device)
    with pytest.raises(RuntimeError, match="^Tensor list must have at least one tensor.$"):
        cudalite._foreach_add_([], 1)
    with pytest.raises(RuntimeError, match="^Tensor lists must have the same number of tensors, "
                       "got 5 and 2$"):  # fmt: skip
        cudalite._foreach_add(a, b[:2])
    with pytest.raises(RuntimeError, match="^Tensor list must have same number of elements as "
                       "scalar list.$"):  # fmt: skip
        cudalite._foreach_mul(a, [1.0])
    with pytest.raises(RuntimeError, match="^scalar tensor expected to be 0 dim but it has 1 "
                       "dimensions and 2 elements.$"):  # fmt: skip
        cudalite._foreach_mul(a, cudalite.ones(2, device=device))
    with pytest.raises(RuntimeError, match="^Tensor list must have same number of elements as "
                       "scalar list.$"):  # fmt: skip
        cudalite._foreach_addcmul(a, a, a, [1.0, 2.0])


# ---- the core's multi-tensor loop, run on the CPU: the per-element math of the CUDA kernels --

CODES = _foreach.CODES
POINTWISE = [
    ("add", 2, {"alpha": -0.5}, lambda a, b, c: a - 0.5 * b),
    ("sub", 2, {"alpha": 2.0}, lambda a, b, c: a - 2 * b),
    ("mul", 2, {}, lambda a, b, c: a * b),
    ("div", 2, {}, lambda a, b, c: a / b),
    ("maximum", 2, {}, lambda a, b, c: np.maximum(a, b)),
    ("minimum", 2, {}, lambda a, b, c: np.minimum(a, b)),
    ("pow", 2, {}, lambda a, b, c: np.abs(a) ** b),
    ("neg", 1, {}, lambda a, b, c: -a),
    ("sqrt", 1, {}, lambda a, b, c: np.sqrt(np.abs(a))),
    ("rsqrt", 1, {}, lambda a, b, c: 1 / np.sqrt(np.abs(a))),
    ("abs", 1, {}, lambda a, b, c: np.abs(a)),
    ("exp", 1, {}, lambda a, b, c: np.exp(a)),
    ("log", 1, {}, lambda a, b, c: np.log(np.abs(a))),
    ("reciprocal", 1, {}, lambda a, b, c: 1 / a),
    ("sign", 1, {}, lambda a, b, c: np.sign(a)),
    ("zero", 1, {}, lambda a, b, c: a * 0),
    ("copy", 2, {}, lambda a, b, c: b),
    ("addcmul", 3, {"s": 0.3}, lambda a, b, c: a + 0.3 * b * c),
    ("addcdiv", 3, {"s": -1.5}, lambda a, b, c: a - 1.5 * b / c),
    ("lerp", 2, {"s": 0.3}, lambda a, b, c: a + 0.3 * (b - a)),
    ("lerp", 2, {"s": 0.7}, lambda a, b, c: b - (b - a) * 0.3),
    ("lerp", 3, {"list": True}, lambda a, b, c: a + c * (b - a)),
]


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("inplace", [True, False])
@pytest.mark.parametrize("case", POINTWISE, ids=lambda c: f"{c[0]}{c[1]}")
def test_core_pointwise_cpu(case, inplace, dtype):
    op, nin, kw, ref = case
    a, b, c = _lists("cpu", dtype, seed=1)
    if op in ("pow", "sqrt", "rsqrt", "log"):
        a = [x.abs() + 0.1 for x in a]
    if op == "lerp" and kw.get("list"):
        c = [x * 0.3 for x in c]
    ins = [a, b, c][:nin]
    want = [
        ref(*(to_np(x).astype(np.float64) for x in (xa, xb, xc)))
        for xa, xb, xc in zip(a, b, c, strict=True)
    ]
    out = [cudalite.empty_like(x) for x in a]
    lists = ins if inplace else [*ins, out]
    scalars = [kw.get("s", 0.0)] * len(a)
    _C._foreach_pointwise(lists, CODES[op], nin, inplace, 0, kw.get("alpha", 1.0), None,
                          scalars, bool(kw.get("list")))  # fmt: skip
    got = a if inplace else out
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(to_np(g), w, rtol=4 * TOL[dtype], atol=4 * TOL[dtype])


def test_core_pointwise_operands():
    a = [cudalite.tensor([1.0, 2.0]), cudalite.tensor([[3.0]])]
    # one number per tensor, and a 0-dim tensor of the op-math dtype
    _C._foreach_pointwise([a], CODES["mul"], 1, True, 1, 1.0, None, [2.0, 10.0], False)
    assert a[0].tolist() == [2.0, 4.0] and a[1].tolist() == [[30.0]]
    _C._foreach_pointwise([a], CODES["add"], 1, True, 2, 0.5, cudalite.tensor(4.0), [], False)
    assert a[0].tolist() == [4.0, 6.0] and a[1].tolist() == [[32.0]]
    with pytest.raises(RuntimeError, match="same number of elements as scalar list"):
        _C._foreach_pointwise([a], CODES["mul"], 1, True, 1, 1.0, None, [2.0], False)
    with pytest.raises(RuntimeError, match="dense floating tensors"):
        _C._foreach_pointwise([[cudalite.arange(3)]], CODES["neg"], 1, True, 0, 1.0, None, [],
                              False)  # fmt: skip
    with pytest.raises(RuntimeError, match="dense floating tensors"):
        _C._foreach_pointwise([[cudalite.ones(4, 4).t()[:2]]], CODES["neg"], 1, True, 0, 1.0,
                              None, [], False)  # fmt: skip
    assert not _C._foreach_fast_path_ok([[cudalite.ones(2)], [cudalite.ones(3)]])
    assert not _C._foreach_fast_path_ok([[cudalite.ones(2), cudalite.ones(2).double()]])
    assert _C._foreach_fast_path_ok([[cudalite.ones(2, 3), cudalite.ones(2)]])


# ---- how lists are cut into launches (the host side of the CUDA kernels, run here) ----

CHUNK, MAX_BLOCKS, MAX_TENSORS = _C._multi_tensor_limits


@pytest.mark.parametrize("depth", [1, 2, 3, 4, 5])
@pytest.mark.parametrize(
    "numels",
    [
        [5],
        [0],
        [7, 0, 0],
        [CHUNK, CHUNK + 1, 1, 0, 3 * CHUNK],
        [100] * 200,  # more tensors than a launch holds
        [CHUNK * 700 + 5],  # more chunks than a launch holds: the tensor straddles launches
        [3, CHUNK * 319, CHUNK * 2, 0, 9] * 3,
        [1] * 35 + [CHUNK * 400] + [2] * 80 + [0],
        list(range(0, 40 * CHUNK, CHUNK // 3)),
    ],
    ids=lambda n: f"{len(n)}-tensors",
)
def test_multi_tensor_plan(depth, numels, path):
    if path != "torch_path":
        pytest.skip("no foreach op runs here")
    launches = _C._multi_tensor_plan(numels, depth)
    seen = []
    for blocks in launches:
        assert 0 < len(blocks) <= MAX_BLOCKS
        slots = {slot for *_, slot in blocks}
        assert max(slots) < MAX_TENSORS[depth - 1]
        for i, chunk, numel, addresses_right, _slot in blocks:
            assert addresses_right and numel == numels[i]
            seen.append((i, chunk))
    want = [(i, c) for i, n in enumerate(numels) for c in range(-(-n // CHUNK))]
    assert seen == want  # every chunk of every tensor once, in order
    if len(want) > MAX_BLOCKS:
        assert len(launches) >= -(-len(want) // MAX_BLOCKS)
