"""A buffer of a compiled kernel, and the ops that touch it, as a verify spec.

Each allocation becomes one spec in verify's own language, so every existing
check, counterexample and report applies:

* ``dtype`` and ``buffer align A [stages S stage_bytes B]``: A is the alignment
  Triton's linear layout of the encoding requires (``SharedLinearLayout.alignment``:
  16 bytes for swizzled_shared, 128 * swizzle bytes / 16 for nvmma_shared); a
  ``2x128x64`` allocation has S = 2 stages of one 128x64 tile each;
* ``layout B = <the encoding> shape (per-stage shape)`` (`layout_text`) and
  ``check bijective B``;
* per modelled op, ``access opN = <instruction> B(d0, d1) for r in .., warp in ..``
  where each coordinate is the XOR of the register tensor's linear-layout bases
  whose bit is set in ``lane``, ``warp`` and the register group ``r`` (the
  registers left once the vector's own registers are taken out); for
  ldmatrix/stmatrix, ``lane`` is the address lane (0..8 per matrix) and its bits
  select the bases Triton's ``addrToOffset`` gives it, ``r`` the registers that
  index instructions (`verify.notation.triton_lowering.MatrixPlan`); plus, for a
  subslice, ``s_k * extent`` over every position the view could take in the
  buffer; then ``check conflict_free opN``;
* for each op that sees the buffer through another encoding, ``check equivalent``
  of the two layouts.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from verify.model.expr import Range
from verify.notation import triton_lowering as lowering
from verify.notation.triton_access import Access, access_for, coordinate_exprs  # noqa: F401
from verify.spec import direct
from verify.spec.ast import Spec


@dataclass
class BufferSpec:
    """The spec text of one buffer and, per spec line, what it speaks for."""

    name: str
    lines: list[str] = field(default_factory=list)
    origin: dict[int, tuple[str, int, dict[str, str]]] = field(default_factory=dict)
    # .cg copies whose sources are written modulo 128 bytes only (op label -> why):
    # the spec then sets Spec.sources_modulo_128, and bound G answers its .cg copies.
    banks_only: dict[str, str] = field(default_factory=dict)
    # line -> (its text, how `verify.spec.direct` reads it without the parser)
    readers: dict[int, tuple[str, direct.Reader]] = field(default_factory=dict)

    def add(
        self,
        statement: tuple[str, direct.Reader | None],
        where: tuple[str, int] | None = None,
        names: dict[str, str] | None = None,
    ):
        """One line: a `verify.spec.direct` statement (its text and reader)."""
        text, reader = statement
        self.lines.append(text)
        if where is not None:
            self.origin[len(self.lines)] = (where[0], where[1], names or {})
        if reader is not None:
            self.readers[len(self.lines)] = (text, reader)

    @property
    def text(self) -> str:
        return "\n".join(self.lines) + "\n"

    def read(self, file: str) -> Spec:
        """The spec as `verify.spec.parser.parse_text` reads its text."""
        return direct.read(self.lines, self.readers, file)


def layout_text(encoding: str, stage_shape: list[int], offset_bases: list[list[int]]) -> str:
    """The right-hand side of a ``layout`` statement for an encoding (`layout_statement`)."""
    return layout_statement("B", encoding, stage_shape, offset_bases)[0].removeprefix("layout B = ")


def layout_statement(
    name: str, encoding: str, stage_shape: list[int], offset_bases: list[list[int]]
) -> tuple[str, direct.Reader | None]:
    """``layout NAME = ...`` for an encoding: Triton's own notation with its tile,
    except on a rank-1 tile, which verify's Triton notation does not take: there
    Triton's linear layout (offset bit k -> coordinate) is written as the CuTe
    layout it is, ``N:1`` when bit k is coordinate 2^k (Triton's swizzled_shared
    is the identity in one dimension)."""
    if len(stage_shape) > 1:
        return direct.encoded_layout(name, encoding, stage_shape)
    if [b[0] for b in offset_bases] != [1 << k for k in range(len(offset_bases))]:
        raise ValueError(f"a rank-1 {encoding} that is not the identity")
    return direct.cute_layout(name, stage_shape[0], 1)


def header(
    buffer: BufferSpec,
    bits: int,
    align: int,
    stages: int,
    stage_bytes: int,
    layout: tuple[str, direct.Reader | None],
    where: tuple[str, int],
    label: str,
):
    """The buffer's statements; `layout` is its ``layout B = ...`` (`layout_statement`)."""
    buffer.add((f"# verify ttgir: buffer {label}", None))
    buffer.add(direct.dtype(lowering.VERIFY_DTYPE[bits]))
    buffer.add(direct.buffer_align(align, stages, stage_bytes))
    buffer.add(layout, where, {"B": label})
    buffer.add(direct.check_bijective("B"), where, {"B": label})


def add_access(buffer: BufferSpec, name: str, access: Access, layout: str = "B"):
    """The op's access through `layout`: the buffer's own ``B``, or the view it
    sees the buffer through (a reinterpret: another encoding of the same bytes)."""
    loops = [(v, Range(0, n)) for v, n in access.loops]
    source = None
    names = {name: access.label}
    if access.source:
        # ``G(address)``, as verify.ttgir.module's _add_source writes it
        global_layout, address = access.source.removesuffix(")").split("(", 1)
        source = (global_layout, [address])
        names[global_layout] = "global"
    buffer.add(
        direct.written_access(name, access.instruction, layout, access.coords, source, loops),
        access.where,
        names,
    )
    buffer.add(direct.check_conflict_free(name), access.where, names)


def add_equivalence(
    buffer: BufferSpec,
    name: str,
    layout: tuple[str, direct.Reader | None],
    where: tuple[str, int],
    buffer_label: str,
    op_label: str,
):
    """``layout NAME = ...`` (`layout`, the op's view) and its equivalence to B."""
    names = {"B": buffer_label, name: f"{buffer_label} as {op_label} sees it"}
    buffer.add(layout, where, names)
    buffer.add(direct.check_equivalent("B", name), where, names)


def add_source_layout(buffer: BufferSpec, name: str, size: int, where: tuple[str, int]):
    """``layout NAME = SIZE:1``: a copy's global side, which holds every address."""
    buffer.add(direct.cute_layout(name, size, 1), where, {name: "global"})


# -- a cp.async's global side ----------------------------------------------------------

BANK_SPAN = 128  # bytes: a global address's bank is (address / 4) mod 32


def source_address(
    copy: dict, coords: list[str], shape: list[int], elem_bytes: int
) -> tuple[str, int, list[tuple[str, int]]]:
    """(address in elements, the layout size that holds it, the loops of its
    parameters) of a copy's traced pointer (`verify.ttgir.pointers`), each term
    reduced modulo 128 bytes: only the address modulo 128 bytes decides a bank.

    A runtime parameter p with ``tt.divisibility`` d is ``d * t`` for a new loop
    variable ``p_divD`` over every residue that matters (0 .. 128 bytes / gcd);
    so the verdict holds for every value the hints admit. Raises ValueError
    (the reason) for what this cannot express: a product of two parameters, or
    offsets that wrap (``arith.remsi``) by an amount that is not a multiple of
    128 bytes, whose banks then depend on the modulus."""
    period = BANK_SPAN // elem_bytes
    for g in copy["wraps"]:
        if (g * elem_bytes) % BANK_SPAN:
            raise ValueError(
                f"the offsets wrap (arith.remsi) by multiples of {g * elem_bytes} bytes "
                "only, so the source banks depend on the runtime modulus"
            )
    terms: list[str] = []
    loops: dict[str, int] = {}
    size = 0
    for dim, monos in sorted(copy["dims"].items(), key=lambda kv: int(kv[0])):
        for k, params in monos:
            if len(params) > 1:
                raise ValueError(f"a stride that is a product of parameters ({' * '.join(params)})")
            term, reach = _term(coords[int(dim)], k, params, copy["params"], period, loops)
            if term:
                terms.append(term)
                size += reach * (shape[int(dim)] - 1)
    return (" + ".join(terms) or "0"), size + 1, list(loops.items())


def _term(coord: str, k: int, params: list, hints: dict, period: int, loops: dict):
    """One ``k * [p] * coordinate`` term modulo the period (elements), and the
    most it adds per unit of the coordinate; ("", 0) when it is 0 modulo it."""
    if not params:
        factor = k % period
        return (f"({coord}) * {factor}", factor) if factor else ("", 0)
    d = hints[params[0]]
    factor = (k * d) % period
    if factor == 0:
        return "", 0
    var, top = f"{params[0]}_div{d}", period // _gcd(period, d)
    loops[var] = top
    return f"({coord}) * {factor} * {var}", factor * (top - 1)


class NotExact(ValueError):
    """A copy's global lines cannot be written exactly; the message says why."""


COPY_BASE_ALIGN = 16  # bytes: what verify's default 'global align' quantifies the base over


def exact_source_address(
    copy: dict, coords: list[str], shape: list[int], elem_bytes: int
) -> tuple[str, int, list[tuple[str, int]]]:
    """(address in elements, layout size, loops) of a copy's traced pointer, exact
    up to its uniform base, for rule S, which reads the 128-byte global line of
    each source and not only its bank; raises `NotExact` with the reason where
    the trace cannot give that (`source_address` then gives banks only).

    Constant coefficients are kept whole. At most one runtime stride may vary
    over the tensor: s = +-d * a elements, d its tt.divisibility. Why a finite
    range of a is every stride (bytes, S = elem_bytes * s; R = the most the
    constant terms can differ between two sources; lanes l of one instruction
    read base + S * u_l + v_l, 0 <= u_l < n the stride's coordinate):

    * rule S's cost is a function of each source's address modulo 128 and of
      which sources share a 128-byte line (bank.cg_cost groups by line and by
      16-byte chunk in the line); both are unchanged when every source moves by
      a multiple of 128 bytes, so the base counts modulo 128 (the spec's
      'global align', every multiple of 16 bytes: `base_residues_known`);
    * two sources in one line differ by at most 127 bytes. If S >= R + 128, two
      lanes with u_l != u_m differ by at least S - R >= 128: never one line.
      Lanes with u_l = u_m differ by v_l - v_m, and whether they share a line
      and where each lies in it depends on (base + S * u_l) mod 128 only. So
      every S >= R + 128 costs what S mod 128 costs at each base, and
      ``a in 0..ceil((R + 128) / step) + 128 / gcd(step, 128)`` (step = d *
      elem_bytes) holds every S below R + 128 and then a run of consecutive
      multiples of step that reaches every residue S can have modulo 128;
    * a negative stride -S: u -> n - 1 - u = u XOR (n - 1) (n a power of two)
      gives base' + S * u', base' = base - S * (n - 1) another 16-byte aligned
      base, so the coordinate XOR (n - 1) * neg, neg in 0..2, covers it.

    Every value in these ranges is a stride and base the hints allow, so a
    figure found here is one the hardware can be asked to do; and every stride
    and base falls in one of them, so a bound proved holds for all."""
    if copy["wraps"]:
        raise NotExact(
            "the offsets wrap (arith.remsi by a runtime value), so which rows share "
            "a 128-byte global line depends on where the wrap falls"
        )
    constant: list[tuple[int, int]] = []  # (dimension, coefficient)
    runtime: list[tuple[int, int, list[str]]] = []
    for dim, monos in sorted(copy["dims"].items(), key=lambda kv: int(kv[0])):
        for k, params in monos:
            if params:
                runtime.append((int(dim), k, params))
            else:
                constant.append((int(dim), k))
    if len(runtime) > 1:
        raise NotExact("more than one runtime stride varies over the tensor")
    if any(k < 0 for _, k in constant) or any(k < 0 for _, k, _ in runtime):
        raise NotExact("a negative constant coefficient")
    terms = [f"({coords[d]}) * {k}" for d, k in constant if k]
    spread = sum(k * (shape[d] - 1) for d, k in constant)  # elements
    loops: list[tuple[str, int]] = []
    size = spread
    if runtime:
        dim, k, params = runtime[0]
        term, reach, loops = _stride_term(
            coords[dim], shape[dim], k, params, copy, spread * elem_bytes, elem_bytes
        )
        terms.append(term)
        size += reach
    return (" + ".join(terms) or "0"), size + 1, loops


def _stride_term(
    coord: str, extent: int, k: int, params: list, copy: dict, spread: int, elem_bytes: int
):
    """(term, the most it adds, its loops) of the one runtime stride k * p:
    p = +-d * a, a over every value below the threshold (the constant spread
    plus 128 bytes) and one period of residues above (`exact_source_address`)."""
    if len(params) > 1:
        raise NotExact(f"a stride that is a product of parameters ({' * '.join(params)})")
    hint = copy["params"][params[0]]
    step = k * hint  # elements per unit of a
    step_bytes = step * elem_bytes
    below = -(-(spread + BANK_SPAN) // step_bytes)
    count = below + BANK_SPAN // _gcd(BANK_SPAN, step_bytes)
    if extent & (extent - 1):
        raise NotExact(f"the stride's dimension has {extent} elements, not a power of two")
    var, sign, top = f"{params[0]}_div{hint}", f"{params[0]}_neg", extent - 1
    mirrored = f"({coord}) ^ ({top} * {sign})" if top else f"({coord})"
    return f"({mirrored}) * {step} * {var}", step * (count - 1) * top, [(var, count), (sign, 2)]


def base_residues_known(copy: dict, copy_bytes: int) -> str | None:
    """None when the copy's uniform base may be every multiple of `copy_bytes`
    modulo 128 (what 'global align 16' quantifies over), else why not. The base
    is the pointer argument plus uniform offsets (program ids, loop steps); the
    copy's own alignment makes it a multiple of `copy_bytes`. An argument hinted
    at most that divisible (Triton's launcher hints 16) moves it through every
    such residue; a larger hint leaves the residue to offsets not traced."""
    base = copy.get("base")
    if base is None:
        return "its pointer is not built from one pointer argument of the kernel"
    hint = base[1] or 1
    if hint > max(copy_bytes, COPY_BASE_ALIGN):
        return (
            f"its pointer argument {base[0]} has tt.divisibility {hint}, so the base "
            "modulo 128 bytes depends on offsets not traced"
        )
    return None


def _gcd(a: int, b: int) -> int:
    while b:
        a, b = b, a % b
    return a
