"""einsum: Einstein summation, composed of Tensor methods (diagonal, sum, permute, reshape,
expand, bmm) so that autograd records it as it records them.

The equation is parsed as torch parses it (its errors included); then each operand's repeated
subscripts become diagonals and subscripts seen nowhere else are summed out, and the operands
are contracted left to right, each pair as one batched matrix product: the subscripts both
share and still need become the batch, those only one of them has the rows or the columns,
and those both share and no longer need the inner dim.
"""

from __future__ import annotations

from cudalite import _C
from cudalite._C import Tensor

__all__ = ["einsum"]

_ELLIPSIS = "..."


def _letter(i):
    """torch's subscript for sublist label ``i``: A-Z for 0-25, a-z for 26-51."""
    if not isinstance(i, int) or isinstance(i, bool) or not 0 <= i < 52:
        raise ValueError(
            "einsum(): expected subscript to be within the range [0, 52) but got "
            f"{i if isinstance(i, int) else type(i).__name__}"
        )
    return chr(ord("A") + i) if i < 26 else chr(ord("a") + i - 26)


def _sublist(args):
    """The sublist form, ``einsum(op0, [0, 1], op1, [1, 2], [0, 2])``, as an equation."""
    ops, terms = [], []
    for k in range(0, len(args) - 1, 2):
        ops.append(args[k])
        terms.append("".join(_ELLIPSIS if s is Ellipsis else _letter(s) for s in args[k + 1]))
    eq = ",".join(terms)
    if len(args) % 2:
        eq += "->" + "".join(_ELLIPSIS if s is Ellipsis else _letter(s) for s in args[-1])
    return eq, ops


def _parse_term(term, start, what):
    """Subscripts of one term: a list of letters with ``None`` for the ellipsis."""
    labels, i, n = [], 0, len(term)
    while i < n:
        c = term[i]
        if c == ".":
            if None in labels:
                raise RuntimeError(
                    f"einsum(): found '.' for {what} for which an ellipsis was already found"
                )
            if term[i : i + 3] != _ELLIPSIS:
                raise RuntimeError(
                    f"einsum(): found '.' for {what} that is not part of any ellipsis"
                    + (" (...)" if what == "output" else "")
                )
            labels.append(None)
            i += 3
            continue
        if not ("a" <= c <= "z" or "A" <= c <= "Z"):
            raise RuntimeError(
                f"einsum(): invalid subscript given at index {start + i} in the equation string, "
                "subscripts must be in [a-zA-Z]"
            )
        labels.append(c)
        i += 1
    return labels


def _parse(equation, nops):
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    terms, pos = [], 0
    for k, term in enumerate(lhs.split(",")):
        if k >= nops:
            raise RuntimeError(
                "einsum(): fewer operands were provided than specified in the equation"
            )
        terms.append(_parse_term(term, pos, f"operand {k}"))
        pos += len(term) + 1
    if len(terms) < nops:
        raise RuntimeError("einsum(): more operands were provided than specified in the equation")
    out = None
    if arrow:
        out = _parse_term(rhs, len(lhs) + 2, "output")
    return terms, out


def einsum(*args):
    """Sums the product of the operands over the subscripts the equation leaves out, e.g.
    ``einsum("bij,bjk->bik", a, b)`` is a batched matrix product. The operands may be given
    as one list, and without ``->`` the output is every subscript seen once, in alphabetical
    order, after the ellipsis dims."""
    if len(args) < 2:
        raise ValueError(
            "einsum(): must specify the equation string and at least one operand, or at least "
            "one operand and its subscripts list"
        )
    equation, ops = args[0], list(args[1:])
    if isinstance(equation, Tensor):
        equation, ops = _sublist(args)
    elif not isinstance(equation, str):
        raise TypeError(
            f"einsum(): argument 'equation' (position 1) must be str, not {type(equation).__name__}"
        )
    if len(ops) == 1 and isinstance(ops[0], (list, tuple)):
        ops = list(ops[0])
    for k, t in enumerate(ops):
        if not isinstance(t, Tensor):
            raise TypeError(
                f"expected Tensor as element {k} in argument 1, but got {type(t).__name__}"
            )
    terms, out = _parse(equation, len(ops))
    for t in ops[1:]:
        # in an autocast region the products cast their operands (torch's bmm)
        if t.dtype != ops[0].dtype and not _C._is_autocast_active():
            raise RuntimeError(
                f"expected scalar type {ops[0].dtype._short_name} but found {t.dtype._short_name}"
            )
    return _contract(ops, terms, out)


def _expand_ellipsis(ops, terms):
    """Each operand's subscripts with the ellipsis replaced by its dims (ints counted from the
    right, so that ellipsis dims broadcast as in torch); returns them and the ellipsis rank."""
    ell = 0
    labels = []
    for k, (t, term) in enumerate(zip(ops, terms, strict=True)):
        named = len(term) - (None in term)
        if None in term:
            if named > t.dim():
                raise RuntimeError(
                    f"einsum(): the number of subscripts in the equation ({named}) is more than "
                    f"the number of dimensions ({t.dim()}) for operand {k}"
                )
            e = t.dim() - named
            ell = max(ell, e)
            p = term.index(None)
            labels.append(term[:p] + [-(e - j) for j in range(e)] + term[p + 1 :])
        else:
            if named != t.dim():
                raise RuntimeError(
                    f"einsum(): the number of subscripts in the equation ({named}) does not match "
                    f"the number of dimensions ({t.dim()}) for operand {k} and no ellipsis was "
                    "given"
                )
            labels.append(list(term))
    return labels, ell


def _diagonals(t, labels, k):
    """Takes the diagonal for each subscript repeated within one operand."""
    while True:
        for p, lab in enumerate(labels):
            q = next((q for q in range(p + 1, len(labels)) if labels[q] == lab), None)
            if q is not None:
                break
        else:
            return t, labels
        if t.shape[p] != t.shape[q]:
            raise RuntimeError(
                f"einsum(): subscript {lab} is repeated for operand {k} but the sizes don't "
                f"match, {t.shape[q]} != {t.shape[p]}"
            )
        t = t.diagonal(0, p, q)
        labels = [x for i, x in enumerate(labels) if i not in (p, q)] + [lab]


def _sum_out(t, labels, keep):
    """Sums ``t`` over the subscripts not in ``keep``."""
    dims = [i for i, lab in enumerate(labels) if lab not in keep]
    if not dims:
        return t, labels
    return t.sum(dims), [lab for lab in labels if lab in keep]


def _contract(ops, terms, out):
    labels, ell = _expand_ellipsis(ops, terms)
    ell_labels = [-(ell - j) for j in range(ell)]
    if out is None:
        counts = {}
        for lab in labels:
            for x in lab:
                if isinstance(x, str):
                    counts[x] = counts.get(x, 0) + 1
        out_labels = ell_labels + sorted(x for x, c in counts.items() if c == 1)
    else:
        seen = {x for lab in labels for x in lab}
        out_labels = []
        for x in out:
            if x is None:
                out_labels += ell_labels
                continue
            if x not in seen:
                raise RuntimeError(
                    f"einsum(): output subscript {x} does not appear in the equation for any "
                    "input operand"
                )
            if x in out_labels:
                raise RuntimeError(
                    f"einsum(): output subscript {x} appears more than once in the output"
                )
            out_labels.append(x)
    # Sizes: equal or 1 (broadcast), as torch checks them.
    size = {}
    for k, (t, lab) in enumerate(zip(ops, labels, strict=True)):
        for d, x in enumerate(lab):
            n = t.shape[d]
            prev = size.get(x)
            if prev is not None and n != prev and n != 1 and prev != 1 and isinstance(x, str):
                if x in lab[:d]:
                    continue  # a repeated subscript: the diagonal's check words it
                raise RuntimeError(
                    f"einsum(): subscript {x} has size {n} for operand {k} which does not "
                    f"broadcast with previously seen size {prev}"
                )
            if prev is None or prev == 1:
                size[x] = n
    ts = []
    for k, (t, lab) in enumerate(zip(ops, labels, strict=True)):
        t, lab = _diagonals(t, lab, k)
        ts.append((t, lab))
    # Broadcast ellipsis dims that disagree in size are checked by the products below.
    cur, cur_lab = None, None
    for k, (t, lab) in enumerate(ts):
        later = set(out_labels)
        for _, lb in ts[k + 1 :]:
            later.update(lb)
        if cur is None:
            cur, cur_lab = _sum_out(t, lab, later)
            continue
        cur, cur_lab = _sum_out(cur, cur_lab, later | set(lab))
        t, lab = _sum_out(t, lab, later | set(cur_lab))
        cur, cur_lab = _pair(cur, cur_lab, t, lab, later)
    # Output: the dims in out_labels' order; a subscript of size 1 after broadcasting stays.
    return cur.permute([cur_lab.index(x) for x in out_labels]) if cur_lab else cur


def _pair(a, la, b, lb, later):
    """Contracts ``a`` and ``b`` (subscripts ``la``, ``lb``, each unique) into one tensor with
    the batch, left and right subscripts, summing the shared ones not in ``later``."""
    batch = [x for x in la if x in lb and x in later]
    inner = [x for x in la if x in lb and x not in later]
    left = [x for x in la if x not in lb]
    right = [x for x in lb if x not in la]
    sa = {x: a.shape[i] for i, x in enumerate(la)}
    sb = {x: b.shape[i] for i, x in enumerate(lb)}
    # An inner subscript of size 1 on one side only: the other side is summed over it first.
    for x in inner:
        if sa[x] == 1 and sb[x] != 1:
            b, sb[x] = b.sum(lb.index(x), keepdim=True), 1
        elif sb[x] == 1 and sa[x] != 1:
            a, sa[x] = a.sum(la.index(x), keepdim=True), 1
    bsz = []
    for x in batch:
        if sa[x] != sb[x] and sa[x] != 1 and sb[x] != 1:
            raise RuntimeError(
                f"einsum(): operands do not broadcast with remapped shapes (original->remapped): "
                f"{list(a.shape)} {list(b.shape)}"
            )
        bsz.append(max(sa[x], sb[x]))
    lsz = [sa[x] for x in left]
    rsz = [sb[x] for x in right]
    ksz = [sa[x] for x in inner]
    a = a.permute([la.index(x) for x in batch + left + inner])
    b = b.permute([lb.index(x) for x in batch + inner + right])
    a = a.expand(bsz + lsz + ksz)
    b = b.expand(bsz + ksz + rsz)
    nb, nl, nk, nr = _prod(bsz), _prod(lsz), _prod(ksz), _prod(rsz)
    r = a.reshape(nb, nl, nk).bmm(b.reshape(nb, nk, nr))
    return r.reshape(bsz + lsz + rsz), batch + left + right


def _prod(xs):
    n = 1
    for x in xs:
        n *= x
    return n
