"""Triton distributed encodings, as TTGIR prints them, as thread maps.

Overview
--------
A distributed encoding says which thread holds which element of a register
tensor: ``#ttg.blocked<{...}>``, ``#ttg.nvidia_mma<{versionMajor = 2|3, ...}>``,
``#ttg.dot_op<{opIdx, parent, kWidth}>``, ``#ttg.slice<{dim, parent}>`` and
``#ttg.linear<{register, lane, warp, block}>``. With the tensor's shape each is
a linear layout over GF(2): one basis vector (a tensor coordinate) per bit of
the register index, the lane and the warp, and

    coordinate(register, lane, warp) = XOR of the bases of the bits that are set.

Triton itself is the source of truth: every encoding except ``#ttg.linear`` is
evaluated by Gluon's ``GluonOpBuilder.to_linear_layout`` (the function Gluon's
frontend and `verify.ttgir.extract` use), after its fields are checked here --
Triton's native code aborts the process on fields it does not expect.
``#ttg.linear`` spells its bases out and is read here without Triton (and
tested against it).

Worked example
--------------
``#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA =
[4, 1], order = [1, 0]}>`` on 64x64 gives register bases [0,1] [0,2] [0,4]
[16,0] [32,0], lane bases [0,8] [0,16] [0,32] [1,0] [2,0] and warp bases [4,0]
[8,0]: lane 9 (bits 0 and 3) of warp 1, register 5 (bits 0 and 2) holds
(0,8)^(1,0)^(4,0)^(0,1)^(0,4) = (5, 13).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import NoReturn, TypeAlias

from verify.errors import Pos, SpecError

EXTRA = "pip install 'verify-smem[triton]'"
WARP_LANES = 32
MAX_ELEMENTS = 1 << 20
KINDS = ("blocked", "nvidia_mma", "dot_op", "slice", "linear")
_TOKEN = re.compile(
    r"\s*(#(?:ttg|triton_gpu)\.[A-Za-z_]+<\{|\}>|\[|\]|,|=|true|false|"
    r"-?\d+|[A-Za-z_][A-Za-z0-9_]*)"
)
# Fields each encoding may carry, and those it must.
_FIELDS = {
    "blocked": (("sizePerThread", "threadsPerWarp", "warpsPerCTA", "order"), ("CGALayout",)),
    "nvidia_mma": (("versionMajor", "versionMinor", "warpsPerCTA", "instrShape"), ("CGALayout",)),
    "dot_op": (("opIdx", "parent"), ("kWidth",)),
    "slice": (("dim", "parent"), ()),
    "linear": (("register", "lane", "warp"), ("block",)),
}


@dataclass(frozen=True)
class Encoding:
    """One distributed encoding: its kind and fields (a parent is an Encoding)."""

    kind: str
    fields: dict
    text: str

    @property
    def rank(self) -> int:
        """Tensor rank the encoding describes (a slice drops one dimension)."""
        f = self.fields
        if self.kind == "blocked":
            return len(f["sizePerThread"])
        if self.kind == "nvidia_mma":
            return len(f["warpsPerCTA"])
        if self.kind == "dot_op":
            return f["parent"].rank
        if self.kind == "slice":
            return f["parent"].rank - 1
        bases = f["register"] + f["lane"] + f["warp"] + f.get("block", [])
        return len(bases[0]) if bases else 0


# A field's value as written: an integer, true/false, a list, or a parent encoding.
FieldValue: TypeAlias = "Encoding | bool | int | list[FieldValue]"


# -- reading the text ---------------------------------------------------------------


class _Reader:
    """Recursive descent over the attribute syntax TTGIR prints:
    ``#ttg.KIND<{name = value, ...}>`` with integers, true/false, nested lists and
    nested encodings as values."""

    def __init__(self, text: str, pos: Pos):
        self.text, self.pos, self.at = text, pos, 0

    def fail(self, expected: str) -> NoReturn:
        found = self.text[self.at :].strip()[:30] or "the end"
        raise SpecError(
            f"in {self.text[: self.text.find('<') + 1]}...: expected {expected}, found {found!r}",
            self.pos,
        )

    def peek(self) -> str:
        m = _TOKEN.match(self.text, self.at)
        return m.group(1) if m else ""

    def take(self, expected: str | None = None) -> str:
        m = _TOKEN.match(self.text, self.at)
        if not m or (expected is not None and m.group(1) != expected):
            self.fail(repr(expected) if expected else "a value")
        self.at = m.end()
        return m.group(1)

    def encoding(self) -> Encoding:
        start = self.at
        head = self.take()
        if not head.startswith("#"):
            self.fail("an encoding '#ttg.KIND<{...}>'")
        kind = head[head.index(".") + 1 : -2]
        if kind not in KINDS:
            raise SpecError(
                f"Triton encoding '{kind}': expected a distributed encoding, one "
                f"of {', '.join(KINDS)}",
                self.pos,
            )
        fields: dict[str, FieldValue] = {}
        while self.peek() != "}>":
            if fields:
                self.take(",")
            name = self.take()
            if not name[0].isalpha():
                self.fail("a field name")
            self.take("=")
            if name in fields:
                raise SpecError(f"{kind}: field '{name}' is given twice", self.pos)
            fields[name] = self.value()
        self.take("}>")
        return Encoding(kind, fields, self.text[start : self.at].strip())

    def value(self) -> FieldValue:
        token = self.peek()
        if token.startswith("#"):
            return self.encoding()
        alias = re.match(r"\s*(#[\w.]+)", self.text[self.at :])
        if alias:
            raise SpecError(
                f"{alias[1]}: expected the encoding written out in full "
                "(TTGIR's aliases such as #mma are not resolved in a spec)",
                self.pos,
            )
        if token == "[":
            self.take("[")
            items: list[FieldValue] = []
            while self.peek() != "]":
                if items:
                    self.take(",")
                items.append(self.value())
            self.take("]")
            return items
        token = self.take()
        if token in ("true", "false"):
            return token == "true"
        if not re.fullmatch(r"-?\d+", token):
            self.fail("an integer, true, false, a list or an encoding")
        return int(token)


def parse_encoding(text: str, pos: Pos = Pos()) -> Encoding:
    """The encoding written in `text`, its fields checked (see `check_fields`)."""
    reader = _Reader(text.strip(), pos)
    enc = reader.encoding()
    if reader.at != len(reader.text):
        reader.fail("the end of the encoding")
    check_fields(enc, pos)
    return enc


# -- checking the fields before Triton sees them --------------------------------------


def _ints(value, what: str, pos: Pos, length: int | None = None) -> list[int]:
    if not isinstance(value, list) or not all(type(v) is int for v in value):
        raise SpecError(f"{what}: expected a list of integers, found {value}", pos)
    if length is not None and len(value) != length:
        raise SpecError(f"{what}: expected {length} entries, found {len(value)}", pos)
    return value


def _powers_of_two(values: list[int], what: str, pos: Pos):
    for v in values:
        if v < 1 or v & (v - 1):
            raise SpecError(f"{what}: expected powers of two, found {values}", pos)


def _product(values) -> int:
    out = 1
    for v in values:
        out *= v
    return out


def _one_cta(enc: Encoding, pos: Pos):
    if enc.fields.get("CGALayout"):
        raise SpecError(
            f"{enc.kind}: CGALayout = {enc.fields['CGALayout']} splits the tensor "
            "over the CTAs of a cluster; expected none (verify models one CTA's "
            "shared memory)",
            pos,
        )


def _check_warps(warps: list[int], what: str, pos: Pos):
    _powers_of_two(warps, what, pos)
    if _product(warps) > 32:
        raise SpecError(
            f"{what}: {_product(warps)} warps, expected at most 32 (1024 threads per CTA)", pos
        )


def _check_blocked(enc: Encoding, pos: Pos):
    f = enc.fields
    rank = len(_ints(f["sizePerThread"], "blocked sizePerThread", pos))
    if rank < 1:
        raise SpecError("blocked sizePerThread: expected at least one dimension", pos)
    _powers_of_two(f["sizePerThread"], "blocked sizePerThread", pos)
    threads = _ints(f["threadsPerWarp"], "blocked threadsPerWarp", pos, rank)
    _powers_of_two(threads, "blocked threadsPerWarp", pos)
    if _product(threads) != WARP_LANES:
        raise SpecError(
            f"blocked threadsPerWarp = {threads}: expected {WARP_LANES} threads "
            f"in all, found {_product(threads)}",
            pos,
        )
    _check_warps(
        _ints(f["warpsPerCTA"], "blocked warpsPerCTA", pos, rank), "blocked warpsPerCTA", pos
    )
    if sorted(_ints(f["order"], "blocked order", pos, rank)) != list(range(rank)):
        raise SpecError(
            f"blocked order = {f['order']}: expected a permutation of 0..{rank - 1}", pos
        )
    _one_cta(enc, pos)


def _check_mma(enc: Encoding, pos: Pos):
    f = enc.fields
    major, minor = f["versionMajor"], f["versionMinor"]
    if type(major) is not int or major not in (2, 3) or minor != 0:
        raise SpecError(
            f"nvidia_mma version {major}.{minor}: expected versionMajor = 2 (mma.sync, "
            "sm_80) or 3 (wgmma, sm_90) with versionMinor = 0",
            pos,
        )
    warps = _ints(f["warpsPerCTA"], "nvidia_mma warpsPerCTA", pos)
    _check_warps(warps, "nvidia_mma warpsPerCTA", pos)
    instr = _ints(f["instrShape"], "nvidia_mma instrShape", pos)
    if major == 2:
        expected = [16, 8] if len(warps) == 2 else [1, 16, 8]
        if len(warps) not in (2, 3) or instr != expected:
            raise SpecError(
                f"nvidia_mma v2: expected 2-D (or batched 3-D) warpsPerCTA with "
                f"instrShape [16, 8] ([1, 16, 8]), found warpsPerCTA = {warps}, "
                f"instrShape = {instr}",
                pos,
            )
    else:
        if (
            len(warps) != 2
            or len(instr) != 3
            or instr[0] != 16
            or not (8 <= instr[1] <= 256 and instr[1] % 8 == 0)
            or instr[2] not in (8, 16, 32)
        ):
            raise SpecError(
                f"nvidia_mma v3: expected 2-D warpsPerCTA and instrShape [16, N, K] "
                f"with N a multiple of 8 up to 256 and K 8, 16 or 32, found "
                f"warpsPerCTA = {warps}, instrShape = {instr}",
                pos,
            )
        if warps[0] % 4:
            raise SpecError(
                f"nvidia_mma v3 warpsPerCTA = {warps}: expected a multiple of 4 "
                "warps along dimension 0 (whole warp groups)",
                pos,
            )
    _one_cta(enc, pos)


def _check_dot(enc: Encoding, pos: Pos):
    f = enc.fields
    parent, index, k_width = f["parent"], f["opIdx"], f.get("kWidth", 0)
    if type(index) is not int or index not in (0, 1):
        raise SpecError(f"dot_op opIdx = {index}: expected 0 (A) or 1 (B)", pos)
    if not isinstance(parent, Encoding) or parent.kind not in ("nvidia_mma", "blocked"):
        raise SpecError(
            "dot_op parent: expected a #ttg.nvidia_mma or #ttg.blocked encoding "
            "written out (aliases such as #mma are not resolved here)",
            pos,
        )
    if parent.kind == "blocked":
        if k_width:
            raise SpecError(
                "dot_op with a blocked parent: expected no kWidth (Triton's "
                "verifier allows it only for an mma parent)",
                pos,
            )
        return
    if type(k_width) is not int or k_width not in (1, 2, 4, 8, 16):
        raise SpecError(
            f"dot_op kWidth = {k_width}: expected 1, 2, 4, 8 or 16 (mandatory for "
            "an nvidia_mma parent)",
            pos,
        )
    if parent.fields["versionMajor"] == 3 and index != 0:
        raise SpecError(
            "dot_op opIdx = 1 with an nvidia_mma v3 parent: wgmma takes only A "
            "from registers; expected opIdx = 0",
            pos,
        )


def _check_slice(enc: Encoding, pos: Pos):
    parent, dim = enc.fields["parent"], enc.fields["dim"]
    if not isinstance(parent, Encoding):
        raise SpecError(
            "slice parent: expected a distributed encoding written out (aliases "
            "such as #blocked are not resolved here)",
            pos,
        )
    if type(dim) is not int or not 0 <= dim < parent.rank or parent.rank < 2:
        raise SpecError(
            f"slice dim = {dim}: expected a dimension of its rank-{parent.rank} "
            "parent, which must have at least 2",
            pos,
        )


def _check_linear(enc: Encoding, pos: Pos):
    f = enc.fields
    rank = enc.rank
    for name in ("register", "lane", "warp", "block"):
        for basis in f.get(name, []):
            _ints(basis, f"linear {name} basis", pos, rank)
            if any(v < 0 for v in basis):
                raise SpecError(
                    f"linear {name} basis {basis}: expected non-negative coordinates", pos
                )
    if len(f["lane"]) != 5:
        raise SpecError(f"linear lane: expected 5 bases (32 lanes), found {len(f['lane'])}", pos)
    if len(f["warp"]) > 5:
        raise SpecError(
            f"linear warp: expected at most 5 bases (32 warps), found {len(f['warp'])}", pos
        )
    if any(any(b) for b in f.get("block", [])):
        raise SpecError(
            f"linear block = {f['block']} splits the tensor over the CTAs of a "
            "cluster; expected none (verify models one CTA)",
            pos,
        )


def check_fields(enc: Encoding, pos: Pos):
    """Every field an encoding needs, of the right type and range, nothing else: so
    that Triton's native layout code never sees input it would abort on."""
    required, optional = _FIELDS[enc.kind]
    for name in required:
        if name not in enc.fields:
            raise SpecError(f"{enc.kind}: expected the field '{name}'", pos)
    for name in enc.fields:
        if name not in required + optional:
            raise SpecError(
                f"{enc.kind}: unknown field '{name}', expected one of "
                f"{', '.join(required + optional)}",
                pos,
            )
    for value in enc.fields.values():
        if isinstance(value, Encoding):
            check_fields(value, pos)
    {
        "blocked": _check_blocked,
        "nvidia_mma": _check_mma,
        "dot_op": _check_dot,
        "slice": _check_slice,
        "linear": _check_linear,
    }[enc.kind](enc, pos)


def check_shape(enc: Encoding, shape: tuple[int, ...], pos: Pos):
    if len(shape) != enc.rank:
        raise SpecError(
            f"#ttg.{enc.kind} describes rank-{enc.rank} tensors: expected a shape "
            f"of {enc.rank} extents, found {list(shape)}",
            pos,
        )
    _powers_of_two(list(shape), f"#ttg.{enc.kind} shape", pos)
    if _product(shape) > MAX_ELEMENTS:
        raise SpecError(
            f"#ttg.{enc.kind} shape {list(shape)}: expected at most {MAX_ELEMENTS} elements", pos
        )


# -- bases -------------------------------------------------------------------------------


def linear_bases(enc: Encoding, shape: tuple[int, ...], pos: Pos) -> dict:
    """A ``#ttg.linear`` encoding's bases, read as written. Its tensor is the
    space the bases span (dimension d: the next power of two above every basis's
    d-th entry, the sizes Triton's LinearLayout infers), and they must reach every
    coordinate of it (Triton's distributed linear layouts are surjective)."""
    f = enc.fields
    bases = f["register"] + f["lane"] + f["warp"]
    spanned = tuple(
        1 << max((b[d] for b in bases), default=0).bit_length() for d in range(enc.rank)
    )
    if tuple(shape) != spanned:
        raise SpecError(
            f"#ttg.linear: its bases span a {'x'.join(map(str, spanned))} tensor; "
            f"expected shape {spanned}, found {tuple(shape)}",
            pos,
        )
    from verify.notation.triton_lowering import gf2_rank  # late: verify.ttgir imports the runner

    if gf2_rank([_pack(b, shape) for b in bases]) != sum(n.bit_length() - 1 for n in shape):
        raise SpecError(
            f"#ttg.linear: the bases do not reach every coordinate of the "
            f"{'x'.join(map(str, shape))} tensor (Triton requires a surjective "
            "layout)",
            pos,
        )
    return {
        "register": f["register"],
        "lane": f["lane"],
        "warp": f["warp"],
        "block": f.get("block", []),
    }


def _pack(coord: list[int], shape) -> int:
    value, shift = 0, 0
    for c, n in zip(coord, shape):
        value |= c << shift
        shift += n.bit_length() - 1
    return value


_BUILDER = None


def _builder():
    """Gluon's op builder (it keeps its MLIR context alive), or the error naming the
    extra that installs Triton."""
    global _BUILDER
    if _BUILDER is None:
        try:
            from triton._C.libtriton import gluon_ir, ir
        except ImportError:
            raise SpecError(
                f"Triton's distributed encodings are evaluated by Triton itself: {EXTRA}"
            ) from None
        context = ir.context()
        ir.load_dialects(context)
        _BUILDER = (context, gluon_ir.GluonOpBuilder(context))
    return _BUILDER[1]


def gluon_layout(enc: Encoding, shape: tuple[int, ...] = ()):
    """The Gluon object Triton's frontend would build for `enc` (fields checked)."""
    from triton.experimental.gluon import language as gl

    f = enc.fields
    if enc.kind == "blocked":
        return gl.BlockedLayout(
            f["sizePerThread"], f["threadsPerWarp"], f["warpsPerCTA"], f["order"]
        )
    if enc.kind == "nvidia_mma":
        return gl.NVMMADistributedLayout(
            [f["versionMajor"], f["versionMinor"]], f["warpsPerCTA"], f["instrShape"]
        )
    if enc.kind == "dot_op":
        return gl.DotOperandLayout(f["opIdx"], gluon_layout(f["parent"]), f.get("kWidth", 0))
    if enc.kind == "slice":
        return gl.SliceLayout(f["dim"], gluon_layout(f["parent"], shape))
    return gl.DistributedLinearLayout(
        f["register"], f["lane"], f["warp"], f.get("block", []), list(shape)
    )


def triton_bases(enc: Encoding, shape: tuple[int, ...]) -> dict:
    """The bases Triton's ``to_linear_layout`` gives `enc` on `shape`."""
    builder = _builder()
    linear = builder.to_linear_layout(gluon_layout(enc, shape)._to_ir(builder), list(shape))
    return {
        "register": linear.reg_bases,
        "lane": linear.lane_bases,
        "warp": linear.warp_bases,
        "block": linear.block_bases,
    }


def bases(enc: Encoding, shape: tuple[int, ...], pos: Pos) -> dict:
    """(register, lane, warp, block) bases of `enc` on `shape`: read from a
    ``#ttg.linear``, from Triton for every other encoding."""
    check_shape(enc, shape, pos)
    if enc.kind == "linear":
        return linear_bases(enc, shape, pos)
    found = triton_bases(enc, shape)
    if any(any(b) for b in found["block"]):
        raise SpecError(f"#ttg.{enc.kind} splits the tensor over CTAs; expected one CTA", pos)
    if len(found["lane"]) != 5:
        raise SpecError(
            f"#ttg.{enc.kind}: expected 32 lanes, Triton gives {1 << len(found['lane'])}", pos
        )
    return found
