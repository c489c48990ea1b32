"""cp.async in specs: its shared-side wavefronts, from destinations and global sources.

An access ``cp.async.ca.16 S(r, c) from G(r, c) ...`` writes S and reads the global
tile G; `Program.copy_source` builds the global side. Its cost
(`verify.model.bank.hardware_copy_cost`) is rule C for .ca and rule S for .cg, both exact
on every pattern measured (`CopyCost.exact`); bound G, one wavefront per distinct
16-byte destination, an upper bound, stands in where the sources are known modulo
128 bytes only.

Global bases. Rule C and bound G read a source only through its bank, so global
base 0 stands for every aligned base; rule S reads which 128-byte global line each
source lies in, so a .cg copy is evaluated at every base residue modulo 128 that
``global align N`` allows (`Program.global_bases`), and a counterexample shows its
``gbase``. Sources known only modulo 128 bytes (verify ttgir's, `Spec.sources_modulo_128`)
keep bound G.

Figures. An engine returns `CopyFigures`: the largest exact figure and the largest
bound-G figure, kept apart. Verdicts (`decide_copy`): REFUTED only from an exact
figure above the bound (the instance is replayed by `hardware_copy_cost`), or for
``== n`` when even the bounds stay below n; PROVED when every figure, exact or
bound, is within the bound (for ``== n``: an exact figure reaches n and nothing
exceeds it); UNKNOWN otherwise. The fidelity label says which rule gave the figure.

Checks. ``wavefronts <= n`` and ``wavefronts == n`` as for any access;
``conflict_free`` means the copy costs no more than its ideal, one wavefront per
phase (for .ca no instance costs less, so it is ``wavefronts == ideal``).
``max_ways`` is refused: a copy's cost is not a count of words in one bank.

Engines. The enumeration engine (`verify.engines.enumeration.copy_wavefronts`) evaluates rule C
and rule S at every instance and global base, vectorised (rule S's fewest symmetries
are a minimum vertex cover, `verify.engines.copy_rules.cg_costs`). The solver
(`verify.engines.solver.copy_wavefronts`) encodes rule C and rule S
(`verify.engines.solver.RuleSQuery`: the vertex cover is a maximum matching, a count of
per-lane Booleans), with the global base residue symbolic. Sources known modulo 128
bytes keep bound G in both. So both engines give one verdict and one figure; `auto`
enumerates a .cg copy's figure up to `decide.CG_ENUMERATION_LIMIT` lane evaluations
and asks the solver above it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from verify.engines.witness import shown_instance
from verify.errors import SpecError
from verify.model.bank import (
    BANKS,
    CHUNK_BYTES,
    LINE_BYTES,
    WORD_BYTES,
    copy_cost,
    copy_edges,
    counted_lanes,
    fewest_symmetries,
    hardware_copy_cost,
    sector_units,
)
from verify.model.instructions import Instruction
from verify.model.program import GBASE, Access, Program
from verify.results import Counterexample, LaneRow
from verify.spec.ast import CheckDef
from verify.verdicts import Maximum, Status


@dataclass(frozen=True)
class CopyFigures:
    """A copy's largest cost over every instance (and global base), as an engine found
    it, by how the figure is known: `exact` by rule C or rule S, `bound` by bound G
    (an upper bound, for sources known modulo 128 bytes only). The one not used is
    None."""

    exact: Maximum | None
    bound: Maximum | None
    stopped: str = ""  # why the search stopped early (a timeout), if it did

    @property
    def value(self) -> int | None:
        return max((m.value for m in self._present), default=None)

    @property
    def complete(self) -> bool:
        """Every instance was looked at (no timeout)."""
        return bool(self._present) and all(m.exact for m in self._present)

    @property
    def reason(self) -> str:
        return self.stopped or next((m.reason for m in self._present if m.reason), "")

    @property
    def _present(self) -> list[Maximum]:
        return [m for m in (self.exact, self.bound) if m is not None]


@dataclass(frozen=True)
class CopyAnswer:
    """A copy check's verdict, the figure behind it and how it is known."""

    status: Status
    counterexample: Counterexample | None = None
    reason: str = ""
    wavefronts: int | None = None
    fidelity: str = ""


def refuse_undefined(access: Access, check: CheckDef):
    """The located error for a copy check that is not defined: max_ways."""
    if check.kind != "wavefronts" and not check.text.startswith("conflict_free"):
        raise SpecError(
            f"{check.text}: max_ways is not defined for {access.instruction.name}, whose "
            "cost is not a count of words in one bank: expected 'wavefronts <= n' or "
            "'conflict_free' (wavefronts at most the ideal)",
            check.pos,
        )


def decide_copy(
    program: Program, access: Access, check: CheckDef, figures: CopyFigures
) -> CopyAnswer:
    """A ``wavefronts`` or ``conflict_free`` check of an aligned cp.async (after
    `refuse_undefined`), given the copy's figures as either engine found them
    (`copy_wavefronts` of `verify.engines.enumeration` or `verify.engines.solver`)."""
    instr = access.instruction
    bound = check.bound if check.kind == "wavefronts" else instr.ideal_wavefronts
    status, shown = _status(figures, bound, check.exact)
    reason = ""
    if status == Status.UNKNOWN:
        reason = figures.reason or _unknown_reason(figures, bound)
    cex = None
    if status == Status.REFUTED:
        assert shown is not None, "a refutation shows an instance"
        cex = copy_counterexample(program, access, shown.witness)
        if shown.value <= bound:  # "== bound" that no instance reaches
            cex = replace(
                cex,
                summary=f"no instance reaches {bound}; the worst gives {shown.value}: "
                + cex.summary,
            )
    return CopyAnswer(status, cex, reason, figures.value, fidelity(instr, figures))


def _status(figures: CopyFigures, bound: int, equal: bool) -> tuple[Status, Maximum | None]:
    """The verdict, and for REFUTED the instance shown. Only an exact figure above the
    bound refutes "<=" (a bound G figure may lie above the hardware's); "==" is also
    refuted when even the bounds stay below it, and proved when an exact figure
    reaches it and nothing may exceed it. No figure at all (a timeout before the
    first instance) is UNKNOWN."""
    if not figures._present:
        return Status.UNKNOWN, None
    exact, top = figures.exact, max(figures._present, key=lambda m: m.value)
    if exact is not None and exact.value > bound:
        return Status.REFUTED, exact
    if not figures.complete:
        return Status.UNKNOWN, top
    if top.value <= bound and not equal:
        return Status.PROVED, top
    if equal and top.value < bound:
        return Status.REFUTED, top
    if equal and exact is not None and exact.value == bound and top.value <= bound:
        return Status.PROVED, top
    return Status.UNKNOWN, top


def _unknown_reason(figures: CopyFigures, bound: int) -> str:
    assert figures.bound is not None, "only bound G leaves a complete search undecided"
    return (
        f"bound G gives {figures.bound.value}, above {bound}; the sources are known "
        "modulo 128 bytes only, not the 128-byte global lines rule S reads"
    )


def fidelity(instr: Instruction, figures: CopyFigures) -> str:
    """The label of a copy check's figure: the rule that gave it."""
    if instr.cache != "cg":
        return instr.fidelity
    if figures.bound is None:
        return "exact (rule S: line pairs and sector symmetries, matches H200 measurements)"
    return (
        "upper bound (bound G: one wavefront per distinct 16-byte destination; the "
        "sources are known modulo 128 bytes only)"
    )


# -- the figure's pieces ------------------------------------------------------------


def _source(access: Access) -> Access:
    """The global side of a copy (`Program.copy_source` gives every copy one)."""
    assert access.source is not None, f"{access.name}: a copy without its global source"
    return access.source


def global_addresses(access: Access, values: dict[str, int]) -> list[int]:
    """Each lane's global source at an instance, at its global base (`GBASE`, bytes;
    0 where the instance names none: `Program.global_bases`)."""
    base = values.get(GBASE, 0)
    return [base + a for a in _source(access).lane_addresses(values)]


def replayed_cost(program: Program, access: Access, values: dict[str, int]):
    """The H200's cost at an instance (`verify.model.bank.hardware_copy_cost`): rule C, or
    rule S with bound G where it is not exact; bound G (`copy_cost`) for a .cg copy
    whose sources are known only modulo 128 bytes (`Program.copy_rule_s`)."""
    instr = access.instruction
    cost = hardware_copy_cost if program.copy_rule_s(access) else copy_cost
    return cost(instr, access.lane_addresses(values), global_addresses(access, values))


def _shown(program: Program, access: Access, values: dict[str, int]) -> dict[str, int]:
    shown = shown_instance(program, {k: v for k, v in values.items() if k != GBASE})
    if len(program.global_bases(access)) > 1:
        shown["gbase"] = values.get(GBASE, 0)
    return shown


# -- the counterexample -------------------------------------------------------------


def copy_counterexample(program: Program, access: Access, values: dict[str, int]):
    """Rule C: the costliest phase's edge (a, b), the lanes reading source bank a or
    writing destination bank b. Rule S: the costliest (global line, shared line)
    group's lanes. Bound G: the count. Each lane with its global source beneath it."""
    cost = replayed_cost(program, access, values)
    instr = access.instruction
    if cost.by_rule_s:
        lanes, group_cost, groups = _costliest_group(access, values)
        summary = (
            f"{instr.name}: {cost.wavefronts} wavefront{'s' if cost.wavefronts != 1 else ''} "
            f"by rule S (ideal {cost.ideal}): "
            f"{groups} (global 128-byte line, shared 128-byte line) pairs, which never "
            f"share a wavefront; the costliest, shown, takes {group_cost}"
        )
        return Counterexample(
            summary, _shown(program, access, values), _rows(access, lanes, values)
        )
    if not cost.phases:  # bound G: distinct destinations
        summary = (
            f"{instr.name}: {cost.wavefronts} distinct 16-byte destinations, so bound G "
            f"allows {cost.wavefronts} wavefronts (ideal {cost.ideal})"
        )
        return Counterexample(summary, _shown(program, access, values))
    worst = max(cost.phases, key=lambda p: p.cost)
    a, b = worst.edge
    sources = global_addresses(access, values)
    lanes = [
        lane
        for lane in worst.lanes
        if any(
            ea == a or eb == b
            for ea, eb in copy_edges(
                instr.bytes_per_address, access.lane_addresses(values)[lane], sources[lane]
            )
        )
    ]
    per_phase = ", ".join(
        f"lanes {p.lanes.start}-{p.lanes.stop - 1}: {p.cost}" for p in cost.phases
    )
    summary = (
        f"{instr.name}: {cost.wavefronts} wavefront{'s' if cost.wavefronts != 1 else ''} "
        f"(ideal {cost.ideal}); per phase "
        f"{per_phase}; lanes {worst.lanes.start}-{worst.lanes.stop - 1} read source "
        f"bank {a} and write shared bank {b} with {worst.cost} words between them"
    )
    return Counterexample(summary, _shown(program, access, values), _rows(access, lanes, values))


def _costliest_group(access: Access, values: dict[str, int]) -> tuple[list[int], int, int]:
    """Rule S's costliest (global line, shared line) group: its counted lanes and
    cost, and how many groups there are."""
    destinations = access.lane_addresses(values)
    sources = global_addresses(access, values)
    groups: dict[tuple[int, int], list[int]] = {}
    for lane in counted_lanes(destinations):
        key = (sources[lane] // LINE_BYTES, destinations[lane] // LINE_BYTES)
        groups.setdefault(key, []).append(lane)

    def cost(lanes: list[int]) -> int:
        copies = [
            (sources[i] % LINE_BYTES // CHUNK_BYTES, destinations[i] % LINE_BYTES // CHUNK_BYTES)
            for i in lanes
        ]
        return sum(fewest_symmetries(units) for units in sector_units(copies))

    worst = max(groups.values(), key=cost)
    return worst, cost(worst), len(groups)


def _rows(access: Access, lanes: list[int], values: dict[str, int]) -> tuple[LaneRow, ...]:
    """Each lane's destination row, its global source row beneath it (every lane's
    addresses and coordinates evaluated once for all)."""
    source, rows, instr = _source(access), [], access.instruction
    destinations, places = access.lane_addresses(values), access.lane_coordinates(values)
    sources, coords = global_addresses(access, values), source.lane_coordinates(values)
    for lane in lanes:
        rows += [
            _row(lane, places[lane], destinations[lane], instr),
            _row(None, coords[lane], sources[lane], instr, f"{source.layout.name} <-"),
        ]
    return tuple(rows)


def _row(lane, coord, address: int, instr: Instruction, label: str = "") -> LaneRow:
    first = address // WORD_BYTES
    words = tuple(range(first, first + instr.words_per_address))
    return LaneRow(
        lane, tuple(int(c) for c in coord), address, words, tuple(w % BANKS for w in words), label
    )
