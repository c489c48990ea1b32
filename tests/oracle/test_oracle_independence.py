"""The oracle (oracle/) must not reuse verify's reading of the notations.

It may import the standard library, lark, pycute, triton, numpy and its own
modules; from the rest of `verify` nothing at all (the grammar file is read as
a package resource, not imported). Any other import, or a dynamic import of a
`verify.` module named in a string, fails this test.
"""

import ast
import pathlib
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
ORACLE = ROOT / "oracle"
ALLOWED_THIRD_PARTY = {"lark", "pycute", "triton", "numpy"}
ALLOWED_STRINGS = {"verify.spec"}  # importlib.resources package holding grammar.lark


def imported_modules(tree: ast.AST):
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                yield node.lineno, "oracle." + (node.module or "")
            elif node.module == "verify":
                for alias in node.names:
                    yield node.lineno, f"verify.{alias.name}"
            else:
                yield node.lineno, node.module


def is_allowed(module: str) -> bool:
    top = module.split(".")[0]
    if top == "verify":
        return False
    return (
        top == "oracle"
        or top in sys.stdlib_module_names
        or top in ALLOWED_THIRD_PARTY
        or top == "__future__"
    )


def oracle_files():
    files = sorted(ORACLE.glob("*.py"))
    assert files, f"no oracle modules under {ORACLE}"
    return files


@pytest.mark.parametrize("path", oracle_files(), ids=lambda p: p.name)
def test_oracle_imports_nothing_of_verify(path):
    tree = ast.parse(path.read_text(), str(path))
    bad = [(line, m) for line, m in imported_modules(tree) if not is_allowed(m)]
    assert not bad, f"{path.name} imports forbidden modules: {bad}"


@pytest.mark.parametrize("path", oracle_files(), ids=lambda p: p.name)
def test_oracle_names_no_verify_module_in_strings(path):
    tree = ast.parse(path.read_text(), str(path))
    named = [
        (n.lineno, n.value)
        for n in ast.walk(tree)
        if isinstance(n, ast.Constant)
        and isinstance(n.value, str)
        and n.value.startswith("verify.")
        and n.value not in ALLOWED_STRINGS
    ]
    assert not named, f"{path.name} names verify modules: {named}"


def test_the_scan_catches_forbidden_imports():
    source = (
        "import verify.model.layout\nfrom verify import expr\nfrom verify.spec.parser import "
        "parse_text\nfrom oracle import cute\nimport numpy\nfrom . import hardware\n"
    )
    found = [m for _, m in imported_modules(ast.parse(source))]
    assert [m for m in found if not is_allowed(m)] == [
        "verify.model.layout",
        "verify.expr",
        "verify.spec.parser",
    ]


def only_thread_maps(path: str) -> bool:
    """Every access of the spec is written 'by' a thread map, and no check is of a layout."""
    with open(path) as f:
        lines = [line.split("#")[0].split() for line in f]
    accesses = [w for w in lines if w[:1] == ["access"]]
    layout_checks = [
        w
        for w in lines
        if w[:1] == ["check"] and w[1:2] in (["bijective"], ["equivalent"], ["base_aligned"])
    ]
    return bool(accesses) and all("by" in w for w in accesses) and not layout_checks


RUN_ALONE = """
import glob, json, sys
from oracle import answers
results = {p: len(answers(open(p).read(), p)) for p in sys.argv[2:]}
assert sys.modules["verify"].__file__.startswith(sys.argv[1]), sys.modules["verify"].__file__
loaded = sorted(m for m in sys.modules if m.split(".")[0] == "verify")
print(json.dumps({"answered": results, "loaded": loaded}))
"""


def test_oracle_runs_with_nothing_of_verify_but_the_grammar(tmp_path):
    """Beyond the import scan: a copy holding only oracle/ and the grammar file
    (empty package __init__s) answers the bundled specs, so no code of verify runs."""
    import json
    import shutil
    import subprocess

    root = tmp_path / "alone"
    shutil.copytree(ORACLE, root / "oracle", ignore=shutil.ignore_patterns("__pycache__"))
    (root / "verify" / "spec").mkdir(parents=True)
    shutil.copy(ROOT / "verify" / "spec" / "grammar.lark", root / "verify" / "spec")
    for package in ("verify", "verify/spec"):
        (root / package / "__init__.py").write_text("")
    specs = sorted(str(p) for p in (ROOT / "specs").rglob("*.spec"))
    out = subprocess.run(
        [sys.executable, "-c", RUN_ALONE, str(root), *specs],
        cwd=root,
        env={"PYTHONPATH": str(root), "PATH": ""},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    report = json.loads(out.stdout.splitlines()[-1])
    # A spec whose checks are all of accesses 'by' a thread map gets no answer (the
    # oracle does not read thread maps); every other spec gets some.
    assert all(n > 0 for p, n in report["answered"].items() if not only_thread_maps(p))
    assert all(
        m in ("verify", "verify.spec") or m.startswith("oracle") for m in report["loaded"]
    ), report["loaded"]


def test_the_oracle_is_not_installed():
    """The oracle is a test instrument: the wheel's packages (pyproject's
    `packages.find` patterns) hold verify alone."""
    import setuptools

    tomllib = pytest.importorskip("tomllib")  # Python 3.11+

    found = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    packages = setuptools.find_packages(str(ROOT), **found["packages"]["find"])
    assert "verify" in packages and "verify.engines" in packages
    assert not [p for p in packages if not p.startswith("verify")]
