"""torch's deprecated argument orders, scalar first (Note [Deprecated overloads] in
docs/design.md): ``x.add_(-lr, grad)``, common in old training loops, ``torch.add(x, 2, y)``
(x + 2 * y), ``torch.addmm(beta, m, alpha, a, b)``. Their signatures are data
(``_signatures.json``'s "deprecated", from tests/gen_signatures.py): hidden signatures of
the function's parser, so such a call goes on at the entry and fails as soon as Python binds
its arguments; on that failure it is matched here and made again in the new order, after
torch's UserWarning (once per process, as torch's TORCH_WARN_ONCE; without its "Triggered
internally at" line, which names a file of torch's)."""

from __future__ import annotations

from cudalite import _arg_parser

_parsed = {}
_warned = []


def forms(kind, name, data):
    """The deprecated signatures of ``name`` (``kind`` "m" or "f") in ``data`` (the
    signature file's contents)."""
    return [f["signature"] for f in data.get("deprecated", {}).get(f"{kind} {name}", ())]


def _new_order(text):
    """The parameter names of torch's text of a signature ("add(Tensor other, *, Number alpha
    = 1)"): (positional, keyword-only)."""
    positional, keyword, kw_only = [], [], False
    for p in text[text.index("(") + 1 : -1].split(", "):
        if p == "*":
            kw_only = True
            continue
        name = p.split(" = ")[0].rsplit(" ", 1)[1]
        (keyword if kw_only else positional).append(name)
    return positional, keyword


def call(kind, name, args, kwargs, data):
    """The arguments in the new order (args, kwargs) when the call fits one of the deprecated
    signatures of ``name``, else None; warns as torch does."""
    call_args = args[1:] if kind == "m" else args
    for form in data.get("deprecated", {}).get(f"{kind} {name}", ()):
        parser = _parsed.get(form["signature"])
        if parser is None:
            parser = _parsed[form["signature"]] = _arg_parser.Parser(form["signature"])
        try:
            matched = parser.match(call_args, kwargs)
        except Exception:
            matched = None
        if matched is None:
            continue
        values = {
            p: v
            for (p, _, _), v in zip(parser.params(0), matched[1], strict=True)
            if v is not _arg_parser.MISSING and v is not None
        }
        positional, keyword = _new_order(form["instead"][0])
        new_args = tuple(values[p] for p in positional)
        new_kwargs = {p: values[p] for p in keyword if p in values}
        if not _warned:
            _warned.append(True)
            import warnings

            warnings.warn(
                f"This overload of {name} is deprecated:\n\t{form['shown']}\nConsider using "
                "one of the following signatures instead:\n\t" + "\n\t".join(form["instead"]),
                UserWarning,
                stacklevel=3,
            )
        return (args[:1] if kind == "m" else ()) + new_args, new_kwargs
    return None
