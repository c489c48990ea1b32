"""Triton's linear shared encodings: ``#ttg.shared_linear`` and ``#ttg.padded_shared``.

Overview
--------
Both say where each tensor element lives by a *linear layout*: one basis per
bit of the element offset, each basis a coordinate, and the coordinate of offset
o the XOR of the bases of o's set bits. verify needs the other direction,
coordinate -> offset, so the map is inverted over GF(2) and written as an
expression: for each coordinate bit, the offset bits it sets, XORed together.
``padded_shared`` then inserts padding: after every `interval` elements,
`padding` more (summed over its pairs), so offset o is stored at
``o + sum (o / interval) * padding``. Its linear part is given either by offset
bases, or as an identity (``{order = [...], shape = [...]}``: the dimensions
in `order` laid out one after another, as Gluon's
``PaddedSharedLayout.with_identity_for`` builds them).

As printed by Triton 3.9 (``str`` of a memdesc type)::

    #ttg.shared_linear<{offset = [[0, 1], [0, 2], [1, 0], [2, 0]]}, alignment = 16>
    #ttg.padded_shared<[32:+8] {order = [1, 0], shape = [64, 64]}>
    #ttg.padded_shared<[8:+1, 16:+4] {offset = [[0, 1], [0, 2], [2, 0], [4, 0], [1, 0]], block = []}>

Worked example
--------------
``padded_shared<[32:+8] {order = [1, 0], shape = [64, 64]}>`` fp16: element
(r, c) has linear offset o = 64 r + c and is stored at o + 8 * (o / 32): row 1
starts at 64 + 16 = 80 elements (160 bytes), so consecutive rows start 32 bytes
apart in the banks.

The math
--------
With n = log2(size) offset bits and the coordinate bits concatenated (d0's
first), the bases are the columns of an n x n matrix M over GF(2), coordinate =
M o. It must be invertible (every element stored once, nothing else): then
o = M^-1 coordinate, and column j of M^-1 is the offset mask of coordinate bit
j. The `block` bases (CTAs of a cluster) must be empty: verify models one CTA.
`alignment` says how Triton aligns the allocation; offsets are relative to the
buffer, so it places nothing (the spec's ``buffer align`` is the alignment the
checks assume).
"""  # noqa: E501 -- the padded_shared example above is quoted whole, as Triton prints it

from __future__ import annotations

from typing import TypeGuard

from verify.errors import Pos, SpecError
from verify.model.expr import BinOp, Const, Expr, Var

FIELDS = {
    "padded_shared": ("intervals", "order", "shape", "offset", "block"),
    "shared_linear": ("offset", "block", "alignment"),
}


def formula(kind: str, fields: dict, shape: tuple[int, ...], pos: Pos) -> Expr:
    """Element offset of coordinates d0, d1, ... under the encoding."""
    _no_blocks(kind, fields, pos)
    if kind == "shared_linear":
        _power_of_two(fields.get("alignment", 16), "shared_linear alignment", pos)
        return linear_offset(_bases(kind, fields, shape, pos), shape, kind, pos)
    pairs = fields["intervals"]
    if not pairs or len({i for i, _ in pairs}) != len(pairs):
        raise SpecError(f"padded_shared: expected distinct intervals, found {pairs}", pos)
    for interval, padding in pairs:
        _power_of_two(interval, "padded_shared interval", pos)
        _power_of_two(padding, "padded_shared padding", pos)
    bases = (
        identity_bases(fields, shape, pos)
        if "order" in fields or "shape" in fields
        else _bases(kind, fields, shape, pos)
    )
    return padded(linear_offset(bases, shape, kind, pos), pairs)


def padded(offset: Expr, pairs: list[tuple[int, int]]) -> Expr:
    """offset + sum (offset / interval) * padding."""
    total = offset
    for interval, padding in pairs:
        total = BinOp("+", total, BinOp("*", BinOp("/", offset, Const(interval)), Const(padding)))
    return total


def identity_bases(fields: dict, shape: tuple[int, ...], pos: Pos) -> list[list[int]]:
    """``{order = [...], shape = [...]}``: the bases of Gluon's with_identity_for."""
    order, declared = fields.get("order"), fields.get("shape")
    if not _int_list(order) or sorted(order) != list(range(len(shape))):
        raise SpecError(
            f"padded_shared: order {order} is not a permutation of the "
            f"{len(shape)} dimensions of shape {list(shape)}",
            pos,
        )
    if declared != list(shape):
        raise SpecError(
            f"padded_shared: the encoding's shape {declared} is not the tensor's "
            f"{list(shape)} (a view of a larger allocation is not modelled)",
            pos,
        )
    return [
        [1 << bit if i == dim else 0 for i in range(len(shape))]
        for dim in order
        for bit in range(shape[dim].bit_length() - 1)
    ]


def linear_offset(bases: list[list[int]], shape: tuple[int, ...], kind: str, pos: Pos) -> Expr:
    """The inverse of the linear map, as an XOR of offset masks per coordinate bit."""
    widths = [n.bit_length() - 1 for n in shape]
    masks = _inverse([_coordinate_bits(b, widths) for b in bases], sum(widths), kind, pos)
    terms, j = [], 0
    for dim, width in enumerate(widths):
        for bit in range(width):
            picked = BinOp(
                "&", BinOp(">>", Var(f"d{dim}"), Const(bit)) if bit else Var(f"d{dim}"), Const(1)
            )
            terms.append(BinOp("*", picked, Const(masks[j])))
            j += 1
    total = terms[0] if terms else Const(0)
    for term in terms[1:]:
        total = BinOp("^", total, term)
    return total


def _coordinate_bits(basis: list[int], widths: list[int]) -> int:
    """A coordinate as one bit vector, d0's bits lowest."""
    value, shift = 0, 0
    for component, width in zip(basis, widths):
        value |= component << shift
        shift += width
    return value


def _inverse(columns: list[int], n: int, kind: str, pos: Pos) -> list[int]:
    """Columns of M^-1 (as offset masks), M given by its columns; refused unless
    M is square and invertible over GF(2)."""
    if len(columns) != n:
        raise SpecError(
            f"{kind}: {len(columns)} offset bases for a tensor of 2^{n} elements: "
            f"expected {n}, one per offset bit",
            pos,
        )
    # Rows of [M | I], reduced to [I | M^-1]: row i says which offset bits make bit i.
    rows = [(sum((c >> i & 1) << k for k, c in enumerate(columns)), 1 << i) for i in range(n)]
    for col in range(n):
        pivot = next((r for r in range(col, n) if rows[r][0] >> col & 1), None)
        if pivot is None:
            raise SpecError(
                f"{kind}: the offset bases do not reach every element of the "
                f"tensor once (they are not invertible): expected a bijection",
                pos,
            )
        rows[col], rows[pivot] = rows[pivot], rows[col]
        for r in range(n):
            if r != col and rows[r][0] >> col & 1:
                rows[r] = (rows[r][0] ^ rows[col][0], rows[r][1] ^ rows[col][1])
    # rows[k][1] is offset bit k's row of M^-1; column j of M^-1 is the mask of input bit j.
    return [sum((rows[k][1] >> j & 1) << k for k in range(n)) for j in range(n)]


def _bases(kind: str, fields: dict, shape: tuple[int, ...], pos: Pos) -> list[list[int]]:
    bases = fields.get("offset")
    if not isinstance(bases, list) or not all(_int_list(b) and len(b) == len(shape) for b in bases):
        raise SpecError(
            f"{kind}: expected 'offset = [[...], ...]', one coordinate of "
            f"{len(shape)} integers per offset bit, found {bases}",
            pos,
        )
    for basis in bases:
        if any(c < 0 or c >= n for c, n in zip(basis, shape)):
            raise SpecError(
                f"{kind}: offset basis {basis} lies outside the tensor's shape {list(shape)}", pos
            )
    return bases


def _no_blocks(kind: str, fields: dict, pos: Pos):
    if fields.get("block", []) != []:
        raise SpecError(
            f"{kind}: block = {fields['block']} splits the tensor over CTAs; "
            "expected [] (verify models one CTA's shared memory)",
            pos,
        )


def _int_list(value: object) -> TypeGuard[list[int]]:
    return isinstance(value, list) and all(type(v) is int for v in value)


def _power_of_two(value, what: str, pos: Pos):
    if type(value) is not int or value < 1 or value & (value - 1):
        raise SpecError(f"{what}: expected a power of two, found {value}", pos)
