"""A Triton op's shared-memory access as spec text: each coordinate an XOR of the
register tensor's linear-layout bases whose bit is set in ``lane``, ``warp`` and the
register group ``r``, for the instruction Triton's lowering chose
(`verify.notation.triton_lowering`). Used by thread-map accesses in specs
(`verify.notation.threads`) and by the TTGIR front end (`verify.ttgir.specgen`).
"""

from __future__ import annotations

from dataclasses import dataclass

from verify.notation.triton_lowering import Cvt, Lowering, MatrixPlan


@dataclass
class Access:
    """One modelled op, ready to be written as a spec line."""

    label: str  # "local_load %a_79"
    where: tuple[str, int]  # Python file and line
    instruction: str
    coords: list[str]
    loops: list[tuple[str, int]]
    source: str = ""  # a cp.async's global side: ``G(address)``

    @property
    def instructions_per_warp(self) -> int:
        """One instruction per value of ``r`` (warps and subslice positions are
        other executions, not more instructions)."""
        return dict(self.loops).get("r", 1)


def _only_in(basis: tuple[int, ...], dim: int) -> bool:
    return all(v == 0 for k, v in enumerate(basis) if k != dim)


def _bit_terms(var: str, bases: list[tuple[int, ...]], dim: int) -> list[str]:
    """Terms whose XOR is coordinate `dim` over the bits of `var`. A run of bits
    i..j-1 whose bases are b, 2b, 4b, ... in this dimension alone reads as one
    term ``((var >> i) & mask) * b`` (XOR of disjoint bits is their sum); any
    other bit is ``((var >> i) & 1) * b``."""
    terms, i = [], 0
    while i < len(bases):
        b = bases[i][dim]
        if b == 0:
            i += 1
            continue
        j = i + 1
        if _only_in(bases[i], dim):
            while j < len(bases) and _only_in(bases[j], dim) and bases[j][dim] == b << (j - i):
                j += 1
        shifted = var if i == 0 else f"({var} >> {i})"
        factor = "" if b == 1 else f" * {b}"
        terms.append(f"({shifted} & {(1 << (j - i)) - 1}){factor}")
        i = j
    return terms


def coordinate_exprs(
    variables: list[tuple[str, list[tuple[int, ...]]]], rank: int, offsets: list[str]
) -> list[str]:
    """Each coordinate as XOR of its bit terms, plus a subslice offset if any."""
    out = []
    for dim in range(rank):
        terms = [t for var, bases in variables for t in _bit_terms(var, bases, dim)]
        expr = " ^ ".join(terms) if terms else "0"
        if offsets[dim]:
            expr = f"({expr}) + {offsets[dim]}" if terms else offsets[dim]
        out.append(expr)
    return out


def _matrix_variables(tensor: dict, cvt: Cvt, plan: MatrixPlan):
    """(lane bases, instruction-register bases) of an ldmatrix/stmatrix op: address
    lane bit k names the coordinate of the input basis ``plan.address_bits[k]``
    (the first element of the row that lane supplies: the row tile's own bits are
    the row's elements, never set here)."""
    lanes = [tuple(b) for b in tensor["lane"]]
    pick = {"lane": lambda i: lanes[i], "register": lambda i: cvt.register_coords[i]}
    address = [pick[kind](i) for kind, i in plan.address_bits]
    return address, [cvt.register_coords[i] for i in plan.instruction_registers]


def _block_starts(cvt: Cvt, low: Lowering) -> list[tuple[int, ...]]:
    """The bases of the register groups of an ld/st.shared vector, each moved to
    the first element of its aligned block: a group basis whose offset has low
    bits below the vector (``66`` for a vector of 4) lands inside its block, at
    the element those bits name, so its block starts at the coordinate XORed
    with that element's (`triton_lowering.largest_vectorisation`)."""
    out = []
    for i, coord in enumerate(cvt.register_coords):
        if i in low.vector_registers:
            continue
        inside = cvt.register[i] & (low.elements - 1)
        moved = list(coord)
        for j, reg in enumerate(low.vector_registers):
            if inside >> j & 1:
                moved = [a ^ b for a, b in zip(moved, cvt.register_coords[reg])]
        out.append(tuple(moved))
    return out


def access_for(
    label: str,
    where: tuple[str, int],
    tensor: dict,
    cvt: Cvt,
    low: Lowering,
    view_shape: list[int],
    stage_shape: list[int],
) -> Access:
    """The spec access of one op whose instruction is decided (`low`)."""
    assert low.instruction is not None, f"{label}: only a modelled op has an access"
    if low.matrix is not None:
        lanes, group = _matrix_variables(tensor, cvt, low.matrix)
    else:
        lanes = [tuple(b) for b in tensor["lane"]]
        group = _block_starts(cvt, low)
    warps = [tuple(b) for b in tensor["warp"]]
    loops, variables = [], [("lane", lanes)]
    if group:
        loops.append(("r", 1 << len(group)))
        variables.append(("r", group))
    if warps:
        loops.append(("warp", 1 << len(warps)))
        variables.append(("warp", warps))
    offsets = []
    for k, (view, whole) in enumerate(zip(view_shape, stage_shape)):
        if view < whole:
            loops.append((f"s{k}", whole // view))
            offsets.append(f"{view} * s{k}")
        else:
            offsets.append("")
    coords = coordinate_exprs(variables, len(view_shape), offsets)
    return Access(label, where, low.instruction, coords, loops)
