"""Differential fuzzing of cudalite.nn.functional (losses, softmax, linear, activations,
embedding, layer_norm, scaled_dot_product_attention, pad, one_hot, and the CNN layers:
convolutions, unfold/fold, pooling, batch/group norm, interpolate) against PyTorch 2.11,
forward values and gradients (not a test; needs torch).

    python tests/fuzz_nn_vs_torch.py [--seed N] [--count N]

Random shapes, reductions, class weights, ignored targets (all of them, at times), label
smoothing and class-probability targets; activation parameters; padding indices, repeated
indices and max_norm; attention masks (bool and float, rows fully masked at times), causal
attention, scales and grouped heads; pads of every mode, negative ones included; in float64
on the CPU. Exits non-zero on any mismatch. The breadth of nn.functional too: the other
activations (celu ... rrelu, prelu), normalize and the distances, rms_norm and
local_response_norm, the divergence / likelihood / margin / embedding losses, the pixel and
channel shuffles and bilinear.
"""

import argparse
import sys
import warnings

import numpy as np
import torch

import cudalite

warnings.simplefilter("ignore")
ap = argparse.ArgumentParser()
ap.add_argument("--seed", type=int, default=0)
ap.add_argument("--count", type=int, default=600)
opts = ap.parse_args()
rng = np.random.default_rng(opts.seed)
bad = 0


def run(M, fn, args, kw):
    F = M.nn.functional
    xs = []
    conv = []
    for a in args:
        if isinstance(a, np.generic):  # a 0-dim draw
            a = np.asarray(a)
        if isinstance(a, np.ndarray):
            dt = M.float64 if a.dtype.kind == "f" else M.int64
            t = M.tensor(a, dtype=dt, requires_grad=(a.dtype.kind == "f"))
            xs.append(t)
            conv.append(t)
        else:
            conv.append(a)
    kw2 = {}
    pick = kw.get("_pick")
    for k, v in kw.items():
        if k == "_pick":
            continue
        if isinstance(v, np.ndarray):
            v = M.tensor(v) if v.dtype.kind in "bi" else M.tensor(v, dtype=M.float64)
        kw2[k] = v
    y = getattr(F, fn)(*conv, **kw2)
    if pick is not None:  # one of the (output, weights) pair
        y = y[pick]
    if y.requires_grad:
        w = M.tensor(np.linspace(0.5, 1.5, y.numel()).reshape(tuple(y.shape)), dtype=M.float64)
        (y * w).sum().backward()
    # the inputs too: max_norm renormalises the embedding's rows in place
    return y.detach().numpy(), [x.grad.numpy() if x.grad is not None else None for x in xs] + [
        x.detach().numpy() for x in xs
    ]


def shape(lo, hi, ndim_lo, ndim_hi):
    return tuple(int(n) for n in rng.integers(lo, hi, rng.integers(ndim_lo, ndim_hi + 1)))


ACTIVATIONS = {
    "gelu": lambda: {"approximate": str(rng.choice(["none", "tanh"]))},
    "silu": dict,
    "mish": dict,
    "softplus": lambda: (
        {"beta": float(rng.choice([1.0, 0.5, 2.0])), "threshold": 20.0}
        if rng.random() < 0.5
        else {"beta": 2.0, "threshold": float(rng.uniform(0.5, 3))}
    ),
    "elu": lambda: {"alpha": float(rng.uniform(0.1, 2))},
    "leaky_relu": lambda: {"negative_slope": float(rng.uniform(-0.5, 0.5))},
    "hardtanh": lambda: {"min_val": float(rng.uniform(-2, 0)), "max_val": float(rng.uniform(0, 2))},
    "relu6": dict,
}


def new_case():
    """A case of one of the functions composed of tensor ops."""
    fn = str(
        rng.choice(
            [
                "activation",
                "layer_norm",
                "embedding",
                "scaled_dot_product_attention",
                "pad",
                "one_hot",
                "smooth_l1_loss",
                "huber_loss",
                "binary_cross_entropy",
                "binary_cross_entropy_with_logits",
                "cross_entropy",
                "multi_head_attention_forward",
            ]
        )
    )
    red = str(rng.choice(["mean", "sum", "none"]))
    if fn == "activation":
        name = str(rng.choice(list(ACTIVATIONS)))
        x = rng.standard_normal(shape(1, 4, 0, 3)) * 4
        return name, (x,), ACTIVATIONS[name]()
    if fn == "layer_norm":
        sh = shape(1, 4, 1, 4)
        k = int(rng.integers(1, len(sh) + 1))
        ns = sh[len(sh) - k :]
        args = [rng.standard_normal(sh) * 3 + 1, ns]
        if rng.random() < 0.6:
            args.append(rng.standard_normal(ns))
            if rng.random() < 0.7:
                args.append(rng.standard_normal(ns))
        return fn, tuple(args), {"eps": float(rng.choice([1e-5, 1e-2]))}
    if fn == "embedding":
        n, d = int(rng.integers(1, 6)), int(rng.integers(1, 4))
        idx = rng.integers(0, n, shape(1, 4, 0, 2))
        kw = {}
        if rng.random() < 0.4:
            kw["padding_idx"] = int(rng.integers(-n, n))
        if rng.random() < 0.3:
            kw["scale_grad_by_freq"] = True
        if rng.random() < 0.2:
            kw["max_norm"] = float(rng.uniform(0.5, 2))
            kw["norm_type"] = float(rng.choice([1.0, 2.0, 3.0]))
        return fn, (idx, rng.standard_normal((n, d))), kw
    if fn == "scaled_dot_product_attention":
        batch = shape(1, 3, 0, 2)
        L, S, E, Ev = (int(v) for v in rng.integers(1, 5, 4))
        kw = {}
        hq = hk = None
        if batch and rng.random() < 0.3:
            hk = int(rng.integers(1, 3))
            hq = hk * int(rng.integers(1, 3))
            kw["enable_gqa"] = True
        qb = batch[:-1] + (hq,) if hq else batch
        kb = batch[:-1] + (hk,) if hk else batch
        q = rng.standard_normal(qb + (L, E))
        k = rng.standard_normal(kb + (S, E))
        v = rng.standard_normal(kb + (S, Ev))
        r = rng.random()
        if r < 0.25:
            kw["is_causal"] = True
        elif r < 0.5:
            kw["attn_mask"] = rng.random((L, S)) < 0.7
        elif r < 0.65:
            kw["attn_mask"] = rng.standard_normal((L, S))
        if rng.random() < 0.3:
            kw["scale"] = float(rng.uniform(0.1, 2))
        return fn, (q, k, v), kw
    if fn == "pad":
        mode = str(rng.choice(["constant", "reflect", "replicate", "circular"]))
        x = rng.standard_normal(shape(1, 5, 1, 4))
        npairs = int(rng.integers(1, min(3, x.ndim) + 1))
        pads = tuple(int(p) for p in rng.integers(-2, 4, 2 * npairs))
        if mode == "circular":  # torch reads uninitialised memory for mixed signs
            pads = tuple(abs(p) for p in pads) if min(pads) < 0 < max(pads) else pads
        kw = {"mode": mode}
        if mode == "constant" and rng.random() < 0.5:
            kw["value"] = float(rng.standard_normal())
        return fn, (x, pads), kw
    if fn == "one_hot":
        c = int(rng.integers(1, 5))
        idx = rng.integers(0, c, shape(1, 4, 0, 2))
        return fn, (idx,), {"num_classes": int(rng.choice([-1, c, c + 2]))}
    if fn in ("smooth_l1_loss", "huber_loss"):
        sh = shape(1, 4, 0, 3)
        a, b = rng.standard_normal(sh) * 2, rng.standard_normal(sh) * 2
        if fn == "smooth_l1_loss":
            return fn, (a, b), {"reduction": red, "beta": float(rng.choice([0.0, 0.5, 1.0, 2]))}
        kw = {"reduction": red, "delta": float(rng.choice([0.5, 1.0, 2.0]))}
        if rng.random() < 0.3:
            kw["weight"] = rng.random(sh)
        return fn, (a, b), kw
    if fn in ("binary_cross_entropy", "binary_cross_entropy_with_logits"):
        sh = shape(1, 4, 1, 3)
        t = rng.random(sh)
        if rng.random() < 0.5:
            t = (t > 0.5).astype(np.float64)
        kw = {"reduction": red}
        if rng.random() < 0.4:
            kw["weight"] = rng.random(sh[-1:]) + 0.5
        if fn == "binary_cross_entropy":
            return fn, (rng.uniform(0.02, 0.98, sh), t), kw
        if rng.random() < 0.4:
            kw["pos_weight"] = rng.random(sh[-1:]) * 3
        return fn, (rng.standard_normal(sh) * 5, t), kw
    if fn == "multi_head_attention_forward":
        heads, hd = int(rng.integers(1, 3)), int(rng.integers(1, 3))
        e = heads * hd
        L, S, N = (int(v) for v in rng.integers(1, 4, 3))
        q = rng.standard_normal((L, N, e))
        kv = q if rng.random() < 0.3 and L == S else rng.standard_normal((S, N, e))
        bias = rng.random() < 0.7
        args = (q, kv, kv, e, heads, rng.standard_normal((3 * e, e)) * 0.7)
        args += (rng.standard_normal(3 * e) * 0.3 if bias else None, None, None, False, 0.0)
        args += (rng.standard_normal((e, e)) * 0.7, rng.standard_normal(e) if bias else None)
        kw = {"need_weights": bool(rng.random() < 0.6), "_pick": 0}
        if kw["need_weights"] and rng.random() < 0.5:
            kw["_pick"] = 1
            kw["average_attn_weights"] = bool(rng.random() < 0.5)
        if rng.random() < 0.4:
            kpm = rng.random((N, S)) < 0.3
            kpm[:, 0] = False  # a row with every key masked gives nan in torch's weights path
            kw["key_padding_mask"] = kpm
        if rng.random() < 0.4:
            kw["attn_mask"] = rng.standard_normal((L, S))
        return fn, args, kw
    n, c = int(rng.integers(1, 6)), int(rng.integers(2, 5))
    tgt = rng.integers(-1, c, n)
    kw = {"reduction": red, "ignore_index": -1}
    if rng.random() < 0.5:
        kw["label_smoothing"] = float(rng.choice([0.05, 0.1, 0.3]))
    return fn, (rng.standard_normal((n, c)), tgt), kw


# ---- CNN layers: convolutions, unfold/fold, pooling, batch/group norm, interpolate ----


def _ints(lo, hi, n):
    return tuple(int(v) for v in rng.integers(lo, hi, n))


def cnn_case():
    """A case of the CNN functions, with random (mostly valid) parameters."""
    fn = str(
        rng.choice(
            [
                "conv1d",
                "conv2d",
                "conv_transpose2d",
                "unfold",
                "max_pool2d",
                "avg_pool2d",
                "adaptive_avg_pool2d",
                "adaptive_max_pool2d",
                "batch_norm",
                "group_norm",
                "interpolate",
            ]
        )
    )
    n = int(rng.integers(1, 3))
    if fn in ("conv1d", "conv2d", "conv_transpose2d"):
        nd = 1 if fn == "conv1d" else 2
        g = int(rng.choice([1, 1, 2]))
        cin, cout = g * int(rng.integers(1, 3)), g * int(rng.integers(1, 3))
        k = _ints(1, 4, nd)
        s, d = _ints(1, 3, nd), _ints(1, 3, nd)
        sp = tuple(int(v) for v in rng.integers(3, 8, nd))
        bias = [rng.standard_normal(cout)] if rng.random() < 0.6 else [None]
        if fn == "conv_transpose2d":
            w = rng.standard_normal((cin, cout // g) + k)
            p = tuple(
                min(int(v), (kk - 1) * dd) for v, kk, dd in zip(_ints(0, 3, nd), k, d, strict=True)
            )
            op = tuple(int(rng.integers(0, max(ss, dd))) for ss, dd in zip(s, d, strict=True))
            kw = {"stride": s, "padding": p, "output_padding": op, "groups": g, "dilation": d}
            return fn, (rng.standard_normal((n, cin) + sp), w, *bias), kw
        w = rng.standard_normal((cout, cin // g) + k)
        pad = "same" if rng.random() < 0.2 else _ints(0, 3, nd)
        if pad == "same":
            s = (1,) * nd
        kw = {"stride": s, "padding": pad, "dilation": d, "groups": g}
        return fn, (rng.standard_normal((n, cin) + sp), w, *bias), kw
    x = rng.standard_normal((n, int(rng.integers(1, 4))) + _ints(3, 9, 2))
    if fn == "unfold":
        kw = {"kernel_size": _ints(1, 4, 2), "dilation": _ints(1, 3, 2), "padding": _ints(0, 2, 2)}
        kw["stride"] = _ints(1, 3, 2)
        return fn, (x,), kw
    if fn in ("max_pool2d", "avg_pool2d"):
        k = _ints(1, 4, 2)
        p = tuple(int(rng.integers(0, kk // 2 + 1)) for kk in k)
        kw = {"kernel_size": k, "stride": _ints(1, 4, 2), "padding": p}
        kw["ceil_mode"] = bool(rng.random() < 0.4)
        if fn == "avg_pool2d":
            kw["count_include_pad"] = bool(rng.random() < 0.5)
            if rng.random() < 0.2:
                kw["divisor_override"] = int(rng.integers(1, 5))
        return fn, (x * 3,), kw
    if fn.startswith("adaptive"):
        return fn, (x,), {"output_size": _ints(1, 6, 2)}
    c = x.shape[1]
    if fn == "batch_norm":
        kw = {"training": bool(rng.random() < 0.7), "momentum": float(rng.uniform(0, 1))}
        # keywords take no gradient (the running statistics must not; weight and bias are
        # covered by the tests' gradchecks)
        kw["running_mean"] = rng.standard_normal(c)
        kw["running_var"] = rng.random(c) + 0.5
        kw["weight"], kw["bias"] = rng.standard_normal(c), rng.standard_normal(c)
        if x.size // c == 1:
            kw["training"] = False
        return fn, (x,), kw
    if fn == "group_norm":
        c = 2 * int(rng.integers(1, 3))
        x = rng.standard_normal((n, c) + _ints(1, 5, 2))
        return fn, (x, int(rng.choice([1, 2])), rng.standard_normal(c), rng.standard_normal(c)), {}
    mode = str(rng.choice(["nearest", "nearest-exact", "bilinear"]))
    kw = {"mode": mode}
    if rng.random() < 0.5:
        kw["size"] = _ints(1, 12, 2)
    else:
        kw["scale_factor"] = float(rng.choice([0.5, 1.5, 2.0, 3.0]))
    if mode == "bilinear":
        kw["align_corners"] = bool(rng.random() < 0.5)
    return fn, (x,), kw


# ---- breadth: more activations, distances, rms / local response norms, losses, shuffles ----

BREADTH_ACTIVATIONS = {
    "celu": lambda x: {"alpha": float(rng.uniform(0.2, 2))},
    "selu": lambda x: {},
    "glu": lambda x: {"dim": int(rng.choice([d for d in range(x.ndim) if x.shape[d] % 2 == 0]))},
    "hardshrink": lambda x: {"lambd": float(rng.uniform(0, 2))},
    "softshrink": lambda x: {"lambd": float(rng.uniform(0, 2))},
    "hardsigmoid": lambda x: {},
    "hardswish": lambda x: {},
    "logsigmoid": lambda x: {},
    "softmin": lambda x: {"dim": int(rng.integers(-x.ndim, x.ndim))},
    "softsign": lambda x: {},
    "tanhshrink": lambda x: {},
    "threshold": lambda x: {
        "threshold": float(rng.uniform(-2, 2)),
        "value": float(rng.uniform(-5, 5)),
    },
    "rrelu": lambda x: {
        "lower": float(rng.uniform(0, 0.3)),
        "upper": float(rng.uniform(0.3, 0.6)),
    },
}


def breadth_case():
    """A case of the activations, distances, norms, losses and shuffles added for breadth."""
    fn = str(
        rng.choice(
            ["activation", "prelu", "normalize", "cosine_similarity", "pairwise_distance"]
            + ["pdist", "rms_norm", "local_response_norm", "kl_div", "poisson_nll_loss"]
            + ["gaussian_nll_loss", "margin_ranking_loss", "hinge_embedding_loss"]
            + ["soft_margin_loss", "multilabel_soft_margin_loss", "multilabel_margin_loss"]
            + ["multi_margin_loss", "cosine_embedding_loss", "triplet_margin_loss"]
            + ["pixel_shuffle", "pixel_unshuffle", "channel_shuffle", "bilinear"]
            + ["max_pool3d", "avg_pool3d", "adaptive_avg_pool3d", "adaptive_max_pool3d"]
            + ["lp_pool1d", "lp_pool2d", "max_unpool2d", "embedding_bag", "grid_sample"]
        )
    )
    if fn == "grid_sample":
        nd = int(rng.integers(2, 4))
        n = int(rng.integers(1, 3))
        x = rng.standard_normal((n, int(rng.integers(1, 3))) + _ints(1, 5, nd))
        grid = rng.uniform(-1.4, 1.4, (n,) + _ints(1, 4, nd) + (nd,))
        kw = {
            "mode": str(rng.choice(["bilinear", "nearest"])),
            "padding_mode": str(rng.choice(["zeros", "border", "reflection"])),
            "align_corners": bool(rng.random() < 0.5),
        }
        return fn, (x, grid), kw
    if fn == "embedding_bag":
        rows, length = int(rng.integers(1, 6)), int(rng.integers(0, 9))
        idx = rng.integers(0, rows, length)
        offs = np.sort(rng.integers(0, length + 1, int(rng.integers(1, 4))))
        offs[0] = 0
        mode = str(rng.choice(["sum", "mean", "max"]))
        kw = {"offsets": offs, "mode": mode}
        if rng.random() < 0.3:
            kw["padding_idx"] = int(rng.integers(0, rows))
        if mode == "sum" and rng.random() < 0.4:
            kw["per_sample_weights"] = rng.standard_normal(length)
        return fn, (idx, rng.standard_normal((rows, int(rng.integers(1, 4))))), kw
    if fn.startswith("lp_pool"):
        nd = int(fn[-2])
        x = np.abs(rng.standard_normal((int(rng.integers(1, 3)), 2) + _ints(2, 7, nd))) + 0.1
        k = int(rng.integers(1, 3))
        kw = {"stride": int(rng.integers(1, 3)), "ceil_mode": bool(rng.random() < 0.5)}
        return fn, (x, float(rng.choice([1.0, 2.0, 3.0, 1.5])), k), kw
    if fn == "max_unpool2d":
        # the values and the indices of a max_pool2d of distinct values
        n, c, h, w = 1, int(rng.integers(1, 3)), int(rng.integers(1, 4)), int(rng.integers(1, 4))
        k = int(rng.integers(1, 3))
        idx = np.stack([rng.permutation((h * k) * (w * k))[: h * w] for _ in range(n * c)]).reshape(
            n, c, h, w
        )
        return fn, (rng.standard_normal((n, c, h, w)), idx, k), {}
    if fn.endswith("pool3d"):
        return pool3d_case(fn)
    red = str(rng.choice(["mean", "sum", "none"]))
    if fn == "activation":
        name = str(rng.choice(list(BREADTH_ACTIVATIONS)))
        sh = shape(1, 4, 1, 3)
        if name == "glu":
            sh = sh[:-1] + (2 * sh[-1],)
        x = rng.standard_normal(sh) * 4
        return name, (x,), BREADTH_ACTIVATIONS[name](x)
    if fn == "prelu":
        sh = shape(1, 4, 1, 4)
        c = sh[1] if len(sh) >= 2 and rng.random() < 0.6 else 1
        return fn, (rng.standard_normal(sh) * 3, rng.uniform(-1, 1, c)), {}
    if fn == "normalize":
        x = rng.standard_normal(shape(1, 4, 1, 3))
        p = float(rng.choice([1.0, 2.0, 3.0, float("inf")]))
        return fn, (x,), {"p": p, "dim": int(rng.integers(-x.ndim, x.ndim))}
    if fn == "cosine_similarity":
        sh = shape(1, 4, 1, 3)
        sh2 = tuple(1 if rng.random() < 0.3 else n for n in sh)
        d = int(rng.integers(-len(sh), len(sh)))
        return fn, (rng.standard_normal(sh), rng.standard_normal(sh2)), {"dim": d}
    if fn == "pairwise_distance":
        sh = shape(1, 5, 1, 3)
        kw = {"p": float(rng.choice([1.0, 2.0, 3.0, 0.5])), "keepdim": bool(rng.random() < 0.5)}
        return fn, (rng.standard_normal(sh), rng.standard_normal(sh)), kw
    if fn == "pdist":
        x = rng.standard_normal((int(rng.integers(1, 6)), int(rng.integers(1, 4))))
        return fn, (x,), {"p": float(rng.choice([1.0, 2.0, 3.0, 1.5]))}
    if fn == "rms_norm":
        sh = shape(1, 4, 1, 4)
        k = int(rng.integers(1, len(sh) + 1))
        ns = sh[len(sh) - k :]
        args = [rng.standard_normal(sh) * 3, ns]
        if rng.random() < 0.5:
            args.append(rng.standard_normal(ns))
        kw = {"eps": float(rng.choice([1e-5, 1e-2]))} if rng.random() < 0.5 else {}
        return fn, tuple(args), kw
    if fn == "local_response_norm":
        x = rng.standard_normal(shape(1, 5, 3, 5)) * 2
        kw = {"alpha": float(rng.uniform(0.01, 1)), "beta": float(rng.uniform(0.3, 1))}
        return fn, (x, int(rng.integers(1, 5))), kw
    if fn == "kl_div":
        sh = shape(1, 4, 1, 3)
        red = str(rng.choice(["mean", "sum", "none", "batchmean"]))
        log_target = bool(rng.random() < 0.5)
        t = rng.standard_normal(sh) if log_target else rng.random(sh)
        if not log_target and rng.random() < 0.3:
            t.flat[0] = 0.0
        return fn, (rng.standard_normal(sh), t), {"reduction": red, "log_target": log_target}
    if fn == "poisson_nll_loss":
        sh = shape(1, 4, 0, 3)
        log_input = bool(rng.random() < 0.5)
        x = rng.standard_normal(sh) if log_input else rng.random(sh) + 0.1
        t = rng.integers(0, 5, sh).astype(np.float64)
        kw = {"log_input": log_input, "full": bool(rng.random() < 0.5), "reduction": red}
        return fn, (x, t), kw
    if fn == "gaussian_nll_loss":
        sh = shape(1, 4, 1, 3)
        var = rng.random(sh) + 0.05
        if rng.random() < 0.3:
            var = var[..., 0]
        kw = {"full": bool(rng.random() < 0.5), "reduction": red}
        return fn, (rng.standard_normal(sh), rng.standard_normal(sh), var), kw
    sgn = lambda sh: np.where(rng.random(sh) < 0.5, 1.0, -1.0)  # noqa: E731
    if fn == "margin_ranking_loss":
        sh = shape(1, 5, 1, 2)
        args = (rng.standard_normal(sh), rng.standard_normal(sh), sgn(sh))
        return fn, args, {"margin": float(rng.uniform(0, 1)), "reduction": red}
    if fn in ("hinge_embedding_loss", "soft_margin_loss"):
        sh = shape(1, 5, 0, 3)
        kw = {"reduction": red}
        if fn == "hinge_embedding_loss":
            kw["margin"] = float(rng.uniform(0.1, 2))
        return fn, (rng.standard_normal(sh) * 2, sgn(sh)), kw
    n, c = int(rng.integers(1, 5)), int(rng.integers(1, 6))
    if fn == "multilabel_soft_margin_loss":
        kw = {"reduction": red}
        if rng.random() < 0.4:
            kw["weight"] = rng.random(c) + 0.5
        return fn, (rng.standard_normal((n, c)), (rng.random((n, c)) < 0.5) * 1.0), kw
    if fn == "multilabel_margin_loss":
        t = rng.integers(-1, c, (n, c))
        return fn, (rng.standard_normal((n, c)), t), {"reduction": red}
    if fn == "multi_margin_loss":
        kw = {"p": int(rng.choice([1, 2])), "margin": float(rng.uniform(0.1, 2)), "reduction": red}
        if rng.random() < 0.4:
            kw["weight"] = rng.random(c) + 0.5
        return fn, (rng.standard_normal((n, c)), rng.integers(0, c, n)), kw
    if fn == "cosine_embedding_loss":
        args = (rng.standard_normal((n, c)), rng.standard_normal((n, c)), sgn((n,)))
        return fn, args, {"margin": float(rng.uniform(-0.5, 0.5)), "reduction": red}
    if fn == "triplet_margin_loss":
        args = tuple(rng.standard_normal((n, c)) for _ in range(3))
        kw = {
            "margin": float(rng.uniform(0.1, 3)),
            "p": float(rng.choice([1.0, 2.0, 3.0])),
            "swap": bool(rng.random() < 0.5),
            "reduction": red,
        }
        return fn, args, kw
    r = int(rng.integers(1, 4))
    batch = shape(1, 3, 0, 2)
    if fn == "pixel_shuffle":
        x = rng.standard_normal(batch + (int(rng.integers(1, 3)) * r * r,) + _ints(1, 4, 2))
        return fn, (x, r), {}
    if fn == "pixel_unshuffle":
        x = rng.standard_normal(batch + (int(rng.integers(1, 3)), r * 2, r * 3))
        return fn, (x, r), {}
    if fn == "channel_shuffle":
        g = int(rng.integers(1, 4))
        x = rng.standard_normal(
            (int(rng.integers(1, 3)), g * int(rng.integers(1, 4))) + _ints(1, 4, 1)
        )
        return fn, (x, g), {}
    i1, i2, o = int(rng.integers(1, 4)), int(rng.integers(1, 4)), int(rng.integers(1, 4))
    args = (
        rng.standard_normal(batch + (i1,)),
        rng.standard_normal(batch + (i2,)),
        rng.standard_normal((o, i1, i2)),
    )
    if rng.random() < 0.5:
        args = args + (rng.standard_normal(o),)
    return "bilinear", args, {}


def pool3d_case(fn):
    x = rng.standard_normal(shape(1, 3, 0, 1) + (int(rng.integers(1, 3)),) + _ints(2, 6, 3))
    if fn.startswith("adaptive"):
        out = tuple(int(rng.integers(1, n + 2)) for n in x.shape[-3:])
        kw = {"return_indices": True, "_pick": int(rng.integers(0, 2))} if "max" in fn else {}
        return fn, (x, out), kw
    k = tuple(int(rng.integers(1, 3)) for _ in range(3))
    kw = {
        "stride": tuple(int(rng.integers(1, 3)) for _ in range(3)),
        "padding": tuple(int(rng.integers(0, kk // 2 + 1)) for kk in k),
        "ceil_mode": bool(rng.random() < 0.5),
    }
    if fn == "max_pool3d":
        kw["dilation"] = tuple(int(rng.integers(1, 3)) for _ in range(3))
        kw["return_indices"] = True
        kw["_pick"] = int(rng.integers(0, 2))
    else:
        kw["count_include_pad"] = bool(rng.random() < 0.5)
    return fn, (x, k), kw


cases = []
for _ in range(opts.count):
    cases.append(breadth_case())
for _ in range(opts.count):
    cases.append(cnn_case())
for _ in range(opts.count):
    fn = rng.choice(
        ["mse_loss", "l1_loss", "cross_entropy", "nll_loss", "log_softmax", "softmax", "linear"]
    )
    red = str(rng.choice(["mean", "sum", "none"]))
    if fn in ("mse_loss", "l1_loss"):
        sh = tuple(int(n) for n in rng.integers(1, 4, rng.integers(0, 3)))
        a = rng.standard_normal(sh)
        b = rng.standard_normal(sh)
        cases.append((fn, (a, b), {"reduction": red}))
    elif fn in ("cross_entropy", "nll_loss"):
        n, c = int(rng.integers(1, 4)), int(rng.integers(2, 5))
        extra = tuple(int(k) for k in rng.integers(1, 3, rng.integers(0, 2)))
        x = rng.standard_normal((n, c) + extra)
        tgt = rng.integers(0, c, (n,) + extra)
        kw = {"reduction": red}
        if rng.random() < 0.3:
            kw["ignore_index"] = int(tgt.flat[0])
        if rng.random() < 0.3:
            kw["weight"] = rng.random(c) + 0.5
        if fn == "cross_entropy" and rng.random() < 0.3:
            kw["label_smoothing"] = 0.1
        if rng.random() < 0.15:  # class-probability targets
            if fn == "cross_entropy":
                p = rng.random((n, c) + extra)
                tgt = p / p.sum(1, keepdims=True)
        cases.append((fn, (x, tgt), kw))
    elif fn in ("log_softmax", "softmax"):
        sh = tuple(int(n) for n in rng.integers(1, 4, rng.integers(1, 4)))
        cases.append(
            (fn, (rng.standard_normal(sh),), {"dim": int(rng.integers(-len(sh), len(sh)))})
        )
    else:
        i, o = int(rng.integers(1, 4)), int(rng.integers(1, 4))
        sh = tuple(int(n) for n in rng.integers(1, 3, rng.integers(0, 2))) + (i,)
        args = (rng.standard_normal(sh), rng.standard_normal((o, i)))
        if rng.random() < 0.5:
            args = args + (rng.standard_normal((o,)),)
        cases.append((fn, args, {}))
for _ in range(opts.count):
    cases.append(new_case())
for fn, args, kw in cases:
    res = []
    for M in (torch, cudalite):
        try:
            res.append((run(M, fn, args, kw), None))
        except Exception as e:  # noqa: BLE001 - the type is compared
            res.append((None, e))
    (rt, et), (rc, ec) = res
    opts_shown = {k: "array" if isinstance(v, np.ndarray) else v for k, v in kw.items()}
    desc = f"{fn} {[getattr(a, 'shape', a) for a in args]} {opts_shown}"
    if et or ec:
        if not (et and ec) or type(et) is not type(ec):
            bad += 1
            print(desc, "|", repr(et)[:120], "|", repr(ec)[:120])
        continue
    ok = np.allclose(rt[0], rc[0], atol=1e-9, equal_nan=True) and rt[0].shape == rc[0].shape
    for gt, gc in zip(rt[1], rc[1], strict=True):
        ok = ok and (
            (gt is None and gc is None)
            or (
                gt is not None and gc is not None and np.allclose(gt, gc, atol=1e-9, equal_nan=True)
            )
        )
    if not ok:
        bad += 1
        print("DIFF", desc, rt[0].ravel()[:4], rc[0].ravel()[:4])
print(f"{len(cases)} cases, {bad} mismatches")
sys.exit(1 if bad else 0)
