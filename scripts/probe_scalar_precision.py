"""At which precision torch's binary ops read a Python number, per op, dtype and device
(a design probe for cudalite's kernels; needs torch):

    python scripts/probe_scalar_precision.py [cpu|cuda]

For each op and floating dtype, the number is either rounded to the tensor's dtype first
("narrow"), kept at the compute precision ("original": float for 16-bit types), or the op is
computed as a multiply by its reciprocal ("recip"). Prints which candidate reproduces torch's
results bit for bit over a set of values that tell them apart; then, where cudalite is
importable, whether cudalite's results equal torch's bit for bit.
"""

import sys

import torch

dev = sys.argv[1] if len(sys.argv) > 1 else "cpu"
OPS = ["add", "sub", "mul", "div", "floor_divide", "remainder", "pow", "eq", "lt", "maximum"]
SCALARS = [0.3, 1 / 3, 1e10, 70000.0, 1e-8, 0.1, 65519.0, 3.0000001, 7.0, 1 / 7]
VALUES = [0.1, 0.3, 1.0, -2.5, 1e-3, 3.0, 100.0, 0.30078125, 0.333251953125, 0.0999755859375]
VALUES += [0.0, 3.0, 5.0, 11.0, 13.0, 1.7, 2.9]


def candidates(f, x, s, dt):
    op_t = torch.float32 if dt in (torch.float16, torch.bfloat16) else dt
    xs = x.to(op_t)
    nar = torch.tensor(s, dtype=dt).to(op_t)
    org = torch.tensor(s, dtype=op_t)
    out = {"narrow": f(xs, nar), "original": f(xs, org)}
    if f is torch.div:
        out["recip"] = xs * (1 / org)
        out["recip-narrow"] = xs * (1 / nar)
    return {k: v.to(dt) if v.is_floating_point() else v for k, v in out.items()}


for dt in [torch.float16, torch.bfloat16, torch.float32]:
    x = torch.tensor(VALUES, dtype=dt)
    for name in OPS:
        f = getattr(torch, name)
        for form in ("x op s", "s op x"):
            seen = {}
            for s in SCALARS:
                try:
                    r = (
                        f(x.to(dev), s)
                        if form == "x op s"
                        else eval(
                            {
                                "add": "s + x",
                                "sub": "s - x",
                                "mul": "s * x",
                                "div": "s / x",
                                "floor_divide": "s // x",
                                "remainder": "s % x",
                                "pow": "s ** x",
                                "eq": "s == x",
                                "lt": "s < x",
                                "maximum": "None",
                            }[name],
                            {"s": s, "x": x.to(dev)},
                        )
                    ).cpu()
                except Exception:
                    continue
                if r is None:
                    continue
                if form == "s op x":
                    g = {
                        "add": lambda a, b: b + a,
                        "sub": lambda a, b: b - a,
                        "mul": lambda a, b: b * a,
                        "div": lambda a, b: b / a,
                        "floor_divide": lambda a, b: torch.floor_divide(b, a),
                        "remainder": lambda a, b: torch.remainder(b, a),
                        "pow": lambda a, b: torch.pow(b, a),
                        "eq": lambda a, b: b == a,
                        "lt": lambda a, b: b < a,
                    }[name]
                    cands = candidates(g, x, s, dt)
                    if name == "div":  # torch's __rtruediv__ is reciprocal(x) * s
                        op_t = torch.float32 if dt != torch.float32 else dt
                        cands["reciprocal-then-mul"] = (
                            x.reciprocal().to(op_t) * torch.tensor(s, dtype=op_t)
                        ).to(dt)
                else:
                    cands = candidates(f, x, s, dt)
                ok = [
                    k
                    for k, v in cands.items()
                    if torch.equal(v, r)
                    or (
                        v.is_floating_point()
                        and torch.equal(v.isnan(), r.isnan())
                        and torch.equal(v.nan_to_num(0, 1, -1), r.nan_to_num(0, 1, -1))
                    )
                ]
                if len(ok) < len(cands):
                    key = ",".join(ok) or "neither"
                    seen[key] = seen.get(key, 0) + 1
            print(f"{dev} {str(dt)[6:]:9s} {form:7s} {name:13s} {seen or 'all agree'}")

# Then cudalite against torch, bit for bit, on the same device (when it is importable); pow
# is left out: its float results differ from torch's vectorised pow in the last bit.
try:
    import cudalite
except ImportError:
    sys.exit(0)
bad = 0
for dt in ["float16", "bfloat16", "float32"]:
    t = torch.tensor(VALUES, dtype=getattr(torch, dt), device=dev)
    c = cudalite.tensor(VALUES, dtype=getattr(cudalite, dt), device=dev)
    cases = [(f"x {name} s", name, False) for name in OPS if name != "pow"]
    cases.append(("s / x", "div", True))
    for what, name, reflected in cases:
        for s in SCALARS:
            try:
                rt = (s / t if reflected else getattr(torch, name)(t, s)).cpu().float().tolist()
            except Exception:  # noqa: BLE001 - ops torch has no kernel for
                continue
            rc = (s / c if reflected else getattr(cudalite, name)(c, s)).cpu().float().tolist()
            if str(rt) != str(rc):
                bad += 1
                print(f"cudalite differs: {dt} {what}, s={s}\n  torch    {rt}\n  cudalite {rc}")
print(f"cudalite against torch on {dev}: {bad} differences")
