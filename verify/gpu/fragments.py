"""Which shared-memory bytes reach which register of which lane (and back, for stores).

Address providers are not data receivers. For ``ldmatrix.m8n8.b16`` (PTX ISA,
"Warp-level matrix load instruction"), lanes 8m..8m+7 supply the 16-byte rows of
matrix m, and matrix m lands in register d_m of ALL 32 lanes: lane t receives
row t/4, elements 2(t%4) and 2(t%4)+1 (low and high half). With ``.trans`` lane t
receives column t/4 of rows 2(t%4) and 2(t%4)+1. ``stmatrix`` is the inverse.
Plain ``ld/st.shared`` move bytes addr .. addr+size-1 of the lane's own address
to/from its registers 0..3 in order; ``cp.async`` copies global byte 16*lane+k to
shared byte addr+k (the probe's source pattern).

`receivers` answers "register byte -> shared byte" for loads; `writers` answers
"shared byte -> register bytes that may write it" for stores (several lanes may
store to one byte; the hardware keeps one of them).
"""

from __future__ import annotations

from collections import defaultdict

from verify.model.instructions import Instruction

# A register byte: (lane, register index, byte index within the 32-bit register).
RegByte = tuple[int, int, int]


def _matrix_bytes(instr: Instruction, addresses: list[int]):
    """Yield (register byte, shared byte) pairs of ldmatrix/stmatrix."""
    for m in range(instr.address_lanes // 8):
        rows = addresses[8 * m : 8 * m + 8]
        for t in range(32):
            g, k = divmod(t, 4)
            for half in range(2):
                if instr.trans:
                    start = rows[2 * k + half] + 2 * g
                else:
                    start = rows[g] + 4 * k + 2 * half
                for b in range(2):
                    yield (t, m, 2 * half + b), start + b


def _vector_bytes(instr: Instruction, addresses: list[int]):
    for lane, a in enumerate(addresses):
        for i in range(instr.bytes_per_address):
            yield (lane, i // 4, i % 4), a + i


def pairs(instr: Instruction, addresses: list[int]):
    """All (register byte, shared byte) pairs the instruction moves."""
    if instr.family in ("ldmatrix", "stmatrix"):
        return list(_matrix_bytes(instr, addresses))
    return list(_vector_bytes(instr, addresses))


def receivers(instr: Instruction, addresses: list[int]) -> dict[RegByte, int]:
    """Load: which shared byte each register byte receives."""
    return dict(pairs(instr, addresses))


def writers(instr: Instruction, addresses: list[int]) -> dict[int, list[RegByte]]:
    """Store: for each shared byte written, every register byte that may write it."""
    out: dict[int, list[RegByte]] = defaultdict(list)
    for reg_byte, shared in pairs(instr, addresses):
        out[shared].append(reg_byte)
    return dict(out)


def register_tag_byte(reg_byte: RegByte) -> int:
    """The byte the probe pre-loads into a register byte (see probe.cu, reg_tag)."""
    lane, reg, byte = reg_byte
    t = 8 * lane + 2 * reg
    value = (t + 1) | ((t + 2) << 16)
    return (value >> (8 * byte)) & 0xFF
