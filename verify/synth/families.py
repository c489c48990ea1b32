"""The layout families of `verify synth`, listed member by member.

Overview
--------
Every member's offset table is built with numpy and scored
(`verify.synth.cost`); the table of all members is then the certificate that
none does better. ``pad`` and ``nvmma`` are searched this way (they are tiny);
the others are searched by the solver (`verify.synth.params`) on power-of-two
tiles, and listed here only on other tiles and as the cross-check of the
solver (`tests/synth/test_synth.py`: the same optimum both ways on every catalog
problem, and on two for ``pad+sw``).

* ``sw``: CuTe ``Sw<B,M,S> o (R,C):(C,1)`` (row-major) and ``o (R,C):(1,R)``
  (column-major), every B, M and S (either sign) whose bits stay inside the tile.
* ``tile``: ``tile_to_shape(Sw<B,M,S> o atom, (R, C))`` for every power-of-two
  atom, row- or column-major, and every swizzle inside the atom's bits.
* ``triton``: ``#ttg.swizzled_shared<{vec, perPhase, maxPhase, order}>`` with
  powers of two, vec * maxPhase <= the contiguous extent, both orders.
* ``nvmma``: ``#ttg.nvmma_shared<{swizzlingByteWidth, transposed, elementBitWidth}>``,
  the TMA / wgmma modes: 32-, 64- and 128-byte swizzles, either dimension
  contiguous (six members at most: listed, the table is the proof).
* ``pad``: ``(R,C):(P,1)`` for every row pitch P from C to C + 128 bytes.
* ``pad+sw``: ``Sw<B,M,S> o (R,C):(P,1)``, every pitch from C (no padding) with
  every swizzle and none: the union of row-major ``sw`` and ``pad``.

Worked example
--------------
``Sw<3,3,3>`` on the row-major 8x64 tile: offset o = 64 r + c, and
``Sw(o) = o ^ ((o & 0b111000000) >> 3)``: (5, 3) -> 323 -> 363.

The math
--------
Every notation written here is spec text (``layout A = <notation>``), and the
tables equal what verify computes from that text: `tests/synth/test_synth.py` compares
them with `verify.offsets` member by member.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial

import numpy as np

ENUMERATED = ("sw", "tile", "triton", "nvmma", "pad", "pad+sw")


@dataclass(frozen=True)
class Member:
    """One layout of a family: spec notation, XOR terms, and how to build its table."""

    family: str
    notation: str
    xor_terms: int
    build: Callable[[], np.ndarray]


def swizzle(x: np.ndarray, b: int, m: int, s: int) -> np.ndarray:
    """CuTe's Sw<b,m,s> on integers: bits [m+s, m+s+b) XORed into [m, m+b) (s < 0:
    the other way)."""
    if b == 0:
        return x
    source = ((1 << b) - 1) << (m + max(0, s))
    picked = x & source
    return x ^ (picked >> s if s >= 0 else picked << -s)


def grid(rows: int, cols: int) -> tuple[np.ndarray, np.ndarray]:
    """r and c of every tile position, as (R, C) arrays."""
    return np.meshgrid(
        np.arange(rows, dtype=np.int64), np.arange(cols, dtype=np.int64), indexing="ij"
    )


def swizzles(bits: int) -> Iterator[tuple[int, int, int]]:
    """Every Sw<B,M,S> with B >= 1 whose read and written bits lie below `bits`."""
    for b in range(1, bits + 1):
        for m in range(bits):
            for s in [*range(b, bits + 1), *range(-bits, -b + 1)]:
                if m + abs(s) + b <= bits:
                    yield b, m, s


def sw_members(rows: int, cols: int) -> Iterator[Member]:
    r, c = grid(rows, cols)
    bits = max(1, (rows * cols - 1).bit_length())
    for _major, plain, stride in (
        ("row", r * cols + c, f"({cols},1)"),
        ("column", r + c * rows, f"(1,{rows})"),
    ):
        inner = f"({rows},{cols}):{stride}"
        yield Member("sw", inner, 0, partial(_given, plain))
        for b, m, s in swizzles(bits):
            yield Member(
                "sw",
                f"Sw<{b},{m},{s}> o {inner}",
                b,
                partial(swizzle, plain, b, m, s),
            )


def tile_members(rows: int, cols: int) -> Iterator[Member]:
    """tile_to_shape(Sw o atom, (R, C)) for every power-of-two atom (row- or
    column-major) dividing the tile and every swizzle inside the atom's bits;
    atoms go down the rows first, then across (CuTe's default order)."""
    r, c = grid(rows, cols)
    for ar in _powers(rows):
        for ac in _powers(cols):
            if rows % ar or cols % ac:
                continue
            tile = ar * ac * (r // ar + (rows // ar) * (c // ac))
            for _major, local, stride in (
                ("row", (r % ar) * ac + c % ac, f"({ac},1)"),
                ("column", r % ar + (c % ac) * ar, f"(1,{ar})"),
            ):
                inner = f"({ar},{ac}):{stride}"
                plain = tile + local
                yield Member(
                    "tile", f"tile_to_shape({inner}, ({rows}, {cols}))", 0, partial(_given, plain)
                )
                for b, m, s in swizzles(max(1, (ar * ac - 1).bit_length())):
                    yield Member(
                        "tile",
                        f"tile_to_shape(Sw<{b},{m},{s}> o {inner}, ({rows}, {cols}))",
                        b,
                        partial(_tile_swizzled, tile, local, b, m, s),
                    )


def _given(table: np.ndarray) -> np.ndarray:
    return table


def _tile_swizzled(tile: np.ndarray, local: np.ndarray, b: int, m: int, s: int) -> np.ndarray:
    return tile + swizzle(local, b, m, s)


def _triton_offsets(
    fast: np.ndarray, slow: np.ndarray, n: int, vec: int, per_phase: int, max_phase: int
) -> np.ndarray:
    return slow * n + (fast ^ ((((slow // per_phase) % max_phase) * vec) % n))


def _nvmma_offsets(
    swizzled: np.ndarray, slow: np.ndarray, fast: np.ndarray, n: int, per_row: int
) -> np.ndarray:
    return swizzled + per_row * (slow + n * (fast // per_row))


def _padded(r: np.ndarray, c: np.ndarray, pitch: int) -> np.ndarray:
    return r * pitch + c


def _powers(limit: int) -> list[int]:
    return [1 << k for k in range(limit.bit_length()) if 1 << k <= limit]


def triton_members(rows: int, cols: int) -> Iterator[Member]:
    """swizzled_shared on power-of-two tiles (Triton refuses others)."""
    if rows & (rows - 1) or cols & (cols - 1):
        return
    r, c = grid(rows, cols)
    for order, (fast, slow, fast_n, slow_n) in (
        ("[1, 0]", (c, r, cols, rows)),
        ("[0, 1]", (r, c, rows, cols)),
    ):
        seen_plain = False
        for vec in _powers(fast_n):
            for per_phase in _powers(slow_n):
                for max_phase in _powers(fast_n // vec):
                    if max_phase == 1 and seen_plain:
                        continue  # no swizzle: one member stands for all
                    seen_plain |= max_phase == 1
                    notation = (
                        f"#ttg.swizzled_shared<{{vec = {vec}, perPhase = {per_phase}, "
                        f"maxPhase = {max_phase}, order = {order}}}> shape "
                        f"({rows}, {cols})"
                    )
                    yield Member(
                        "triton",
                        notation,
                        max_phase.bit_length() - 1,
                        partial(_triton_offsets, fast, slow, fast_n, vec, per_phase, max_phase),
                    )


def nvmma_members(rows: int, cols: int, elem_bytes: int) -> Iterator[Member]:
    """nvmma_shared as `verify.notation.triton` reads it: the contiguous dimension
    cut into blocks of S bytes (S = swizzlingByteWidth), each block all rows, row
    after row; a row's 16-byte chunk XORed with (row / (128 / S)) % (S / 16).
    Triton refuses fewer than 8 rows, or a contiguous extent not a whole block."""
    r, c = grid(rows, cols)
    bits, chunk = 8 * elem_bytes, max(1, 16 // elem_bytes)
    for width in (32, 64, 128):
        per_row = width // elem_bytes
        for transposed, (fast, slow, fast_n, slow_n) in (
            (False, (c, r, cols, rows)),
            (True, (r, c, rows, cols)),
        ):
            if fast_n % per_row or slow_n < 8:
                continue
            phase = (slow // (128 // width)) % (width // 16)
            swizzled = (fast % per_row) ^ (phase * chunk)
            notation = (
                f"#ttg.nvmma_shared<{{swizzlingByteWidth = {width}, transposed = "
                f"{str(transposed).lower()}, elementBitWidth = {bits}}}> shape "
                f"({rows}, {cols})"
            )
            yield Member(
                "nvmma",
                notation,
                (width // 16).bit_length() - 1,
                partial(_nvmma_offsets, swizzled, slow, fast, slow_n, per_row),
            )


def pitches(cols: int, elem_bytes: int) -> range:
    """Row pitches worth trying: C up to one bank turn (128 bytes) more; a longer
    pitch repeats a shorter one's banks with a larger footprint."""
    return range(cols, cols + max(1, 128 // elem_bytes))


def pad_members(rows: int, cols: int, elem_bytes: int) -> Iterator[Member]:
    r, c = grid(rows, cols)
    for pitch in pitches(cols, elem_bytes):
        yield Member("pad", f"({rows},{cols}):({pitch},1)", 0, partial(_padded, r, c, pitch))


def pad_sw_members(rows: int, cols: int, elem_bytes: int) -> Iterator[Member]:
    r, c = grid(rows, cols)
    for pitch in pitches(cols, elem_bytes):
        plain = r * pitch + c
        bits = max(1, int(plain.max()).bit_length())
        inner = f"({rows},{cols}):({pitch},1)"
        yield Member("pad+sw", inner, 0, partial(_given, plain))
        for b, m, s in swizzles(bits):
            yield Member(
                "pad+sw",
                f"Sw<{b},{m},{s}> o {inner}",
                b,
                partial(swizzle, plain, b, m, s),
            )


def members(family: str, rows: int, cols: int, elem_bytes: int) -> Iterator[Member]:
    if family == "sw":
        return sw_members(rows, cols)
    if family == "tile":
        return tile_members(rows, cols)
    if family == "triton":
        return triton_members(rows, cols)
    if family == "nvmma":
        return nvmma_members(rows, cols, elem_bytes)
    if family == "pad":
        return pad_members(rows, cols, elem_bytes)
    if family == "pad+sw":
        return pad_sw_members(rows, cols, elem_bytes)
    raise ValueError(f"family: expected one of {', '.join(ENUMERATED)}, found {family!r}")
