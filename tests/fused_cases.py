"""Cases for the multi-tensor ops, the AMP kernels, the fused/foreach optimizers and the matmul
precision switches, run on the CPU by ``gen_fused_expected.py`` under torch 2.11 (which records
``tests/data/fused_expected.json``) and by ``test_fused_vs_torch.py`` under cudalite. Each case
takes the module (``torch`` or ``cudalite``) and returns plain data: values, dtypes, or an
exception's type and message."""

from __future__ import annotations

import math
import warnings


def _vals(t):
    return {"dtype": str(t.dtype).split(".")[-1], "shape": list(t.shape), "v": _floats(t)}


def _floats(t):
    vals = t.detach().double().reshape(-1).tolist()
    return [v if math.isfinite(v) else repr(v) for v in vals]


def _lin(torch, start, end, n, dtype=None):
    """Evenly spaced values made in Python (linspace's own rounding is not what is tested)."""
    return torch.tensor([start + (end - start) * i / (n - 1) for i in range(n)], dtype=dtype)


def _err(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the case records whatever is raised
        return {"error": type(e).__name__, "msg": str(e)}
    return None


# ---- matmul precision switches ----

_FLAG_SEQS = {
    "legacy": [
        ("prec", "high"),
        ("prec", "medium"),
        ("prec", "highest"),
        ("tf32", True),
        ("tf32", False),
        ("prec", "medium"),
        ("fp16", False),
        ("bf16", (False, False)),
        ("fp16", True),
        ("bf16", True),
        ("prec", "highest"),
    ],
    "new": [("fp32", "tf32"), ("fp32", "ieee"), ("fp32", "none"), ("fp32", "bf16"), ("fp32", "x")],
    "legacy_then_new": [("prec", "high"), ("fp32", "ieee"), ("prec", "high"), ("prec", "highest")],
    "new_then_legacy": [("fp32", "tf32"), ("tf32", False), ("tf32", True), ("tf32", False)],
    "tf32_then_new": [("tf32", True), ("fp32", "ieee"), ("tf32", False)],
}


def _matmul_flags(torch, seq):
    m = torch.backends.cuda.matmul

    def val(f):
        e = _err(f)
        return e if e is not None else f()

    def snap():
        return [
            val(torch.get_float32_matmul_precision),
            val(lambda: m.allow_tf32),
            val(lambda: m.fp32_precision),
            val(lambda: m.allow_fp16_reduced_precision_reduction),
            val(lambda: m.allow_bf16_reduced_precision_reduction),
        ]

    def setter(k, v):
        def do():
            if k == "prec":
                torch.set_float32_matmul_precision(v)
            elif k == "tf32":
                m.allow_tf32 = v
            elif k == "fp32":
                m.fp32_precision = v
            elif k == "fp16":
                m.allow_fp16_reduced_precision_reduction = v
            else:
                m.allow_bf16_reduced_precision_reduction = v

        return do

    out = [["start", *snap()]]
    try:
        for k, v in _FLAG_SEQS[seq]:
            out.append([f"{k}={v}", _err(setter(k, v)), *snap()])
    finally:  # back to torch's defaults for the cases after this one
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.set_float32_matmul_precision("highest")
            m.fp32_precision = "none"
            m.allow_fp16_reduced_precision_reduction = True
            m.allow_bf16_reduced_precision_reduction = True
    return out


# ---- AMP kernels ----


def _grads(torch, dtype):
    inf, nan = float("inf"), float("nan")
    return [
        torch.tensor([1.0, -2.0, 3.5], dtype=dtype),
        torch.tensor([[0.25, 8.0], [-6.0, 1e-3]], dtype=dtype),
        torch.tensor([inf, 1.0], dtype=dtype),
        torch.tensor([nan], dtype=dtype),
    ]


def _unscale(torch, dtype, which, inv, found0):
    gs = [_grads(torch, getattr(torch, dtype))[i] for i in which]
    found = torch.tensor(found0)
    torch._amp_foreach_non_finite_check_and_unscale_(gs, found, torch.tensor(inv))
    return {"grads": [_vals(g) for g in gs], "found_inf": found.item()}


def _unscale_strided(torch):
    g = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]).t()
    h = torch.tensor([1.0, 2.0, 3.0, 4.0])[::2]
    found = torch.tensor(0.0)
    torch._amp_foreach_non_finite_check_and_unscale_([g, h], found, torch.tensor(0.25))
    return {"grads": [_vals(g), _vals(h)], "found_inf": found.item()}


def _unscale_mixed(torch):
    gs = [torch.tensor([2.0, 4.0]), torch.tensor([8.0], dtype=torch.float64)]
    found = torch.tensor(0.0)
    torch._amp_foreach_non_finite_check_and_unscale_(gs, found, torch.tensor(0.5))
    return {"grads": [_vals(g) for g in gs], "found_inf": found.item()}


def _unscale_error(torch, kind):
    g = [torch.tensor([1.0])]
    f, inv = torch.tensor(0.0), torch.tensor(0.5)
    if kind == "inv_numel":
        inv = torch.tensor([0.5, 1.0])
    elif kind == "found_numel":
        f = torch.tensor([0.0, 0.0])
    elif kind == "inv_dtype":
        inv = torch.tensor(0.5, dtype=torch.float64)
    elif kind == "found_dtype":
        f = torch.tensor(0.0, dtype=torch.float64)
    elif kind == "int_grad":
        g = [torch.tensor([1, 2], dtype=torch.int32)]
    return _err(lambda: torch._amp_foreach_non_finite_check_and_unscale_(g, f, inv))


def _update_scale(torch, init, found_seq, growth, backoff, interval, tracker0=0):
    scale = torch.tensor(init)
    tracker = torch.tensor(tracker0, dtype=torch.int32)
    out = []
    for f in found_seq:
        found = torch.tensor(float(f))
        r = torch._amp_update_scale_(scale, tracker, found, growth, backoff, interval)
        out.append([scale.item(), tracker.item(), r is scale])
    return out


def _update_scale_error(torch, kind):
    s, t, f = torch.tensor(1.0), torch.tensor(0, dtype=torch.int32), torch.tensor(0.0)
    if kind == "scale_numel":
        s = torch.tensor([1.0, 2.0])
    elif kind == "scale_dtype":
        s = torch.tensor(1.0, dtype=torch.float64)
    elif kind == "tracker_dtype":
        t = torch.tensor(0.0)
    elif kind == "tracker_numel":
        t = torch.tensor([0, 0], dtype=torch.int32)
    elif kind == "found_dtype":
        f = torch.tensor(0.0, dtype=torch.float64)
    return _err(lambda: torch._amp_update_scale_(s, t, f, 2.0, 0.5, 3))


# ---- foreach ops ----


def _lists(torch, dtype="float32", n=3):
    dt = getattr(torch, dtype)
    base = [
        _lin(torch, -2.0, 3.0, 7, dt),
        _lin(torch, 0.5, 4.0, 12, dt).reshape(3, 4),
        torch.tensor(1.25, dtype=dt),
    ]
    return [t.clone() for t in base[:n]]


def _pos(torch, dtype="float32"):
    return [t.abs() + 0.5 for t in _lists(torch, dtype)]


def _foreach(torch, name, dtype="float32"):
    a, b, c = _lists(torch, dtype), _pos(torch, dtype), [t * 0.5 - 0.25 for t in _pos(torch, dtype)]
    f = torch
    calls = {
        "add_list_alpha": lambda: f._foreach_add(a, b, alpha=-0.3),
        "add_scalar": lambda: f._foreach_add(a, 1.7),
        "add_scalarlist": lambda: f._foreach_add(a, [0.5, -1.0, 2.0]),
        "add_tensor": lambda: f._foreach_add(a, torch.tensor(0.75, dtype=a[0].dtype), alpha=2),
        "sub_list": lambda: f._foreach_sub(a, b, alpha=0.5),
        "mul_list": lambda: f._foreach_mul(a, b),
        "mul_scalar": lambda: f._foreach_mul(a, 0.3),
        "div_list": lambda: f._foreach_div(a, b),
        "div_scalarlist": lambda: f._foreach_div(a, [3.0, 7.0, 0.1]),
        "maximum_list": lambda: f._foreach_maximum(a, c),
        "minimum_scalar": lambda: f._foreach_minimum(a, 0.5),
        "clamp_min": lambda: f._foreach_clamp_min(a, -0.5),
        "clamp_max_list": lambda: f._foreach_clamp_max(a, [0.0, 1.0, 2.0]),
        "pow_scalar": lambda: f._foreach_pow(b, 1.5),
        "pow_list": lambda: f._foreach_pow(b, c),
        "rpow": lambda: f._foreach_pow(0.9, b),
        "neg": lambda: f._foreach_neg(a),
        "sqrt": lambda: f._foreach_sqrt(b),
        "rsqrt": lambda: f._foreach_rsqrt(b),
        "abs": lambda: f._foreach_abs(a),
        "exp": lambda: f._foreach_exp(a),
        "log": lambda: f._foreach_log(b),
        "reciprocal": lambda: f._foreach_reciprocal(b),
        "sign": lambda: f._foreach_sign(a),
        "addcmul": lambda: f._foreach_addcmul(a, b, c, 0.3),
        "addcmul_scalarlist": lambda: f._foreach_addcmul(a, b, c, [0.1, -2.0, 3.0]),
        "addcdiv": lambda: f._foreach_addcdiv(a, b, c, -0.7),
        "addcdiv_tensor": lambda: f._foreach_addcdiv(a, c, b, torch.tensor([1.0, 2.0, 0.5])),
        "lerp_scalar": lambda: f._foreach_lerp(a, b, 0.3),
        "lerp_high": lambda: f._foreach_lerp(a, b, 0.8),
        "lerp_list": lambda: f._foreach_lerp(a, b, c),
        "norm2": lambda: f._foreach_norm(a),
        "norm1": lambda: f._foreach_norm(a, 1),
        "norm_inf": lambda: f._foreach_norm(a, float("inf")),
        "norm3": lambda: f._foreach_norm(a, 3),
        "norm_f64": lambda: f._foreach_norm(a, dtype=torch.float64),
        "add_": lambda: f._foreach_add_(a, b, alpha=2.5),
        "mul_": lambda: f._foreach_mul_(a, [2.0, 3.0, 4.0]),
        "lerp_": lambda: f._foreach_lerp_(a, b, 0.1),
        "addcdiv_": lambda: f._foreach_addcdiv_(a, b, c, [0.5, 0.25, 2.0]),
        "sqrt_": lambda: f._foreach_sqrt_(b),
        "zero_": lambda: f._foreach_zero_(a),
        "copy_": lambda: f._foreach_copy_(a, b),
        "maximum_": lambda: f._foreach_maximum_(a, c),
        "sub_scalar_": lambda: f._foreach_sub_(a, 1),
        "pow_": lambda: f._foreach_pow_(b, 2),
    }
    err = None
    try:
        r = calls[name]()
    except Exception as e:  # noqa: BLE001
        err = {"error": type(e).__name__, "msg": str(e)}
    if err is not None:
        return err
    src = b if name in ("sqrt_", "pow_") else a
    return {
        "type": type(r).__name__,
        "is_self": r is src,
        "out": [_vals(t) for t in r],
        "self": [_vals(t) for t in src],
    }


# torch's unary foreach ops that are the foreach form of an elementwise op (the registry's
# Foreach flag), beyond those of _foreach
FOREACH_UNARY = (
    "acos asin atan ceil cos cosh erf erfc expm1 floor frac log10 log1p log2 round sigmoid sin "
    "sinh tan tanh trunc"
).split()


def _foreach_unary(torch, name, dtype, inplace):
    """_foreach_<name>(_) on values inside every op's domain, (0, 1) and beyond 1 for those
    defined there."""
    dt = getattr(torch, dtype)
    a = [_lin(torch, 0.05, 0.95, 7, dt), _lin(torch, 0.1, 0.9, 12, dt).reshape(3, 4)]
    if name not in ("acos", "asin"):
        a.append(torch.tensor(2.75, dtype=dt))
    r = getattr(torch, f"_foreach_{name}{'_' if inplace else ''}")(a)
    return {"type": type(r).__name__, "is_self": r is a, "out": [_vals(t) for t in r]}


def _foreach_error(torch, kind):
    a = _lists(torch)
    calls = {
        "empty": lambda: torch._foreach_add_([], 1),
        "lengths": lambda: torch._foreach_add(a, a[:2]),
        "scalarlist": lambda: torch._foreach_mul(a, [1.0]),
        "tensor_not_0dim": lambda: torch._foreach_mul(a, torch.tensor([1.0, 2.0])),
        "addcmul_values": lambda: torch._foreach_addcmul(a, a, a, [1.0, 2.0]),
        "int_inplace_float": lambda: torch._foreach_add_([torch.tensor([1, 2])], 1.5),
    }
    return _err(calls[kind])


# ---- optimizers ----


def _params(torch, dtype="float32"):
    dt = getattr(torch, dtype)
    return [
        _lin(torch, -1.0, 1.0, 15, dt).reshape(3, 5).requires_grad_(),
        _lin(torch, 0.3, -0.7, 6, dt).requires_grad_(),
        torch.tensor([[2.0]], dtype=dt).requires_grad_(),
    ]


def _set_grads(torch, ps, step):
    for i, p in enumerate(ps):
        p.grad = torch.sin(p.detach() * (step + 1) + i) * (0.5 + step)


def _optim(torch, name, mode, kw, steps=4, scale=None):
    ps = _params(torch)
    cls = getattr(torch.optim, name)
    opt = cls(ps, **kw, **({mode: True} if mode else {}))
    for s in range(steps):
        _set_grads(torch, ps, s)
        if scale is not None:
            # the fused kernels' AMP inputs, as GradScaler hands them over
            for p in ps:
                p.grad.mul_(scale)
            opt.grad_scale = torch.tensor(scale)
            opt.found_inf = torch.tensor(1.0 if s == 2 else 0.0)
        opt.step()
    out = {"params": [_vals(p) for p in ps]}
    if scale is not None:
        out["grads"] = [_vals(p.grad) for p in ps]
    st = opt.state[ps[0]]
    out["state"] = {k: _vals(v) for k, v in sorted(st.items()) if hasattr(v, "dtype")}
    return out


def _scaler_run(torch, optim_kw, steps=8, inf_at=(2, 5)):
    """A GradScaler training run on the CPU with an inf put into one gradient at some steps:
    scale trajectory, which steps ran, and the final weights."""
    w = _lin(torch, -0.5, 0.5, 12).reshape(4, 3).requires_grad_()
    b = torch.zeros(3).requires_grad_()
    opt = torch.optim.SGD([w, b], lr=0.05, **optim_kw)
    scaler = torch.amp.GradScaler("cpu", init_scale=1024.0, growth_interval=3)
    x = _lin(torch, -1.0, 1.0, 8).reshape(2, 4)
    log = []
    for s in range(steps):
        opt.zero_grad()
        loss = ((x @ w + b) ** 2).sum()
        scaler.scale(loss).backward()
        if s in inf_at:
            w.grad[0, 0] = float("inf")
        before = w.detach().clone()
        scaler.step(opt)
        scaler.update()
        log.append([scaler.get_scale(), bool((w.detach() != before).any())])
    return {"log": log, "w": _vals(w), "b": _vals(b)}


CASES = {}


def _add(name, fn):
    CASES[name] = fn


for _seq in _FLAG_SEQS:
    _add(f"flags/{_seq}", lambda torch, s=_seq: _matmul_flags(torch, s))
for _dt in ("float32", "float64", "float16", "bfloat16"):
    _add(f"unscale/{_dt}/finite", lambda torch, d=_dt: _unscale(torch, d, [0, 1], 0.125, 0.0))
    _add(f"unscale/{_dt}/inf", lambda torch, d=_dt: _unscale(torch, d, [0, 2, 1], 0.5, 0.0))
    _add(f"unscale/{_dt}/nan_inv1", lambda torch, d=_dt: _unscale(torch, d, [3, 0], 1.0, 0.0))
_add("unscale/found_stays", lambda torch: _unscale(torch, "float32", [0], 0.5, 1.0))
_add("unscale/strided", _unscale_strided)
_add("unscale/mixed_dtypes", _unscale_mixed)
for _k in ("inv_numel", "found_numel", "inv_dtype", "found_dtype", "int_grad"):
    _add(f"unscale_error/{_k}", lambda torch, k=_k: _unscale_error(torch, k))
_add(
    "update_scale/grow_backoff",
    lambda torch: _update_scale(torch, 65536.0, [0, 0, 0, 1, 0, 0, 0, 0, 1, 1], 2.0, 0.5, 3),
)
_add(
    "update_scale/odd_factors",
    lambda torch: _update_scale(torch, 1000.0, [0, 0, 1, 0, 0, 0, 1], 1.0001, 0.3, 2),
)
_add(
    "update_scale/overflow",
    lambda torch: _update_scale(torch, 3e38, [0, 0, 0, 0], 2.0, 0.5, 2),
)
_add(
    "update_scale/interval1",
    lambda torch: _update_scale(torch, 1.0, [0, 0, 2.0, 0], 4.0, 0.25, 1, tracker0=5),
)
for _k in ("scale_numel", "scale_dtype", "tracker_dtype", "tracker_numel", "found_dtype"):
    _add(f"update_scale_error/{_k}", lambda torch, k=_k: _update_scale_error(torch, k))
for _name in (
    "add_list_alpha add_scalar add_scalarlist add_tensor sub_list mul_list mul_scalar div_list "
    "div_scalarlist maximum_list minimum_scalar clamp_min clamp_max_list pow_scalar pow_list rpow "
    "neg sqrt rsqrt abs exp log reciprocal sign addcmul addcmul_scalarlist addcdiv addcdiv_tensor "
    "lerp_scalar lerp_high lerp_list norm2 norm1 norm_inf norm3 norm_f64 add_ mul_ lerp_ "
    "addcdiv_ sqrt_ zero_ copy_ maximum_ sub_scalar_ pow_"
).split():
    _add(f"foreach/{_name}", lambda torch, n=_name: _foreach(torch, n))
for _name in FOREACH_UNARY:
    for _dt in ("float32", "float64"):
        _add(
            f"foreach_unary/{_name}/{_dt}",
            lambda torch, n=_name, d=_dt: _foreach_unary(torch, n, d, False),
        )
    _add(
        f"foreach_unary/{_name}_", lambda torch, n=_name: _foreach_unary(torch, n, "float32", True)
    )
for _name in ("add_list_alpha", "addcmul", "lerp_scalar", "norm2", "sqrt", "addcdiv"):
    _add(f"foreach_f64/{_name}", lambda torch, n=_name: _foreach(torch, n, "float64"))
for _k in (
    "empty",
    "lengths",
    "scalarlist",
    "tensor_not_0dim",
    "addcmul_values",
    "int_inplace_float",
):
    _add(f"foreach_error/{_k}", lambda torch, k=_k: _foreach_error(torch, k))
_OPTIMS = [
    ("Adam", {"lr": 0.1}),
    ("Adam", {"lr": 0.05, "weight_decay": 0.1, "amsgrad": True, "maximize": True}),
    ("AdamW", {"lr": 0.1, "betas": (0.8, 0.95)}),
    ("AdamW", {"lr": 0.02, "amsgrad": True, "weight_decay": 0.3}),
    ("SGD", {"lr": 0.1}),
    ("SGD", {"lr": 0.1, "momentum": 0.9, "nesterov": True, "weight_decay": 0.01}),
    ("SGD", {"lr": 0.05, "momentum": 0.5, "dampening": 0.2, "maximize": True}),
]
for _i, (_name, _kw) in enumerate(_OPTIMS):
    for _mode in ("", "foreach", "fused"):
        _add(
            f"optim/{_name}{_i}/{_mode or 'forloop'}",
            lambda torch, n=_name, k=_kw, m=_mode: _optim(torch, n, m, k),
        )
    _add(
        f"optim_amp/{_name}{_i}/fused",
        lambda torch, n=_name, k=_kw: _optim(torch, n, "fused", k, scale=64.0),
    )
_add("scaler/sgd", lambda torch: _scaler_run(torch, {}))
_add("scaler/sgd_momentum", lambda torch: _scaler_run(torch, {"momentum": 0.9}))
_add("scaler/sgd_fused", lambda torch: _scaler_run(torch, {"fused": True}))
_add("scaler/sgd_foreach", lambda torch: _scaler_run(torch, {"foreach": True}))
