"""No two modules of ``tracemine`` import each other, directly or round a longer loop.

The graph is read from the source, not from ``sys.modules``: every ``import`` and
``from … import`` anywhere in a module counts — at its top, inside a function (an import
deferred to break a loop at run time still ties the two modules), under
``TYPE_CHECKING`` — with relative imports resolved against the module's package. A name
imported from a package is an edge to its submodule when there is one of that name
(``from tracemine.monitor import hooks``), else to the package's ``__init__``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import tracemine

PACKAGE = Path(tracemine.__file__).parent


def modules(root: Path) -> dict[str, tuple[Path, bool]]:
    """Dotted module name → (file, is a package's ``__init__``) for every ``.py`` under
    ``root`` (a package folder)."""
    found: dict[str, tuple[Path, bool]] = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        if is_package:
            parts.pop()
        found[".".join(parts)] = (path, is_package)
    return found


def _known(name: str, known: dict[str, tuple[Path, bool]]) -> str | None:
    """``name`` or its nearest enclosing module that exists in ``known``."""
    while name and name not in known:
        name = name.rpartition(".")[0]
    return name or None


def imports_of(
    name: str, path: Path, is_package: bool, known: dict[str, tuple[Path, bool]]
) -> set[str]:
    """The modules of ``known`` that ``name`` imports anywhere in its source."""
    top = next(iter(known)).split(".")[0]
    package = name if is_package else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                if node.level - 1:
                    base = base[: -(node.level - 1)]
                module = ".".join([*base, *([node.module] if node.module else [])])
            else:
                module = node.module or ""
            targets = [
                f"{module}.{alias.name}" if f"{module}.{alias.name}" in known else module
                for alias in node.names
            ]
        else:
            continue
        for target in targets:
            if target == top or target.startswith(top + "."):
                resolved = _known(target, known)
                if resolved is not None and resolved != name:
                    found.add(resolved)
    return found


def import_graph(root: Path) -> dict[str, set[str]]:
    known = modules(root)
    return {name: imports_of(name, path, pkg, known) for name, (path, pkg) in known.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every strongly connected group of two or more modules (Tarjan), each as one loop
    through it, sorted: modules that import each other, possibly by way of others."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def visit(start: str) -> None:
        # iterative, so a deep chain of imports cannot exhaust the recursion limit
        work = [(start, iter(sorted(graph.get(start, ()))))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    groups.append(_loop(sorted(group), graph))

    for name in sorted(graph):
        if name not in index:
            visit(name)
    return sorted(groups)


def _loop(group: list[str], graph: dict[str, set[str]]) -> list[str]:
    """One path from the group's first module back to itself, within the group."""
    members = set(group)
    start = group[0]
    previous: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for child in sorted(graph[node] & members):
                if child == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(previous[path[-1]])
                    return [*reversed(path), start]
                if child not in previous:
                    previous[child] = node
                    following.append(child)
        frontier = following
    return group  # pragma: no cover - a strongly connected group always has a loop


def test_no_module_imports_another_that_imports_it() -> None:
    found = cycles(import_graph(PACKAGE))
    assert not found, "modules that import each other:\n" + "\n".join(
        " -> ".join(loop) for loop in found
    )


def test_the_graph_sees_every_kind_of_import(tmp_path: Path) -> None:
    """The check itself: a loop made only of a function-level import, a relative import
    and an import under TYPE_CHECKING is found and named."""
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "sub" / "__init__.py").write_text("from pkg.sub.c import C\n")
    (package / "a.py").write_text("def f():\n    from .sub import b\n")
    (package / "sub" / "b.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..sub.c import C\n"
    )
    (package / "sub" / "c.py").write_text("import pkg.a\nclass C: ...\n")
    (package / "d.py").write_text("from pkg import a\nimport os\n")
    graph = import_graph(package)
    assert graph["pkg.a"] == {"pkg.sub.b"}
    assert graph["pkg.sub.b"] == {"pkg.sub.c"}
    assert graph["pkg.d"] == {"pkg.a"}
    assert cycles(graph) == [["pkg.a", "pkg.sub.b", "pkg.sub.c", "pkg.a"]]
    (package / "sub" / "c.py").write_text("class C: ...\n")
    assert cycles(import_graph(package)) == []
