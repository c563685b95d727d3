"""Quick CUDA-vs-CPU agreement check of the core ops (run on the GPU machine).

Every op runs on the same random inputs on both devices; results must match.
"""

import sys

import numpy as np

import cudalite as cl
from cudalite import _C

fails = 0


def check(name, f):
    global fails
    try:
        a = f("cpu")
        b = f("cuda")
        if isinstance(a, tuple):
            ok = all(
                np.allclose(_np(x), _np(y), rtol=1e-4, atol=1e-5, equal_nan=True)
                for x, y in zip(a, b, strict=True)
            )
        else:
            ok = (
                np.allclose(_np(a), _np(b), rtol=1e-4, atol=1e-5, equal_nan=True)
                and a.dtype == b.dtype
                and tuple(a.shape) == tuple(b.shape)
            )
        if not ok:
            fails += 1
            print(
                "MISMATCH",
                name,
                "\n cpu:",
                _np(a) if not isinstance(a, tuple) else a,
                "\n cuda:",
                _np(b) if not isinstance(b, tuple) else b,
            )
    except Exception as e:
        fails += 1
        print("ERROR", name, type(e).__name__, e)


def _np(t):
    if t.dtype == cl.bfloat16:
        t = t.float()
    return _C._numpy(t.cpu())


rng = np.random.default_rng(0)
X = rng.standard_normal((37, 129)).astype(np.float32)
Y = rng.standard_normal((129,)).astype(np.float32)
I = rng.integers(-50, 50, (37, 129))
BIG = rng.standard_normal(3_000_001).astype(np.float32)


def t(a, d, dt=None):
    x = cl.tensor(a, device=d)
    return x if dt is None else x.to(dt)


for dt in [
    cl.float32,
    cl.float64,
    cl.float16,
    cl.bfloat16,
    cl.int32,
    cl.int64,
    cl.uint8,
    cl.int8,
    cl.int16,
    cl.bool,
]:
    for op in ["add", "sub", "mul", "maximum", "minimum", "eq", "lt", "ge"]:
        if op == "sub" and dt == cl.bool:
            continue
        check(f"{op} {dt}", lambda d, op=op, dt=dt: getattr(cl, op)(t(X, d, dt), t(Y, d, dt)))
    check(f"sum {dt}", lambda d, dt=dt: t(X, d, dt).sum(dim=0))
    check(f"max dim {dt}", lambda d, dt=dt: tuple(t(X, d, dt).max(dim=1)))
    check(f"T contiguous {dt}", lambda d, dt=dt: t(X, d, dt).t().contiguous())
for op in ["exp", "log", "sqrt", "sin", "tanh", "sigmoid", "relu", "abs", "floor", "neg"]:
    check(op, lambda d, op=op: getattr(t(X, d).abs() + 0.5, op)())
check("div int", lambda d: t(I, d) / 7)
check("floordiv int", lambda d: t(I, d) // 7)
check("rem int", lambda d: t(I, d) % -7)
check("pow", lambda d: t(X, d).abs() ** 1.5)
check("where", lambda d: cl.where(t(X, d) > 0, t(X, d), 0.0))
check("clamp", lambda d: t(X, d).clamp(-0.5, 0.5))
check("big sum", lambda d: t(BIG, d).sum())
check("big max", lambda d: t(BIG, d).max())
check("big argmax", lambda d: t(BIG, d).argmax())
check("mean dims", lambda d: t(X, d).reshape(37, 3, 43).mean(dim=(0, 2)))
check("std", lambda d: t(X, d).std(dim=1))
check("prod", lambda d: (t(X, d) * 0.1 + 1).prod(dim=1))
check("all/any", lambda d: (t(X, d) > -3).all(dim=0))
check("argmin", lambda d: t(X, d).argmin(dim=0))
check("index int", lambda d: t(X, d)[[0, 5, 7], 3:100:5])
check("index mask", lambda d: t(X, d)[t(X, d) > 1])
check("index nonadj", lambda d: t(X, d).reshape(37, 3, 43)[[1, 2], :, [4, 5]])


def setitem(d):
    x = t(X, d).clone()
    x[x > 0] = 0.0
    x[:, 1] = t(Y[:37], d)
    x[[1, 2, 3], [4, 5, 6]] = 7.0
    return x


check("setitem", setitem)
check("arange", lambda d: cl.arange(0, 10, 0.5, device=d))
check("linspace", lambda d: cl.linspace(-1, 1, 11, device=d))
check("eye", lambda d: cl.eye(4, 5, device=d))
check("full", lambda d: cl.full((3, 4), 2.5, device=d))
check("cat", lambda d: cl.cat([t(X, d), t(X, d)], dim=1))
check("stack", lambda d: cl.stack([t(Y, d), t(Y, d)]))


def rand(d):
    cl.manual_seed(123)
    return cl.cat(
        [
            cl.rand(1000, device=d),
            cl.randn(1001, device=d),
            cl.randint(0, 10, (17,), device=d).float(),
        ]
    )


check("random same on both devices", rand)
check("cast chain", lambda d: t(X, d).half().bfloat16().double().int().bool().float())
check("broadcast strided", lambda d: t(X, d)[:, ::2] + t(X, d)[:, :1])
check("nonzero", lambda d: (t(I, d) > 40).nonzero())
check("matmul", lambda d: t(X, d) @ t(X, d).t())
check("bmm", lambda d: t(X, d).reshape(37, 3, 43) @ t(X, d).reshape(37, 43, 3))

x = cl.tensor([1.0, 2.0], device="cuda")
print(x, x.device, x.cpu(), repr(cl.device("cuda", 0)))
y = cl.zeros(3).cuda()
try:
    cl.zeros(2).cuda(5)
except Exception as e:
    print(type(e).__name__, str(e).splitlines()[0])
try:
    x + cl.zeros(2)
except RuntimeError as e:
    print("mixed:", e)
print("0-dim cpu with cuda:", x + cl.tensor(3.0))
print("FAILS:", fails)
sys.exit(1 if fails else 0)
