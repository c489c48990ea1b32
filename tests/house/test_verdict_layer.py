"""The house's verdict layer: verify/engines/ is the one place that maps a search's
outcome (an enumeration exhausted or refuted, a solver's sat/unsat) to PROVED or
REFUTED. The PTX reader's checks (verify/ptx/) build their cases and tests and wrap
the engine's `Verdict` (`verify.engines.cases`); they compare statuses, and may
say UNKNOWN for what they cannot build, but never decide a pass or a refutation.

Computed from the source with `ast`: a use of ``Status.PROVED`` or
``Status.REFUTED`` that is not an operand of a comparison (``is``, ``==``, ``in``)
constructs that verdict.
"""

import ast
import pathlib

import verify

PACKAGE = pathlib.Path(verify.__file__).parent
DECIDED = {"PROVED", "REFUTED"}


def _compared(tree: ast.AST) -> set[int]:
    """The ids of the nodes inside comparisons (a tuple of statuses after ``in``)."""
    return {
        id(inner)
        for node in ast.walk(tree)
        if isinstance(node, ast.Compare)
        for inner in ast.walk(node)
    }


def constructed(source: str) -> list[tuple[int, str]]:
    """(line, status) of each PROVED or REFUTED the source builds rather than compares."""
    tree = ast.parse(source)
    compared = _compared(tree)
    return [
        (node.lineno, node.attr)
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute)
        and node.attr in DECIDED
        and isinstance(node.value, ast.Name)
        and node.value.id == "Status"
        and id(node) not in compared
    ]


def test_no_ptx_module_decides_proved_or_refuted():
    found = {
        str(path.relative_to(PACKAGE.parent)): hits
        for path in sorted((PACKAGE / "ptx").rglob("*.py"))
        if (hits := constructed(path.read_text()))
    }
    assert found == {}


def test_construction_is_told_from_comparison():
    assert constructed("r = f(Status.PROVED)\n") == [(1, "PROVED")]
    assert constructed("x = Verdict(status=Status.REFUTED)\n") == [(1, "REFUTED")]
    assert constructed("ok = r.status is Status.PROVED\n") == []
    assert constructed("bad = r.status in (Status.REFUTED, Status.UNKNOWN)\n") == []
    assert constructed("u = f(Status.UNKNOWN)\n") == []
