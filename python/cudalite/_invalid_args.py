"""torch's "received an invalid combination of arguments" message, whole.

When no overload accepts a call, torch lists its overloads (torch/csrc/utils/
invalid_arguments.cpp): each option as its parser prints a signature, and under an option
whose argument count fits the call, why it did not match. The options' texts are torch's own
(``_signatures.json``, recorded from torch 2.11 by tests/gen_signatures.py); the matching
below is the same as torch's, quirks included, so that the text is the same:

- an option is split at ", " into "type name" pieces: the "*" separator counts as an argument
  (of type "*"), and a parameter with a default is read with its default as its name
  ("Number alpha = 1" is a parameter named "1" of type "Number alpha =");
- a value matches a type by its Python type's name ("Tensor", "int"; "float" also takes int,
  "int" takes int), so "Number" or "tuple of ints" never match and print as mismatches;
- keywords are looked up among the option's last parameters only;
- mismatches are marked !so! (torch colours them on terminals; cudalite does not).

cudalite's own types print as "cudalite.X" where torch's print as "torch.X", and match the
types torch names "torch.X".
"""

from __future__ import annotations


def _typename(obj):
    from cudalite._arg_parser import tp_name

    return tp_name(obj)


def _matches(type_name, nullable, obj):
    if nullable and obj is None:
        return True
    name = _typename(obj)
    if name.startswith("cudalite."):
        name = "torch." + name[len("cudalite.") :]
    if type_name == "float":
        return name in ("float", "int", "long")
    if type_name == "int":
        return name in ("int", "long")
    return name == type_name


class _Option:
    def __init__(self, text):
        self.text = text
        self.args = []  # (name, type, nullable)
        self.variadic = False
        if text == "no arguments":
            return
        inner = text[1:-1]
        for arg in inner.split(", "):
            start, nullable = 0, False
            if arg.startswith("#"):
                start = 1
            if arg[start:].startswith("["):
                nullable = True
                start += 1
                arg = arg[: -len(" or None]")]
            end = arg.rfind(" ")
            name = arg[end + 1 :]
            if "..." in arg:
                end -= 4
            self.args.append((name, arg[start:end] if end >= 0 else arg[start:], nullable))
        self.variadic = "..." in inner

    def argcount_matches(self, args, kwargs):
        got = len(args) + len(kwargs)
        return got == len(self.args) or (self.variadic and got > len(self.args))

    def unmatched_kwargs(self, kwargs):
        start = max(len(self.args) - len(kwargs), 0)
        names = [a[0] for a in self.args[start:]]
        return [k for k in kwargs if k not in names]

    def marked(self, args, kwargs):
        bad = "!"
        out = []
        for i in range(len(args) + len(kwargs)):
            is_kwarg = i >= len(args)
            name = self.args[i][0] if i < len(self.args) else None
            obj = kwargs.get(name) if is_kwarg else args[i]
            if i < len(self.args):
                ok = _matches(self.args[i][1], self.args[i][2], obj)
            else:
                ok = self.variadic and _matches(self.args[-1][1], self.args[-1][2], obj)
            text = (name + "=" if is_kwarg else "") + _describe(obj)
            out.append(text if ok else bad + text + bad)
        return "(" + ", ".join(out) + ")"


def _describe(obj):
    if isinstance(obj, (tuple, list)):
        inner = ", ".join(_typename(x) for x in obj)
        if isinstance(obj, tuple):
            return f"tuple of ({inner}{',' if len(obj) == 1 else ''})"
        return f"list of [{inner}]"
    return _typename(obj)


def given(args, kwargs):
    """The call's arguments as torch lists them: types, then keywords (the last given first,
    as torch's hash map returns them), with a trailing ", " when there are keywords only."""
    got = [_typename(a) for a in args]
    got += [f"{k}={_typename(v)}" for k, v in kwargs.items()]
    return ", ".join(got) + (", " if kwargs and not args else "")


def format_invalid_args(name, args, kwargs, options, got=None):
    """The whole message for ``name``'s call with ``args`` and ``kwargs`` (ordered as torch
    orders them: see ``given``) against ``options``, torch's signature texts. ``got``: the
    list of the call's arguments as a first line already printed them, when known."""
    msg = f"{name}() received an invalid combination of arguments - "
    if len(options) == 1:
        option = _Option(options[0])
        unmatched = option.unmatched_kwargs(kwargs) if kwargs else []
        if unmatched:
            return msg + "got unrecognized keyword arguments: " + ", ".join(unmatched)
        if option.argcount_matches(args, kwargs):
            got = option.marked(args, kwargs)
        else:
            got = f"({given(args, kwargs)})"
        return msg + f"got {got}, but expected {option.text}"
    msg += f"got ({given(args, kwargs) if got is None else got}), but expected one of:\n"
    for text in options:
        option = _Option(text)
        msg += f" * {text}\n"
        if option.argcount_matches(args, kwargs):
            unmatched = option.unmatched_kwargs(kwargs) if kwargs else []
            if unmatched:
                why = "keywords were incorrect: " + ", ".join(unmatched)
            else:
                why = "arguments have invalid types: " + option.marked(args, kwargs)
            msg += f"      didn't match because some of the {why}\n"
    return msg
