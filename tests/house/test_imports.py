"""The house's import graph: every import between verify's files, those inside
functions included, runs one way (no cycle), so a file's folder says what it may use.

The graph is computed from the source with `ast`: ``import verify.a.b`` is an
edge to verify/a/b.py; ``from verify.a import b`` an edge to verify/a/b.py when b
is a module, else to the file defining verify.a (its __init__.py for a package).
"""

import ast
import pathlib

import verify

PACKAGE = pathlib.Path(verify.__file__).parent
ROOT = PACKAGE.parent


def module_file(module: str) -> pathlib.Path | None:
    """The file that defines `module`, if it is one of verify's."""
    path = ROOT.joinpath(*module.split("."))
    if path.with_suffix(".py").is_file():
        return path.with_suffix(".py")
    if (path / "__init__.py").is_file():
        return path / "__init__.py"
    return None


def runtime_nodes(tree: ast.AST):
    """The tree's nodes outside ``if TYPE_CHECKING:`` blocks (imports for
    annotations alone, which never run)."""
    skipped = {
        id(inner)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING"
        for stmt in node.body
        for inner in ast.walk(stmt)
    }
    return [node for node in ast.walk(tree) if id(node) not in skipped]


def imported(tree: ast.AST) -> set[str]:
    """Every verify module the tree imports when it runs: for `from P import n`,
    P.n when that is a module, else P."""
    found = set()
    for node in runtime_nodes(tree):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for a in node.names:
                sub = f"{node.module}.{a.name}"
                found.add(sub if module_file(sub) else node.module)
    return {m for m in found if m.split(".")[0] == "verify"}


def packages_entered(module: str, path: pathlib.Path) -> set[str]:
    """The packages above `module` whose __init__ Python runs first, other than the
    importing file's own (a file inside a package is imported through it already)."""
    parts = module.split(".")
    parents = {".".join(parts[:i]) for i in range(2, len(parts))}
    return {p for p in parents if not path.is_relative_to(ROOT.joinpath(*p.split(".")))}


def import_graph() -> dict[pathlib.Path, set[pathlib.Path]]:
    graph = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        modules = imported(ast.parse(path.read_text()))
        modules |= {p for m in modules for p in packages_entered(m, path)}
        targets = {module_file(m) for m in modules}
        graph[path] = {t for t in targets if t is not None and t != path}
    return graph


def cycles(graph) -> list[list[pathlib.Path]]:
    """The graph's strongly connected components of more than one file (Tarjan)."""
    index: dict = {}
    low: dict = {}
    stack: list = []
    on_stack: set = set()
    found: list = []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in graph:
        if v not in index:
            visit(v)
    return found


def test_no_import_cycle_between_files():
    named = [[str(p.relative_to(ROOT)) for p in c] for c in cycles(import_graph())]
    assert named == []


def test_imports_for_annotations_alone_are_no_edges():
    source = "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import verify.api\n"
    assert imported(ast.parse(source)) == set()
    assert imported(ast.parse("def f():\n    import verify.api\n")) == {"verify.api"}


def test_the_cycle_finder_finds_a_cycle():
    a, b, c = (pathlib.Path(n) for n in "abc")
    assert cycles({a: {b}, b: {c}, c: {a}}) == [[a, b, c]]
    assert cycles({a: {b}, b: {c}, c: set()}) == []
