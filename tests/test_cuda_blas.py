"""Matrix products on CUDA tensors through cuBLAS, and cudalite.backends.cuda.matmul."""

import ast
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

import cudalite
import cudalite.backends as backends
import cudalite.cuda as cuda
from cudalite import _C

HAS_GPU = cuda.is_available()
gpu = pytest.mark.skipif(not HAS_GPU, reason="needs a visible CUDA GPU")
matmul_flags = backends.cuda.matmul


@pytest.fixture(autouse=True)
def restore_flags():
    saved = _C._cuda._get_matmul_flags()
    yield
    _C._cuda._set_matmul_flags(*saved)
    backends.cuda._fp32_precision = "none"
    backends.cuda._precision_with_tf32 = "high"


# ---- the switches (no GPU needed) ----


def test_defaults_like_torch():
    assert matmul_flags.allow_tf32 is False
    assert matmul_flags.allow_fp16_reduced_precision_reduction is True
    assert matmul_flags.allow_bf16_reduced_precision_reduction is True
    assert matmul_flags.fp32_precision == "none"
    assert backends.get_float32_matmul_precision() == "highest"
    assert backends.cuda.is_built() == _C._cuda.is_compiled()


def test_allow_tf32_switch():
    matmul_flags.allow_tf32 = True
    assert matmul_flags.allow_tf32 is True
    assert _C._cuda._get_matmul_flags()[0] is True
    assert backends.get_float32_matmul_precision() == "high"
    assert matmul_flags.fp32_precision == "tf32"
    matmul_flags.allow_tf32 = False
    assert backends.get_float32_matmul_precision() == "highest"
    with pytest.raises(RuntimeError, match="^set_allow_tf32_cublas expects a bool, but got int$"):
        matmul_flags.allow_tf32 = 1


def test_float32_matmul_precision():
    backends.set_float32_matmul_precision("medium")
    assert matmul_flags.allow_tf32 is True
    assert backends.get_float32_matmul_precision() == "medium"
    backends.set_float32_matmul_precision("highest")
    assert matmul_flags.allow_tf32 is False
    with pytest.warns(UserWarning, match="is not one of 'highest', 'high', or 'medium'"):
        backends.set_float32_matmul_precision("x")
    # torch 2.11: the new API's "tf32" while the legacy state says "highest" is a mix that
    # reading either raises on (and so would a float32 product)
    matmul_flags.fp32_precision = "tf32"
    with pytest.raises(RuntimeError, match="used mix of the legacy and new APIs"):
        _ = matmul_flags.allow_tf32
    with pytest.raises(RuntimeError, match="used mix of the legacy and new APIs"):
        backends.get_float32_matmul_precision()
    matmul_flags.allow_tf32 = True  # the legacy switch sets both
    assert matmul_flags.allow_tf32 is True and matmul_flags.fp32_precision == "tf32"
    with pytest.raises(RuntimeError, match="^Unknown precision: x$"):
        matmul_flags.fp32_precision = "x"


def test_reduced_precision_switches():
    matmul_flags.allow_fp16_reduced_precision_reduction = False
    assert matmul_flags.allow_fp16_reduced_precision_reduction is False
    matmul_flags.allow_bf16_reduced_precision_reduction = (False, False)
    assert matmul_flags.allow_bf16_reduced_precision_reduction is False
    assert matmul_flags.allow_bf16_reduced_precision_reduction_split_k is False
    assert _C._cuda._get_matmul_flags() == (False, False, False)
    with pytest.raises(TypeError, match="expects a bool or a tuple/list of bools, but got"):
        matmul_flags.allow_fp16_reduced_precision_reduction = 1
    with pytest.raises(AttributeError, match="^Unknown attribute foo$"):
        matmul_flags.foo = 1
    with pytest.raises(AttributeError, match="^Unknown attribute foo$"):
        matmul_flags.foo  # noqa: B018


# ---- products on the GPU ----


def to_cuda(arr, dtype=None):
    t = _C.from_numpy(np.ascontiguousarray(arr))
    return _C._to(t, "cuda", dtype, False, False)


def to_numpy(t):
    if t.dtype == _C.bfloat16:
        t = _C._to(t, None, _C.float32, False, False)
    return _C._numpy(_C._to(t, "cpu", None, False, False))


TOL = {"float32": 1e-5, "float64": 1e-12, "float16": 2e-3, "bfloat16": 2e-2}


def check(a_np, b_np, dtype="float32", prep=None):
    """Compares cudalite's product (of operands optionally reshaped by `prep`) with NumPy's."""
    np_dtype = "float32" if dtype == "bfloat16" else dtype
    cl_dtype = getattr(_C, dtype)
    a = to_cuda(a_np.astype(np_dtype), cl_dtype)
    b = to_cuda(b_np.astype(np_dtype), cl_dtype)
    if prep:
        a, b, a_np, b_np = prep(a, b, a_np, b_np)
    r = _C._cuda_matmul(a, b)
    assert r.dtype == cl_dtype and r.is_cuda
    ref = np.matmul(a_np.astype(np.float64), b_np.astype(np.float64))
    got = to_numpy(r)
    assert got.shape == ref.shape
    scale = max(1.0, float(np.abs(ref).max()) if ref.size else 1.0)
    np.testing.assert_allclose(got, ref, rtol=0, atol=TOL[dtype] * scale * 8)


SHAPES = [
    ((3, 4), (4, 5)),
    ((1, 4), (4, 1)),
    ((5,), (5,)),
    ((3, 4), (4,)),
    ((4,), (4, 3)),
    ((2, 3, 4), (4, 5)),
    ((3, 4), (2, 4, 5)),
    ((2, 3, 4), (2, 4, 5)),
    ((2, 1, 3, 4), (5, 4, 6)),
    ((3,), (2, 3, 4)),
    ((2, 3, 4), (4,)),
    ((0, 4), (4, 5)),
    ((3, 0), (0, 5)),
    ((0, 3, 4), (4, 5)),
]


@gpu
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("sa, sb", SHAPES)
def test_matmul_matches_numpy(dtype, sa, sb):
    rng = np.random.default_rng(0)
    check(rng.standard_normal(sa), rng.standard_normal(sb), dtype)


@gpu
@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_non_contiguous_operands(dtype):
    rng = np.random.default_rng(1)

    def transposed(a, b, an, bn):  # column-major operands: read with the transpose flags
        return a.transpose(0, 1), b.transpose(0, 1), an.T, bn.T

    check(rng.standard_normal((5, 3)), rng.standard_normal((6, 5)), dtype, transposed)

    def stepped(a, b, an, bn):  # non-unit strides both ways: copied once
        return a._slice(1, 0, 6, 2), b._slice(0, 0, 6, 2), an[:, 0:6:2], bn[0:6:2]

    check(rng.standard_normal((4, 6)), rng.standard_normal((6, 3)), dtype, stepped)

    def broadcast(a, b, an, bn):  # a weight expanded over a batch: stride 0, no copy
        return a, b.expand(4, 5, 2), an, np.broadcast_to(bn, (4, 5, 2))

    check(rng.standard_normal((4, 3, 5)), rng.standard_normal((5, 2)), dtype, broadcast)


@gpu
def test_tf32_is_off_by_default():
    rng = np.random.default_rng(2)
    a, b = rng.standard_normal((256, 512)), rng.standard_normal((512, 256))
    ref = a @ b
    got = to_numpy(_C._cuda_matmul(to_cuda(a.astype(np.float32)), to_cuda(b.astype(np.float32))))
    assert np.abs(got - ref).max() / np.abs(ref).max() < 1e-5  # TF32 would be ~1e-3
    matmul_flags.allow_tf32 = True
    got = to_numpy(_C._cuda_matmul(to_cuda(a.astype(np.float32)), to_cuda(b.astype(np.float32))))
    assert np.abs(got - ref).max() / np.abs(ref).max() < 1e-2


@gpu
def test_addmm():
    rng = np.random.default_rng(3)
    c, a, b = rng.standard_normal(5), rng.standard_normal((3, 4)), rng.standard_normal((4, 5))
    f = np.float32
    r = _C._cuda_addmm(to_cuda(c.astype(f)), to_cuda(a.astype(f)), to_cuda(b.astype(f)), 0.5, 2.0)
    np.testing.assert_allclose(to_numpy(r), 0.5 * c + 2.0 * (a @ b), rtol=1e-5, atol=1e-5)
    nan = to_cuda(np.full(5, np.nan, f))
    r = _C._cuda_addmm(nan, to_cuda(a.astype(f)), to_cuda(b.astype(f)), 0.0, 1.0)
    np.testing.assert_allclose(to_numpy(r), a @ b, rtol=1e-5, atol=1e-5)  # beta=0 ignores NaN


@gpu
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
@pytest.mark.parametrize("layout", ["nn", "nt", "tn", "tt"])
def test_addmm_with_a_bias_row(dtype, layout):
    """beta == 1 with a 1-D bias takes cuBLASLt's bias epilogue; other biases the copy path."""
    import cudalite as C

    rng = np.random.default_rng(4)
    m, k, n = 67, 96, 130
    a, b = rng.standard_normal((m, k)), rng.standard_normal((k, n))
    bias = rng.standard_normal(n)
    dt = getattr(C, dtype)

    def dev(x, t):
        x = C.tensor(np.ascontiguousarray(x.T) if t else x, dtype=dt, device="cuda")
        return x.t() if t else x

    ta, tb = dev(a, layout[0] == "t"), dev(b, layout[1] == "t")
    a32 = ta.float().cpu().numpy().astype(np.float64)
    b32 = tb.float().cpu().numpy().astype(np.float64)
    tbias = C.tensor(bias, dtype=dt, device="cuda")
    bias64 = tbias.float().cpu().numpy().astype(np.float64)
    tol = 1e-5 if dtype == "float32" else 3e-2
    for alpha in (1.0, 0.5):
        got = C.addmm(tbias, ta, tb, alpha=alpha).float().cpu().numpy()
        want = bias64 + alpha * (a32 @ b32)
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol * np.abs(want).max())
    strided = C.tensor(np.repeat(bias, 2), dtype=dt, device="cuda")[::2]  # not dense: copy path
    got = C.addmm(strided, ta, tb).float().cpu().numpy()
    np.testing.assert_allclose(got, bias64 + a32 @ b32, rtol=tol, atol=tol * np.abs(want).max())
    row = tbias.reshape(1, n)  # 2-D bias: copy path
    got = C.addmm(row, ta, tb, beta=2.0).float().cpu().numpy()
    np.testing.assert_allclose(got, 2 * bias64 + a32 @ b32, rtol=tol, atol=tol * np.abs(want).max())


@gpu
def test_errors_like_torch():
    li = to_cuda(np.ones((2, 2), np.int64))
    with pytest.raises(RuntimeError, match="^\"addmm_cuda\" not implemented for 'Long'$"):
        _C._cuda_matmul(li, li)
    b3 = to_cuda(np.ones((2, 2, 2), np.int32))
    with pytest.raises(RuntimeError, match="^\"baddbmm_cuda\" not implemented for 'Int'$"):
        _C._cuda_matmul(b3, b3)
    f32, f64 = to_cuda(np.ones((2, 3), np.float32)), to_cuda(np.ones((3, 2), np.float64))
    with pytest.raises(
        RuntimeError, match="^expected m1 and m2 to have the same dtype, but got: float != double$"
    ):
        _C._cuda_matmul(f32, f64)
    with pytest.raises(
        RuntimeError,
        match=r"^mat1 and mat2 shapes cannot be multiplied \(2x3 "
        r"and 2x3\)$",
    ):
        _C._cuda_matmul(f32, f32)
    cpu = _C.from_numpy(np.ones((3, 2), np.float32))
    with pytest.raises(RuntimeError, match="^Expected all tensors to be on the same device"):
        _C._cuda_matmul(f32, cpu)


@gpu
def test_int_error_matches_torch():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch has no CUDA here")
    x = torch.ones(2, 2, dtype=torch.long, device="cuda")
    with pytest.raises(RuntimeError) as theirs:
        torch.matmul(x, x)
    li = to_cuda(np.ones((2, 2), np.int64))
    with pytest.raises(RuntimeError) as ours:
        _C._cuda_matmul(li, li)
    assert str(ours.value) == str(theirs.value)


@gpu
def test_matches_torch_results():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch has no CUDA here")
    rng = np.random.default_rng(4)
    a, b = rng.standard_normal((64, 32)).astype(np.float32), rng.standard_normal((32, 16))
    b = b.astype(np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = (torch.from_numpy(a).cuda() @ torch.from_numpy(b).cuda()).cpu().numpy()
    ours = to_numpy(_C._cuda_matmul(to_cuda(a), to_cuda(b)))
    np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-5)


@gpu
def test_blas_handle_per_device():
    h = cuda.current_blas_handle()
    assert h == _C._cuda.current_blas_handle(0) != 0
    assert _C._cuda._blas_library_path() != ""


@pytest.mark.skipif(not _C._cuda.is_compiled(), reason="needs a CUDA build")
def test_cublas_is_loaded_on_first_use_only():
    code = (
        "from cudalite import _C\n"
        "before = _C._cuda._blas_library_path()\n"
        "try:\n"
        "    _C._cuda.current_blas_handle(0)\n"
        "    err = ''\n"
        "except RuntimeError as e:\n"
        "    err = str(e)\n"
        "maps = open('/proc/self/maps').read()\n"
        "print(repr((before, _C._cuda._blas_library_path(), 'libcublas' in maps, err)))\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    ).stdout
    before, after, mapped, err = ast.literal_eval(out.strip())
    assert before == ""
    if err.startswith("cuBLAS could not be loaded"):
        assert after == "" and "Tried: libcublas.so.13" in err
        return
    assert "libcublas.so" in after and mapped
    if HAS_GPU:
        assert err == ""
    else:  # loaded, then the handle needs a GPU
        assert err.startswith(("Found no NVIDIA driver", "No CUDA GPUs are available"))


@gpu
def test_mixed_tf32_apis_refuse_float32_products():
    a = cudalite.ones(8, 8, device="cuda")
    matmul_flags.allow_tf32 = True
    matmul_flags.fp32_precision = "ieee"  # the new API disagrees with the legacy one
    with pytest.raises(RuntimeError, match="used mix of the legacy and new APIs"):
        a @ a
    assert (a.half() @ a.half()).dtype == cudalite.float16  # only float32 products check
    matmul_flags.allow_tf32 = False  # agreement again
    assert (a @ a)[0, 0].item() == 8.0
