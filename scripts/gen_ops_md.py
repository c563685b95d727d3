"""Writes docs/ops.md, the list of elementwise ops, from the op registry (csrc/ops/ops.def).

    PYTHONPATH=python python scripts/gen_ops_md.py

tests/test_op_registry.py checks that the page is up to date.
"""

from __future__ import annotations

from pathlib import Path

_RESULT = {
    "same": "the inputs' promoted dtype",
    "bool": "bool",
    "float": "floating (integers computed in the default dtype)",
}
_LOOP = {
    "all": "all",
    "floating": "floating only",
    "integral": "integers and bool only",
    "not_bool": "all but bool",
}


def markdown(ops) -> str:
    lines = [
        "# Elementwise ops",
        "",
        "Generated from the op registry (`csrc/ops/ops.def`) by `scripts/gen_ops_md.py`; do not",
        "edit. Each op is a function `cudalite.<name>` with `out=`, a Tensor method, and where",
        "marked an in-place method `Tensor.<name>_`; broadcasting and type promotion follow",
        "torch. *grad*: differentiable. *tensors only*: Python numbers are refused as operands, as",
        "torch does. An input dtype outside *kernels* raises torch's `NotImplementedError`.",
        "",
    ]
    for arity, title in ((1, "Unary"), (2, "Binary")):
        lines += [
            f"## {title}",
            "",
            "| op | aliases | result | kernels | in place | grad | notes |",
            "|---|---|---|---|---|---|---|",
        ]
        # (the private rows, such as _zeta, are building blocks of public functions)
        public = (o for o in ops if o.arity == arity and not o.name.startswith("_"))
        for op in sorted(public, key=lambda o: o.name):
            notes = []
            if op.tensor_only:
                notes.append("tensors only")
            if op.int_identity:
                notes.append("integers returned unchanged")
            aliases = ", ".join(f"`{a}`" for a in op.aliases)
            lines.append(
                f"| `{op.name}` | {aliases} | {_RESULT[op.result]} | {_LOOP[op.loop]} | "
                f"{'yes' if op.inplace else ''} | {'yes' if op.grad else ''} | "
                f"{'; '.join(notes)} |"
            )
        lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    from cudalite._op_registry import OPS

    out = Path(__file__).resolve().parent.parent / "docs/ops.md"
    out.write_text(markdown(OPS))
    print(f"wrote {out}")
