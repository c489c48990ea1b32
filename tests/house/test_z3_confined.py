"""bv.py's rule, enforced: only verify/smt/bv.py builds Z3 bit-vector terms, and only it
and the Boolean synthesis encodings (verify/synth/gf2*.py, params.py) build Z3 terms.

Everywhere else z3 may be named only for its types (annotations), and verify/smt/solve.py
may also drive a solver (seed parameters, check's answers, the exception a resource
limit raises). A constructor or operator function named anywhere else (z3.Not,
z3.BitVec, z3.ULT, ...) would build terms outside the module that sizes their widths.
"""

import ast
import pathlib

import verify

PACKAGE = pathlib.Path(verify.__file__).parent
GF2 = {"synth/gf2.py", "synth/gf2_encoding.py", "synth/gf2_bounds.py"}
TERM_BUILDERS = {"smt/bv.py", *GF2, "synth/params.py"}
BOOLEAN_BUILDERS = {*GF2, "synth/params.py"}  # no bit-vectors: no widths
BIT_VECTOR = {
    "BitVec",
    "BitVecs",
    "BitVecVal",
    "BitVecSort",
    "ULT",
    "ULE",
    "UGT",
    "UGE",
    "UDiv",
    "URem",
    "LShR",
    "ZeroExt",
    "SignExt",
    "Extract",
    "Concat",
    "BV2Int",
    "Int2BV",
}
# Reading z3's version (the sweep cache's fingerprint) builds nothing.
TYPES = {"BoolRef", "BitVecRef", "ModelRef", "Solver", "get_version_string"}
SOLVER_DRIVING = {"set_param", "sat", "unsat", "Z3Exception"}
ALLOWED = {"smt/solve.py": TYPES | SOLVER_DRIVING}


def z3_names(tree: ast.AST) -> set[str]:
    """Every z3.X the module names, and a marker for names imported from z3."""
    names = set()
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id == "z3"
        ):
            names.add(node.attr)
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "z3":
            names |= {f"from z3 import {a.name}" for a in node.names}
        if isinstance(node, ast.Import):
            names |= {
                f"import {a.name} as {a.asname}"
                for a in node.names
                if a.name == "z3" and a.asname not in (None, "z3")
            }
    return names


def test_only_bv_and_gf2_build_z3_terms():
    misuse = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        module = path.relative_to(PACKAGE).as_posix()
        if module in TERM_BUILDERS:
            continue
        extra = z3_names(ast.parse(path.read_text(), module)) - ALLOWED.get(module, TYPES)
        if extra:
            misuse[module] = sorted(extra)
    assert misuse == {}


def test_the_boolean_encodings_build_no_bit_vectors():
    for module in sorted(BOOLEAN_BUILDERS):
        tree = ast.parse((PACKAGE / module).read_text(), module)
        assert z3_names(tree) & BIT_VECTOR == set(), module


def test_the_scan_sees_a_constructor():
    assert z3_names(ast.parse("import z3\nx = z3.Not(y)\n")) == {"Not"}
    assert z3_names(ast.parse("from z3 import And\n")) == {"from z3 import And"}
