"""The k-blocks of one accumulation: the wgmma adding into one accumulator multiply
A's K columns by the same K rows of B, each K slice once, from the blocks
`verify.ptx.hopper_copies` proved each operand to be.
"""

from __future__ import annotations

from dataclasses import dataclass

from verify.engines.cases import Outcome, Undecided, decide_cases
from verify.model.wgmma import Operand
from verify.ptx.hopper_common import executes, unknown_result, verdict_result
from verify.ptx.trace import Event, Trace
from verify.results import CheckResult, Counterexample
from verify.smt.solve import Status

# -- the k-blocks of one accumulation --------------------------------------------------
#
# The wgmma of one accumulator (the same D registers, in one loop body) add A_i x B_i:
# right when A_i's K columns are B_i's K rows and no K slice is added twice. With
# each operand proved a block of its matrix (writer = reader above), that is: every
# A_i reads the same rows of A and every B_i the same columns of B, and the K offset
# of A_i from the group's first K column equals B_i's, distinct over the group
# (tile-ai/tilelang#2965: a K-panel stride that does not match the layout written).


@dataclass(frozen=True)
class Block:
    """The block of a matrix an operand reads: its parameter, the global byte of its
    element (0, 0) and the bytes from one chunk line to the next."""

    param: str
    origin: int
    pitch: int


# The param of a block read from a TMA box (verify.ptx.hopper_tma.tma_block): its
# origin and pitch are in the coordinates of a root box its copies' coordinates pair
# it with (a K tile split over two copies: the second box the first moved 64 k), else
# its own; blocks of two boxes not paired so are not comparable: UNKNOWN.
TMA_BLOCK = "tma:"
_TMA_BOXES = "k-blocks read from different TMA boxes"

# (event id, "A"/"B") -> (event, operand, {(point, generation): Block})
Blocks = dict[tuple[int, str], tuple[Event, Operand, dict[tuple, Block]]]


def k_blocks(kernel, trace: Trace, blocks: Blocks) -> list[CheckResult]:
    """One check per accumulator (its D registers in one loop body) of 2 or more wgmma
    with some of them reading operands proved blocks of their matrices; UNKNOWN where
    one of the group's wgmma is not proved so (a group is never decided on part of
    its wgmma)."""
    groups: dict[tuple, list[Event]] = {}
    for event in trace.events:
        if tuple(event.instr.parts[:2]) == ("wgmma", "mma_async"):
            accumulator = event.instr.operands[0]
            groups.setdefault((repr(accumulator), tuple(event.loops)), []).append(event)
    results = []
    for events in groups.values():
        proved = [e for e in events if (id(e), "A") in blocks and (id(e), "B") in blocks]
        if len(events) < 2 or not proved:
            continue
        if len(proved) < len(events):
            missing = next(e for e in events if e not in proved)
            name = f"k_blocks of {len(events)} wgmma into one accumulator, first"
            why = (
                f"the wgmma at PTX line {missing.instr.line} reads operands not proved "
                "blocks of their matrices (its writer = reader, or A in registers)"
            )
            results.append(unknown_result(kernel, events[0], name, why))
            continue
        results.append(_k_group(kernel, events, blocks, trace))
    return results


def _k_offset(op: Operand, block: Block, origin: int) -> tuple[int, int] | None:
    """(K offset, offset across K) in elements of `block` from a block at `origin`
    of the same matrix and pitch, or None where it is not on the element grid."""
    delta = block.origin - origin
    along, across = divmod(delta, block.pitch)  # chunk lines, then bytes within one
    if across % op.elem_bytes:
        return None
    within = across // op.elem_bytes
    # K-major: lines are rows (M or N), K runs within a line; MN-major the reverse.
    return (within, along) if op.major == "K" else (along, within)


MAX_STAGES = 1 << 16  # joint assignments of the group's variables enumerated


def _stages(events: list[Event], blocks: Blocks) -> list[tuple[dict, dict]] | None:
    """The group's stages: every assignment of the variables its operands' blocks
    depend on (their descriptors' points and their copies' generations) that agrees
    with one block of each operand, and the key of that block per operand (the
    natural join of their keys: an operand whose key lacks a variable reads the same
    block whatever its value, e.g. attention's Q, loaded once before the loop that
    copies K). None where there are more than MAX_STAGES."""
    joint: list[tuple[dict, dict]] = [({}, {})]
    for event in events:
        for which in ("A", "B"):
            keyed = [(key, dict(key[0]) | dict(key[1])) for key in blocks[(id(event), which)][2]]
            joined = []
            for env, chosen in joint:
                for key, values in keyed:
                    if all(env.get(n, v) == v for n, v in values.items()):
                        joined.append((env | values, {**chosen, (id(event), which): key}))
                if len(joined) > MAX_STAGES:
                    return None
            joint = joined
    return sorted(joint, key=lambda stage: sorted(stage[0].items()))


def _paired_exactly(events: list[Event], blocks: Blocks, env: dict, chosen: dict) -> bool:
    """Whether the stage pairs its operands' blocks as the kernel does: each operand's
    key names every variable of the stage, or the operand reads one block throughout.
    (Blocks of copies in different loops, paired by the join at every combination of
    their generations, may never meet in a run: a mismatch there is no refutation.)"""
    for event in events:
        for which in ("A", "B"):
            key = chosen[(id(event), which)]
            found = blocks[(id(event), which)][2]
            names = {n for n, _ in key[0]} | {n for n, _ in key[1]}
            if names != set(env) and len(set(found.values())) > 1:
                return False
    return True


def _k_group(kernel, events: list[Event], blocks: Blocks, trace: Trace) -> CheckResult:
    first = events[0]
    name = f"k_blocks of {len(events)} wgmma into one accumulator, first"
    stages = _stages(events, blocks)
    if stages is None:
        return unknown_result(
            kernel, first, name, f"more than {MAX_STAGES} stages of its operands' blocks"
        )
    if not stages:
        return unknown_result(
            kernel, first, name, "no stage is proved a block of its matrix for all of them"
        )

    def mismatch(stage) -> Outcome:
        env, chosen = stage
        wrong = _k_mismatch(events, blocks, chosen)
        if not wrong:
            return None
        if wrong.startswith(_TMA_BOXES):
            return Undecided(f"{wrong} at {env}")
        if not _paired_exactly(events, blocks, env, chosen):
            return Undecided(
                f"{wrong} at {env}, a stage that pairs copies of different loops, which may "
                "never meet in a run"
            )
        ran = [executes(kernel, e, trace.ranges)(env) for e in events]
        if False in ran:
            return None  # a stage where one of the group never runs
        why = next((r for r in ran if isinstance(r, str)), None)
        if why is not None:  # a stage where the group may not run refutes nothing
            return Undecided(why)
        return Counterexample(wrong, env)

    verdict = decide_cases(stages, mismatch)
    facts = {"stages": len(stages)} if verdict.status is Status.PROVED else {}
    return verdict_result(kernel, first, name, verdict, "enumeration", facts)


def _k_mismatch(events: list[Event], blocks: Blocks, chosen: dict) -> str:
    """Why the group's operands, each at its `chosen` key, do not add up to one
    product, or ''."""
    offsets: dict[str, list[tuple[int, int] | None]] = {}
    for which in ("A", "B"):
        found = [
            (blocks[(id(e), which)][1], blocks[(id(e), which)][2][chosen[(id(e), which)]])
            for e in events
        ]
        if len({(b.param, b.pitch) for _, b in found}) > 1:
            if any(b.param.startswith(TMA_BLOCK) for _, b in found):
                return (
                    f"{_TMA_BOXES} ({which}: "
                    f"{sorted({b.param[len(TMA_BLOCK) :] for _, b in found})}): their "
                    "copies' coordinates do not pair them"
                )
            return f"the {which} operands read blocks of different matrices or pitches"
        origin = min(b.origin for _, b in found)
        offsets[which] = [_k_offset(op, b, origin) for op, b in found]
    for i, (a, b) in enumerate(zip(offsets["A"], offsets["B"])):
        line = events[i].instr.line
        if a is None or b is None or a[1] or b[1]:
            return f"the wgmma at PTX line {line} reads other rows of A or columns of B"
        if a[0] != b[0]:
            return (
                f"the wgmma at PTX line {line} multiplies A's K columns from {a[0]} by B's "
                f"K rows from {b[0]}"
            )
    ks = [a[0] for a in offsets["A"] if a is not None]
    if len(set(ks)) != len(ks):
        return f"a K slice is added twice: the group's K offsets are {ks}"
    return ""
