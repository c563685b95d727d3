"""Calls of the CNN pieces of ``nn.functional`` and ``nn`` (convolutions, unfold/fold,
pooling, batch/instance/group norm, interpolate) and their modules, shared by
tests/test_nn_conv.py, test_nn_pooling.py, test_nn_batchnorm.py and their generator
(``gen_nn_cnn_expected.py``, run by hand with PyTorch 2.11), which records torch's outcome
of each in ``data/nn_cnn_expected.json``: the result's values and the gradients of the float
inputs for the upstream gradient ``linspace(0.5, 1.5)``, or the exception's type and message;
the modules' reprs; seeded modules' initial parameters; BatchNorm's running statistics after
a few training steps.

Each case is an expression evaluated with ``M`` (torch or cudalite), ``F`` (its
``nn.functional``) and the inputs of ``inputs``.
"""

from __future__ import annotations

import numpy as np


def _arr(shape, phase, scale=1.0):
    n = int(np.prod(shape))
    return (np.sin(np.arange(n) * 1.37 + phase) * scale).reshape(shape)


ARRAYS = {
    "x": _arr((2, 4, 7, 6), 0.1, 2.0),
    "x1": _arr((2, 4, 9), 0.7, 2.0),
    "x3": _arr((1, 2, 4, 5, 4), 1.9, 2.0),
    "w": _arr((6, 4, 3, 3), 1.3, 0.5),
    "wg": _arr((6, 2, 3, 2), 0.4, 0.5),
    "wd": _arr((4, 1, 3, 3), 2.4, 0.5),
    "w1": _arr((5, 4, 3), 0.8, 0.5),
    "w3": _arr((3, 2, 2, 3, 2), 2.9, 0.5),
    "wt": _arr((4, 3, 3, 3), 1.7, 0.5),
    "wtg": _arr((4, 2, 2, 3), 0.2, 0.5),
    "wt1": _arr((4, 3, 4), 1.1, 0.5),
    "b6": _arr((6,), 2.2, 0.5),
    "b5": _arr((5,), 0.6, 0.5),
    "b3": _arr((3,), 1.6, 0.5),
    "b4": _arr((4,), 2.6, 0.5),
    "g4": _arr((4,), 0.9, 0.5) + 1.0,
    "cols": _arr((2, 12, 20), 0.35, 1.0),
}
BUFFERS = {
    "rm": _arr((4,), 0.5, 0.3),
    "rv": _arr((4,), 1.5, 0.3) + 1.0,
}
INDEX = {
    "ix": (_arr((2, 4, 7, 6), 0.1, 5.0)).astype(np.int64),
}

# (name, expression): differentiated with respect to the float inputs it names
CONV_CASES = [
    ("conv2d", "F.conv2d(x, w)"),
    ("conv2d_bias_stride_pad", "F.conv2d(x, w, b6, stride=2, padding=1)"),
    ("conv2d_dilation_asym", "F.conv2d(x, w, b6, stride=(1, 2), padding=(2, 0), dilation=(2, 1))"),
    ("conv2d_groups", "F.conv2d(x, wg, b6, padding=(1, 0), groups=2)"),
    ("conv2d_depthwise", "F.conv2d(x, wd, b4, padding=1, groups=4)"),
    ("conv2d_same", "F.conv2d(x, w, b6, padding='same')"),
    ("conv2d_same_dilated_even", "F.conv2d(x, wg, padding='same', dilation=2, groups=2)"),
    ("conv2d_valid", "F.conv2d(x, w, padding='valid')"),
    ("conv2d_unbatched", "F.conv2d(x[0], w, b6, padding=1)"),
    ("conv2d_noncontiguous", "F.conv2d(x.transpose(2, 3), w, b6, stride=2)"),
    ("conv1d", "F.conv1d(x1, w1, b5, stride=2, padding=1, dilation=2)"),
    ("conv1d_same", "F.conv1d(x1, w1, padding='same')"),
    ("conv1d_unbatched", "F.conv1d(x1[1], w1)"),
    ("conv3d", "F.conv3d(x3, w3, b3, stride=(1, 2, 1), padding=1)"),
    ("conv_transpose2d", "F.conv_transpose2d(x, wt, b3, stride=2, padding=1, output_padding=1)"),
    (
        "conv_transpose2d_groups_dilation",
        "F.conv_transpose2d(x, wtg, None, stride=(2, 1), padding=(0, 1), groups=2, dilation=2)",
    ),
    ("conv_transpose1d", "F.conv_transpose1d(x1, wt1, b3, stride=3, output_padding=2)"),
    ("conv2d_empty_batch", "F.conv2d(x[:0], w, b6, padding=1)"),
    ("conv_transpose2d_empty_batch", "F.conv_transpose2d(x[:0], wt, b3, stride=2)"),
    ("unfold", "F.unfold(x, 3)"),
    ("unfold_args", "F.unfold(x, (2, 3), dilation=(2, 1), padding=1, stride=(1, 2))"),
    ("fold", "F.fold(cols, (6, 6), (2, 3))"),
    ("fold_args", "F.fold(cols, (9, 5), (2, 3), stride=(2, 1), padding=(0, 1), dilation=(2, 1))"),
]

POOL_CASES = [
    ("max_pool2d", "F.max_pool2d(x, 2)"),
    ("max_pool2d_args", "F.max_pool2d(x, 3, stride=2, padding=1)"),
    ("max_pool2d_ceil_dilation", "F.max_pool2d(x, (3, 2), 2, 1, dilation=(2, 1), ceil_mode=True)"),
    ("max_pool2d_indices", "F.max_pool2d(x, 3, 2, 1, return_indices=True)[1]"),
    ("max_pool2d_unbatched", "F.max_pool2d(x[0], 2, 1)"),
    ("max_pool2d_int", "F.max_pool2d(ix, 2)"),
    ("max_pool1d", "F.max_pool1d(x1, 3, 2, 1, ceil_mode=True)"),
    ("max_pool1d_indices", "F.max_pool1d(x1, 2, return_indices=True)[1]"),
    ("avg_pool2d", "F.avg_pool2d(x, 2)"),
    ("avg_pool2d_pad", "F.avg_pool2d(x, 3, 2, 1)"),
    ("avg_pool2d_no_pad_count", "F.avg_pool2d(x, 3, 2, 1, count_include_pad=False)"),
    ("avg_pool2d_ceil", "F.avg_pool2d(x, 3, 2, 1, ceil_mode=True)"),
    ("avg_pool2d_ceil_no_pad", "F.avg_pool2d(x, (3, 2), 2, 1, True, False)"),
    ("avg_pool2d_divisor", "F.avg_pool2d(x, 2, divisor_override=3)"),
    ("avg_pool1d", "F.avg_pool1d(x1, 4, 3, 2, ceil_mode=True, count_include_pad=False)"),
    ("adaptive_avg_pool2d", "F.adaptive_avg_pool2d(x, (3, 4))"),
    ("adaptive_avg_pool2d_even", "F.adaptive_avg_pool2d(x[..., :6, :], (3, 2))"),
    ("adaptive_avg_pool2d_one", "F.adaptive_avg_pool2d(x, 1)"),
    ("adaptive_avg_pool2d_none", "F.adaptive_avg_pool2d(x[0], (None, 4))"),
    ("adaptive_avg_pool1d", "F.adaptive_avg_pool1d(x1, 4)"),
    ("adaptive_max_pool2d_empty_batch", "F.adaptive_max_pool2d(x[:0], 2)"),
    ("adaptive_max_pool2d", "F.adaptive_max_pool2d(x, (3, 4))"),
    ("adaptive_max_pool2d_indices", "F.adaptive_max_pool2d(x, (4, 5), return_indices=True)[1]"),
    ("adaptive_max_pool1d", "F.adaptive_max_pool1d(x1, 4)"),
    ("interpolate_nearest", "F.interpolate(x, scale_factor=2)"),
    ("interpolate_nearest_size", "F.interpolate(x, size=(5, 9))"),
    ("interpolate_nearest_exact", "F.interpolate(x, size=(9, 4), mode='nearest-exact')"),
    ("interpolate_bilinear", "F.interpolate(x, scale_factor=2, mode='bilinear')"),
    (
        "interpolate_bilinear_corners",
        "F.interpolate(x, size=(5, 9), mode='bilinear', align_corners=True)",
    ),
    ("interpolate_linear", "F.interpolate(x1, scale_factor=1.5, mode='linear')"),
]

NORM_CASES = [
    ("batch_norm_train", "F.batch_norm(x, rm, rv, g4, b4, True, 0.3, 1e-3)"),
    ("batch_norm_eval", "F.batch_norm(x, rm, rv, g4, b4, False)"),
    ("batch_norm_no_affine", "F.batch_norm(x1, None, None, training=True)"),
    ("batch_norm_2d_input", "F.batch_norm(x[:, :, 0, 0], rm, rv, g4, None, True)"),
    ("instance_norm", "F.instance_norm(x, weight=g4, bias=b4)"),
    ("instance_norm_running", "F.instance_norm(x1, rm, rv, momentum=0.2)"),
    ("group_norm", "F.group_norm(x, 2, g4, b4)"),
    ("group_norm_plain", "F.group_norm(x1, 4)"),
    ("group_norm_empty_batch", "F.group_norm(x[:0], 2)"),
    ("running_mean_after_train", "(F.batch_norm(x, rm, rv, None, None, True, 0.3), rm)[1]"),
    ("running_var_after_train", "(F.batch_norm(x1, rm, rv, None, None, True), rv)[1]"),
]

VALUE_CASES = CONV_CASES + POOL_CASES + NORM_CASES

CONV_ERRORS = [
    "F.conv2d(x[0, 0], w)",
    "F.conv2d(x, w[:, :3])",
    "F.conv2d(x, wg, groups=3)",
    "F.conv2d(x, w[:5], groups=2)",
    "F.conv2d(x, w, padding='foo')",
    "F.conv2d(x, w[:0])",
    "F.conv2d(x, w, stride=2, padding='same')",
    "F.conv2d(x[..., :2, :2], w)",
    "F.conv2d(x, w, stride=0)",
    "F.conv2d(x, w, padding=-1)",
    "F.conv2d(x, w, dilation=0)",
    "F.conv2d(x, w, b5)",
    "F.conv2d(x, w.float())",
    "F.conv2d(x, w, stride=(1, 1, 1))",
    "F.conv2d(x, w1)",
    "F.conv2d(ix, w)",
    "F.conv1d(x, w1)",
    "F.conv_transpose2d(x, w)",
    "F.conv_transpose2d(x, wt, output_padding=2, stride=2)",
    "F.unfold(x[0, 0], 2)",
    "F.unfold(x, 8)",
    "F.fold(cols, (6, 7), 3)",
    "F.fold(cols, (6, 7), (2, 3))",
    "M.nn.Conv2d(4, 6, 3, groups=4)",
    "M.nn.Conv2d(4, 6, 3, groups=0)",
    "M.nn.Conv2d(3, 6, 3, stride=2, padding='same')",
    "M.nn.ConvTranspose2d(3, 6, 3, padding_mode='reflect')",
]

POOL_ERRORS = [
    "F.max_pool2d(x[0, 0, 0], 2)",
    "F.max_pool2d(x, 3, padding=2)",
    "F.max_pool2d(x, 2, stride=0)",
    "F.max_pool2d(x[..., :2, :2], 3)",
    "F.max_pool2d(x, 2, dilation=0)",
    "F.max_pool2d(x, (2, 2, 2))",
    "F.max_pool2d(x, 2, padding=(0, 0, 0))",
    "F.avg_pool2d(x, 2, stride=(1, 1, 1))",
    "F.interpolate(x, scale_factor=0.1)",
    "F.max_pool1d(x1[0, 0], 2)",
    "F.avg_pool2d(x, 3, padding=2)",
    "F.avg_pool2d(x[..., :2, :2], 3)",
    "F.avg_pool2d(x, 2, divisor_override=0)",
    "F.avg_pool1d(x1[0, 0], 2)",
    "F.adaptive_avg_pool2d(x[0, 0, 0], 2)",
    "F.adaptive_max_pool2d(x[0, 0, 0], 2)",
    "F.adaptive_avg_pool1d(x1[0, 0], 2)",
    "F.interpolate(x, scale_factor=2, mode='bilinear', size=3)",
    "F.interpolate(x, mode='nearest', align_corners=True, scale_factor=2)",
    "F.interpolate(x, size=(3, 4, 5))",
]

NORM_ERRORS = [
    "F.batch_norm(x[:1, :, 0, 0], rm, rv, training=True)",
    "F.batch_norm(x, rm[:3], rv, training=True)",
    "F.batch_norm(x, None, None)",
    "F.batch_norm(x, rm, rv, g4[:3])",
    "F.group_norm(x, 3)",
    "M.nn.GroupNorm(3, 4)",
    "M.nn.BatchNorm2d(4)(x[0])",
    "M.nn.BatchNorm1d(4)(x)",
    "M.nn.InstanceNorm2d(4)(x[0, 0])",
    "M.nn.InstanceNorm2d(3, affine=True)(x)",
    "F.dropout2d(x, p=1.5)",
]

ERROR_CASES = CONV_ERRORS + POOL_ERRORS + NORM_ERRORS

# module constructors whose repr is compared
REPRS = [
    "nn.Conv1d(2, 4, 3, padding='same')",
    "nn.Conv2d(3, 6, 5)",
    "nn.Conv2d(3, 6, (3, 2), stride=2, padding=1, dilation=2, groups=3, bias=False, "
    "padding_mode='reflect')",
    "nn.Conv3d(2, 4, 3, padding=(1, 0, 1))",
    "nn.ConvTranspose2d(4, 2, 3, stride=2, output_padding=1)",
    "nn.ConvTranspose1d(4, 2, 3, groups=2, dilation=2)",
    "nn.BatchNorm1d(3, momentum=None, affine=False)",
    "nn.BatchNorm2d(4)",
    "nn.BatchNorm3d(4, eps=1e-3, track_running_stats=False)",
    "nn.GroupNorm(2, 4)",
    "nn.InstanceNorm1d(3, affine=True, track_running_stats=True)",
    "nn.InstanceNorm2d(3)",
    "nn.MaxPool1d(2)",
    "nn.MaxPool2d(2, 2)",
    "nn.MaxPool2d(3, stride=2, padding=1, return_indices=True, ceil_mode=True)",
    "nn.AvgPool1d(3)",
    "nn.AvgPool2d(2)",
    "nn.AvgPool2d(3, 2, 1, True, False, 4)",
    "nn.AdaptiveAvgPool1d(3)",
    "nn.AdaptiveAvgPool2d((1, 1))",
    "nn.AdaptiveAvgPool2d((None, 2))",
    "nn.AdaptiveMaxPool1d(3)",
    "nn.AdaptiveMaxPool2d(2)",
    "nn.Dropout1d(0.2)",
    "nn.Dropout2d()",
    "nn.Dropout3d(0.3, inplace=True)",
    "nn.Upsample(scale_factor=2)",
    "nn.Upsample(size=(3, 4), mode='bilinear', align_corners=True)",
    "nn.UpsamplingBilinear2d(scale_factor=2)",
    "nn.UpsamplingNearest2d(size=4)",
]

# modules made right after manual_seed(0): their state_dict is compared exactly
SEEDED = [
    "nn.Conv2d(3, 6, 5)",
    "nn.Conv2d(4, 8, 3, groups=2, bias=False)",
    "nn.Conv1d(3, 5, 4)",
    "nn.Conv3d(2, 3, (2, 3, 1))",
    "nn.ConvTranspose2d(4, 6, 3, groups=2)",
    "nn.ConvTranspose1d(3, 2, 5)",
    "nn.BatchNorm2d(5)",
    "nn.GroupNorm(2, 6)",
]


def inputs(M, dtype, dev):
    """The tensors the cases use, the same on both sides; float ones require grad."""
    env = {"dev": dev}
    for name, arr in ARRAYS.items():
        env[name] = M.tensor(arr, dtype=dtype, device=dev, requires_grad=True)
    for name, arr in BUFFERS.items():
        env[name] = M.tensor(arr, dtype=dtype, device=dev)
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


def load_expected():
    import json
    import pathlib

    path = pathlib.Path(__file__).parent / "data" / "nn_cnn_expected.json"
    return json.loads(path.read_text())


# float64 exact to rounding; float32 to its precision (sums of up to ~100 products)
TOL = {"float64": (1e-10, 1e-12), "float32": (2e-5, 2e-5)}


def check_value_case(M, expected, name, dtype, dev):
    """Runs value case ``name`` and compares it with torch's recorded outcome."""
    import warnings

    expr = dict(VALUE_CASES)[name]
    exp = expected["values"][name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        vals, grads = run(M, expr, dtype, dev)
    rtol, atol = TOL[str(dtype).rsplit(".", 1)[-1]]
    assert list(vals.shape) == exp["shape"]
    if exp["dtype"] == "int64":
        assert vals.dtype == np.int64
    np.testing.assert_allclose(vals.ravel(), exp["values"], rtol=rtol, atol=atol)
    assert sorted(grads) == sorted(exp["grads"])
    for k, g in grads.items():
        np.testing.assert_allclose(g.ravel(), exp["grads"][k], rtol=rtol, atol=atol, err_msg=k)


def check_error_case(M, expected, expr, dev):
    """Runs error case ``expr``: the same exception type and message as torch's (its
    CUDA tensor type names on CUDA)."""
    import pytest

    etype, msg = expected["errors"][expr]
    if dev == "cuda":
        msg = msg.replace("torch.DoubleTensor", "torch.cuda.DoubleTensor").replace(
            "torch.FloatTensor", "torch.cuda.FloatTensor"
        )
    env = inputs(M, M.float64, dev)
    with pytest.raises(Exception) as e:  # noqa: PT011 - the type is compared below
        eval(expr, {"M": M, "F": M.nn.functional}, env)  # noqa: S307 - the recorded cases
    assert type(e.value).__name__ == etype
    assert str(e.value) == msg.replace("torch.", "cudalite.")


def check_repr(M, expected, expr):
    assert repr(eval(expr, {"nn": M.nn})) == expected["reprs"][expr]  # noqa: S307


def check_seeded(M, expected, expr):
    """The module made after manual_seed(0) has torch's parameters and buffers exactly."""
    M.manual_seed(0)
    m = eval(expr, {"nn": M.nn})  # noqa: S307
    exp = expected["seeded"][expr]
    sd = m.state_dict()
    assert sorted(sd) == sorted(exp)
    for k, v in sd.items():
        assert v.double().reshape(-1).tolist() == exp[k], k


def batchnorm_steps(M, dev, momentum):
    """BatchNorm2d(4) after three training steps on scaled copies of ``x`` and one eval
    forward: (eval output, running_mean, running_var, num_batches_tracked)."""
    bn = M.nn.BatchNorm2d(4, momentum=momentum).to(dev)
    x = M.tensor(ARRAYS["x"], dtype=M.float32, device=dev)
    for i in range(3):
        bn(x * (i + 1) + i)
    bn.eval()
    y = bn(x)
    return (
        y.detach().cpu().double().numpy(),
        bn.running_mean.cpu().double().numpy(),
        bn.running_var.cpu().double().numpy(),
        int(bn.num_batches_tracked),
    )
