"""Brute-force enumeration: the concrete oracle the symbolic checks are tested against.

It walks every instance of an access (every loop value, stage and base) and
every coordinate of a layout, evaluates addresses with `verify.expr.compiled` (plain Python arithmetic)
and costs them with `verify.bank`. No solver is involved.

Bases: enumerating the aligned bases of one period (`verify.program.base_period`)
is exhaustive by the argument in `verify.program`'s documentation; the solver
relies on the same argument, so tests/test_enumerate.py checks it separately by
evaluating bases far apart in the window.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass

from verify.bank import bank_cost
from verify.expr import Var, compiled
from verify.layout import coordinate_vars
from verify.program import BASE, STAGE, Access, Program
from verify.spec.ast import LayoutDef


def _values(program: Program, names: dict, ldef: LayoutDef, modulus: int = 1):
    """Every assignment of the named variables, bases reduced as the module doc says."""
    axes = []
    for name, r in names.items():
        if name == BASE:
            axes.append(range(program.base_range(ldef, modulus).hi))
        else:
            axes.append(range(r.lo, r.hi))
    for combo in itertools.product(*axes):
        yield dict(zip(names, combo))


@dataclass
class AccessFacts:
    in_bounds: bool
    aligned: bool
    max_ways: int | None        # None when some instance is misaligned
    wavefronts: int | None


def access_facts(program: Program, access: Access) -> AccessFacts:
    instr = access.instruction
    instance = {n: access.ranges[n] for n in access.instance_vars}
    limits = access.coordinate_ranges
    in_bounds, aligned, ways, waves = True, True, 0, 0
    for values in _values(program, instance, access.layout):
        for coords in access.lane_coordinates(values):
            in_bounds &= all(r.lo <= c < r.hi for c, r in zip(coords, limits))
        addresses = access.lane_addresses(values)
        if any(a % instr.bytes_per_address for a in addresses):
            aligned = False
            continue
        cost = bank_cost(instr, addresses)
        ways, waves = max(ways, cost.max_ways), max(waves, cost.wavefronts)
    return AccessFacts(in_bounds, aligned, ways if aligned else None,
                       waves if aligned else None)


def aligned_to(program: Program, access: Access, n: int) -> bool:
    instance = {n_: access.ranges[n_] for n_ in access.instance_vars}
    return all(a % n == 0 for values in _values(program, instance, access.layout, n)
               for a in access.lane_addresses(values))


@dataclass
class LayoutFacts:
    bijective: bool
    cosize: int


def layout_facts(program: Program, ldef: LayoutDef) -> LayoutFacts:
    coords = coordinate_vars(ldef.function)
    names = [n for n, _ in coords]
    eb = program.elem_bytes(ldef.pos, ldef)
    addr = program.address(ldef, [Var(n) for n in names], ldef.pos)
    domain = {**dict(coords), STAGE: program.buffer_ranges(ldef)[STAGE]}
    bijective = True
    address_of, value_of = compiled(addr), compiled(ldef.value([Var(n) for n in names]))
    # Without a pointer swizzle the base moves every address alike: one base suffices.
    bases = _values(program, {BASE: None}, ldef) if ldef.pointer_swizzle else [{BASE: 0}]
    for base_values in bases:
        spans = sorted(address_of({**v, **base_values})
                       for v in _values(program, domain, ldef))
        bijective &= all(b - a >= eb for a, b in zip(spans, spans[1:]))
    scale = eb if ldef.pointer_swizzle else 1
    top = max(value_of(v) for v in _values(program, dict(coords), ldef))
    return LayoutFacts(bijective, top // scale + 1)
