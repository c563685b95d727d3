"""``gradcheck`` / ``gradgradcheck``: compare autograd's Jacobians with central finite
differences, as ``torch.autograd.gradcheck`` does. Use float64 inputs."""

from __future__ import annotations

from cudalite import _C
from cudalite._C import Tensor

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError"]


class GradcheckError(RuntimeError):
    """Raised by gradcheck when a Jacobian does not match."""


def _tuple(x):
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _np(t):
    return _C._numpy(t.detach().cpu()).copy()


def _outputs(func, inputs):
    return [o for o in _tuple(func(*inputs)) if isinstance(o, Tensor)]


def _numerical(func, inputs, idx, eps):
    """Jacobians d(out)/d(inputs[idx]) by central differences: a list over outputs of
    (numel_out, numel_in) arrays."""
    import numpy as np

    from cudalite import tensor

    x = inputs[idx]
    base = _np(x).reshape(-1)
    cols = []
    for i in range(base.size):
        vals = []
        for sign in (1, -1):
            arr = base.copy()
            arr[i] += sign * eps
            xi = tensor(arr.reshape(tuple(x.shape)), dtype=x.dtype, device=x.device)
            # keep requires_grad: gradgradcheck's function differentiates its inputs
            xi.requires_grad_(x.requires_grad)
            args = list(inputs)
            args[idx] = xi
            vals.append([_np(o).reshape(-1) for o in _outputs(func, args)])
        cols.append([(p - m) / (2 * eps) for p, m in zip(vals[0], vals[1], strict=True)])
    n_out = len(cols[0]) if cols else len(_outputs(func, inputs))
    return [
        np.stack([c[k] for c in cols], axis=1) if cols else np.zeros((0, 0)) for k in range(n_out)
    ]


def _analytical(outputs, inputs, diff):
    """Jacobians by backward passes with one-hot output gradients:
    result[k][j] is (numel_out_k, numel_in_j)."""
    import numpy as np

    from cudalite.autograd import grad

    result = []
    for out in outputs:
        rows = {j: [] for j in diff}
        n = out.numel()
        for e in range(n):
            go = _C._full([n], 0, out.dtype, out.device)
            _C._fill_(go.select(0, e), 1)
            if out.requires_grad:
                gs = grad(
                    out,
                    [inputs[j] for j in diff],
                    grad_outputs=go.reshape(tuple(out.shape)),
                    retain_graph=True,
                    allow_unused=True,
                )
            else:
                gs = [None] * len(diff)
            for j, g in zip(diff, gs, strict=True):
                size = inputs[j].numel()
                rows[j].append(np.zeros(size) if g is None else _np(g).reshape(-1))
        result.append({j: np.array(rows[j]).reshape(n, inputs[j].numel()) for j in diff})
    return result


def gradcheck(
    func,
    inputs,
    *,
    eps=1e-6,
    atol=1e-5,
    rtol=1e-3,
    raise_exception=True,
    nondet_tol=0.0,
    check_undefined_grad=True,
    check_grad_dtypes=False,
    check_batched_grad=False,
    fast_mode=False,
    masked=None,
):
    """True when the gradients of ``func`` at ``inputs`` match finite differences."""
    import numpy as np

    inputs = _tuple(inputs)
    diff = [i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad]
    if not diff:
        raise ValueError("gradcheck expects at least one input tensor to require gradient")
    outputs = _outputs(func, inputs)
    analytical = _analytical(outputs, inputs, diff)
    for j in diff:
        numerical = _numerical(func, inputs, j, eps)
        for k, num in enumerate(numerical):
            ana = analytical[k][j]
            if num.shape != ana.shape or not np.allclose(ana, num, rtol=rtol, atol=atol):
                if not raise_exception:
                    return False
                raise GradcheckError(
                    f"Jacobian mismatch for output {k} with respect to input {j},\n"
                    f"numerical:{num}\nanalytical:{ana}\n"
                )
    return True


def gradgradcheck(
    func,
    inputs,
    grad_outputs=None,
    *,
    eps=1e-6,
    atol=1e-5,
    rtol=1e-3,
    raise_exception=True,
    **kwargs,
):
    """Checks second derivatives: gradcheck of the function that returns the gradients of
    ``func`` (computed with create_graph=True)."""
    from cudalite import randn
    from cudalite.autograd import grad

    inputs = _tuple(inputs)
    outputs = _outputs(func, inputs)
    if grad_outputs is None:
        grad_outputs = tuple(
            randn(o.shape, dtype=o.dtype, device=o.device).requires_grad_() for o in outputs
        )
    grad_outputs = _tuple(grad_outputs)
    n = len(inputs)

    def first_grads(*args):
        ins, gos = args[:n], args[n:]
        outs = _outputs(func, ins)
        d = [x for x in ins if isinstance(x, Tensor) and x.requires_grad]
        gs = grad(outs, d, gos, create_graph=True, allow_unused=True)
        return tuple(g for g in gs if g is not None)

    return gradcheck(
        first_grads,
        inputs + grad_outputs,
        eps=eps,
        atol=atol,
        rtol=rtol,
        raise_exception=raise_exception,
    )
