"""The calls of the autocast table (tests/test_autocast_lists.py): every op of torch 2.11's
autocast lists (aten/src/ATen/autocast_mode.h and autocast_mode.cpp: CUDA's lower precision,
float32, float32-via-dtype, float32-with-appended-dtype and promote lists, and the CPU's
lists) reached through its Python spellings, plus a few ops in no list as controls.

Each case is ``(name, fn)``: ``fn(c)`` calls the op through ``c.T`` (``torch`` or
``cudalite``) on inputs made by ``c.f`` (floating: the variant decides the dtype), ``c.u``
(floating, in (0.1, 0.9)), ``c.spd`` (a symmetric positive definite float matrix), ``c.sign``
(+1/-1 floats), ``c.long``; ``c.dev`` is the device. A case runs in three variants: every
floating input float32 ("f32"), every floating input in the region's dtype ("low"), and the
first one in the region's dtype, the others float32 ("mix"). Nothing here imports torch or
cudalite: tests/gen_autocast_table.py records torch's results with it, and the test runs
cudalite through it.
"""

from __future__ import annotations

import numpy as np


class Ctx:
    """The library, the device and the input makers of one case in one variant."""

    def __init__(self, T, dev, low, variant, seed, wrap=None):
        self.T, self.dev, self.low, self.variant = T, dev, low, variant
        self.F = T.nn.functional
        self._rng = np.random.default_rng(seed)
        self._n = 0
        self._wrap = wrap  # how an array becomes a tensor (torch's fake CUDA tensors)

    def _tensor(self, a, dtype):
        if self._wrap is not None:
            return self._wrap(a, dtype)
        return self.T.from_numpy(a).to(device=self.dev, dtype=dtype)

    def _float(self, a):
        first = self._n == 0
        self._n += 1
        low = self.variant == "low" or (self.variant == "mix" and first)
        return self._tensor(a.astype(np.float32), self.low if low else self.T.float32)

    def f(self, *shape):
        return self._float(self._rng.standard_normal(shape))

    def u(self, *shape):
        return self._float(self._rng.uniform(0.1, 0.9, shape))

    def sign(self, *shape):
        return self._float(np.where(self._rng.uniform(size=shape) < 0.5, -1.0, 1.0))

    def spd(self, n):
        a = self._rng.standard_normal((n, n))
        return self._float(a @ a.T + n * np.eye(n))

    def long(self, *shape, high):
        return self._tensor(self._rng.integers(0, high, shape).astype(np.int64), self.T.int64)

    def arange(self, n):
        return self._tensor(np.arange(n, dtype=np.int64), self.T.int64)


def _unary(name):
    return [
        (name, lambda c: getattr(c.T, name)(c.u(3, 4))),
        (f"Tensor.{name}", lambda c: getattr(c.u(3, 4), name)()),
    ]


def _interp(dims, mode, **kw):
    def fn(c):
        shape = (1, 2) + (4,) * dims
        return c.F.interpolate(c.f(*shape), scale_factor=2, mode=mode, **kw)

    return fn


def _pad(dims, mode):
    return lambda c: c.F.pad(c.f(*((1, 2) + (4,) * dims)), (1, 1) * dims, mode=mode)


def _cell(kind):
    def fn(c):
        T = c.T
        mod = {
            "lstm": lambda: T.nn.LSTMCell(3, 4, device=c.dev),
            "gru": lambda: T.nn.GRUCell(3, 4, device=c.dev),
            "rnn_tanh": lambda: T.nn.RNNCell(3, 4, device=c.dev),
            "rnn_relu": lambda: T.nn.RNNCell(3, 4, nonlinearity="relu", device=c.dev),
        }[kind]()
        return mod(c.f(2, 3))

    return fn


def _unpool(dims):
    def fn(c):
        pool = c.F.max_pool2d if dims == 2 else c.F.max_pool3d
        unpool = c.F.max_unpool2d if dims == 2 else c.F.max_unpool3d
        x = c.f(*((1, 2) + (4,) * dims))
        out, idx = pool(x, 2, return_indices=True)
        return unpool(out, idx, 2)

    return fn


CASES = [
    # ---- lower precision (CUDA: AT_FORALL_LOWER_PRECISION_FP; CPU: its own list) ----
    ("conv1d", lambda c: c.F.conv1d(c.f(2, 3, 8), c.f(4, 3, 3), c.f(4))),
    ("conv1d padding", lambda c: c.F.conv1d(c.f(2, 3, 8), c.f(4, 3, 3), padding="same")),
    ("conv2d", lambda c: c.F.conv2d(c.f(2, 3, 6, 6), c.f(4, 3, 3, 3), c.f(4))),
    ("conv2d padding", lambda c: c.F.conv2d(c.f(2, 3, 6, 6), c.f(4, 3, 3, 3), padding="same")),
    ("conv3d", lambda c: c.F.conv3d(c.f(1, 2, 4, 4, 4), c.f(3, 2, 2, 2, 2))),
    (
        "conv3d padding",
        lambda c: c.F.conv3d(c.f(1, 2, 4, 4, 4), c.f(3, 2, 3, 3, 3), padding="same"),
    ),
    ("torch.conv2d", lambda c: c.T.conv2d(c.f(2, 3, 6, 6), c.f(4, 3, 3, 3))),
    (
        "convolution",
        lambda c: c.T.convolution(
            c.f(2, 3, 6, 6), c.f(4, 3, 3, 3), None, [1, 1], [0, 0], [1, 1], False, [0, 0], 1
        ),
    ),
    ("conv_tbc", lambda c: c.T.conv_tbc(c.f(8, 2, 3), c.f(3, 3, 4), c.f(4), 1)),
    ("conv_transpose1d", lambda c: c.F.conv_transpose1d(c.f(2, 3, 8), c.f(3, 4, 3))),
    ("conv_transpose2d", lambda c: c.F.conv_transpose2d(c.f(2, 3, 5, 5), c.f(3, 4, 3, 3))),
    ("conv_transpose3d", lambda c: c.F.conv_transpose3d(c.f(1, 2, 3, 3, 3), c.f(2, 3, 2, 2, 2))),
    ("nn.Conv2d", lambda c: c.T.nn.Conv2d(3, 4, 3, device=c.dev)(c.f(2, 3, 6, 6))),
    ("prelu", lambda c: c.F.prelu(c.f(2, 3, 4), c.f(3))),
    ("addmm", lambda c: c.T.addmm(c.f(4, 5), c.f(4, 3), c.f(3, 5))),
    ("Tensor.addmm", lambda c: c.f(4, 5).addmm(c.f(4, 3), c.f(3, 5))),
    ("addmv", lambda c: c.T.addmv(c.f(4), c.f(4, 3), c.f(3))),
    ("addr", lambda c: c.T.addr(c.f(4, 3), c.f(4), c.f(3))),
    ("matmul", lambda c: c.T.matmul(c.f(4, 3), c.f(3, 5))),
    ("Tensor.matmul", lambda c: c.f(4, 3).matmul(c.f(3, 5))),
    ("__matmul__", lambda c: c.f(2, 4, 3) @ c.f(3, 5)),
    ("einsum", lambda c: c.T.einsum("ij,jk->ik", c.f(4, 3), c.f(3, 5))),
    ("mm", lambda c: c.T.mm(c.f(4, 3), c.f(3, 5))),
    ("Tensor.mm", lambda c: c.f(4, 3).mm(c.f(3, 5))),
    ("mv", lambda c: c.T.mv(c.f(4, 3), c.f(3))),
    ("linalg_vecdot", lambda c: c.T.linalg.vecdot(c.f(4, 3), c.f(4, 3))),
    ("linear", lambda c: c.F.linear(c.f(4, 3), c.f(5, 3), c.f(5))),
    ("nn.Linear", lambda c: c.T.nn.Linear(3, 5, device=c.dev)(c.f(4, 3))),
    ("addbmm", lambda c: c.T.addbmm(c.f(3, 5), c.f(2, 3, 4), c.f(2, 4, 5))),
    ("baddbmm", lambda c: c.T.baddbmm(c.f(2, 3, 5), c.f(2, 3, 4), c.f(2, 4, 5))),
    ("bmm", lambda c: c.T.bmm(c.f(2, 3, 4), c.f(2, 4, 5))),
    ("Tensor.bmm", lambda c: c.f(2, 3, 4).bmm(c.f(2, 4, 5))),
    ("chain_matmul", lambda c: c.T.chain_matmul(c.f(4, 3), c.f(3, 5), c.f(5, 2))),
    ("linalg_multi_dot", lambda c: c.T.linalg.multi_dot([c.f(4, 3), c.f(3, 5), c.f(5, 2)])),
    ("lstm_cell", _cell("lstm")),
    ("gru_cell", _cell("gru")),
    ("rnn_tanh_cell", _cell("rnn_tanh")),
    ("rnn_relu_cell", _cell("rnn_relu")),
    (
        "scaled_dot_product_attention",
        lambda c: c.F.scaled_dot_product_attention(
            c.f(1, 2, 4, 8), c.f(1, 2, 4, 8), c.f(1, 2, 4, 8)
        ),
    ),
    # ---- float32 (CUDA: AT_FORALL_FP32) ----
    *[
        case
        for name in (
            "acos asin cosh erfinv exp expm1 log log10 log2 log1p reciprocal rsqrt sinh tan"
        ).split()
        for case in _unary(name)
    ],
    ("pow Tensor_Scalar", lambda c: c.T.pow(c.u(3, 4), 2)),
    ("Tensor.pow", lambda c: c.u(3, 4).pow(2.5)),
    ("__pow__", lambda c: c.u(3, 4) ** 2),
    ("pow Tensor_Tensor", lambda c: c.T.pow(c.u(3, 4), c.u(3, 4))),
    ("__pow__ Tensor", lambda c: c.u(3, 4) ** c.u(3, 4)),
    ("pow Scalar", lambda c: c.T.pow(2, c.u(3, 4))),
    ("__rpow__", lambda c: 2 ** c.u(3, 4)),
    ("softplus", lambda c: c.F.softplus(c.f(3, 4))),
    ("layer_norm", lambda c: c.F.layer_norm(c.f(3, 8), (8,), c.f(8), c.f(8))),
    ("layer_norm no weight", lambda c: c.F.layer_norm(c.f(3, 8), (8,))),
    ("nn.LayerNorm", lambda c: c.T.nn.LayerNorm(8, device=c.dev)(c.f(3, 8))),
    ("native_layer_norm", lambda c: c.T.native_layer_norm(c.f(3, 8), [8], c.f(8), c.f(8), 1e-5)),
    ("group_norm", lambda c: c.F.group_norm(c.f(2, 4, 3), 2, c.f(4), c.f(4))),
    ("nn.GroupNorm", lambda c: c.T.nn.GroupNorm(2, 4, device=c.dev)(c.f(2, 4, 3))),
    ("frobenius_norm", lambda c: c.T.frobenius_norm(c.f(3, 4), [0, 1])),
    ("nuclear_norm", lambda c: c.T.nuclear_norm(c.f(3, 4))),
    ("cosine_similarity", lambda c: c.F.cosine_similarity(c.f(3, 4), c.f(3, 4))),
    ("poisson_nll_loss", lambda c: c.F.poisson_nll_loss(c.f(3, 4), c.u(3, 4))),
    (
        "cosine_embedding_loss",
        lambda c: c.F.cosine_embedding_loss(c.f(3, 4), c.f(3, 4), c.sign(3)),
    ),
    ("nll_loss", lambda c: c.F.nll_loss(c.f(4, 5), c.long(4, high=5))),
    ("nll_loss2d", lambda c: c.F.nll_loss(c.f(2, 5, 3, 3), c.long(2, 3, 3, high=5))),
    ("cross_entropy", lambda c: c.F.cross_entropy(c.f(4, 5), c.long(4, high=5))),
    ("cross_entropy probs", lambda c: c.F.cross_entropy(c.f(4, 5), c.u(4, 5))),
    ("nn.CrossEntropyLoss", lambda c: c.T.nn.CrossEntropyLoss()(c.f(4, 5), c.long(4, high=5))),
    ("hinge_embedding_loss", lambda c: c.F.hinge_embedding_loss(c.f(3, 4), c.sign(3, 4))),
    ("kl_div", lambda c: c.F.kl_div(c.f(3, 4), c.u(3, 4), reduction="batchmean")),
    ("l1_loss", lambda c: c.F.l1_loss(c.f(3, 4), c.f(3, 4))),
    ("smooth_l1_loss", lambda c: c.F.smooth_l1_loss(c.f(3, 4), c.f(3, 4))),
    ("huber_loss", lambda c: c.F.huber_loss(c.f(3, 4), c.f(3, 4))),
    ("mse_loss", lambda c: c.F.mse_loss(c.f(3, 4), c.f(3, 4))),
    ("nn.MSELoss", lambda c: c.T.nn.MSELoss()(c.f(3, 4), c.f(3, 4))),
    ("margin_ranking_loss", lambda c: c.F.margin_ranking_loss(c.f(4), c.f(4), c.sign(4))),
    (
        "multilabel_margin_loss",
        lambda c: c.F.multilabel_margin_loss(c.f(3, 4), c.long(3, 4, high=4)),
    ),
    ("soft_margin_loss", lambda c: c.F.soft_margin_loss(c.f(3, 4), c.sign(3, 4))),
    ("triplet_margin_loss", lambda c: c.F.triplet_margin_loss(c.f(3, 4), c.f(3, 4), c.f(3, 4))),
    ("multi_margin_loss", lambda c: c.F.multi_margin_loss(c.f(3, 4), c.long(3, high=4))),
    (
        "binary_cross_entropy_with_logits",
        lambda c: c.F.binary_cross_entropy_with_logits(c.f(3, 4), c.u(3, 4)),
    ),
    ("binary_cross_entropy", lambda c: c.F.binary_cross_entropy(c.u(3, 4), c.u(3, 4))),
    ("dist", lambda c: c.T.dist(c.f(3, 4), c.f(3, 4))),
    ("pdist", lambda c: c.F.pdist(c.f(4, 3))),
    ("cdist", lambda c: c.T.cdist(c.f(4, 3), c.f(5, 3))),
    ("renorm", lambda c: c.T.renorm(c.f(3, 4), 2, 0, 1.0)),
    ("logsumexp", lambda c: c.T.logsumexp(c.f(3, 4), 1)),
    ("Tensor.logsumexp", lambda c: c.f(3, 4).logsumexp(1)),
    ("upsample_nearest1d", _interp(1, "nearest")),
    ("_upsample_nearest_exact1d", _interp(1, "nearest-exact")),
    ("upsample_nearest2d", _interp(2, "nearest")),
    ("_upsample_nearest_exact2d", _interp(2, "nearest-exact")),
    ("upsample_nearest3d", _interp(3, "nearest")),
    ("_upsample_nearest_exact3d", _interp(3, "nearest-exact")),
    ("upsample_linear1d", _interp(1, "linear")),
    ("upsample_bilinear2d", _interp(2, "bilinear")),
    ("_upsample_bilinear2d_aa", _interp(2, "bilinear", antialias=True)),
    ("upsample_trilinear3d", _interp(3, "trilinear")),
    ("upsample_bicubic2d", _interp(2, "bicubic")),
    ("_upsample_bicubic2d_aa", _interp(2, "bicubic", antialias=True)),
    # ---- float32 through dtype= (AT_FORALL_FP32_SET_OPT_DTYPE) ----
    ("prod", lambda c: c.T.prod(c.f(3, 4))),
    ("prod dim_int", lambda c: c.T.prod(c.f(3, 4), 1)),
    ("Tensor.prod", lambda c: c.f(3, 4).prod(0)),
    ("softmax", lambda c: c.T.softmax(c.f(3, 4), 1)),
    ("F.softmax", lambda c: c.F.softmax(c.f(3, 4), dim=1)),
    ("Tensor.softmax", lambda c: c.f(3, 4).softmax(-1)),
    ("nn.Softmax", lambda c: c.T.nn.Softmax(dim=1)(c.f(3, 4))),
    ("log_softmax", lambda c: c.T.log_softmax(c.f(3, 4), 1)),
    ("F.log_softmax", lambda c: c.F.log_softmax(c.f(3, 4), dim=1)),
    ("Tensor.log_softmax", lambda c: c.f(3, 4).log_softmax(-1)),
    ("cumprod", lambda c: c.T.cumprod(c.f(3, 4), 1)),
    ("Tensor.cumprod", lambda c: c.f(3, 4).cumprod(0)),
    ("cumsum", lambda c: c.T.cumsum(c.f(3, 4), 1)),
    ("Tensor.cumsum", lambda c: c.f(3, 4).cumsum(0)),
    ("linalg_vector_norm", lambda c: c.T.linalg.vector_norm(c.f(3, 4))),
    ("linalg_norm vector", lambda c: c.T.linalg.norm(c.f(4))),
    ("linalg_matrix_norm str_ord", lambda c: c.T.linalg.matrix_norm(c.f(3, 4))),
    ("linalg_matrix_norm", lambda c: c.T.linalg.matrix_norm(c.f(3, 4), 1)),
    ("sum", lambda c: c.T.sum(c.f(3, 4))),
    ("sum dim_IntList", lambda c: c.T.sum(c.f(3, 4), 1)),
    ("Tensor.sum", lambda c: c.f(3, 4).sum(0, keepdim=True)),
    ("sum dtype", lambda c: c.T.sum(c.f(3, 4), dtype=c.low)),
    ("sum int64", lambda c: c.T.sum(c.long(3, 4, high=5))),
    # ---- float32 with an appended dtype (AT_FORALL_DIFFERENT_REDISPATCH_SIGNATURE) ----
    ("norm", lambda c: c.T.norm(c.f(3, 4))),
    ("norm p dim", lambda c: c.T.norm(c.f(3, 4), 3, 1)),
    ("Tensor.norm", lambda c: c.f(3, 4).norm(dim=1)),
    ("norm nuc", lambda c: c.T.norm(c.f(3, 4), p="nuc")),
    ("F.normalize", lambda c: c.F.normalize(c.f(3, 4), dim=1)),
    # ---- promote (AT_FORALL_PROMOTE; the CPU's: stack, cat, index_copy) ----
    ("addcdiv", lambda c: c.T.addcdiv(c.f(3, 4), c.f(3, 4), c.u(3, 4), value=0.5)),
    ("addcmul", lambda c: c.T.addcmul(c.f(3, 4), c.f(3, 4), c.f(3, 4), value=0.5)),
    ("Tensor.addcmul", lambda c: c.f(3, 4).addcmul(c.f(3, 4), c.f(3, 4))),
    ("atan2", lambda c: c.T.atan2(c.f(3, 4), c.f(3, 4))),
    ("arctan2", lambda c: c.T.arctan2(c.f(3, 4), c.f(3, 4))),
    ("Tensor.atan2", lambda c: c.f(3, 4).atan2(c.f(3, 4))),
    ("bilinear", lambda c: c.F.bilinear(c.f(4, 3), c.f(4, 5), c.f(6, 3, 5), c.f(6))),
    ("cross", lambda c: c.T.cross(c.f(4, 3), c.f(4, 3), dim=1)),
    ("linalg_cross", lambda c: c.T.linalg.cross(c.f(4, 3), c.f(4, 3))),
    ("dot", lambda c: c.T.dot(c.f(4), c.f(4))),
    ("Tensor.dot", lambda c: c.f(4).dot(c.f(4))),
    ("vdot", lambda c: c.T.vdot(c.f(4), c.f(4))),
    (
        "grid_sampler",
        lambda c: c.F.grid_sample(c.f(1, 2, 4, 4), c.u(1, 3, 3, 2), align_corners=False),
    ),
    ("index_put", lambda c: c.T.index_put(c.f(4, 5), (c.arange(3),), c.f(3, 5))),
    ("Tensor.index_put", lambda c: c.f(4, 5).index_put((c.arange(3),), c.f(3, 5))),
    ("tensordot", lambda c: c.T.tensordot(c.f(4, 3), c.f(3, 5), dims=1)),
    ("scatter_add", lambda c: c.T.scatter_add(c.f(4, 5), 1, c.long(4, 2, high=5), c.f(4, 2))),
    ("Tensor.scatter_add", lambda c: c.f(4, 5).scatter_add(1, c.long(4, 2, high=5), c.f(4, 2))),
    ("cat", lambda c: c.T.cat([c.f(2, 3), c.f(2, 3)])),
    ("stack", lambda c: c.T.stack([c.f(2, 3), c.f(2, 3)])),
    ("index_copy", lambda c: c.T.index_copy(c.f(4, 5), 0, c.arange(2), c.f(2, 5))),
    ("Tensor.index_copy", lambda c: c.f(4, 5).index_copy(0, c.arange(2), c.f(2, 5))),
    # ---- the CPU's float32 list ----
    ("avg_pool3d", lambda c: c.F.avg_pool3d(c.f(1, 2, 4, 4, 4), 2)),
    ("polar", lambda c: c.T.polar(c.u(3, 4), c.f(3, 4))),
    ("quantile", lambda c: c.T.quantile(c.f(3, 4), 0.5)),
    ("nanquantile", lambda c: c.T.nanquantile(c.f(3, 4), 0.5, dim=1)),
    ("stft", lambda c: c.T.stft(c.f(64), 16, return_complex=True)),
    ("trace", lambda c: c.T.trace(c.f(4, 4))),
    ("view_as_complex", lambda c: c.T.view_as_complex(c.f(4, 2))),
    ("cholesky", lambda c: c.T.cholesky(c.spd(3))),
    ("cholesky_inverse", lambda c: c.T.cholesky_inverse(c.spd(3))),
    ("cholesky_solve", lambda c: c.T.cholesky_solve(c.f(3, 2), c.spd(3))),
    ("inverse", lambda c: c.T.inverse(c.spd(3))),
    ("pinverse", lambda c: c.T.pinverse(c.f(3, 4))),
    ("lu_solve", lambda c: c.T.lu_solve(c.f(3, 2), *c.T.linalg.lu_factor(c.spd(3)))),
    ("orgqr", lambda c: c.T.orgqr(*c.T.geqrf(c.f(4, 3)))),
    ("ormqr", lambda c: c.T.ormqr(*c.T.geqrf(c.f(4, 3)), c.f(4, 2))),
    ("triangular_solve", lambda c: c.T.triangular_solve(c.f(3, 2), c.spd(3))),
    ("geqrf", lambda c: c.T.geqrf(c.f(4, 3))),
    ("qr", lambda c: c.T.qr(c.f(4, 3))),
    ("svd", lambda c: c.T.svd(c.f(4, 3))),
    ("max_pool3d", lambda c: c.F.max_pool3d(c.f(1, 2, 4, 4, 4), 2)),
    ("max_unpool2d", _unpool(2)),
    ("max_unpool3d", _unpool(3)),
    ("adaptive_avg_pool3d", lambda c: c.F.adaptive_avg_pool3d(c.f(1, 2, 4, 4, 4), 2)),
    ("adaptive_max_pool3d", lambda c: c.F.adaptive_max_pool3d(c.f(1, 2, 4, 4, 4), 2)),
    (
        "fractional_max_pool2d",
        lambda c: c.F.fractional_max_pool2d(c.f(1, 2, 6, 6), 2, output_size=3),
    ),
    (
        "fractional_max_pool3d",
        lambda c: c.F.fractional_max_pool3d(c.f(1, 2, 6, 6, 6), 2, output_size=3),
    ),
    ("reflection_pad1d", _pad(1, "reflect")),
    ("reflection_pad2d", _pad(2, "reflect")),
    ("replication_pad1d", _pad(1, "replicate")),
    ("replication_pad2d", _pad(2, "replicate")),
    ("replication_pad3d", _pad(3, "replicate")),
    (
        "ctc_loss",
        lambda c: c.F.ctc_loss(
            c.f(6, 2, 4).log_softmax(2),
            c.long(2, 3, high=3) + 1,
            [6, 6],
            [3, 3],
        ),
    ),
    ("fft_fft", lambda c: c.T.fft.fft(c.f(8))),
    ("fft_rfft", lambda c: c.T.fft.rfft(c.f(8))),
    ("fft_irfft", lambda c: c.T.fft.irfft(c.f(8))),
    ("fft_hfft", lambda c: c.T.fft.hfft(c.f(8))),
    ("linalg_cond", lambda c: c.T.linalg.cond(c.spd(3))),
    ("linalg_matrix_rank", lambda c: c.T.linalg.matrix_rank(c.spd(3))),
    ("linalg_solve", lambda c: c.T.linalg.solve(c.spd(3), c.f(3, 2))),
    ("linalg_cholesky", lambda c: c.T.linalg.cholesky(c.spd(3))),
    ("linalg_svdvals", lambda c: c.T.linalg.svdvals(c.f(4, 3))),
    ("linalg_eigvalsh", lambda c: c.T.linalg.eigvalsh(c.spd(3))),
    ("linalg_inv", lambda c: c.T.linalg.inv(c.spd(3))),
    ("linalg_qr", lambda c: c.T.linalg.qr(c.f(4, 3))),
    ("linalg_svd", lambda c: c.T.linalg.svd(c.f(4, 3))),
    ("linalg_eigh", lambda c: c.T.linalg.eigh(c.spd(3))),
    ("linalg_lstsq", lambda c: c.T.linalg.lstsq(c.f(4, 3), c.f(4, 2))),
    # ---- in no list: the inputs' dtypes with the usual promotion ----
    ("add", lambda c: c.f(3, 4) + c.f(3, 4)),
    ("mul", lambda c: c.T.mul(c.f(3, 4), c.f(3, 4))),
    ("relu", lambda c: c.F.relu(c.f(3, 4))),
    ("gelu", lambda c: c.F.gelu(c.f(3, 4))),
    ("silu", lambda c: c.F.silu(c.f(3, 4))),
    ("tanh", lambda c: c.T.tanh(c.f(3, 4))),
    ("sigmoid", lambda c: c.T.sigmoid(c.f(3, 4))),
    ("mean", lambda c: c.T.mean(c.f(3, 4))),
    ("var", lambda c: c.T.var(c.f(3, 4), 1)),
    ("max_pool2d", lambda c: c.F.max_pool2d(c.f(1, 2, 4, 4), 2)),
    ("avg_pool2d", lambda c: c.F.avg_pool2d(c.f(1, 2, 4, 4), 2)),
    (
        "batch_norm",
        lambda c: c.F.batch_norm(c.f(4, 3), c.f(3), c.u(3), c.f(3), c.f(3), training=False),
    ),
    ("dropout eval", lambda c: c.F.dropout(c.f(3, 4), 0.5, training=False)),
    ("embedding", lambda c: c.F.embedding(c.long(3, high=5), c.f(5, 4))),
    ("where", lambda c: c.T.where(c.f(3, 4) > 0, c.f(3, 4), c.f(3, 4))),
    ("avg_pool1d", lambda c: c.F.avg_pool1d(c.f(1, 2, 6), 2)),
    ("avg_pool3d not listed", lambda c: c.F.avg_pool3d(c.f(1, 2, 4, 4, 4), 2, ceil_mode=True)),
    ("adaptive_avg_pool1d", lambda c: c.F.adaptive_avg_pool1d(c.f(1, 2, 7), 3)),
    ("adaptive_avg_pool2d", lambda c: c.F.adaptive_avg_pool2d(c.f(1, 2, 7, 7), 3)),
    ("adaptive_max_pool2d", lambda c: c.F.adaptive_max_pool2d(c.f(1, 2, 7, 7), 3)),
    ("lp_pool2d", lambda c: c.F.lp_pool2d(c.f(1, 2, 4, 4), 2, 2)),
    ("interpolate area", lambda c: c.F.interpolate(c.f(1, 2, 4, 4), size=2, mode="area")),
    ("instance_norm", lambda c: c.F.instance_norm(c.f(2, 3, 5))),
    ("local_response_norm", lambda c: c.F.local_response_norm(c.f(2, 4, 5), 2)),
    ("unfold", lambda c: c.F.unfold(c.f(1, 2, 4, 4), 2)),
    ("pixel_shuffle", lambda c: c.F.pixel_shuffle(c.f(1, 4, 2, 2), 2)),
    ("glu", lambda c: c.F.glu(c.f(3, 4))),
    ("logsigmoid", lambda c: c.F.logsigmoid(c.f(3, 4))),
    ("softmin", lambda c: c.F.softmin(c.f(3, 4), dim=1)),
    ("mish", lambda c: c.F.mish(c.f(3, 4))),
    ("elu", lambda c: c.F.elu(c.f(3, 4))),
    ("selu", lambda c: c.F.selu(c.f(3, 4))),
    ("celu", lambda c: c.F.celu(c.f(3, 4))),
    ("hardswish", lambda c: c.F.hardswish(c.f(3, 4))),
    ("softsign", lambda c: c.F.softsign(c.f(3, 4))),
    ("tanhshrink", lambda c: c.F.tanhshrink(c.f(3, 4))),
    ("logit", lambda c: c.T.logit(c.u(3, 4))),
    ("xlogy", lambda c: c.T.xlogy(c.u(3, 4), c.u(3, 4))),
    ("sqrt", lambda c: c.T.sqrt(c.u(3, 4))),
    ("std", lambda c: c.T.std(c.f(3, 4))),
    ("amax", lambda c: c.T.amax(c.f(3, 4), 1)),
    ("nansum", lambda c: c.T.nansum(c.f(3, 4))),
    ("cummax", lambda c: c.T.cummax(c.f(3, 4), 1)),
    ("lerp", lambda c: c.T.lerp(c.f(3, 4), c.f(3, 4), 0.5)),
    ("outer", lambda c: c.T.outer(c.f(3), c.f(4))),
    ("inner", lambda c: c.T.inner(c.f(3), c.f(3))),
    ("kron", lambda c: c.T.kron(c.f(2, 2), c.f(2, 2))),
    ("diff", lambda c: c.T.diff(c.f(3, 4))),
    ("embedding_bag", lambda c: c.F.embedding_bag(c.long(2, 3, high=5), c.f(5, 4))),
    ("one_hot float", lambda c: c.F.one_hot(c.long(3, high=4), 4).float()),
    (
        "multi_head_attention",
        lambda c: c.T.nn.MultiheadAttention(8, 2, device=c.dev)(
            c.f(2, 3, 8), c.f(2, 3, 8), c.f(2, 3, 8)
        ),
    ),
    (
        "transformer_encoder_layer",
        lambda c: c.T.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, device=c.dev)(c.f(3, 2, 8)),
    ),
    ("nn.Embedding", lambda c: c.T.nn.Embedding(5, 4, device=c.dev)(c.long(3, high=5))),
    ("mm float64", lambda c: c.f(4, 3).double().mm(c.f(3, 5).double())),
    ("exp float64", lambda c: c.f(3, 4).double().exp()),
    # ---- in-place forms and out= are not autocast ----
    ("Tensor.exp_", lambda c: c.u(3, 4).exp_()),
    ("Tensor.addmm_", lambda c: c.f(4, 5).addmm_(c.f(4, 3), c.f(3, 5))),
    ("exp out=", lambda c: c.T.exp(c.u(3, 4), out=c.u(3, 4))),
]

VARIANTS = ("f32", "low", "mix")


def summarize(out):
    """A result's dtypes as strings ('float16', or a list of them for a tuple)."""
    if isinstance(out, (tuple, list)):
        return [summarize(o) for o in out]
    dtype = getattr(out, "dtype", None)
    if dtype is None:
        return type(out).__name__
    return str(dtype).rsplit(".", 1)[-1]
