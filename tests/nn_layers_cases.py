"""Calls of the transformer and CNN pieces of ``nn.functional`` (activations, embedding,
layer_norm, scaled_dot_product_attention, one_hot, pad, the smooth L1 / Huber / binary
cross-entropy losses, cross_entropy with ``ignore_index=-1``), shared by
tests/test_nn_layers.py and its generator (``gen_nn_layers_expected.py``, run by hand with
PyTorch 2.11), which records torch's outcome of each in ``nn_layers_expected.json``: the
result's values and the gradients of the float inputs for the upstream gradient
``linspace(0.5, 1.5)``, or the exception's type and message.

Each case is an expression evaluated with ``M`` (torch or cudalite), ``F`` (its
``nn.functional``) and the inputs of ``inputs``.
"""

from __future__ import annotations

import numpy as np


def _arr(shape, phase, scale=3.0):
    n = int(np.prod(shape))
    return (np.sin(np.arange(n) * 1.37 + phase) * scale).reshape(shape)


ARRAYS = {
    "a": _arr((2, 3, 4), 0.1),
    "b": _arr((2, 3, 4), 1.3),
    "p": (_arr((2, 3, 4), 0.7, 0.45) + 0.5),
    "t": (_arr((2, 3, 4), 2.1, 0.5) + 0.5),
    "w4": _arr((4,), 0.4, 1.0) + 1.5,
    "b4": _arr((4,), 2.2, 0.5),
    "w34": _arr((3, 4), 0.9, 1.0),
    "emb": _arr((6, 4), 0.3, 1.0),
    "q": _arr((2, 2, 4, 3), 0.5, 1.0),
    "k": _arr((2, 2, 5, 3), 1.5, 1.0),
    "v": _arr((2, 2, 5, 6), 2.5, 1.0),
    "q4": _arr((1, 4, 3, 2), 0.2, 1.0),
    "k2": _arr((1, 2, 3, 2), 0.6, 1.0),
    "v2": _arr((1, 2, 3, 2), 1.1, 1.0),
    "fm": _arr((4, 5), 0.8, 1.0),
    "img": _arr((1, 2, 3, 4), 0.25),
    "logits": _arr((5, 4), 0.45),
    "xq": _arr((3, 2, 4), 0.15, 1.0),
    "xk": _arr((5, 2, 4), 0.85, 1.0),
    "xk3": _arr((5, 2, 3), 1.45, 1.0),
    "ipw": _arr((12, 4), 0.05, 0.6),
    "ipb": _arr((12,), 1.05, 0.3),
    "opw": _arr((4, 4), 2.05, 0.6),
    "opb": _arr((4,), 0.55, 0.3),
    "pw44": _arr((4, 4), 1.75, 0.6),
    "pw43": _arr((4, 3), 0.35, 0.6),
    "bk": _arr((1, 1, 4), 0.65, 0.5),
    "bv": _arr((1, 1, 4), 1.95, 0.5),
}

INDEX = {
    "idx": np.array([[0, 1, 1], [4, 5, 1]]),
    "tgt": np.array([1, -1, 3, 0, -1]),
    "cls": np.array([[0, 2], [3, 1]]),
    "bm": _arr((4, 5), 0.33, 1.0) > -0.4,
    "kpm": np.array([[False, False, True, False, True], [False, True, False, False, False]]),
}

_MHA = "F.multi_head_attention_forward"
_SELF = "(xq, xq, xq, 4, 2, ipw, ipb, None, None, False, 0.0, opw, opb"
_CROSS = "(xq, xk, xk, 4, 2, ipw, ipb, None, None, False, 0.0, opw, opb"

# (name, expression): differentiated with respect to the float inputs it names
VALUE_CASES = [
    ("gelu", "F.gelu(a)"),
    ("gelu_tanh", "F.gelu(a, approximate='tanh')"),
    ("silu", "F.silu(a)"),
    ("mish", "F.mish(a)"),
    ("softplus", "F.softplus(a)"),
    ("softplus_beta", "F.softplus(a, beta=2.0, threshold=1.5)"),
    ("elu", "F.elu(a)"),
    ("elu_alpha", "F.elu(a, alpha=0.5)"),
    ("leaky_relu", "F.leaky_relu(a)"),
    ("leaky_relu_slope", "F.leaky_relu(a, 0.2)"),
    ("hardtanh", "F.hardtanh(a)"),
    ("hardtanh_bounds", "F.hardtanh(a, -0.5, 2.0)"),
    ("relu6", "F.relu6(a * 3)"),
    ("layer_norm", "F.layer_norm(a, (4,))"),
    ("layer_norm_affine", "F.layer_norm(a, [4], w4, b4)"),
    ("layer_norm_2d", "F.layer_norm(a, (3, 4), w34, None, 1e-3)"),
    ("layer_norm_weight_only", "F.layer_norm(a, (4,), w4)"),
    ("embedding", "F.embedding(idx, emb)"),
    ("embedding_padding", "F.embedding(idx, emb, padding_idx=1)"),
    ("embedding_padding_negative", "F.embedding(idx, emb, padding_idx=-1)"),
    ("embedding_freq", "F.embedding(idx, emb, scale_grad_by_freq=True)"),
    ("embedding_freq_padding", "F.embedding(idx, emb, padding_idx=5, scale_grad_by_freq=True)"),
    ("embedding_int32", "F.embedding(idx.int(), emb)"),
    ("embedding_scalar_index", "F.embedding(idx[0, 0], emb)"),
    ("sdpa", "F.scaled_dot_product_attention(q, k, v)"),
    ("sdpa_causal", "F.scaled_dot_product_attention(q, k, v, is_causal=True)"),
    ("sdpa_causal_square", "F.scaled_dot_product_attention(q, q, q, is_causal=True)"),
    ("sdpa_bool_mask", "F.scaled_dot_product_attention(q, k, v, attn_mask=bm)"),
    ("sdpa_float_mask", "F.scaled_dot_product_attention(q, k, v, attn_mask=fm)"),
    ("sdpa_scale", "F.scaled_dot_product_attention(q, k, v, scale=0.25)"),
    ("sdpa_gqa", "F.scaled_dot_product_attention(q4, k2, v2, enable_gqa=True)"),
    (
        "sdpa_masked_row",
        "F.scaled_dot_product_attention(q, k, v, attn_mask=M.tensor([True, False, True, "
        "False, True], device=dev).view(1, 5).expand(4, 5) "
        "& (M.arange(4, device=dev) != 2).view(4, 1))",
    ),
    ("sdpa_2d", "F.scaled_dot_product_attention(q[0, 0], k[0, 0], v[0, 0])"),
    ("pad_constant", "F.pad(a, (1, 2))"),
    ("pad_constant_value", "F.pad(a, (1, 0, 0, 2), value=1.5)"),
    ("pad_negative", "F.pad(a, (-1, 1, 1, -1))"),
    ("pad_three_dims", "F.pad(a, (1, 1, 1, 1, 1, 1))"),
    ("pad_reflect", "F.pad(a, (2, 3), mode='reflect')"),
    ("pad_reflect_2d", "F.pad(img, (1, 3, 2, 1), mode='reflect')"),
    ("pad_replicate", "F.pad(a, (2, 5), mode='replicate')"),
    ("pad_replicate_2d", "F.pad(img, (1, 2, 3, 1), mode='replicate')"),
    ("pad_circular", "F.pad(a, (2, 3), mode='circular')"),
    ("pad_circular_2d", "F.pad(img, (1, 2, 1, 0), mode='circular')"),
    ("smooth_l1", "F.smooth_l1_loss(a, b)"),
    ("smooth_l1_beta", "F.smooth_l1_loss(a, b, beta=0.5, reduction='none')"),
    ("smooth_l1_l1", "F.smooth_l1_loss(a, b, beta=0.0, reduction='sum')"),
    ("huber", "F.huber_loss(a, b)"),
    ("huber_delta", "F.huber_loss(a, b, reduction='none', delta=0.5)"),
    ("huber_weight", "F.huber_loss(a, b, reduction='sum', delta=2.0, weight=p)"),
    ("bce", "F.binary_cross_entropy(p, t)"),
    ("bce_weight", "F.binary_cross_entropy(p, t, weight=w4.detach(), reduction='none')"),
    ("bce_sum", "F.binary_cross_entropy(p, t, reduction='sum')"),
    ("bce_logits", "F.binary_cross_entropy_with_logits(a, t)"),
    (
        "bce_logits_weights",
        "F.binary_cross_entropy_with_logits(a * 10, t, weight=w4.detach(), "
        "pos_weight=b4.detach() + 1, reduction='none')",
    ),
    ("cross_entropy_ignore", "F.cross_entropy(logits, tgt, ignore_index=-1)"),
    (
        "cross_entropy_ignore_smoothing",
        "F.cross_entropy(logits, tgt, ignore_index=-1, label_smoothing=0.1)",
    ),
    ("one_hot", "F.one_hot(cls)"),
    ("one_hot_classes", "F.one_hot(cls, 6)"),
    ("dropout_eval", "F.dropout(a, 0.5, training=False)"),
    ("mha_self", _MHA + _SELF + ")[0]"),
    ("mha_self_weights", _MHA + _SELF + ")[1]"),
    ("mha_cross_padding", _MHA + _CROSS + ", key_padding_mask=kpm)[0]"),
    ("mha_cross_padding_weights", _MHA + _CROSS + ", key_padding_mask=kpm)[1]"),
    ("mha_float_mask", _MHA + _CROSS + ", attn_mask=fm[:3])[0]"),
    ("mha_per_head_weights", _MHA + _CROSS + ", attn_mask=fm[:3], average_attn_weights=False)[1]"),
    ("mha_no_weights_bool_mask", _MHA + _CROSS + ", attn_mask=~bm[:3], need_weights=False)[0]"),
    (
        "mha_no_weights_mask_and_padding",
        _MHA + _CROSS + ", attn_mask=~bm[:3], key_padding_mask=kpm, need_weights=False)[0]",
    ),
    (
        "mha_causal",
        _MHA + _SELF + ", attn_mask=M.arange(3, device=dev).view(3, 1) "
        "< M.arange(3, device=dev), is_causal=True, need_weights=False)[0]",
    ),
    (
        "mha_bias_kv_zero_attn",
        _MHA + "(xq, xk, xk, 4, 2, ipw, ipb, bk, bv, True, 0.0, opw, opb, key_padding_mask=kpm)[0]",
    ),
    (
        "mha_separate_weights",
        _MHA + "(xq, xk3, xk3, 4, 2, None, ipb, None, None, False, 0.0, opw, opb, "
        "use_separate_proj_weight=True, q_proj_weight=pw44, k_proj_weight=pw43, "
        "v_proj_weight=pw43)[0]",
    ),
    (
        "mha_unbatched",
        _MHA + "(xq[:, 0], xk[:, 0], xk[:, 0], 4, 2, ipw, ipb, None, None, False, 0.0, opw, opb, "
        "key_padding_mask=kpm[0])[1]",
    ),
]

ERROR_CASES = [
    "F.gelu(a, approximate='foo')",
    "F.gelu(idx)",
    "F.silu(idx)",
    "F.mish(idx)",
    "F.elu(idx)",
    "F.leaky_relu(idx)",
    "F.softplus(idx)",
    "F.hardtanh(a, 2.0, 1.0)",
    "F.embedding(M.tensor([6], device=dev), emb)",
    "F.embedding(M.tensor([-1], device=dev), emb)",
    "F.embedding(M.tensor([1.0], device=dev), emb)",
    "F.embedding(M.tensor([1], device=dev), emb, padding_idx=6)",
    "F.embedding(M.tensor([1], device=dev), emb, padding_idx=-7)",
    "F.embedding(M.tensor([1], device=dev), emb[0])",
    "F.layer_norm(a, (3,))",
    "F.layer_norm(a, (4,), w34)",
    "F.layer_norm(a, (4,), None, w34)",
    "F.layer_norm(a, 4)",
    "F.layer_norm(a, ())",
    "F.layer_norm(idx, (3,))",
    "F.one_hot(cls, 3)",
    "F.one_hot(-cls)",
    "F.one_hot(a)",
    "F.one_hot(cls[:0])",
    "F.pad(a, (1,))",
    "F.pad(a, (1, 1, 1, 1, 1, 1, 1, 1))",
    "F.pad(a, (1, 2), mode='foo')",
    "F.pad(a, (4, 2), mode='reflect')",
    "F.pad(a, (1, 1, 3, 1), mode='reflect')",
    "F.pad(a[0, 0], (1, 1), mode='reflect')",
    "F.pad(a, (1, 1, 1, 1, 1, 1), mode='replicate')",
    "F.pad(a, (5, 1), mode='circular')",
    "F.pad(a, (1, 1), mode='reflect', value=1.0)",
    "F.pad(a, (-3, -2))",
    "F.pad(a, (1.5, 1))",
    "F.pad(a[:, :0], (1, 1), mode='replicate')",
    "F.pad(a, (-2, -2), mode='replicate')",
    "F.pad(img, (0, 0, -2, -2), mode='replicate')",
    "F.pad(a, (-3, -2), mode='circular')",
    "F.smooth_l1_loss(a, b, beta=-1.0)",
    "F.smooth_l1_loss(a, b, reduction='foo')",
    "F.huber_loss(a, b, delta=0.0)",
    "F.huber_loss(a, b, weight=w4)",
    "F.binary_cross_entropy(a, t)",
    "F.binary_cross_entropy(p, t[0])",
    "F.binary_cross_entropy(p, idx)",
    "F.binary_cross_entropy_with_logits(a, t[0])",
    "F.binary_cross_entropy(p, t, weight=w4)",
    "F.binary_cross_entropy_with_logits(a, t, weight=w4)",
    "F.binary_cross_entropy_with_logits(a, t, pos_weight=w4)",
    "F.scaled_dot_product_attention(a[0, 0], a[0, 0], a[0, 0])",
    "F.scaled_dot_product_attention(q, k, v, attn_mask=bm, is_causal=True)",
    "F.scaled_dot_product_attention(q, k, v.float())",
    "F.scaled_dot_product_attention(q, k, v, attn_mask=idx)",
    "F.scaled_dot_product_attention(q, k, v, dropout_p=2.0)",
    _MHA + _SELF + ", is_causal=True)",
    _MHA + _CROSS + ", attn_mask=fm)",
    _MHA + _CROSS + ", attn_mask=fm[None])",
    _MHA + _CROSS + ", key_padding_mask=idx)",
    _MHA + _CROSS + ", key_padding_mask=kpm[:, :3])",
    "M.nn.MultiheadAttention(6, 4)",
]


def inputs(M, dtype, dev):
    """The tensors the cases use, the same on both sides; float ones require grad."""
    env = {"dev": dev}
    for name, arr in ARRAYS.items():
        env[name] = M.tensor(arr, dtype=dtype, device=dev, requires_grad=True)
    for name, arr in INDEX.items():
        env[name] = M.tensor(arr, device=dev)
    return env


def run(M, expr, dtype, dev):
    """Evaluates ``expr``; returns (values, {input name: gradient}) as NumPy arrays (float64)
    or raises what the call raises."""
    env = inputs(M, dtype, dev)
    out = eval(expr, {"M": M, "F": M.nn.functional}, env)  # noqa: S307 - the cases above
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
