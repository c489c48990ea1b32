"""Brute-force enumeration: the concrete oracle the symbolic checks are tested against.

It walks every instance of an access (every loop value, stage and base) and
every coordinate of a layout, evaluates addresses with `verify.expr.evaluate`
and costs them with `verify.bank`. No solver is involved.

Bases: a proof covers every aligned base of the 32-bit window, but only the
base's low bits can matter. Adding K * 2^t to the base, with 2^t above 128 and
above every bit a pointer swizzle reads, adds K * 2^t to every address (the
swizzle passes those bits through) -- the same banks, the same distinct words,
the same alignment. So enumerating aligned bases below 2^t is exhaustive.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass

from verify.bank import bank_cost
from verify.expr import Var, evaluate
from verify.layout import coordinate_vars
from verify.program import BASE, LANE, STAGE, Access, Program
from verify.spec.ast import LayoutDef


def base_period(ldef: LayoutDef) -> int:
    """2^t such that base and base + K*2^t behave identically (see module doc)."""
    top = 128
    if ldef.pointer_swizzle is not None:
        masks = ldef.pointer_swizzle.source_mask | ldef.pointer_swizzle.target_mask
        top = max(top, 1 << masks.bit_length())
    return top


def _values(program: Program, names: dict, ldef: LayoutDef):
    """Every assignment of the named variables, bases reduced as the module doc says."""
    align = program.spec.buffer.align
    axes = []
    for name, r in names.items():
        if name == BASE:
            axes.append(range(0, max(1, base_period(ldef) // align)))
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
        for lane in range(instr.address_lanes):
            coords = [evaluate(c, {**values, LANE: lane}) for c in access.definition.coords]
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
    return all(a % n == 0 for values in _values(program, instance, access.layout)
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
    domain = {**dict(coords), STAGE: program.buffer_ranges()[STAGE]}
    bijective = True
    for base_values in _values(program, {BASE: None}, ldef):
        spans = sorted(evaluate(addr, {**v, **base_values})
                       for v in _values(program, domain, ldef))
        bijective &= all(b - a >= eb for a, b in zip(spans, spans[1:]))
    value = ldef.value([Var(n) for n in names])
    scale = eb if ldef.pointer_swizzle else 1
    top = max(evaluate(value, v) for v in _values(program, dict(coords), ldef))
    return LayoutFacts(bijective, top // scale + 1)
