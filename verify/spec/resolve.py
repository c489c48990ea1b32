"""Name resolution of a parsed spec, every error at once.

The runner resolves a name when a check needs it and stops at the first that
fails; here every access and check is resolved before anything runs, so a file
with three misspelt names gets three messages, each with a "did you mean".
"""

from __future__ import annotations

import re

from verify.errors import Pos, SpecError
from verify.model.expr import BinOp, Expr, Var, free_vars_within
from verify.model.instructions import parse_instruction
from verify.model.program import LANE, Program
from verify.spec.ast import AccessDef, CheckDef, Spec
from verify.spec.names import did_you_mean

# Spellings offered when an instruction name is not understood.
INSTRUCTION_NAMES = [
    *(
        f"{op}.shared{vec}.b{bits}"
        for op in ("ld", "st")
        for vec in ("", ".v2", ".v4")
        for bits in (8, 16, 32, 64)
    ),
    *(
        f"{op}.x{n}{trans}"
        for op in ("ldmatrix", "stmatrix")
        for n in (1, 2, 4)
        for trans in ("", ".trans")
    ),
    *(
        f"{op}.sync.aligned.m8n8.x{n}{trans}.shared.b16"
        for op in ("ldmatrix", "stmatrix")
        for n in (1, 2, 4)
        for trans in ("", ".trans")
    ),
    *(f"SM{sm}_U32x{n}_{atom}_N" for sm, atom in ((75, "LDSM"), (90, "STSM")) for n in (1, 2, 4)),
    *(f"SM{sm}_U16x{n}_{atom}_T" for sm, atom in ((75, "LDSM"), (90, "STSM")) for n in (2, 4, 8)),
]

_LAYOUT_TARGETS = ("bijective", "base_aligned", "equivalent_layouts")
_ACCESS_TARGETS = ("aligned", "max_ways", "wavefronts")


def resolution_errors(
    spec: Spec, source: str, failed: set[str], dtype_failed: bool
) -> list[SpecError]:
    """The first error of each access and each check. Names in `failed` had a
    definition that failed (already reported); with `dtype_failed`, addresses
    cannot be computed and only names are checked."""
    try:
        program = Program(spec)
    except SpecError as e:
        return [e]
    errors = [_access_error(program, a, failed, dtype_failed) for a in spec.accesses.values()]
    errors += [_check_error(spec, c, source, failed) for c in spec.checks]
    return [e for e in errors if e is not None]


def _access_error(
    program: Program, adef: AccessDef, failed: set[str], dtype_failed: bool
) -> SpecError | None:
    spec = program.spec
    try:
        parse_instruction(adef.instr_text)
    except SpecError as e:
        return SpecError(
            e.message + did_you_mean(adef.instr_text, INSTRUCTION_NAMES), adef.instr_pos
        )
    if adef.layout in failed:
        return None
    if adef.layout not in spec.layouts:
        return _unknown("layout", adef.layout, spec.layouts, adef.layout_pos)
    bound = [LANE, *(name for name, _ in adef.loops)]
    for coord in adef.coords:
        var = first_var(coord, set(bound))
        if var is not None:
            return _unbound_loop_variable(var, bound, adef)
    if dtype_failed:
        return None
    try:
        program.access(adef.name, adef.pos)
    except SpecError as e:
        return e
    return None


def _unbound_loop_variable(var: Var, bound: list[str], adef: AccessDef) -> SpecError:
    """An access coordinate names a variable that is neither 'lane' nor a loop's."""
    close = did_you_mean(var.name, bound)
    loops = ", ".join(f"{name} in {r}" for name, r in adef.loops)
    clause = f"for {loops + ', ' if loops else ''}{var.name} in lo..hi"
    hint = close or f"; to range over it, add '{clause}' after the coordinates"
    return SpecError(
        f"unknown variable '{var.name}' in access '{adef.name}': expected "
        f"'lane' or a loop variable{hint}",
        var.pos if var.pos.line else adef.pos,
    )


def _check_error(spec: Spec, check: CheckDef, source: str, failed: set[str]) -> SpecError | None:
    if check.kind == "equivalent_exprs":
        assert check.lhs is not None and check.rhs is not None, "the parser sets both sides"
        loops = [name for name, _ in check.loops]
        for side in (check.lhs, check.rhs):
            var = first_var(side, set(loops))
            if var is not None:
                clause = ", ".join(f"{n} in {r}" for n, r in check.loops)
                hint = (
                    did_you_mean(var.name, loops)
                    or f"; add it to the loops: 'for {clause}, {var.name} in lo..hi'"
                )
                return SpecError(
                    f"unknown variable '{var.name}': expected {_loop_variables(loops)}{hint}",
                    var.pos if var.pos.line else check.pos,
                )
        return None
    names = [check.target] + ([check.second] if check.kind == "equivalent_layouts" else [])
    for name in names:
        if name in failed:
            return None
        if check.kind in _LAYOUT_TARGETS and name not in spec.layouts:
            return _unknown(
                "layout",
                name,
                spec.layouts,
                _name_pos(source, check.pos, name),
                also=("access", spec.accesses),
            )
        if check.kind in _ACCESS_TARGETS and name not in spec.accesses:
            return _unknown(
                "access",
                name,
                spec.accesses,
                _name_pos(source, check.pos, name),
                also=("layout", spec.layouts),
            )
    return None


def _unknown(what: str, name: str, defined, pos: Pos, also=None) -> SpecError:
    """unknown layout 'Aa': expected one of 'A', 'B'; did you mean 'A'?"""
    names = sorted(defined)
    if also is not None and name in also[1]:
        where = f": {_one_of(names, what)}" if names else ", and the spec defines none"
        return SpecError(
            f"'{name}' is {'an' if also[0] == 'access' else 'a'} {also[0]}: "
            f"expected a {what} here{where}",
            pos,
        )
    if not names:
        return SpecError(
            f"unknown {what} '{name}': expected a {what} the spec defines, and it defines none", pos
        )
    hint = did_you_mean(name, defined) if len(names) > 1 else ""
    return SpecError(f"unknown {what} '{name}': expected {_one_of(names, what)}{hint}", pos)


def _one_of(names: list[str], what: str) -> str:
    """The names a reference could have meant, as the parser words its choices:
    "one of 'A', 'B'", or "'A', the only layout defined"."""
    quoted = ", ".join(f"'{n}'" for n in names)
    return f"{quoted}, the only {what} defined" if len(names) == 1 else f"one of {quoted}"


def _loop_variables(loops: list[str]) -> str:
    """The parser requires a check's loops: at least one."""
    quoted = ", ".join(f"'{n}'" for n in loops)
    return (
        f"the loop variable {quoted}" if len(loops) == 1 else f"one of the loop variables {quoted}"
    )


def _name_pos(source: str, pos: Pos, name: str) -> Pos:
    """Where `name` is written in the check statement at `pos` (its last mention
    before 'expect'), else the statement's own position."""
    lines = source.splitlines()
    if not 0 < pos.line <= len(lines):
        return pos
    line = lines[pos.line - 1].split("#")[0].split(" expect ")[0]
    found = list(re.finditer(rf"\b{re.escape(name)}\b", line[pos.col - 1 :]))
    return Pos(pos.line, pos.col + found[-1].start()) if found else pos


def first_var(e: Expr, bound: set[str]) -> Var | None:
    """The first variable of `e`, in source order, that is not in `bound`."""
    if isinstance(e, Var):
        return None if e.name in bound else e
    if isinstance(e, BinOp) and not free_vars_within(e, bound):
        return first_var(e.a, bound) or first_var(e.b, bound)
    return None
