"""Fails when the package's modules import each other in a cycle at module level.

Reads every module of ``python/cudalite`` with ``ast`` (nothing is imported) and follows the
imports that run when a module is loaded: those at module level and in class bodies, not
those inside functions (which run on first call, when every module is loaded). ``from
cudalite import x`` is an edge to the submodule ``cudalite.x`` when there is one, else to the
package ``cudalite`` itself; a submodule's implicit load of its parent package is not an
edge (every package's ``__init__`` imports its own submodules). Prints each cycle and exits 1
if there is any.

    python scripts/check_import_cycles.py [package_dir]
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path


def module_names(root: Path) -> dict[str, Path]:
    pkg = root.name
    mods = {}
    for path in root.rglob("*.py"):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        mods[".".join(parts)] = path
    assert pkg in mods, f"{root} is not a package"
    # Compiled modules (``_C``, built or not) import nothing of the package.
    mods.setdefault(f"{pkg}._C", None)
    return mods


def _module_level(tree: ast.AST):
    """The import statements that run when the module is loaded."""
    stack = list(ast.iter_child_nodes(tree))
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        stack.extend(ast.iter_child_nodes(node))


def _type_checking_only(tree: ast.AST) -> set[int]:
    """ids of the import nodes under ``if TYPE_CHECKING:`` (never run)."""
    ids = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for sub in node.body:
                for n in ast.walk(sub):
                    ids.add(id(n))
    return ids


def edges(mods: dict[str, Path]) -> dict[str, set[str]]:
    graph = {m: set() for m in mods}
    for mod, path in mods.items():
        if path is None:
            continue
        tree = ast.parse(path.read_text(), str(path))
        skip = _type_checking_only(tree)
        is_pkg = path.name == "__init__.py"
        for node in _module_level(tree):
            if id(node) in skip:
                continue
            targets = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                base = node.module or ""
                if node.level:
                    anchor = mod.split(".")
                    anchor = anchor[: len(anchor) - node.level + (1 if is_pkg else 0)]
                    base = ".".join(anchor + ([base] if base else []))
                for a in node.names:
                    sub = f"{base}.{a.name}"
                    targets.append(sub if sub in mods else base)
            for t in targets:
                while t and t not in mods:  # import a.b.c of a module a.b with attribute c
                    t = t.rpartition(".")[0]
                if t and t != mod:
                    graph[mod].add(t)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def main(argv: list[str]) -> int:
    root = Path(argv[1] if len(argv) > 1 else Path(__file__).parent.parent / "python/cudalite")
    graph = edges(module_names(root.resolve()))
    found = cycles(graph)
    for comp in found:
        print(f"import cycle of {len(comp)} modules:")
        for m in comp:
            inside = sorted(graph[m] & set(comp))
            print(f"  {m} -> {', '.join(inside)}")
    if found:
        return 1
    print(f"no module-level import cycle among {len(graph)} modules")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
