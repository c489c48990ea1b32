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

Engines. Both decide these checks, chosen as for any access (`verify.decide`):
`verify.enumerate.copy_wavefronts` evaluates every instance,
`verify.properties.copy_wavefronts` encodes rule C and bound G for the solver.
"""

from __future__ import annotations

from dataclasses import dataclass

from verify.bank import BANKS, WORD_BYTES, copy_cost, copy_edges
from verify.errors import SpecError
from verify.program import Access, Program
from verify.results import Counterexample, LaneRow
from verify.solve import Maximum, Status
from verify.spec.ast import CheckDef
from verify.witness import shown_instance


@dataclass(frozen=True)
class CopyAnswer:
    """A copy check's verdict and the figure behind it."""

    status: Status
    counterexample: Counterexample | None = None
    reason: str = ""
    wavefronts: int | None = None


def refuse_undefined(access: Access, check: CheckDef):
    """The located error for a copy check that is not defined: max_ways."""
    if check.kind != "wavefronts" and not check.text.startswith("conflict_free"):
        raise SpecError(
            f"{check.text}: max_ways is not defined for {access.instruction.name}, whose "
            "cost is not a count of words in one bank: expected 'wavefronts <= n' or "
            "'conflict_free' (wavefronts at most the ideal)",
            check.pos,
        )


def decide_copy(program: Program, access: Access, check: CheckDef, best: Maximum) -> CopyAnswer:
    """A ``wavefronts`` or ``conflict_free`` check of an aligned cp.async (after
    `refuse_undefined`), given the copy's largest cost as either engine found it
    (`copy_wavefronts` of `verify.enumerate` or `verify.properties`)."""
    instr = access.instruction
    bound = check.bound if check.kind == "wavefronts" else instr.ideal_wavefronts
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


# -- the figure's pieces ------------------------------------------------------------


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
