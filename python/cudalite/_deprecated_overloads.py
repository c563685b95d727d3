"""torch's deprecated argument orders, scalar first (Note [Deprecated overloads]); used by
the argument check (_checked.py) when a call fails."""

from __future__ import annotations

import re

from cudalite import _arg_parser


# Note [Deprecated overloads]
# torch still takes a few old argument orders with the scalar first (tools/autograd/
# deprecated.yaml): ``x.add_(-lr, grad)``, common in old training loops, ``torch.add(x, 2, y)``
# (x + 2 * y), ``torch.addmm(beta, m, alpha, a, b)``. Such a call fails here as soon as Python
# binds its arguments, so the new order costs nothing to calls in the usual one: on the
# failure, the arguments are matched against the deprecated signatures, and when one accepts
# them the call is made again in the new order, after torch's UserWarning (once per process,
# as torch's TORCH_WARN_ONCE; without its "Triggered internally at" line, which names a file
# of torch's).
def _alpha_first(n, kind):
    """add/sub and their in-place forms: (alpha, other) -> (other, alpha=alpha)."""
    if kind == "m":
        return [
            (
                f"{n}(Number alpha, Tensor|Number other)",
                f"{n}(Number alpha, Tensor other)",
                [f"{n}(Tensor other, *, Number alpha = 1)"],
                lambda a, other: ((other,), {"alpha": a}),
            )
        ]
    return [
        (
            f"{n}(Tensor input, Number alpha, Tensor|Number other, *, Tensor? out=None)",
            f"{n}(Tensor input, Number alpha, Tensor other, *, Tensor out = None)",
            [f"{n}(Tensor input, Tensor other, *, Number alpha = 1, Tensor out = None)"],
            lambda x, a, other, out: ((x, other), {"alpha": a, "out": out}),
        )
    ]


_ADDMM_NEW = [
    "addmm(Tensor input, Tensor mat1, Tensor mat2, *, Number beta = 1, Number alpha = 1, "
    "Tensor out = None)",
    "addmm(Tensor input, Tensor mat1, Tensor mat2, torch.dtype out_dtype, *, Number beta = 1, "
    "Number alpha = 1, Tensor out = None)",
]
DEPRECATED = {
    **{("m", n): _alpha_first(n, "m") for n in ("add", "add_", "sub", "sub_")},
    **{("f", n): _alpha_first(n, "f") for n in ("add", "sub")},
    ("f", "addmm"): [
        (
            "addmm(Number beta, Tensor input, Number alpha, Tensor mat1, Tensor mat2, *, "
            "Tensor? out=None)",
            "addmm(Number beta, Tensor input, Number alpha, Tensor mat1, Tensor mat2, *, "
            "Tensor out = None)",
            _ADDMM_NEW,
            lambda b, x, a, m1, m2, out: ((x, m1, m2), {"beta": b, "alpha": a, "out": out}),
        ),
        (
            "addmm(Number beta, Tensor input, Tensor mat1, Tensor mat2, *, Tensor? out=None)",
            "addmm(Number beta, Tensor input, Tensor mat1, Tensor mat2, *, Tensor out = None)",
            _ADDMM_NEW,
            lambda b, x, m1, m2, out: ((x, m1, m2), {"beta": b, "out": out}),
        ),
    ],
    ("m", "addmm"): [
        (
            "addmm(Number beta, Number alpha, Tensor mat1, Tensor mat2)",
            "addmm(Number beta, Number alpha, Tensor mat1, Tensor mat2)",
            ["addmm(Tensor mat1, Tensor mat2, *, Number beta = 1, Number alpha = 1)"],
            lambda b, a, m1, m2: ((m1, m2), {"beta": b, "alpha": a}),
        ),
        (
            "addmm(Number beta, Tensor mat1, Tensor mat2)",
            "addmm(Number beta, Tensor mat1, Tensor mat2)",
            ["addmm(Tensor mat1, Tensor mat2, *, Number beta = 1, Number alpha = 1)"],
            lambda b, m1, m2: ((m1, m2), {"beta": b}),
        ),
    ],
}
# A deprecated signature: the scalar before the tensors (after self/input, if named).
SCALAR_FIRST = re.compile(r"^\w+\((Tensor (self|input), )?Number (alpha|beta|value)\b")
_deprecated_parsed = {}
_deprecation_warned = False


def call(kind, name, args, kwargs):
    """The arguments in the new order (args, kwargs) when the call fits one of the deprecated
    signatures of ``name``, else None; warns as torch does (Note [Deprecated overloads])."""
    global _deprecation_warned
    forms = DEPRECATED.get((kind, name))
    if forms is None:
        return None
    call_args = args[1:] if kind == "m" else args
    for i, (fmt, shown, alternatives, reorder) in enumerate(forms):
        sig = _deprecated_parsed.get((kind, name, i))
        if sig is None:
            sig = _deprecated_parsed[(kind, name, i)] = _arg_parser.Parser(fmt)
        try:
            matched = sig.match(call_args, kwargs)
        except Exception:
            matched = None
        if matched is None:
            continue
        raw = matched[1]
        new_args, new_kwargs = reorder(*(None if v is _arg_parser.MISSING else v for v in raw))
        new_kwargs = {k: v for k, v in new_kwargs.items() if v is not None}
        if not _deprecation_warned:
            _deprecation_warned = True
            import warnings

            warnings.warn(
                f"This overload of {name} is deprecated:\n\t{shown}\nConsider using one of the "
                "following signatures instead:\n\t" + "\n\t".join(alternatives),
                UserWarning,
                stacklevel=3,
            )
        return (args[:1] if kind == "m" else ()) + new_args, new_kwargs
    return None
