"""Calls of the breadth of ``nn.functional`` and ``nn`` (activations, distances, rms and
local response norms, the divergence / likelihood / margin / embedding losses, pixel and
channel shuffles, bilinear, the padding modules, Fold / Unfold) and the reprs of their
modules, shared by tests/test_nn_breadth.py and its generator
(``gen_nn_breadth_expected.py``, run by hand with PyTorch 2.11), which records torch's
outcome of each in ``nn_breadth_expected.json``: the result's values and the gradients of the
float inputs for the upstream gradient ``linspace(0.5, 1.5)``, the exception's type and
message, or the module's repr.

Each case is an expression evaluated with ``M`` (torch or cudalite), ``F`` (its
``nn.functional``), ``nn`` (its ``nn``) and the inputs of ``inputs``.
"""

from __future__ import annotations

import numpy as np


def _arr(shape, phase, scale=3.0):
    n = int(np.prod(shape))
    return (np.sin(np.arange(n) * 1.37 + phase) * scale).reshape(shape)


ARRAYS = {
    "a": _arr((2, 3, 4), 0.1),
    "b": _arr((2, 3, 4), 1.3),
    "c": _arr((2, 3, 4), 2.3),
    "pos": np.abs(_arr((2, 3, 4), 0.7, 1.5)) + 0.1,
    "prob": np.abs(_arr((2, 3, 4), 1.9, 0.5)) + 0.05,
    "x2": _arr((4, 5), 0.45, 1.5),
    "y2": _arr((4, 5), 1.65, 1.5),
    "z2": _arr((4, 5), 2.85, 1.5),
    "img": _arr((2, 8, 3, 2), 0.25),
    "vol": _arr((1, 2, 3, 4, 3), 0.35),
    "w3": _arr((3,), 0.9, 0.5) + 0.5,
    "w4": _arr((4,), 0.4, 1.0) + 1.5,
    "w5": _arr((5,), 1.4, 0.5) + 1.0,
    "bw": _arr((2, 5, 4), 0.55, 0.5),
    "bb": _arr((2,), 1.15, 0.5),
    "cols": _arr((1, 8, 6), 0.65),
    "table": _arr((6, 3), 0.95, 1.0),
    "psw": _arr((9,), 1.25, 1.0),
    "theta": _arr((2, 2, 3), 0.15, 0.8),
    "theta3": _arr((1, 3, 4), 0.45, 0.8),
    "src": _arr((5, 2, 4), 0.75, 1.0),
    "tgt": _arr((3, 2, 4), 1.85, 1.0),
}

INDEX = {
    "sgn": np.where(_arr((2, 3, 4), 0.3) > 0, 1.0, -1.0),
    "sgn4": np.array([1.0, -1.0, -1.0, 1.0]),
    "cls": np.array([1, 0, 4, 2]),
    "ml": np.array([[3, 0, -1, 1, 2], [1, 1, 4, -1, 0], [-1, 2, 0, 0, 0], [4, 3, 2, 1, 0]]),
    "bin": (np.sin(np.arange(20) * 2.1) > 0).astype(np.float64).reshape(4, 5),
    "ints": np.arange(-5, 7).reshape(3, 4),
    "bag": np.array([3, 0, 5, 5, 1, 2, 0, 4, 3]),
    "offs": np.array([0, 2, 2, 6]),
    "bag2": np.array([[1, 0, 3], [5, 5, 2]]),
    "kpm": np.array([[False, False, False, True, True], [False, False, False, False, False]]),
}

# seeded transformer modules, in the inputs' dtype and on their device, in eval mode
_TF = "(M.manual_seed(0), {}.to(device=dev, dtype=src.dtype).eval())[1]"
_ENC = _TF.format("nn.TransformerEncoderLayer(4, 2, 8)")
_ENC_PRE = _TF.format(
    "nn.TransformerEncoderLayer(4, 2, 8, activation='gelu', batch_first=True, norm_first=True)"
)
_ENCODER = _TF.format(
    "nn.TransformerEncoder(nn.TransformerEncoderLayer(4, 2, 8), 2, nn.LayerNorm(4))"
)
_DEC = _TF.format("nn.TransformerDecoderLayer(4, 2, 8, norm_first=True)")
_TRANSFORMER = _TF.format("nn.Transformer(4, 2, 2, 1, 8)")
_CAUSAL3 = "nn.Transformer.generate_square_subsequent_mask(3, device=dev, dtype=src.dtype)"
_CAUSAL5 = "nn.Transformer.generate_square_subsequent_mask(5, device=dev, dtype=src.dtype)"

# (name, expression): differentiated with respect to the float inputs it names
VALUE_CASES = [
    ("celu", "F.celu(a)"),
    ("celu_alpha", "F.celu(a, alpha=0.5)"),
    ("selu", "F.selu(a)"),
    ("glu", "F.glu(a)"),
    ("glu_dim1", "F.glu(img, 1)"),
    ("hardshrink", "F.hardshrink(a)"),
    ("hardshrink_lambd", "F.hardshrink(a, 1.5)"),
    ("softshrink", "F.softshrink(a)"),
    ("softshrink_lambd", "F.softshrink(a, 1.2)"),
    ("hardsigmoid", "F.hardsigmoid(a * 1.5)"),
    ("hardswish", "F.hardswish(a * 1.5)"),
    ("logsigmoid", "F.logsigmoid(a * 10)"),
    ("softmin", "F.softmin(a, 1)"),
    ("softmin_dtype", "F.softmin(a, -1, dtype=M.float64)"),
    ("softsign", "F.softsign(a)"),
    ("tanhshrink", "F.tanhshrink(a)"),
    ("threshold", "F.threshold(a, 0.5, -2.0)"),
    ("threshold_ints", "F.threshold(ints, 1, 20)"),
    ("rrelu_eval", "F.rrelu(a)"),
    ("rrelu_bounds", "F.rrelu(a, 0.2, 0.4)"),
    ("prelu_one", "F.prelu(a, w4[:1])"),
    ("prelu_channels", "F.prelu(a, w3)"),
    ("prelu_1d", "F.prelu(a[0, 0], w4[:1])"),
    ("softmax2d", "nn.Softmax2d()(img)"),
    ("normalize", "F.normalize(a)"),
    ("normalize_p1", "F.normalize(a, p=1.0, dim=-1)"),
    ("cosine_similarity", "F.cosine_similarity(a, b)"),
    ("cosine_similarity_broadcast", "F.cosine_similarity(a, b[:1], dim=-1)"),
    ("pairwise_distance", "F.pairwise_distance(x2, y2)"),
    ("pairwise_distance_p1_keepdim", "F.pairwise_distance(x2, y2, p=1.0, keepdim=True)"),
    ("pairwise_distance_inf", "F.pairwise_distance(x2, y2, p=float('inf'))"),
    ("pdist", "F.pdist(x2)"),
    ("pdist_p1", "F.pdist(x2, p=1)"),
    ("pdist_p3", "F.pdist(x2, p=3)"),
    ("pdist_one_row", "F.pdist(x2[:1])"),
    ("rms_norm", "F.rms_norm(a, (4,))"),
    ("rms_norm_weight", "F.rms_norm(a, [4], w4)"),
    ("rms_norm_eps", "F.rms_norm(a, (3, 4), eps=1e-3)"),
    ("lrn_3d", "F.local_response_norm(a, 2)"),
    ("lrn_4d", "F.local_response_norm(img, 3, alpha=0.1, beta=0.5, k=2.0)"),
    ("lrn_5d", "F.local_response_norm(vol, 4, alpha=0.2)"),
    ("kl_div_batchmean", "F.kl_div(a.log_softmax(-1), prob, reduction='batchmean')"),
    ("kl_div_mean", "F.kl_div(a.log_softmax(-1), prob)"),
    ("kl_div_none", "F.kl_div(a, prob, reduction='none')"),
    ("kl_div_log_target", "F.kl_div(a, b.log_softmax(-1), reduction='sum', log_target=True)"),
    ("poisson", "F.poisson_nll_loss(a * 0.3, pos)"),
    ("poisson_full", "F.poisson_nll_loss(a * 0.3, pos * 3, full=True, reduction='none')"),
    ("poisson_no_log", "F.poisson_nll_loss(pos, prob, log_input=False, reduction='sum')"),
    ("gaussian", "F.gaussian_nll_loss(a, b, pos)"),
    ("gaussian_full_sum", "F.gaussian_nll_loss(a, b, pos, full=True, reduction='sum')"),
    ("gaussian_float_var", "F.gaussian_nll_loss(a, b, 0.5, reduction='none')"),
    ("gaussian_var_last_dim", "F.gaussian_nll_loss(a, b, pos[..., 0])"),
    ("gaussian_var_one_dim", "F.gaussian_nll_loss(a, b, pos[:, :1])"),
    ("gaussian_eps", "F.gaussian_nll_loss(a, b, pos * 1e-3, eps=0.01)"),
    ("margin_ranking", "F.margin_ranking_loss(a, b, sgn)"),
    ("margin_ranking_margin", "F.margin_ranking_loss(a, b, sgn, margin=0.5, reduction='none')"),
    ("hinge_embedding", "F.hinge_embedding_loss(a, sgn)"),
    ("hinge_embedding_margin", "F.hinge_embedding_loss(a, sgn, margin=2.0, reduction='sum')"),
    ("soft_margin", "F.soft_margin_loss(a, sgn)"),
    ("soft_margin_none", "F.soft_margin_loss(a, sgn, reduction='none')"),
    ("multilabel_soft_margin", "F.multilabel_soft_margin_loss(x2, bin)"),
    (
        "multilabel_soft_margin_weight",
        "F.multilabel_soft_margin_loss(x2, bin, weight=w5.detach(), reduction='none')",
    ),
    ("multilabel_margin", "F.multilabel_margin_loss(x2, ml)"),
    ("multilabel_margin_none", "F.multilabel_margin_loss(x2, ml, reduction='none')"),
    ("multilabel_margin_1d", "F.multilabel_margin_loss(x2[0], ml[0], reduction='none')"),
    ("multi_margin", "F.multi_margin_loss(x2, cls)"),
    ("multi_margin_p2", "F.multi_margin_loss(x2, cls, p=2, margin=0.5, reduction='none')"),
    ("multi_margin_weight", "F.multi_margin_loss(x2, cls, weight=w5.detach(), reduction='sum')"),
    ("multi_margin_1d", "F.multi_margin_loss(x2[0], cls[:1], reduction='none')"),
    ("cosine_embedding", "F.cosine_embedding_loss(x2, y2, sgn4)"),
    ("cosine_embedding_margin", "F.cosine_embedding_loss(x2, y2, sgn4, 0.2, reduction='none')"),
    ("cosine_embedding_1d", "F.cosine_embedding_loss(x2[0], y2[0], sgn4[1])"),
    ("triplet", "F.triplet_margin_loss(x2, y2, z2)"),
    ("triplet_swap", "F.triplet_margin_loss(x2, y2, z2, margin=3.0, p=1, swap=True)"),
    ("triplet_none", "F.triplet_margin_loss(x2, y2, z2, margin=2.5, reduction='none')"),
    ("triplet_distance", "F.triplet_margin_with_distance_loss(x2, y2, z2, margin=2.0)"),
    (
        "triplet_distance_cosine",
        "F.triplet_margin_with_distance_loss(x2, y2, z2, distance_function=lambda u, v: "
        "1 - F.cosine_similarity(u, v), swap=True, reduction='sum')",
    ),
    ("pixel_shuffle", "F.pixel_shuffle(img, 2)"),
    ("pixel_shuffle_3d", "F.pixel_shuffle(img[0], 2)"),
    ("pixel_unshuffle", "F.pixel_unshuffle(a[:, None, :2], 2)"),
    ("pixel_shuffle_roundtrip", "F.pixel_unshuffle(F.pixel_shuffle(img, 2), 2)"),
    ("channel_shuffle", "F.channel_shuffle(img, 4)"),
    ("channel_shuffle_3d", "F.channel_shuffle(a, 3)"),
    ("bilinear", "F.bilinear(x2, y2[:, :4], bw, bb)"),
    ("bilinear_no_bias", "F.bilinear(a[..., :1].expand(2, 3, 5), a, bw)"),
    ("zero_pad2d", "nn.ZeroPad2d((1, 0, 2, 1))(img)"),
    ("constant_pad1d", "nn.ConstantPad1d(2, 3.5)(a)"),
    ("constant_pad3d", "nn.ConstantPad3d((1, 0, 0, 1, 1, 1), -1.0)(vol)"),
    ("reflection_pad1d", "nn.ReflectionPad1d((3, 1))(a)"),
    ("reflection_pad2d", "nn.ReflectionPad2d(1)(img)"),
    ("reflection_pad3d", "nn.ReflectionPad3d((1, 2, 0, 1, 1, 1))(vol)"),
    ("replication_pad1d", "nn.ReplicationPad1d((2, 4))(a)"),
    ("replication_pad2d", "nn.ReplicationPad2d((1, 2, 2, 0))(img)"),
    ("replication_pad3d", "nn.ReplicationPad3d(1)(vol)"),
    ("circular_pad1d", "nn.CircularPad1d((2, 1))(a)"),
    ("circular_pad2d", "nn.CircularPad2d(1)(img)"),
    ("circular_pad3d", "nn.CircularPad3d((1, 1, 2, 0, 1, 0))(vol)"),
    ("unfold_module", "nn.Unfold(2, padding=1, stride=2)(img)"),
    ("fold_module", "nn.Fold((3, 4), 2)(cols)"),
    ("max_pool3d", "F.max_pool3d(vol, 2)"),
    ("max_pool3d_indices", "F.max_pool3d(vol, 2, return_indices=True)[1]"),
    ("max_pool3d_pad_ceil", "F.max_pool3d(vol, (2, 3, 2), (1, 2, 2), 1, ceil_mode=True)"),
    (
        "max_pool3d_dilation_indices",
        "F.max_pool3d(vol, 2, 1, 0, dilation=(1, 2, 1), return_indices=True)[1]",
    ),
    ("max_pool3d_dilation", "F.max_pool3d(vol, 2, 1, 0, dilation=(1, 2, 1))"),
    ("max_pool3d_unbatched", "nn.MaxPool3d((1, 2, 2))(vol[0])"),
    ("avg_pool3d", "F.avg_pool3d(vol, 2)"),
    ("avg_pool3d_pad", "F.avg_pool3d(vol, 3, 2, 1)"),
    ("avg_pool3d_pad_exclude", "F.avg_pool3d(vol, 3, 2, 1, count_include_pad=False)"),
    ("avg_pool3d_ceil", "F.avg_pool3d(vol, 2, ceil_mode=True, count_include_pad=False)"),
    ("avg_pool3d_divisor", "nn.AvgPool3d(2, 1, divisor_override=3)(vol)"),
    ("adaptive_avg_pool3d", "F.adaptive_avg_pool3d(vol, (2, 2, 2))"),
    ("adaptive_avg_pool3d_none", "nn.AdaptiveAvgPool3d((None, 3, 2))(vol[0])"),
    ("adaptive_max_pool3d", "F.adaptive_max_pool3d(vol, (2, 3, 2))"),
    ("adaptive_max_pool3d_indices", "F.adaptive_max_pool3d(vol, 2, return_indices=True)[1]"),
    ("transformer_encoder_layer", _ENC + "(src)"),
    ("transformer_encoder_layer_padding", _ENC + "(src, src_key_padding_mask=kpm)"),
    ("transformer_encoder_layer_norm_first", _ENC_PRE + "(src.transpose(0, 1), is_causal=False)"),
    ("transformer_encoder_causal", _ENCODER + "(src, mask=" + _CAUSAL5 + ")"),
    ("transformer_encoder_unbatched", _ENCODER + "(src[:, 0])"),
    ("transformer_decoder_layer", _DEC + "(tgt, src, tgt_mask=" + _CAUSAL3 + ")"),
    (
        "transformer_decoder_layer_padding",
        _DEC + "(tgt, src, memory_key_padding_mask=kpm, tgt_is_causal=False)",
    ),
    ("transformer", _TRANSFORMER + "(src, tgt, tgt_mask=" + _CAUSAL3 + ")"),
    ("square_subsequent_mask", "nn.Transformer.generate_square_subsequent_mask(4)"),
    ("max_unpool2d", "F.max_unpool2d(*F.max_pool2d(img, 2, return_indices=True), 2)"),
    (
        "max_unpool2d_output_size",
        "nn.MaxUnpool2d(2)(*F.max_pool2d(img[..., :3], 2, return_indices=True), "
        "output_size=(3, 3))",
    ),
    ("max_unpool1d", "F.max_unpool1d(*F.max_pool1d(a, 2, return_indices=True), 2)"),
    (
        "max_unpool3d",
        "nn.MaxUnpool3d((1, 2, 3))(*F.max_pool3d(vol, (1, 2, 3), return_indices=True))",
    ),
    ("lp_pool1d", "F.lp_pool1d(pos, 2, 3)"),
    ("lp_pool2d", "nn.LPPool2d(1.5, (2, 1), 1, True)(img.abs() + 0.1)"),
    ("lp_pool3d", "F.lp_pool3d(vol.abs() + 0.1, 3, 2)"),
    # torch's CPU stream, brought back to the case's device (gradients flow through .to)
    (
        "alpha_dropout_seeded",
        "(M.manual_seed(0), F.alpha_dropout(a.cpu(), 0.3, True))[1].to(a.device)",
    ),
    (
        "feature_alpha_dropout_seeded",
        "(M.manual_seed(1), F.feature_alpha_dropout(img.cpu(), 0.4, True))[1].to(img.device)",
    ),
    ("alpha_dropout_eval", "nn.AlphaDropout(0.3).eval()(a)"),
    ("upsample_nearest", "F.upsample_nearest(img, scale_factor=2)"),
    ("upsample_bilinear", "F.upsample_bilinear(img, size=(4, 5))"),
    ("native_channel_shuffle", "F.native_channel_shuffle(img.detach(), 2)"),
    ("gumbel_softmax_shape", "F.gumbel_softmax(a).sum(-1)"),
    ("margin_ranking_ints", "F.margin_ranking_loss(ints, -ints, ints.sign())"),
    ("avg_pool3d_ints", "F.avg_pool3d(ints.view(1, 1, 3, 2, 2) * 3 - 4, (1, 2, 2))"),
    ("multi_margin_empty", "F.multi_margin_loss(x2[:0], cls[:0])"),
    ("multilabel_margin_empty", "F.multilabel_margin_loss(x2[:0], ml[:0])"),
    ("bilinear_module_seeded", _TF.format("nn.Bilinear(5, 4, 2)") + "(x2, y2[:, :4])"),
    ("prelu_module", _TF.format("nn.PReLU(3, 0.2)") + "(a)"),
    ("rmsnorm_module", _TF.format("nn.RMSNorm([3, 4])") + "(a)"),
    ("lrn_module", "nn.LocalResponseNorm(3, k=0.5)(img)"),
    ("cosine_similarity_module", "nn.CosineSimilarity(dim=0)(x2, y2)"),
    ("pairwise_distance_module", "nn.PairwiseDistance(p=1.5, keepdim=True)(x2, y2)"),
    ("embedding_bag_mean", "F.embedding_bag(bag, table, offs)"),
    (
        "embedding_bag_sum_weights",
        "F.embedding_bag(bag, table, offs, mode='sum', per_sample_weights=psw)",
    ),
    ("embedding_bag_max", "F.embedding_bag(bag, table, offs, mode='max')"),
    ("embedding_bag_2d", "F.embedding_bag(bag2, table, mode='sum')"),
    ("embedding_bag_padding_mean", "F.embedding_bag(bag, table, offs, padding_idx=5)"),
    ("embedding_bag_padding_max", "F.embedding_bag(bag, table, offs, mode='max', padding_idx=0)"),
    ("embedding_bag_last_offset", "F.embedding_bag(bag, table, offs, include_last_offset=True)"),
    ("embedding_bag_module", _TF.format("nn.EmbeddingBag(6, 3, mode='max')") + "(bag2)"),
    ("affine_grid", "F.affine_grid(theta, (2, 3, 3, 5), align_corners=False)"),
    ("affine_grid_corners", "F.affine_grid(theta, [2, 1, 4, 2], align_corners=True)"),
    ("affine_grid_3d", "F.affine_grid(theta3, (1, 2, 2, 3, 2), align_corners=False)"),
    ("grid_sample", "F.grid_sample(img[:, :3], F.affine_grid(theta, (2, 3, 4, 3)) * 1.6)"),
    (
        "grid_sample_border_corners",
        "F.grid_sample(img[:, :3], F.affine_grid(theta, (2, 3, 4, 3), True) * 1.6, "
        "padding_mode='border', align_corners=True)",
    ),
    (
        "grid_sample_reflection",
        "F.grid_sample(img[:, :3], F.affine_grid(theta, (2, 3, 4, 3), False) * 1.6, "
        "padding_mode='reflection', align_corners=False)",
    ),
    (
        "grid_sample_reflection_corners",
        "F.grid_sample(img[:, :3], F.affine_grid(theta, (2, 3, 4, 3), True) * 2.3, "
        "padding_mode='reflection', align_corners=True)",
    ),
    (
        "grid_sample_nearest",
        "F.grid_sample(img[:, :3], F.affine_grid(theta, (2, 3, 4, 3), False) * 1.6, "
        "mode='nearest', align_corners=False)",
    ),
    (
        "grid_sample_3d",
        "F.grid_sample(vol, F.affine_grid(theta3, (1, 2, 2, 3, 2), False) * 1.4, "
        "padding_mode='border', align_corners=False)",
    ),
]

ERROR_CASES = [
    "F.celu(a, alpha=0.0)",
    "F.celu(ints)",
    "F.selu(ints)",
    "F.glu(a, 1)",
    "F.glu(a[0, 0, 0])",
    "F.softshrink(a, -1.0)",
    "F.hardsigmoid(ints)",
    "F.rrelu(a, 0.5, 0.2)",
    "F.prelu(a, w4)",
    "F.prelu(a, bw)",
    "nn.Softmax2d()(a[0])",
    "F.pdist(a)",
    "F.pdist(x2, p=-1)",
    "F.cosine_similarity(a, b[:, :2])",
    "F.rms_norm(a, (3,))",
    "F.rms_norm(a, (4,), w3)",
    "F.local_response_norm(x2, 2)",
    "F.kl_div(a, b, reduction='foo')",
    "F.poisson_nll_loss(a, b, reduction='foo')",
    "F.gaussian_nll_loss(a, b, -pos)",
    "F.gaussian_nll_loss(a, b, -1.0)",
    "F.gaussian_nll_loss(a, b, pos[:, :2, :2])",
    "F.gaussian_nll_loss(a, b, pos, reduction='foo')",
    "F.margin_ranking_loss(a, b, sgn[0])",
    "F.margin_ranking_loss(a, b, sgn, reduction='foo')",
    "F.hinge_embedding_loss(a, sgn, reduction='avg')",
    "F.soft_margin_loss(a, sgn, reduction='foo')",
    "F.soft_margin_loss(a, b)",
    "F.multilabel_soft_margin_loss(x2, bin, reduction='foo')",
    "F.multilabel_margin_loss(x2, ml[:2])",
    "F.multilabel_margin_loss(a, ml)",
    "F.multi_margin_loss(x2, cls, p=3)",
    "F.multi_margin_loss(x2, cls, weight=bw)",
    "F.multi_margin_loss(x2, cls[:2])",
    "nn.MultiMarginLoss(p=3)",
    "F.cosine_embedding_loss(x2, y2, bin)",
    "F.cosine_embedding_loss(x2[0], y2[0], sgn4)",
    "F.triplet_margin_loss(x2, y2, z2, margin=0.0)",
    "F.triplet_margin_loss(x2, y2[0], z2)",
    "F.triplet_margin_with_distance_loss(x2, y2, z2, reduction='foo')",
    "F.triplet_margin_with_distance_loss(x2, y2, z2, margin=-1.0)",
    "F.triplet_margin_with_distance_loss(x2, y2[0], z2)",
    "nn.TripletMarginLoss(margin=0)",
    "nn.TripletMarginWithDistanceLoss(margin=-2.0)",
    "F.pixel_shuffle(x2, 2)",
    "F.pixel_shuffle(img, -1)",
    "F.pixel_shuffle(img, 3)",
    "F.pixel_unshuffle(x2, 2)",
    "F.pixel_unshuffle(img, 0)",
    "F.pixel_unshuffle(img, 2)",
    "F.pixel_unshuffle(a, 3)",
    "F.channel_shuffle(x2, 2)",
    "F.channel_shuffle(img, 3)",
    "F.channel_shuffle(img, 0)",
    "F.bilinear(x2, a, bw)",
    "F.bilinear(x2, y2[:3], bw)",
    "F.bilinear(x2[:, :4], y2[:, :4], bw)",
    "F.bilinear(x2, y2, bw)",
    "F.bilinear(x2, y2[:, :4], bw, w3)",
    "nn.CircularPad2d(1)(x2)",
    "nn.ReflectionPad1d(4)(a)",
    "F.max_pool3d(a, 2)",
    "F.max_pool3d(vol, 2, padding=2)",
    "F.max_pool3d(vol, 4)",
    "F.max_pool3d(vol, (2, 2))",
    "F.avg_pool3d(vol, 0)",
    "F.avg_pool3d(vol, 2, divisor_override=0)",
    "F.adaptive_avg_pool3d(a, 2)",
    "F.adaptive_max_pool3d(a, 2)",
    "nn.TransformerEncoderLayer(4, 2, activation='tanh')",
    "nn.Transformer(4, 2, 1, 1, 8)(src, tgt[:, :1])",
    "nn.Transformer(8, 2, 1, 1, 8)(src, tgt)",
    "F.max_unpool2d(*F.max_pool2d(img, 2, return_indices=True), 2, output_size=(5, 5))",
    "F.max_unpool2d(*F.max_pool2d(img, 2, return_indices=True), 2, output_size=(1, 1, 1))",
    "F.max_unpool2d(img, img.long(), 2)",
    "F.alpha_dropout(a, 1.5)",
    "F.feature_alpha_dropout(a[0, 0], 0.5, True)",
    "F.threshold(ints > 0, 0, 1)",
    "F.rms_norm(ints, (4,))",
    "F.rms_norm(a, 4)",
    "F.kl_div(ints, ints)",
    "F.soft_margin_loss(ints, ints)",
    "F.hinge_embedding_loss(ints, ints)",
    "F.multilabel_soft_margin_loss(a[0, 0, 0], b[0, 0, 0])",
    "F.multilabel_margin_loss(x2, ml + 1)",
    "F.bilinear(x2, y2[:, :4], bw.float())",
    "F.max_pool3d(vol > 0, 2)",
    "F.adaptive_max_pool3d(vol.long(), 2)",
    "F.rrelu(ints)",
    "F.gaussian_nll_loss(a, b, 1)",
    "F.embedding_bag(bag, table, offs + 1)",
    "F.embedding_bag(bag, table, M.tensor([0, 10], device=dev))",
    "F.embedding_bag(bag + 3, table, offs)",
    "F.embedding_bag(bag, table, offs, padding_idx=6)",
    "F.embedding_bag(bag.double(), table, offs)",
    "F.embedding_bag(bag, table, offs, mode='foo')",
    "F.embedding_bag(bag, table, offs, mode='max', scale_grad_by_freq=True)",
    "F.embedding_bag(bag, table, offs, per_sample_weights=psw)",
    "F.embedding_bag(bag, table, offs, per_sample_weights=psw[:3])",
    "F.embedding_bag(bag2, table, offs)",
    "F.embedding_bag(bag, table)",
    "F.embedding_bag(bag, table[0], offs)",
    "nn.EmbeddingBag(4, 2, padding_idx=4)",
    "F.affine_grid(theta, (2, 3, 4, 5, 6), align_corners=False)",
    "F.affine_grid(theta3, (1, 2, 3, 4), align_corners=False)",
    "F.affine_grid(theta, (2, 3, 0, 4), align_corners=False)",
    "F.affine_grid(theta.long(), (2, 3, 4, 4), align_corners=False)",
    "F.affine_grid(theta, (2, 3), align_corners=False)",
    "F.grid_sample(img, theta, align_corners=False)",
    "F.grid_sample(img, F.affine_grid(theta, (1, 3, 2, 2), False), align_corners=False)",
    "F.grid_sample(img, F.affine_grid(theta, (2, 3, 2, 2), False).float(), align_corners=False)",
    "F.grid_sample(img, F.affine_grid(theta, (2, 3, 2, 2), False)[..., :1], align_corners=False)",
    "F.grid_sample(img, F.affine_grid(theta, (2, 3, 2, 2), False), mode='area')",
    "F.grid_sample(img, F.affine_grid(theta, (2, 3, 2, 2), False), padding_mode='wrap')",
    "F.grid_sample(vol, F.affine_grid(theta3, (1, 2, 2, 3, 2), False), mode='bicubic', "
    "align_corners=False)",
]

REPR_CASES = [
    "nn.CELU()",
    "nn.CELU(0.5, True)",
    "nn.SELU()",
    "nn.SELU(True)",
    "nn.GLU()",
    "nn.GLU(1)",
    "nn.Hardshrink()",
    "nn.Softshrink(0.3)",
    "nn.Hardsigmoid(True)",
    "nn.Hardswish()",
    "nn.LogSigmoid()",
    "nn.Softmin()",
    "nn.Softmin(1)",
    "nn.Softmax2d()",
    "nn.Softsign()",
    "nn.Tanhshrink()",
    "nn.Threshold(0.1, 20)",
    "nn.Threshold(0.1, 20, True)",
    "nn.RReLU()",
    "nn.RReLU(0.1, 0.3, True)",
    "nn.PReLU()",
    "nn.PReLU(3, 0.1)",
    "nn.CosineSimilarity()",
    "nn.PairwiseDistance(p=1.0)",
    "nn.RMSNorm(4)",
    "nn.RMSNorm([2, 3], eps=1e-3, elementwise_affine=False)",
    "nn.LocalResponseNorm(2)",
    "nn.LocalResponseNorm(3, alpha=0.1, beta=0.5, k=2.0)",
    "nn.KLDivLoss(reduction='batchmean', log_target=True)",
    "nn.PoissonNLLLoss()",
    "nn.GaussianNLLLoss()",
    "nn.MarginRankingLoss()",
    "nn.HingeEmbeddingLoss()",
    "nn.SoftMarginLoss()",
    "nn.MultiLabelSoftMarginLoss()",
    "nn.MultiLabelMarginLoss()",
    "nn.MultiMarginLoss()",
    "nn.CosineEmbeddingLoss()",
    "nn.TripletMarginLoss()",
    "nn.TripletMarginWithDistanceLoss()",
    "nn.TripletMarginWithDistanceLoss(distance_function=nn.CosineSimilarity())",
    "nn.PixelShuffle(2)",
    "nn.PixelUnshuffle(3)",
    "nn.ChannelShuffle(2)",
    "nn.ZeroPad1d(2)",
    "nn.ZeroPad2d((1, 2, 3, 4))",
    "nn.ZeroPad3d(1)",
    "nn.ConstantPad1d(2, 3.5)",
    "nn.ConstantPad2d((1, 0, 2, 1), 1)",
    "nn.ConstantPad3d(1, 0)",
    "nn.ReflectionPad1d(1)",
    "nn.ReflectionPad2d((1, 2, 3, 4))",
    "nn.ReflectionPad3d(1)",
    "nn.ReplicationPad1d((2, 1))",
    "nn.ReplicationPad2d(1)",
    "nn.ReplicationPad3d(1)",
    "nn.CircularPad1d((1, 2))",
    "nn.CircularPad2d(1)",
    "nn.CircularPad3d(2)",
    "nn.Unfold(2)",
    "nn.Unfold((2, 3), dilation=2, padding=1, stride=(1, 2))",
    "nn.Fold((4, 5), 2)",
    "nn.Bilinear(3, 4, 5)",
    "nn.Bilinear(3, 4, 5, bias=False)",
    "nn.Sequential(nn.PReLU(2), nn.RMSNorm(4), nn.Hardswish())",
    "nn.MaxPool3d(2)",
    "nn.MaxPool3d((1, 2, 2), stride=1, padding=1, dilation=2, ceil_mode=True)",
    "nn.AvgPool3d(3, 2, 1)",
    "nn.AdaptiveAvgPool3d((None, 2, 3))",
    "nn.AdaptiveMaxPool3d(1, return_indices=True)",
    "nn.TransformerEncoderLayer(4, 2, 8)",
    "nn.TransformerEncoderLayer(4, 2, 8, activation=nn.GELU(), bias=False)",
    "nn.TransformerEncoder(nn.TransformerEncoderLayer(4, 2, 8), 3)",
    "nn.TransformerDecoderLayer(4, 2, 8, dropout=0.0)",
    "nn.TransformerDecoder(nn.TransformerDecoderLayer(4, 2, 8), 2, nn.LayerNorm(4))",
    "nn.Transformer(8, 2, 2, 1, 16)",
    "nn.ModuleList([nn.ReLU(), nn.ReLU(), nn.Tanh(), nn.ReLU()])",
    "nn.ModuleList()",
    "nn.MaxUnpool1d(2)",
    "nn.MaxUnpool2d(2, 1, 1)",
    "nn.MaxUnpool3d((1, 2, 2))",
    "nn.LPPool1d(2, 3)",
    "nn.LPPool2d(1.5, (2, 3), 1, True)",
    "nn.LPPool3d(2, 2)",
    "nn.AlphaDropout()",
    "nn.FeatureAlphaDropout(0.2, True)",
    "nn.EmbeddingBag(10, 3)",
    "nn.EmbeddingBag(10, 3, max_norm=1.0, norm_type=1.0, scale_grad_by_freq=True, mode='sum', "
    "include_last_offset=True, padding_idx=-2)",
]


def inputs(M, dtype, dev):
    """The tensors the cases use, the same on both sides; float ones require grad."""
    env = {"dev": dev}
    for name, arr in ARRAYS.items():
        env[name] = M.tensor(arr, dtype=dtype, device=dev, requires_grad=True)
    for name, arr in INDEX.items():
        kind = dtype if arr.dtype.kind == "f" else None
        env[name] = M.tensor(arr, dtype=kind, device=dev)
    return env


def _globals(M):
    return {"M": M, "F": M.nn.functional, "nn": M.nn}


def run(M, expr, dtype, dev):
    """Evaluates ``expr``; returns (values, {input name: gradient}) as NumPy arrays (float64)
    or raises what the call raises."""
    env = inputs(M, dtype, dev)
    out = eval(expr, _globals(M), env)  # noqa: S307 - the cases above
    grads = {}
    if out.requires_grad:
        w = np.linspace(0.5, 1.5, out.numel()).reshape(tuple(out.shape))
        (out * M.tensor(w, dtype=out.dtype, device=dev)).sum().backward()
        for name in ARRAYS:
            g = env[name].grad
            if g is not None:
                grads[name] = g.detach().cpu().double().numpy()
    vals = out.detach().cpu()
    vals = vals.double() if vals.dtype.is_floating_point else vals
    return vals.numpy(), grads


def evaluate(M, expr, env):
    return eval(expr, _globals(M), env)  # noqa: S307 - the cases above
