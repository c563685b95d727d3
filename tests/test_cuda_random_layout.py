"""cudalite's CUDA randperm, multinomial and dropout against a NumPy model of torch's kernels
(torch_cuda_philox.py): the same numbers from the generator's (seed, offset), and the offset
advanced by what torch's kernels reserve, so that the ops after them draw torch's numbers too.
The model itself is checked on the CPU (Philox's published known answers, curand's floats,
permutations); the comparisons need a GPU, not torch."""

from __future__ import annotations

import struct

import numpy as np
import pytest

import cudalite as C
import torch_cuda_philox as P
from conftest import requires_cuda

BIG = 2**20 + 3


# ---- the model, on the CPU ----


def test_philox_known_answers():
    """Random123's known-answer vectors for Philox4x32-10."""
    cases = [
        ([0, 0, 0, 0], (0, 0), [0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8]),
        ([0xFFFFFFFF] * 4, (0xFFFFFFFF,) * 2, [0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD]),
        (
            [0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344],
            (0xA4093822, 0x299F31D0),
            [0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1],
        ),
    ]
    for ctr, key, expected in cases:
        assert P.philox4x32_10([ctr], key)[0].tolist() == expected


def test_streams_are_counter_blocks():
    """Thread t's k-th draw at offset o is the block (o / 4 + k, t) under the seed's key."""
    seed = 0x123456789AB
    got = P.draws(seed, [5, 5, 7], 8, [0, 1, 0])
    for row, (thread, step) in zip(got, [(5, 0), (5, 1), (7, 0)], strict=True):
        block = P.philox4x32_10([[2 + step, 0, thread, 0]], (seed & 0xFFFFFFFF, seed >> 32))[0]
        assert row.tolist() == block.tolist()


def test_curand_uniform_range():
    u = P.uniform_floats(np.array([0, 1, 2**31, 2**32 - 1], dtype=np.uint32))
    assert u[0] == np.float32(2.0**-33) and u[-1] == np.float32(1.0)
    assert np.all(np.diff(u) > 0)


@pytest.mark.parametrize("n", [1, 2, 3, 17, 1000, 40000])
def test_model_randperm_is_a_permutation(n):
    perm, offset = P.randperm(42, n, 16, sms=132, threads_per_sm=2048)
    assert sorted(perm.tolist()) == list(range(n))
    grid, inc = P.launch(n, 132, 2048, unroll=2)
    assert offset == 16 + inc + P.round4(n)


def test_model_randperm_seeds_with_equal_keys():
    """About one seed in ten gives equal keys (torch's 0.9 threshold): the seeds of
    test_randperm_runs_of_equal_keys exercise the shuffle of runs."""
    hits = [s for s in range(60) if P.randperm_islands(s, 10, 0, 132, 2048)]
    assert 0 < len(hits) < 30


def test_model_randperm_key_widths():
    """32-bit keys below n = 30084 (all 32 bits of them from n = 21273), 64-bit keys from it."""
    assert P.randperm_bits(21272) == 31 and P.randperm_bits(21273) == 32
    assert P.randperm_bits(30083) == 32 and P.randperm_bits(30084) == 33
    assert P.randperm_bits(2) < P.randperm_bits(1000) < 32


def test_model_scan_shape():
    """torch's threads per row of its scan, with the wrap-around of its unsigned arithmetic
    for many short rows."""
    assert P.scan_log_threads_x(2, 1000) == 9
    assert P.scan_log_threads_x(64, 1000) == 6
    assert P.scan_log_threads_x(1000, 8) == 4
    assert P.scan_log_threads_x(8192, 8) == 9  # 9 + 3 - 13 wraps


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_model_renorm_and_scan_are_sums(dtype):
    rng = np.random.default_rng(0)
    p = rng.random((5, 300)).astype(dtype)
    dist = np.stack([P.renorm_row(r) for r in p])
    cum = P.scan_rows(dist)
    tol = 1e-5 if dtype == np.float32 else 2e-2
    np.testing.assert_allclose(dist.astype(np.float64).sum(1), 1, rtol=tol)
    exact = np.cumsum(dist, 1, dtype=np.float64)
    np.testing.assert_allclose(cum.astype(np.float64), exact, atol=tol)


def test_model_dropout_vector_width():
    assert P.dropout_vec(256, 4, 1000) == 4  # float32: 16 bytes
    assert P.dropout_vec(256, 2, 1000) == 8  # float16: 16 bytes
    assert P.dropout_vec(256, 8, 1000) == 2
    assert P.dropout_vec(256, 4, 1001) == 1  # odd size
    assert P.dropout_vec(8, 4, 1000) == 2  # an address 8 bytes past alignment
    assert P.dropout_vec(4, 4, 1000) == 1


# ---- cudalite's kernels against the model, on a GPU ----


def _gpu():
    p = C.cuda.get_device_properties(0)
    return p.multi_processor_count, p.max_threads_per_multi_processor


def _state():
    """(seed, offset) of the current CUDA generator."""
    return struct.unpack("<QQ", bytes(C.cuda.get_rng_state().tolist()))


@pytest.fixture(autouse=True)
def _restore_seed():
    yield
    C.manual_seed(0)


@requires_cuda
@pytest.mark.parametrize("n", [1, 2, 3, 10, 100, 1000, 25000, 30083, 30084, 100_000, BIG])
@pytest.mark.parametrize("dtype", ["int64", "int32"])
def test_randperm_matches_model(n, dtype):
    C.manual_seed(1234)
    seed, offset = _state()
    got = C.randperm(n, device="cuda", dtype=getattr(C, dtype)).cpu().numpy()
    expected, after = P.randperm(seed, n, offset, *_gpu())
    np.testing.assert_array_equal(got, expected)
    assert _state() == (seed, after)


@requires_cuda
@pytest.mark.parametrize("n", [3, 10, 50])
def test_randperm_runs_of_equal_keys(n):
    """Seeds whose keys collide go through the shuffle of runs."""
    sms, tps = _gpu()
    for s in range(60):
        C.manual_seed(s)
        got = C.randperm(n, device="cuda").cpu().numpy()
        np.testing.assert_array_equal(got, P.randperm(s, n, 0, sms, tps)[0])


@requires_cuda
def test_randperm_empty_draws_nothing():
    C.manual_seed(5)
    before = _state()
    assert C.randperm(0, device="cuda").shape == (0,)
    assert _state() == before


@requires_cuda
def test_randperm_into_noncontiguous_out():
    C.manual_seed(77)
    seed, offset = _state()
    out = C.zeros(2, 500, dtype=C.int64, device="cuda")[:, 0::2][0]
    C.randperm(250, device="cuda", out=out)
    np.testing.assert_array_equal(out.cpu().numpy(), P.randperm(seed, 250, offset, *_gpu())[0])


# Dyadic probabilities: sums, normalisation and prefix sums are exact in float32, so the
# buckets do not depend on the order of the additions.
_PROBS = [
    [[1, 2, 1, 4, 0, 8]],
    [[0.5, 0.25, 0.25], [0.125, 0.125, 0.75], [1, 0, 0]],
    [[0, 0, 3, 1, 0, 0, 0, 4]] * 70,
]


@requires_cuda
@pytest.mark.parametrize("probs", _PROBS, ids=["1x6", "3x3", "70x8"])
@pytest.mark.parametrize("samples", [2, 5, 129, 1000])
def test_multinomial_with_replacement_matches_model(probs, samples):
    C.manual_seed(99)
    seed, offset = _state()
    p = C.tensor(probs, dtype=C.float32, device="cuda")
    got = C.multinomial(p, samples, replacement=True).cpu().numpy()
    expected, after = P.multinomial(seed, probs, samples, offset)
    np.testing.assert_array_equal(got, expected)
    assert _state() == (seed, after)


@requires_cuda
@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("rows, cats", [(2, 10), (5, 1000), (300, 7), (3, 2500)])
def test_multinomial_rows_summed_as_torch(dtype, rows, cats):
    """Probabilities whose sums round: the buckets are torch's only when the rows are summed
    and prefix-summed in torch's order (in float16 too)."""
    probs = np.random.default_rng(rows * cats).random((rows, cats)).astype(dtype)
    C.manual_seed(rows)
    seed, offset = _state()
    got = C.multinomial(C.from_numpy(probs).cuda(), 257, replacement=True).cpu().numpy()
    expected, after = P.multinomial(seed, probs, 257, offset, dtype=getattr(np, dtype))
    np.testing.assert_array_equal(got, expected)
    assert _state() == (seed, after)


@requires_cuda
def test_multinomial_one_dim_and_zero_probabilities():
    C.manual_seed(3)
    seed, offset = _state()
    probs = [0.0, 0.5, 0.0, 0.5, 0.0]
    got = C.multinomial(C.tensor(probs, device="cuda"), 300, replacement=True).cpu().numpy()
    expected, _ = P.multinomial(seed, probs, 300, offset)
    np.testing.assert_array_equal(got, expected[0])
    assert set(got.tolist()) <= {1, 3}


@requires_cuda
def test_multinomial_of_no_rows_draws_nothing():
    C.manual_seed(4)
    before = _state()
    assert C.multinomial(C.ones(0, 3, device="cuda"), 5, replacement=True).shape == (0, 5)
    assert _state() == before


@requires_cuda
def test_multinomial_errors_on_cuda():
    with pytest.raises(RuntimeError, match="sum of probabilities <= 0"):
        C.multinomial(C.zeros(2, 3, device="cuda"), 4, replacement=True)
    with pytest.raises(RuntimeError, match="probability entry < 0"):
        C.multinomial(C.tensor([0.5, -0.1], device="cuda"), 4, replacement=True)


def _aligned(t):
    return t.data_ptr() & -t.data_ptr()  # the largest power of two dividing the address


@requires_cuda
@pytest.mark.parametrize("n", [1, 3, 15, 16, 17, 1000, 12288, BIG])
@pytest.mark.parametrize("dtype", ["float32", "float16", "float64"])
@pytest.mark.parametrize("p", [0.1, 0.5])
def test_dropout_matches_model(n, dtype, p):
    x = C.randn(n, device="cuda", dtype=getattr(C, dtype))
    C.manual_seed(2024)
    seed, offset = _state()
    got = C.nn.functional.dropout(x, p).cpu().numpy()
    vec = P.dropout_vec(_aligned(x), x.element_size(), n)
    expected, after = P.dropout(seed, offset, x.cpu().numpy(), p, *_gpu(), vec)
    np.testing.assert_array_equal(got.view(np.uint8), expected.view(np.uint8))
    assert _state() == (seed, after)


@requires_cuda
@pytest.mark.parametrize("start", [1, 2, 3, 4])
def test_dropout_of_offset_views(start):
    """Addresses that allow 2- or 4-wide vectors, or none (the grid-stride layout)."""
    x = C.randn(4096 + start, device="cuda")[start:]
    C.manual_seed(11)
    seed, offset = _state()
    got = C.nn.functional.dropout(x, 0.3).cpu().numpy()
    vec = P.dropout_vec(_aligned(x), 4, x.numel())
    expected, _ = P.dropout(seed, offset, x.cpu().numpy(), 0.3, *_gpu(), vec)
    np.testing.assert_array_equal(got, expected)


@requires_cuda
def test_dropout_of_transposed_input_is_in_memory_order():
    base = C.randn(64, 33, device="cuda")
    C.manual_seed(12)
    seed, offset = _state()
    got = C.nn.functional.dropout(base.t(), 0.3)
    assert got.stride() == base.t().stride()
    vec = P.dropout_vec(_aligned(base), 4, base.numel())
    expected, _ = P.dropout(seed, offset, base.cpu().numpy(), 0.3, *_gpu(), vec)
    np.testing.assert_array_equal(got.t().cpu().numpy(), expected)


@requires_cuda
def test_dropout_of_sliced_input_is_in_logical_order():
    x = C.randn(40, 50, device="cuda")[:, :31]
    C.manual_seed(13)
    seed, offset = _state()
    got = C.nn.functional.dropout(x, 0.3).cpu().numpy()
    expected, _ = P.dropout(seed, offset, x.cpu().numpy(), 0.3, *_gpu(), 1)
    np.testing.assert_array_equal(got, expected)


@requires_cuda
def test_dropout_gradient_is_mask_times_scale():
    x = C.randn(3000, device="cuda", requires_grad=True)
    y = C.nn.functional.dropout(x, 0.25)
    y.sum().backward()
    kept = (y != 0).cpu().numpy()
    np.testing.assert_allclose(x.grad.cpu().numpy(), kept / np.float32(0.75), rtol=1e-6)
    assert y.grad_fn is not None


@requires_cuda
def test_dropout_of_integers_raises_as_torch():
    with pytest.raises(NotImplementedError, match="\"fused_dropout\" not implemented for 'Long'"):
        C.nn.functional.dropout(C.ones(10, dtype=C.int64, device="cuda"), 0.5)


@requires_cuda
def test_ops_in_sequence_leave_torchs_offsets():
    """rand, randperm, dropout, multinomial one after another: each op's offset increment is
    torch's, so a rand after them gives the model's numbers."""
    sms, tps = _gpu()
    C.manual_seed(31)
    seed, offset = _state()
    C.rand(1000, device="cuda")
    offset += P.launch(1000, sms, tps)[1]
    perm = C.randperm(5000, device="cuda").cpu().numpy()
    expected_perm, offset = P.randperm(seed, 5000, offset, sms, tps)
    np.testing.assert_array_equal(perm, expected_perm)
    x = C.ones(3000, device="cuda")
    offset_before_x = offset
    assert _state()[1] == offset_before_x
    C.nn.functional.dropout(x, 0.2)
    offset += P.launch(3000, sms, tps)[1]
    C.multinomial(C.tensor([[0.5, 0.5]] * 4, device="cuda"), 100, replacement=True)
    offset += 4
    assert _state() == (seed, offset)
    got = C.rand(777, device="cuda").cpu().numpy()
    grid, _ = P.launch(777, sms, tps)
    u = P.uniform_floats(P.fill_words(seed, offset, 777, grid, 4))
    np.testing.assert_array_equal(got, np.where(u == 1.0, np.float32(0), u))
