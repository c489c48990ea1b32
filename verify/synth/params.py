"""The CuTe and Triton families searched by the solver, their parameters as unknowns.

Overview
--------
On a power-of-two tile every member of these families is linear over GF(2), so
it is a matrix M of the XOR-map encoding (`verify.synth.gf2`): the bank
figures, hard constraints, lemmas and the bisection with its UNSAT proofs are
that module's. What this module adds is the family: M's entries are tied to
the family's parameters, which are the solver's unknowns, so an UNSAT of
"better than this" covers every member at once, and nothing is listed.

* ``sw``: CuTe ``Sw<B,M,S> o (R,C):(C,1)`` or ``o (R,C):(1,R)``: unknowns B, M,
  S and the major.
* ``tile``: ``tile_to_shape(Sw<B,M,S> o atom, (R, C))``, the atom a row- or
  column-major ``(2^a, 2^b)`` block: unknowns B, M, S and the atom's shape and
  major (the ``sw`` family is the atom ``(R, C)``).
* ``triton``: ``#ttg.swizzled_shared<{vec, perPhase, maxPhase, order}>``:
  unknowns log2 vec, log2 perPhase, log2 maxPhase and the order.
* ``pad+sw``: ``Sw<B,M,S> o (R,C):(P,1)``: unknowns the row pitch P (C up to
  128 bytes more), B, M and S. Padding is not linear in the row-major offset,
  but Sw is linear in the padded offset o = P r + c: each pitch is a `View` of
  the encoding (M acting on its offsets), chosen by the pitch's flag.

Worked example
--------------
ldmatrix.x1 on an 8x64 fp16 tile (n = 9 offset bits). The model B = 3, M = 3,
S = 3, row-major sets the window bits w_3, w_4, w_5 and the shift S_3, so M's
off-diagonal entries are (3, 6), (4, 7), (5, 8): ``Sw<3,3,3>``. The query
"max_ways <= 0 ..." is never asked; "xor terms <= 2" is UNSAT: no member with
two window bits is conflict-free.

The math
--------
``Sw<B,M,S>`` XORs bits [M+S, M+S+B) into [M, M+B) (S > 0), or bits [M, M+B)
into [M-S, M-S+B) (S < 0); with B <= |S| the two ranges are disjoint, so the
matrix is I + N with N^2 = 0: invertible, and no W is needed. Over inner-offset
bits (i output, j input):

    Sw[i][j] = [i == j]  xor  (S == j - i  and  (w_i if S > 0 else w_j))

where w_k <=> M <= k < M + B (M one-hot, B unary: ``B >= k``), and
M + |S| + B <= the atom's bits. The inner layout is a bit permutation P of the
row-major offset (column-major, or an atom tiled down then across), so the
layout is Sw P: ``M[i][j] = Sw[i][pi(j)]`` under the choice's flag. Triton's
swizzled_shared XORs ``((slow / perPhase) % maxPhase) * vec`` into the fast
index: a ``Sw`` with window [log vec, log vec + log maxPhase) inside the fast
bits and S = fast bits + log perPhase - log vec, its source inside the slow
bits. XOR terms: the window bits, B (log2 maxPhase).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

import numpy as np
import z3

from verify.smt.solve import SEED, search
from verify.synth import families
from verify.synth.gf2_encoding import Encoding, View, applied, hard_only, table_of


def _log2(value: int) -> int:
    return value.bit_length() - 1


def _true(model: z3.ModelRef, term: z3.BoolRef) -> bool:
    return z3.is_true(model.eval(term, model_completion=True))


@dataclass
class OneHot:
    """An integer unknown over `values`, one Boolean per value, exactly one true."""

    flags: dict

    @staticmethod
    def new(ctx: z3.Context, name: str, values) -> OneHot:
        return OneHot({v: z3.Bool(f"{name}={v}", ctx) for v in values})

    def exactly_one(self) -> z3.BoolRef:
        return z3.PbEq([(f, 1) for f in self.flags.values()], 1)

    def value(self, model: z3.ModelRef) -> int:
        return next(v for v, f in self.flags.items() if _true(model, f))


@dataclass
class Window:
    """Bits [start, start + width) of an offset: start one-hot, width unary
    (``at_least[k - 1]`` <=> width >= k), and the per-bit membership w_k."""

    ctx: z3.Context
    start: OneHot
    at_least: list
    bits: list

    @staticmethod
    def new(ctx: z3.Context, name: str, starts, n: int) -> Window:
        start = OneHot.new(ctx, f"{name}.start", starts)
        at_least = [z3.Bool(f"{name}.width>={k}", ctx) for k in range(1, n + 1)]
        window = Window(ctx, start, at_least, [])
        window.bits = [
            z3.Or(
                [
                    z3.And(f, window.width_at_least(k - v + 1))
                    for v, f in start.flags.items()
                    if v <= k
                ]
                or [z3.BoolVal(False, ctx)]
            )
            for k in range(n)
        ]
        return window

    def width_at_least(self, k: int) -> z3.BoolRef:
        if k <= 0:
            return z3.BoolVal(True, self.ctx)
        return self.at_least[k - 1] if k <= len(self.at_least) else z3.BoolVal(False, self.ctx)

    def width_at_most(self, k: int) -> z3.BoolRef:
        return z3.Not(self.width_at_least(k + 1))

    def constraints(self) -> list:
        chain = [z3.Implies(b, a) for a, b in zip(self.at_least, self.at_least[1:])]
        return [self.start.exactly_one(), *chain]

    def width(self, model: z3.ModelRef) -> int:
        return sum(_true(model, b) for b in self.at_least)


@dataclass
class Choice:
    """One inner layout (a bit permutation of the row-major offset) with the swizzle
    over it: `xor[i][j]`, the off-diagonal entries over inner bits."""

    flag: z3.BoolRef
    perm: list  # row-major offset bit j -> inner offset bit
    xor: list  # n x n Booleans
    window: Window
    describe: Callable[[z3.ModelRef], str]


def row_major(rbits: int, cbits: int) -> list:
    return list(range(rbits + cbits))


def column_major(rbits: int, cbits: int) -> list:
    """(R,C):(1,R): c bit j goes to R's bits + j, r bit k to k."""
    return [rbits + j for j in range(cbits)] + list(range(rbits))


def tiled(rbits: int, cbits: int, ar: int, ac: int, atom_row_major: bool) -> list:
    """tile_to_shape of a (2^ar, 2^ac) atom: the atom's offset in the low ar + ac
    bits (row- or column-major within), atoms down the rows first, then across."""
    if atom_row_major:
        low_c, low_r = list(range(ac)), [ac + k for k in range(ar)]
    else:
        low_r, low_c = list(range(ar)), [ar + j for j in range(ac)]
    c_bits = low_c + [rbits + j for j in range(ac, cbits)]
    r_bits = low_r + [ac + k for k in range(ar, rbits)]
    return c_bits + r_bits


class Parametric:
    """A family as a set of `Choice`s, one of which holds; M = Sw P of that one."""

    name = ""
    invertible = False

    def __init__(self, problem):
        rows, cols = problem.shape
        self.rows, self.cols = rows, cols
        self.rbits, self.cbits = _log2(rows), _log2(cols)
        self.n = self.rbits + self.cbits
        self.choices: list[Choice] = []
        self.extra: list = []

    def constrain(self, enc: Encoding) -> list:
        self.choices = self.build(enc.ctx)
        out = [z3.PbEq([(c.flag, 1) for c in self.choices], 1), *self.extra]
        for i in range(self.n):
            for j in range(self.n):
                out.append(
                    enc.m[i][j]
                    == z3.Or([z3.And(c.flag, self._entry(c, i, j)) for c in self.choices])
                )
        return out

    @staticmethod
    def _entry(choice: Choice, i: int, j: int) -> z3.BoolRef:
        k = choice.perm[j]
        return z3.Not(choice.xor[i][k]) if i == k else choice.xor[i][k]

    def terms(self, enc: Encoding) -> list:
        return [z3.And(c.flag, w) for c in self.choices for w in c.window.bits]

    def decode(self, enc: Encoding, model: z3.ModelRef, bits: np.ndarray) -> tuple[str, int]:
        choice = next(c for c in self.choices if _true(model, c.flag))
        return choice.describe(model), choice.window.width(model)

    def build(self, ctx: z3.Context) -> list[Choice]:
        raise NotImplementedError

    def views(self, problem, ctx: z3.Context) -> list[View]:
        """The offsets M acts on: the row-major offset (the choices permute its bits)."""
        return [View(None, self.cols)]

    def table(self, enc: Encoding, model: z3.ModelRef, bits: np.ndarray) -> np.ndarray:
        return table_of(bits, enc.problem.shape)


def swizzle_xor(ctx: z3.Context, window: Window, shift: OneHot, n: int) -> list:
    """Sw's off-diagonal entries: S == j - i and the window bit on the narrow side."""
    false = z3.BoolVal(False, ctx)
    return [
        [
            z3.And(shift.flags[j - i], window.bits[i] if j > i else window.bits[j])
            if j - i in shift.flags
            else false
            for j in range(n)
        ]
        for i in range(n)
    ]


class CuteSw(Parametric):
    """``Sw<B,M,S>`` over inner layouts (row/column-major, or tiled atoms): B, M, S
    and the inner layout are the unknowns."""

    name = "sw"

    def inner(self) -> list[tuple[list, int, str]]:
        """(permutation, bits the swizzle may touch, notation with {sw}) per layout."""
        r, c = self.rows, self.cols
        return [
            (row_major(self.rbits, self.cbits), self.n, f"{{sw}}({r},{c}):({c},1)"),
            (column_major(self.rbits, self.cbits), self.n, f"{{sw}}({r},{c}):(1,{r})"),
        ]

    def build(self, ctx: z3.Context) -> list[Choice]:
        n = self.n
        window = Window.new(ctx, "sw.M", range(n), n)
        shift = OneHot.new(ctx, "sw.S", [s for s in range(-n, n + 1) if s])
        self.extra = window.constraints() + [shift.exactly_one()]
        self.extra += [
            z3.Implies(f, window.width_at_most(abs(s))) for s, f in shift.flags.items()
        ]  # B <= |S|
        xor = swizzle_xor(ctx, window, shift, n)
        choices = []
        for index, (perm, bits, text) in enumerate(self.inner()):
            flag = z3.Bool(f"sw.inner={index}", ctx)
            self.extra += self._fits(flag, window, shift, bits)
            choices.append(
                Choice(
                    flag,
                    perm,
                    xor,
                    window,
                    partial(self._notation, window=window, shift=shift, text=text),
                )
            )
        return choices

    @staticmethod
    def _fits(flag, window: Window, shift: OneHot, bits: int) -> list:
        """M + |S| + B <= bits: the swizzle reads and writes inside the atom."""
        out = []
        for m, mf in window.start.flags.items():
            for s, sf in shift.flags.items():
                room = bits - m - abs(s)
                out.append(
                    z3.Implies(
                        z3.And(flag, mf, sf),
                        window.width_at_most(room) if room >= 0 else z3.BoolVal(False, flag.ctx),
                    )
                )
        return out

    @staticmethod
    def _notation(model, window: Window, shift: OneHot, text: str) -> str:
        b = window.width(model)
        sw = f"Sw<{b},{window.start.value(model)},{shift.value(model)}> o " if b else ""
        return text.format(sw=sw)


class TiledSw(CuteSw):
    """``tile_to_shape(Sw<B,M,S> o atom, (R, C))``: the atom's shape (2^a, 2^b) and
    major are unknowns too; the swizzle stays inside the atom, so CuTe's
    composition and a per-atom swizzle agree."""

    name = "tile"

    def inner(self) -> list[tuple[list, int, str]]:
        out = []
        for ar in range(self.rbits + 1):
            for ac in range(self.cbits + 1):
                for row in (True, False):
                    a, b = 1 << ar, 1 << ac
                    stride = f"({b},1)" if row else f"(1,{a})"
                    out.append(
                        (
                            tiled(self.rbits, self.cbits, ar, ac, row),
                            ar + ac,
                            f"tile_to_shape({{sw}}({a},{b}):{stride}, ({self.rows}, {self.cols}))",
                        )
                    )
        return out


class TritonSwizzled(Parametric):
    """``#ttg.swizzled_shared``: per order, log2 vec (the window's start),
    log2 maxPhase (its width) and log2 perPhase are the unknowns."""

    name = "triton"

    def build(self, ctx: z3.Context) -> list[Choice]:
        self.extra = []
        return [
            self._order(ctx, "[1, 0]", row_major(self.rbits, self.cbits), self.cbits),
            self._order(ctx, "[0, 1]", column_major(self.rbits, self.cbits), self.rbits),
        ]

    def _order(self, ctx: z3.Context, order: str, perm: list, fast: int) -> Choice:
        n, tag = self.n, f"triton{order}"
        window = Window.new(ctx, f"{tag}.vec", range(fast + 1), fast)
        phase = OneHot.new(ctx, f"{tag}.perPhase", range(n - fast + 1))
        self.extra += window.constraints() + [phase.exactly_one()]
        for v, f in window.start.flags.items():  # vec * maxPhase <= fast extent
            self.extra.append(z3.Implies(f, window.width_at_most(fast - v)))
        for p, f in phase.flags.items():  # perPhase * maxPhase <= slow extent
            self.extra.append(z3.Implies(f, window.width_at_most(n - fast - p)))
        false = z3.BoolVal(False, ctx)
        bits = window.bits + [false] * (n - fast)
        xor = [
            [
                z3.And(
                    bits[i],
                    z3.Or(
                        [
                            z3.And(vf, pf)
                            for v, vf in window.start.flags.items()
                            for p, pf in phase.flags.items()
                            if fast + p - v == j - i
                        ]
                        or [false]
                    ),
                )
                if i < fast <= j
                else false
                for j in range(n)
            ]
            for i in range(n)
        ]
        shape = f"({self.rows}, {self.cols})"

        def describe(model, window=window, phase=phase):
            b = window.width(model)
            vec, per = (1 << window.start.value(model), 1 << phase.value(model)) if b else (1, 1)
            return (
                f"#ttg.swizzled_shared<{{vec = {vec}, perPhase = {per}, maxPhase = "
                f"{1 << b}, order = {order}}}> shape {shape}"
            )

        return Choice(z3.Bool(f"{tag}.chosen", ctx), perm, xor, window, describe)


class PaddedSw(CuteSw):
    """``Sw<B,M,S> o (R,C):(P,1)``: the row pitch P and B, M, S are the unknowns.

    The pitch is one-hot over `families.pitches`: C (no padding) up to one bank
    turn (128 bytes) more. The bound is the family's definition, and why it is
    that: without a swizzle a longer pitch repeats a shorter one's banks (the
    pitch only matters modulo 128 bytes) at a larger footprint, and the padded
    layouts people write (the seed article's 33 words) pad less than a bank
    turn. Each pitch is a `View` of the encoding: M acts on o = P r + c, and a
    phase's constraints bind only under its pitch's flag. The footprint, unlike
    the other families', depends on the member: `footprint_at_most` states it."""

    name = "pad+sw"

    def __init__(self, problem, pitches=None):
        super().__init__(problem)
        every = families.pitches(self.cols, problem.elem_bytes)
        self.pitches = list(every if pitches is None else pitches)
        self.elem_bytes = problem.elem_bytes
        self.stage_elements = problem.stage_elements
        self.n = self._bits(max(self.pitches))  # M as wide as the widest pitch's offsets
        self.pitch: OneHot | None = None

    def _bits(self, pitch: int) -> int:
        return (pitch * (self.rows - 1) + self.cols - 1).bit_length()

    def views(self, problem, ctx: z3.Context) -> list[View]:
        self.pitch = OneHot.new(ctx, "pad.pitch", self.pitches)
        return [View(flag, p) for p, flag in self.pitch.flags.items()]

    def build(self, ctx: z3.Context) -> list[Choice]:
        assert self.pitch is not None, "views() names the pitches before build()"
        n, pitch = self.n, self.pitch
        window = Window.new(ctx, "sw.M", range(n), n)
        shift = OneHot.new(ctx, "sw.S", [s for s in range(-n, n + 1) if s])
        self.window, self.shift = window, shift
        self.extra = window.constraints() + [shift.exactly_one(), pitch.exactly_one()]
        self.extra += [z3.Implies(f, window.width_at_most(abs(s))) for s, f in shift.flags.items()]
        for p, flag in pitch.flags.items():  # the swizzle inside the pitch's offsets
            self.extra += self._fits(flag, window, shift, self._bits(p))
        if self.stage_elements is not None:  # each stage's tile inside its slot
            self.extra += self.footprint_at_most(None, self.stage_elements)
        flag = z3.BoolVal(True, ctx)
        xor = swizzle_xor(ctx, window, shift, n)
        return [Choice(flag, list(range(n)), xor, window, self._describe)]

    def _describe(self, model: z3.ModelRef) -> str:
        assert self.pitch is not None, "a model of this family's encoding"
        inner = f"({self.rows},{self.cols}):({self.pitch.value(model)},1)"
        b = self.window.width(model)
        sw = f"Sw<{b},{self.window.start.value(model)},{self.shift.value(model)}> o " if b else ""
        return sw + inner

    def table(self, enc: Encoding, model: z3.ModelRef, bits: np.ndarray) -> np.ndarray:
        assert self.pitch is not None, "a model of this family's encoding"
        r, c = families.grid(self.rows, self.cols)
        return applied(bits, r * self.pitch.value(model) + c)

    def footprint_at_most(self, enc: Encoding | None, limit: int) -> list:
        """The member is one whose largest offset is below `limit`: one of the few
        (P, B, M, S) listed in `_footprints` with a footprint that small. The
        footprint is computed in numpy over the tile's R*C offsets: it depends on
        no access, only on the member, and is the integer
        `verify.synth.cost.score` replays."""
        assert self.pitch is not None, "views() named the pitches"
        fits = [
            z3.And(
                self.pitch.flags[p],
                self.window.width_at_most(0) if b == 0 else self._is_swizzle(b, m, s),
            )
            for p, b, m, s, footprint in self._footprints()
            if footprint <= limit
        ]
        ctx = next(iter(self.pitch.flags.values())).ctx
        return [z3.Or(fits) if fits else z3.BoolVal(False, ctx)]

    def _footprints(self) -> list[tuple[int, int, int, int, int]]:
        """(P, B, M, S, footprint) of every member (B = 0: no swizzle), once."""
        if not hasattr(self, "_footprint_table"):
            r, c = families.grid(self.rows, self.cols)
            table = []
            for p in self.pitches:
                plain = r * p + c
                table.append((p, 0, 0, 0, int(plain.max()) + 1))
                table += [
                    (p, b, m, s, int(families.swizzle(plain, b, m, s).max()) + 1)
                    for b, m, s in families.swizzles(self._bits(p))
                ]
            self._footprint_table = table
        return self._footprint_table

    def smaller_footprint_exists(self, problem, limit: int, budget) -> str:
        """z3's answer to "some member (of these pitches) has footprint <= limit":
        the pitch and swizzle constraints and the footprint clauses alone, no
        phase (the footprint depends on no access)."""
        ctx = z3.Context()
        self.views(problem, ctx)
        self.build(ctx)
        solver = z3.SolverFor("QF_FD", ctx=ctx)
        solver.set("random_seed", SEED)
        solver.add(self.extra + self.footprint_at_most(None, limit))
        return search(solver, budget).status

    def aligned_member_exists(self, problem, budget) -> str:
        """z3's answer to "some member (of these pitches) keeps every access aligned
        and every vector whole": no phase encoded. UNSAT rules the pitches out."""
        ctx = z3.Context()
        enc = hard_only(problem, self.views(problem, ctx), ctx, self.n)
        enc.hard += self.constrain(enc)
        return search(enc.solver([]), budget).status

    def _is_swizzle(self, b: int, m: int, s: int) -> z3.BoolRef:
        w = self.window
        return z3.And(
            w.start.flags[m], w.width_at_least(b), w.width_at_most(b), self.shift.flags[s]
        )


FAMILIES = {"sw": CuteSw, "tile": TiledSw, "triton": TritonSwizzled}
