"""Shared-memory instructions as access groups: who supplies addresses, how many
bytes each address covers, and which lanes are served together (phases).

Phase model (see README, "The bank model"): accesses of at most 32 bits are served
for all 32 lanes at once, 64-bit ones per half-warp, 128-bit ones per
quarter-warp, and ldmatrix/stmatrix one 8x8 matrix (8 row addresses of 16 bytes)
per phase. Whether the model is exact or only an upper bound on the hardware
comes from our H200 measurements (docs/hardware.md, backed by
benchmarks/results/gpu_campaign.md); where the H200 departs from it, ``verify.model.bank``
has the measured rules (docs/hardware.md, benchmarks/results/hw_rules.md): rule L
for 64/128-bit loads, rule C for ``cp.async.ca`` and bound G for ``cp.async.cg``.

``cp.async`` names its copy size as a qualifier (PTX gives it as an operand):
``cp.async.ca.shared.global.16``, ``cp.async.ca.16``, ``cp.async.cg.16``.

Names are accepted in full PTX spelling, short forms and CuTe copy-atom names:
``ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16``, ``ldmatrix.x4.trans``,
``SM75_U16x8_LDSM_T``, ``ld.shared.v4.b32``, ``ld.shared.v4``, ``st.shared.b64``.
"""

from __future__ import annotations

from dataclasses import dataclass

from verify.errors import SpecError
from verify.model.dtypes import PTX_TYPE_BITS

WARP = 32


# CuTe copy atoms: name -> (PTX family, matrices, trans).
_CUTE_MATRIX_ATOMS = {
    f"SM{sm}_U{u}x{n}_{op}_{t}": (fam, m, t == "T")
    for sm, op, fam in ((75, "LDSM", "ldmatrix"), (90, "STSM", "stmatrix"))
    for t, shapes in (
        ("N", ((32, 1, 1), (32, 2, 2), (32, 4, 4))),
        ("T", ((16, 2, 1), (16, 4, 2), (16, 8, 4))),
    )
    for u, n, m in shapes
}

_IGNORED_QUALIFIERS = {
    "sync",
    "aligned",
    "m8n8",
    "shared",
    "shared::cta",
    "volatile",
    "relaxed",
    "weak",
    "cta",
}


@dataclass(frozen=True)
class Instruction:
    """One warp-wide shared-memory instruction, as the bank model sees it."""

    name: str  # canonical short spelling, e.g. "ldmatrix.x4.trans"
    family: str  # "ld", "st", "ldmatrix" or "stmatrix"
    bytes_per_address: int  # bytes covered by one lane's address
    address_lanes: int  # lanes 0 .. address_lanes-1 supply addresses
    phase_lanes: int  # lanes served together in one phase
    trans: bool = False
    cache: str = ""  # cp.async's cache operator: "ca" or "cg"

    @property
    def is_copy(self) -> bool:
        """cp.async: writes shared memory from global memory; its cost needs the sources."""
        return self.family == "cp.async"

    @property
    def merges_phases(self) -> bool:
        """64/128-bit loads, whose phase pairs the H200 merges in regular cases (rule L)."""
        return self.family == "ld" and self.bytes_per_address > 4

    @property
    def is_store(self) -> bool:
        """Writes shared memory from registers (cp.async writes it from global memory)."""
        return self.family in ("st", "stmatrix")

    @property
    def phases(self) -> list[range]:
        return [
            range(s, s + self.phase_lanes) for s in range(0, self.address_lanes, self.phase_lanes)
        ]

    @property
    def ideal_wavefronts(self) -> int:
        return len(self.phases)

    @property
    def words_per_address(self) -> int:
        return max(1, self.bytes_per_address // 4)

    @property
    def exact(self) -> bool:
        """The phase model alone (`verify.model.bank.bank_cost`) gives the H200's figure:
        false for 64/128-bit loads, which the H200 sometimes serves in fewer
        wavefronts (rule L), and for cp.async, whose cost the sources decide."""
        return not self.merges_phases and not self.is_copy

    @property
    def hardware_exact(self) -> bool:
        """The measured rules (`verify.model.bank.hardware_wavefronts`, `cp_async_cost`) give
        the H200's figure from the addresses alone: everything except cp.async.cg,
        exact by rule S from whole sources and bound G from sources known modulo 128
        bytes (`CopyCost.exact` says which)."""
        return self.cache != "cg"

    @property
    def fidelity(self) -> str:
        """The label of verify's figures: specs and TTGIR checks (both engines) and
        `verify wavefronts` apply the measured rules, rule L, rule C, and for .cg rule S
        (`CopyCost.fidelity`, `verify.engines.cp_async.fidelity`) or bound G, labelled here."""
        if self.cache == "cg":
            return (
                "upper bound (bound G: one wavefront per distinct 16-byte destination; "
                "rule S, exact, needs the sources' 128-byte global lines)"
            )
        if self.is_copy:
            return "exact (rule C: source-to-destination bank edges, matches H200 measurements)"
        if self.merges_phases:
            return "exact (rule L: phase pairs merge, matches H200 measurements)"
        return "exact (matches H200 measurements)"


def _vector_access(family: str, quals: list[str], text: str) -> Instruction:
    vec, elem_bits = 1, 32
    for q in quals:
        if q in ("v2", "v4", "v8"):
            vec = int(q[1:])
        elif q in PTX_TYPE_BITS:
            elem_bits = PTX_TYPE_BITS[q]
        elif q not in _IGNORED_QUALIFIERS:
            raise SpecError(f"instruction '{text}': unknown qualifier '.{q}'")
    bits = vec * elem_bits
    if bits not in (8, 16, 32, 64, 128):
        raise SpecError(
            f"instruction '{text}': expected 8, 16, 32, 64 or 128 bits per lane, found {bits}"
        )
    phase = {64: 16, 128: 8}.get(bits, WARP)
    short = f"{family}.shared" + (f".v{vec}" if vec > 1 else "") + f".b{elem_bits}"
    return Instruction(short, family, bits // 8, WARP, phase)


def _matrix_access(family: str, quals: list[str], text: str) -> Instruction:
    count, trans = None, False
    for q in quals:
        if q in ("x1", "x2", "x4"):
            count = int(q[1:])
        elif q == "trans":
            trans = True
        elif q not in _IGNORED_QUALIFIERS and q != "b16":
            raise SpecError(
                f"instruction '{text}': unknown qualifier '.{q}' (only .m8n8 with .b16 is modelled)"
            )
    if count is None:
        raise SpecError(f"instruction '{text}': expected .x1, .x2 or .x4")
    return _matrix(family, count, trans)


def _matrix(family: str, count: int, trans: bool) -> Instruction:
    name = f"{family}.x{count}" + (".trans" if trans else "")
    return Instruction(name, family, 16, 8 * count, 8, trans)


# cp.async: copy size -> lanes per phase (the phase model's grouping, rule C's phases).
CP_ASYNC_PHASE_LANES = {4: 32, 8: 16, 16: 8}
# PTX qualifiers that do not change the shared-memory side: the state spaces and
# the L2 hints (measured with none; an L2 hint acts on the global side).
_COPY_IGNORED = {
    "shared",
    "shared::cta",
    "global",
    "L2::64B",
    "L2::128B",
    "L2::256B",
    "L2::cache_hint",
}


def _copy(quals: list[str], text: str) -> Instruction:
    cache, size = "", None
    for q in quals:
        if q in ("ca", "cg"):
            cache = q
        elif q.isdigit():
            size = int(q)
        elif q not in _COPY_IGNORED:
            raise SpecError(f"instruction '{text}': unknown qualifier '.{q}'")
    if not cache:
        raise SpecError(
            f"instruction '{text}': expected the cache operator .ca or .cg "
            "(cp.async.ca.shared.global.16)"
        )
    if size not in CP_ASYNC_PHASE_LANES or (cache == "cg" and size != 16):
        raise SpecError(
            f"instruction '{text}': expected the copy size as a qualifier, "
            f"{'.16 (.cg copies 16 bytes)' if cache == 'cg' else '.4, .8 or .16'}"
            f", found {'.' + str(size) if size else 'none'}"
        )
    return Instruction(
        f"cp.async.{cache}.{size}", "cp.async", size, WARP, CP_ASYNC_PHASE_LANES[size], cache=cache
    )


def ptx_opcode(instr: Instruction) -> str:
    """The PTX instruction `instr` stands for, in full spelling (PTX ISA 8.x: "Data
    Movement and Conversion Instructions: ld", "...: st", "...: cp.async"; "Warp
    Level Matrix Multiply-Accumulate Instructions": "Warp-level matrix load
    instruction: ldmatrix", "Warp-level matrix store instruction: stmatrix").
    ld/st keep their canonical short form, which is PTX (``ld.shared.v4.b32``);
    ldmatrix/stmatrix take the qualifiers PTX requires
    (``ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16``); cp.async's copy size is an
    operand in PTX, so it is named beside the opcode
    (``cp.async.cg.shared.global [16 bytes]``)."""
    if instr.family in ("ldmatrix", "stmatrix"):
        trans = ".trans" if instr.trans else ""
        count = instr.address_lanes // 8
        return f"{instr.family}.sync.aligned.m8n8.x{count}{trans}.shared.b16"
    if instr.is_copy:
        return f"cp.async.{instr.cache}.shared.global [{instr.bytes_per_address} bytes]"
    return instr.name


def parse_instruction(text: str) -> Instruction:
    """Instruction named `text` (PTX, short form, or CuTe copy atom)."""
    if text in _CUTE_MATRIX_ATOMS:
        return _matrix(*_CUTE_MATRIX_ATOMS[text])
    head, *quals = text.split(".")
    if head == "cp" and quals[:1] == ["async"]:
        return _copy(quals[1:], text)
    if head in ("ld", "st"):
        if "shared" not in quals and "shared::cta" not in quals:
            raise SpecError(
                f"instruction '{text}': expected a shared-memory access ('{head}.shared...')"
            )
        return _vector_access(head, quals, text)
    if head in ("ldmatrix", "stmatrix"):
        return _matrix_access(head, quals, text)
    raise SpecError(
        f"unknown instruction '{text}': expected ld.shared*, st.shared*, "
        "ldmatrix*, stmatrix*, cp.async.{ca,cg}.SIZE or a CuTe atom such as "
        "SM75_U32x4_LDSM_N"
    )
