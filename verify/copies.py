"""cp.async in specs: its shared-side wavefronts, from destinations and global sources.

An access ``cp.async.ca.16 S(r, c) from G(r, c) ...`` writes S and reads the global
tile G; `Program.copy_source` builds the global side (and says why base 0 stands
for every global base). Its cost is rule C for .ca (exact) and bound G for .cg (an
upper bound), `verify.bank.copy_cost`, evaluated here over every instance.

Checks. ``wavefronts <= n`` and ``wavefronts == n`` as for any access;
``conflict_free`` means the copy costs no more than its ideal, one wavefront per
phase (for .ca no instance costs less, so it is ``wavefronts == ideal``).
``max_ways`` is refused: a copy's cost is not a count of words in one bank. A .cg
figure is a bound: above the check's bound it is UNKNOWN (the hardware may do
better), never REFUTED, unless an ``==`` bound lies above it.

Engine. Only enumeration decides these checks: the solver has no encoding of
rule C yet. A domain above `decide.ENUMERATION_LIMIT` points is refused with an
error at the check rather than enumerated for minutes or left UNKNOWN.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from verify import decide
from verify.bank import BANKS, WORD_BYTES, copy_cost, copy_edges
from verify.enumerate import Domain, Vectorised, _access_domain, _Best, _Clock
from verify.errors import InternalError, SpecError
from verify.instructions import Instruction
from verify.program import BASE, Access, Program
from verify.results import Counterexample, LaneRow
from verify.solve import Budget, Maximum, Status
from verify.spec.ast import CheckDef
from verify.witness import shown_instance


@dataclass(frozen=True)
class CopyAnswer:
    """A copy check's verdict and the figure behind it."""

    status: Status
    counterexample: Counterexample | None = None
    reason: str = ""
    wavefronts: int | None = None


def refuse_undecidable(program: Program, access: Access, check: CheckDef, engine: str):
    """The located error for a copy check that is not defined or that the enumeration
    engine may not decide."""
    name = access.instruction.name
    if check.kind != "wavefronts" and not check.text.startswith("conflict_free"):
        raise SpecError(
            f"{check.text}: max_ways is not defined for {name}, whose cost is not "
            "a count of words in one bank: expected 'wavefronts <= n' or "
            "'conflict_free' (wavefronts at most the ideal)",
            check.pos,
        )
    if engine == decide.Z3:
        raise SpecError(
            f"{check.text}: {name} is decided by enumeration only (the solver has "
            "no encoding of rule C yet): expected --engine auto or enumeration",
            check.pos,
        )
    points = decide.access_points(program, access)
    if points > decide.ENUMERATION_LIMIT:
        raise SpecError(
            f"{check.text}: {name} has {points} lane evaluations (lanes x loop "
            f"values x stages x bases), above the {decide.ENUMERATION_LIMIT} that "
            "enumeration decides; cp.async is decided by enumeration only (the "
            "solver has no encoding of rule C yet): narrow the loops",
            check.pos,
        )


def decide_copy(program: Program, access: Access, check: CheckDef, budget: Budget) -> CopyAnswer:
    """A ``wavefronts`` or ``conflict_free`` check of an aligned cp.async (after
    `refuse_undecidable`)."""
    instr = access.instruction
    bound = check.bound if check.kind == "wavefronts" else instr.ideal_wavefronts
    best = copy_wavefronts(access, budget)
    status = _status(best, bound, check.exact, instr.hardware_exact)
    reason = best.reason
    if status == Status.UNKNOWN and not reason:
        reason = (
            f"bound G gives {best.value}, above {bound}; the H200's exact cost for "
            f"{instr.name} is not known"
        )
    cex = copy_counterexample(program, access, best.witness) if status == Status.REFUTED else None
    return CopyAnswer(status, cex, reason if status == Status.UNKNOWN else "", best.value)


def _status(best: Maximum, bound: int, equal: bool, exact_rule: bool) -> Status:
    """As `solve.bound_status`, where an inexact rule (bound G) can only prove."""
    if not best.exact:
        return Status.REFUTED if exact_rule and best.value > bound else Status.UNKNOWN
    if best.value <= bound and not equal:
        return Status.PROVED
    if exact_rule:
        return Status.PROVED if best.value == bound else Status.REFUTED
    return Status.REFUTED if equal and best.value < bound else Status.UNKNOWN


# -- rule C and bound G over the domain -------------------------------------------


def copy_wavefronts(access: Access, budget: Budget) -> Maximum:
    """The largest cost over every instance, with the first instance attaining it.

    Requires: destinations and sources naturally aligned (checked before)."""
    instance = Domain.of({n: access.ranges[n] for n in access.instance_vars})
    domain, _ = _access_domain(access, access.ranges[BASE])
    source = _source(access).address
    evaluate = Vectorised([access.address, source], dict(access.ranges))
    instr = access.instruction
    best, reason = _Best(), ""
    with _Clock(budget) as clock:
        for start, env in domain.chunks():
            if clock.out_of_time():
                reason = clock.reason()
                break
            shape = domain.shape_of(env)
            dst = evaluate(access.address, env, shape).reshape(-1, instr.address_lanes)
            src = evaluate(source, env, shape).reshape(-1, instr.address_lanes)
            best.offer(
                _costs(instr, dst.astype(np.int64), src.astype(np.int64)),
                start // instr.address_lanes,
            )
    values = instance.values_at(best.flat or 0)
    replay = _replayed_cost(access, values).wavefronts
    if best.flat is not None and replay != best.value:
        raise InternalError(
            f"enumerated cp.async wavefronts {best.value} replay as {replay}: {values}"
        )
    return Maximum(replay, values, exact=not reason, reason=reason)


def _costs(instr: Instruction, dst: np.ndarray, src: np.ndarray) -> np.ndarray:
    """(instances, lanes) destinations and sources -> each instance's cost."""
    if instr.cache == "cg":
        ordered = np.sort(dst, axis=1)
        return 1 + (ordered[:, 1:] != ordered[:, :-1]).sum(axis=1)
    words = np.arange(instr.bytes_per_address // WORD_BYTES)
    src_banks = (src[:, :, None] // WORD_BYTES + words) % BANKS
    dst_banks = (dst[:, :, None] // WORD_BYTES + words) % BANKS
    total = np.zeros(dst.shape[0], dtype=np.int64)
    for lanes in instr.phases:
        a = src_banks[:, lanes.start : lanes.stop].reshape(dst.shape[0], -1)
        b = dst_banks[:, lanes.start : lanes.stop].reshape(dst.shape[0], -1)
        # Per edge e: out(a_e) + in(b_e) - both(a_e, b_e), counted over the phase's edges.
        same_a = a[:, :, None] == a[:, None, :]
        same_b = b[:, :, None] == b[:, None, :]
        per_edge = same_a.sum(axis=2) + same_b.sum(axis=2) - (same_a & same_b).sum(axis=2)
        total += per_edge.max(axis=1)
    return total


def _source(access: Access) -> Access:
    """The global side of a copy (`Program.copy_source` gives every copy one)."""
    assert access.source is not None, f"{access.name}: a copy without its global source"
    return access.source


def _replayed_cost(access: Access, values: dict[str, int]):
    return copy_cost(
        access.instruction, access.lane_addresses(values), _source(access).lane_addresses(values)
    )


# -- the counterexample -------------------------------------------------------------


def copy_counterexample(program: Program, access: Access, values: dict[str, int]):
    """The costliest phase's edge (a, b): the lanes reading source bank a or writing
    destination bank b, each with its global source beneath it."""
    cost = _replayed_cost(access, values)
    instr, source = access.instruction, _source(access)
    if not cost.phases:  # bound G: distinct destinations
        summary = (
            f"{instr.name}: {cost.wavefronts} distinct 16-byte destinations, so bound G "
            f"allows {cost.wavefronts} wavefronts (ideal {cost.ideal})"
        )
        return Counterexample(summary, shown_instance(program, values))
    worst = max(cost.phases, key=lambda p: p.cost)
    a, b = worst.edge
    rows = []
    for lane in worst.lanes:
        dst, src = _lane_row(access, lane, values), _lane_row(source, lane, values)
        edges = copy_edges(instr.bytes_per_address, dst.address, src.address)
        if any(ea == a or eb == b for ea, eb in edges):
            rows += [
                dst,
                LaneRow(
                    None,
                    src.coord,
                    src.address,
                    src.words,
                    src.banks,
                    label=f"{source.layout.name} <-",
                ),
            ]
    per_phase = ", ".join(
        f"lanes {p.lanes.start}-{p.lanes.stop - 1}: {p.cost}" for p in cost.phases
    )
    summary = (
        f"{instr.name}: {cost.wavefronts} wavefronts (ideal {cost.ideal}); per phase "
        f"{per_phase}; lanes {worst.lanes.start}-{worst.lanes.stop - 1} read source "
        f"bank {a} and write shared bank {b} with {worst.cost} words between them"
    )
    return Counterexample(summary, shown_instance(program, values), tuple(rows))


def _lane_row(access: Access, lane: int, values: dict[str, int]) -> LaneRow:
    address = access.lane_addresses(values)[lane]
    coord = tuple(int(c) for c in access.lane_coordinates(values)[lane])
    first = address // WORD_BYTES
    words = tuple(range(first, first + access.instruction.words_per_address))
    return LaneRow(lane, coord, address, words, tuple(w % BANKS for w in words))
