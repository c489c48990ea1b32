"""A spec with an unknown layout, read as a synthesis problem.

Overview
--------
``layout A = ?(R, C)`` leaves an R x C tile's layout open. Everything else the
spec says is fixed: which lanes name which coordinates (those do not depend on
the layout), how wide each lane's access is, and the bounds its checks demand.
This module evaluates all of that once, concretely, into arrays that every
candidate layout is then scored on (`verify.synth.cost`) or encoded against
(`verify.synth.gf2`).

Worked example
--------------
``access rd = ldmatrix.x1 A(lane, 8 * q) for q in 0..8`` on ``?(8, 64)`` gives
8 instances (q = 0..7) of 8 lanes each; instance q holds coordinates
(0, 8q), (1, 8q), ..., (7, 8q). Each lane's 16-byte row is a vector of 8 fp16
elements, (r, 8q) .. (r, 8q + 7): a layout must keep them contiguous.

The math
--------
The byte address of a lane is ``base + stage * stage_bytes + eb * L(r, c)``.
Adding one constant to every address of a phase changes no bank figure (words
and banks shift alike, distinct words stay distinct), so the bank figures of a
layout are those of ``eb * L(r, c)`` alone: bases and stages are left to the
ordinary re-check of the answer.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from verify.errors import SpecError
from verify.model.instructions import Instruction
from verify.model.program import BASE, LANE, STAGE, Access, Program
from verify.spec.ast import Spec, UnknownLayout

# Instances (loop values) of one access that synthesis evaluates per candidate.
MAX_INSTANCES = 1 << 14


@dataclass(frozen=True)
class SynthAccess:
    """One access of the unknown layout, its lanes' coordinates per instance."""

    access: Access
    coords: np.ndarray  # (instances, address lanes, 2): (r, c) of each lane
    instances: tuple[dict, ...]  # the loop values of each instance

    @property
    def name(self) -> str:
        return self.access.name

    @property
    def instruction(self) -> Instruction:
        return self.access.instruction

    @property
    def weight(self) -> int:
        return self.access.definition.weight

    def vector(self, elem_bytes: int) -> int:
        """Elements one lane's address covers: they must stay contiguous."""
        return max(1, self.instruction.bytes_per_address // elem_bytes)


@dataclass(frozen=True)
class Requirement:
    """A bound a check demands of an access of the unknown layout."""

    access: str
    metric: str  # "ways" or "wavefronts"
    bound: int
    text: str  # the check as written
    line: int

    def describe(self) -> str:
        return f"'{self.text}' (line {self.line})"


@dataclass(frozen=True)
class Problem:
    spec: Spec
    source: str
    unknown: UnknownLayout
    elem_bytes: int
    accesses: tuple[SynthAccess, ...]
    requirements: tuple[Requirement, ...]

    @property
    def shape(self) -> tuple[int, int]:
        return self.unknown.rows, self.unknown.cols

    @property
    def stage_elements(self) -> int | None:
        """Elements one stage's slot holds (None: one stage, no slot to fit)."""
        buffer = self.spec.buffer
        return buffer.stage_bytes // self.elem_bytes if buffer.stages > 1 else None

    def stages_text(self) -> str:
        """The buffer's stages as a constraint is named in messages and cores."""
        buffer = self.spec.buffer
        return (
            f"stages of {buffer.stage_bytes} bytes (line {buffer.pos.line}) each holding the tile"
        )


def problem_of(spec: Spec, source: str) -> Problem:
    """The synthesis problem a parsed spec poses; a SpecError if it poses none."""
    if not spec.unknown_layouts:
        raise SpecError(
            "no unknown layout: expected 'layout NAME = ?(R, C)' for verify "
            "synth to choose (a spec with known layouts is checked by 'verify "
            "SPEC')",
            file=spec.file,
        )
    unknown = next(iter(spec.unknown_layouts.values()))
    program = Program(spec)
    elem_bytes = program.elem_bytes(unknown.pos)
    accesses = tuple(
        _synth_access(program, unknown, a.name)
        for a in spec.accesses.values()
        if a.layout == unknown.name
    )
    if not accesses:
        raise SpecError(
            f"layout '{unknown.name}' is unknown but no access uses it: expected "
            "at least one access to optimise for",
            unknown.pos,
            spec.file,
        )
    return Problem(spec, source, unknown, elem_bytes, accesses, _requirements(spec, accesses))


def _synth_access(program: Program, unknown: UnknownLayout, name: str) -> SynthAccess:
    adef = program.spec.accesses[name]
    access = program.access(name, adef.pos)
    if access.instruction.is_copy:
        raise SpecError(
            f"access '{name}' is a {access.instruction.name}: its wavefronts depend on "
            "its global source, which verify synth does not score; expected "
            "ld.shared, st.shared, ldmatrix or stmatrix (st.shared.v4.b32 stands for "
            "a 16-byte copy's shared side)",
            adef.pos,
        )
    # The access's own variables: its `for` loops, or those a thread map brings
    # (register and warp); not the stage and base, which synthesis places itself.
    loops = [(n, r) for n, r in access.ranges.items() if n not in (LANE, STAGE, BASE)]
    count = 1
    for _, r in loops:
        count *= r.size
    if count > MAX_INSTANCES:
        raise SpecError(
            f"access '{name}' has {count} instances: verify synth evaluates at "
            f"most {MAX_INSTANCES}",
            adef.pos,
        )
    instances = tuple(
        dict(zip([n for n, _ in loops], values))
        for values in itertools.product(*(range(r.lo, r.hi) for _, r in loops))
    )
    coords = np.array(
        [[_two_d(program, c) for c in access.lane_coordinates(v)] for v in instances],
        dtype=np.int64,
    )
    rows, cols = unknown.rows, unknown.cols
    outside = (coords[..., 0] >= rows) | (coords[..., 1] >= cols)
    if outside.any():
        i, lane = map(int, np.argwhere(outside)[0])
        raise SpecError(
            f"access '{name}' names {tuple(coords[i, lane])} at lane {lane}, "
            f"{instances[i]}: outside the unknown {rows} x {cols} tile, which no "
            "layout can fix",
            adef.pos,
        )
    return SynthAccess(access, coords, instances)


def _two_d(program: Program, coord: tuple[int, ...]) -> tuple[int, int]:
    """(r, c) of a coordinate given per mode or as a CuTe 1-D index."""
    if len(coord) == 2:
        return coord[0], coord[1]
    layout = next(iter(program.spec.unknown_layouts.values()))
    r, c = program.spec.layouts[layout.name].function.index_to_coords(coord[0])
    return r, c


def _requirements(spec: Spec, accesses) -> tuple[Requirement, ...]:
    """Bounds the spec's checks demand: conflict_free, max_ways <= k, wavefronts <= n
    of accesses of the unknown layout (checks expected to be refuted demand nothing,
    and '== k' states a fact of a known layout rather than a wish)."""
    names = {a.name for a in accesses}
    found = []
    for check in spec.checks:
        if check.kind not in ("max_ways", "wavefronts") or check.target not in names:
            continue
        if check.exact or check.expect == "refuted":
            continue
        metric = "ways" if check.kind == "max_ways" else "wavefronts"
        found.append(Requirement(check.target, metric, check.bound, check.text, check.pos.line))
    return tuple(found)
