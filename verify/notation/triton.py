"""Triton shared-memory encodings, as TTGIR prints them, for a given tensor shape.

Overview
--------
``#ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>``
(older spelling: ``#triton_gpu.shared<{...}>``) and
``#ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>``
describe where each tensor element lives, in elements from the buffer start.
With a shape they become a `Formula` over coordinates ``d0, d1, ...`` (Triton's
dimension numbering), so ``verify map`` lists them in CuTe's 1-D order
``index = d0 + D0*d1 + ...``.

Worked example
--------------
swizzled_shared vec=8, perPhase=1, maxPhase=8, order=[1, 0] on 16x64: dim 1 is
the column (order[0], fastest), dim 0 the row. Element (d0, d1) = (3, 10)::

    phase = (3 / 1) % 8 = 3;  column = 10 ^ (3 * 8 % 64) = 10 ^ 24 = 18
    offset = 3 * 64 + 18 = 210

The math
--------
swizzled_shared (rank >= 2, power-of-two extents, as Triton requires): with
``c = d[order[0]]``, ``r = d[order[1]]`` and C columns,

    offset(c, r, rest) = (c ^ ((((r / perPhase) % maxPhase) * vec) % C))
                         + C * (r + R * (d[order[2]] + ...))

This is `Sw`-like: for vec, perPhase, maxPhase powers of two it equals CuTe's
``Sw<log2 maxPhase, log2 vec, log2 (C*perPhase/vec)>`` on a row-major tile
when vec*maxPhase <= C (the modulo matters only above that).

nvmma_shared (the TMA/wgmma swizzle, 2-D): S = swizzlingByteWidth bytes per
swizzle row, E = S*8/elementBitWidth elements per row. The tensor is cut into
column blocks E wide; each block holds all R rows, row after row, and blocks
follow one another. Inside a block the 16-byte chunk index is XORed with
``(r / (128/S)) % (S/16)``: CuTe's ``Sw<log2(S/16), 4, 3>`` on byte offsets.
``transposed = true`` makes dim 0 the contiguous one. S = 0 (the unswizzled
core-matrix interleave) is not modelled and is rejected. The
pattern repeats every 8 rows (S*8 bytes), and a tile must hold at least those 8
rows (Triton refuses smaller ones). The formula is an element offset from the
buffer start; wgmma and TMA apply the swizzle to absolute addresses, so the two
agree only when the buffer is aligned to S*8 bytes (Triton allocates it so), which
verify checks (`base_aligned`).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from verify.errors import Pos, SpecError
from verify.model.expr import BinOp, Const, Expr, Range, Var
from verify.model.layout import CuteLayout, Formula, Swizzle
from verify.notation import triton_linear

ENCODING = re.compile(r"#(?P<dialect>ttg|triton_gpu)\.(?P<kind>[A-Za-z_]+)<(?P<inner>.*)>$")
# What follows the kind inside <...>: {fields} for most; padded_shared puts its
# [interval:+padding, ...] list first, shared_linear its alignment after.
_INNER = {
    "padded_shared": re.compile(r"\[(?P<pairs>[^\]]*)\]\s*\{(?P<body>.*)\}$"),
    "shared_linear": re.compile(
        r"\{(?P<body>.*)\}(?:\s*,\s*alignment\s*=\s*"
        r"(?P<alignment>\d+))?$"
    ),
}
_FIELDS_ONLY = re.compile(r"\{(?P<body>[^{}]*)\}$")
_ENTRY = re.compile(
    r"\s*(?P<key>[A-Za-z_][A-Za-z0-9_]*)\s*=\s*"
    r"(?P<value>\[(?:[^\[\]]|\[[^\[\]]*\])*\]|true|false|-?\d+)\s*(,|$)"
)
_PAIR = re.compile(r"\s*(\d+)\s*:\s*\+\s*(\d+)\s*$")
SHARED_KINDS = ("swizzled_shared", "nvmma_shared", "padded_shared", "shared_linear")
# CTA-layout fields describe how a tensor is split over a cluster; one CTA's
# layout is what the banks see, so they are accepted when they split nothing.
# Triton after 3.9 prints one CGALayout (the CTA-id bits' linear layout bases,
# include/triton/Dialect/TritonGPU/IR/TritonGPUAttrDefs.td): all-zero bases
# give every CTA the whole tensor.
_CTA_FIELDS = ("CTAsPerCGA", "CTASplitNum", "CTAOrder", "CGALayout")


@dataclass(frozen=True)
class Encoding:
    kind: str  # one of SHARED_KINDS
    fields: dict
    text: str


def parse_encoding(text: str, pos: Pos = Pos()) -> Encoding:
    """The fields of one ``#ttg.<kind><...>`` attribute, as Triton 3.9 prints it."""
    m = ENCODING.match(text.strip())
    if not m:
        raise SpecError(
            f"expected a Triton shared encoding like "
            f"'#ttg.swizzled_shared<{{vec = 8, ...}}>', found {text!r}",
            pos,
        )
    kind = {"shared": "swizzled_shared"}.get(m["kind"], m["kind"])
    if kind not in SHARED_KINDS:
        raise SpecError(
            f"Triton encoding '{m['kind']}': expected one of "
            f"{', '.join(SHARED_KINDS)} (older spelling: triton_gpu.shared)",
            pos,
        )
    inner = (_INNER.get(kind) or _FIELDS_ONLY).match(m["inner"].strip())
    if not inner:
        raise SpecError(f"{kind}: expected {_SYNTAX[kind]}, found {text.strip()!r}", pos)
    fields = _fields(inner["body"], m["kind"], pos)
    if kind == "padded_shared":
        fields["intervals"] = _pairs(inner["pairs"], pos)
    if kind == "shared_linear":
        if "alignment" in fields:
            raise SpecError(
                "shared_linear: expected 'alignment = N' after the braces, as Triton "
                "prints it, found it inside them (Triton's parser rejects that)",
                pos,
            )
        if inner["alignment"]:
            fields["alignment"] = int(inner["alignment"])
    return Encoding(kind, fields, text.strip())


_SYNTAX = {
    "swizzled_shared": "<{vec = V, perPhase = P, maxPhase = M, order = [...]}>",
    "nvmma_shared": "<{swizzlingByteWidth = S, transposed = T, elementBitWidth = N}>",
    "padded_shared": "<[interval:+padding, ...] {order = [...], shape = [...]}> or "
    "<[interval:+padding, ...] {offset = [[...], ...], block = []}>",
    "shared_linear": "<{offset = [[...], ...]}, alignment = N>",
}


def _fields(body: str, kind: str, pos: Pos) -> dict:
    fields, rest = {}, body
    while rest.strip():
        e = _ENTRY.match(rest)
        if not e:
            raise SpecError(
                f"in {kind}: expected 'name = value' entries, found {rest.strip()[:40]!r}", pos
            )
        try:
            fields[e["key"]] = _value(e["value"])
        except ValueError:  # json's errors are ValueErrors too
            raise SpecError(
                f"in {kind}: {e['key']}: expected an integer, true, false or a list "
                f"of integers, found {e['value']!r}",
                pos,
            ) from None
        rest = rest[e.end() :]
    return fields


def _pairs(text: str, pos: Pos) -> list[tuple[int, int]]:
    """``32:+8, 64:+4`` -> [(32, 8), (64, 4)]."""
    pairs = []
    for item in text.split(","):
        m = _PAIR.match(item)
        if not m:
            raise SpecError(
                f"padded_shared: expected 'interval:+padding' pairs like '32:+8', "
                f"found {item.strip()!r}",
                pos,
            )
        pairs.append((int(m[1]), int(m[2])))
    return pairs


def _value(text: str):
    if text.startswith("["):
        return json.loads(text)
    if text in ("true", "false"):
        return text == "true"
    return int(text)


def _field(enc: Encoding, name: str, pos: Pos, default=None):
    if name in enc.fields:
        return enc.fields[name]
    if default is None:
        raise SpecError(f"{enc.kind}: expected the field '{name}'", pos)
    return default


def _check_fields(enc: Encoding, allowed: tuple[str, ...], pos: Pos):
    for name, value in enc.fields.items():
        if name == "CGALayout":
            if any(any(basis) for basis in value):
                raise SpecError(
                    f"{enc.kind}: CGALayout = {value} splits the tensor over CTAs; "
                    "expected all-zero bases (verify models one CTA's shared memory)",
                    pos,
                )
        elif name in _CTA_FIELDS:
            if name != "CTAOrder" and any(v != 1 for v in value):
                raise SpecError(
                    f"{enc.kind}: {name} = {value} splits the tensor over CTAs; "
                    "expected all 1 (verify models one CTA's shared memory)",
                    pos,
                )
        elif name not in allowed:
            raise SpecError(
                f"{enc.kind}: unknown field '{name}', expected one of "
                f"{', '.join(allowed + _CTA_FIELDS)}",
                pos,
            )


def _power_of_two(value: int, what: str, pos: Pos):
    if value < 1 or value & (value - 1):
        raise SpecError(f"{what}: expected a power of two, found {value}", pos)


def coordinate_names(rank: int) -> list[str]:
    return [f"d{i}" for i in range(rank)]


def _row_major_offset(dims: list[tuple[Expr, int]]) -> Expr:
    """sum of dims[i] * prod(extents before i): dims listed fastest first."""
    total: Expr | None = None
    scale = 1
    for coord, extent in dims:
        term = coord if scale == 1 else BinOp("*", coord, Const(scale))
        total = term if total is None else BinOp("+", total, term)
        scale *= extent
    assert total is not None, "a tensor has at least one dimension"
    return total


def swizzled_formula(enc: Encoding, shape: tuple[int, ...], pos: Pos) -> Expr:
    _check_fields(enc, ("vec", "perPhase", "maxPhase", "order", "hasLeadingOffset"), pos)
    if _field(enc, "hasLeadingOffset", pos, False):
        raise SpecError(
            "triton_gpu.shared with hasLeadingOffset = true is the wgmma "
            "layout: expected #ttg.nvmma_shared instead",
            pos,
        )
    vec, per_phase, max_phase = (_field(enc, k, pos) for k in ("vec", "perPhase", "maxPhase"))
    order = _field(enc, "order", pos)
    for value, what in ((vec, "vec"), (per_phase, "perPhase"), (max_phase, "maxPhase")):
        _power_of_two(value, f"{enc.kind} {what}", pos)
    if sorted(order) != list(range(len(shape))):
        raise SpecError(
            f"{enc.kind}: order {order} is not a permutation of the "
            f"{len(shape)} dimensions of shape {list(shape)}",
            pos,
        )
    d = [Var(n) for n in coordinate_names(len(shape))]
    col, row = order[0], order[1]
    phase = BinOp("%", BinOp("/", d[row], Const(per_phase)), Const(max_phase))
    flip = BinOp("%", BinOp("*", phase, Const(vec)), Const(shape[col]))
    swizzled = BinOp("^", d[col], flip)
    return _row_major_offset([(swizzled, shape[col])] + [(d[i], shape[i]) for i in order[1:]])


def nvmma_formula(enc: Encoding, shape: tuple[int, ...], pos: Pos) -> Expr:
    _check_fields(enc, ("swizzlingByteWidth", "transposed", "elementBitWidth", "fp4Padded"), pos)
    width = _field(enc, "swizzlingByteWidth", pos)
    bits = _field(enc, "elementBitWidth", pos)
    if width not in (32, 64, 128):
        raise SpecError(
            f"nvmma_shared swizzlingByteWidth: expected 32, 64 or 128, found "
            f"{width} (the unswizzled core-matrix layout is not modelled)",
            pos,
        )
    if bits not in (8, 16, 32, 64):
        raise SpecError(
            f"nvmma_shared elementBitWidth: expected 8, 16, 32 or 64 bits, found {bits}", pos
        )
    if _field(enc, "fp4Padded", pos, False):
        raise SpecError("nvmma_shared: fp4Padded = true (packed fp4) is not modelled", pos)
    if len(shape) != 2:
        raise SpecError(f"nvmma_shared: expected a 2-D shape, found {list(shape)}", pos)
    d = [Var(n) for n in coordinate_names(2)]
    col, row = (0, 1) if _field(enc, "transposed", pos, False) else (1, 0)
    per_row = width * 8 // bits  # elements per swizzle row
    if shape[col] % per_row:
        raise SpecError(
            f"nvmma_shared: the contiguous dimension ({shape[col]}) must be a "
            f"multiple of {per_row} elements ({width} bytes)",
            pos,
        )
    _check_nvmma_rows(shape[row], row, per_row, pos)
    chunk = 128 // bits  # elements per 16-byte chunk
    in_block, block = BinOp("%", d[col], Const(per_row)), BinOp("/", d[col], Const(per_row))
    phase = BinOp("%", BinOp("/", d[row], Const(128 // width)), Const(width // 16))
    swizzled = BinOp("^", in_block, BinOp("*", phase, Const(chunk)))
    return _row_major_offset([(swizzled, per_row), (d[row], shape[row]), (block, 1)])


def _check_nvmma_rows(rows: int, row_dim: int, per_row: int, pos: Pos):
    """The swizzle pattern repeats every 8 rows, and Triton refuses a tile that does
    not hold one whole repeat. Triton 3.9's check is in nvmmaSharedToLinearLayout
    (triton-lang/triton, lib/Dialect/TritonGPU/IR/LinearLayoutConversions.cpp); the
    installed libtriton.so aborts on a 4x64 f16 tile with "Illegal shared layout;
    expected collapsed shapePerCTA to be at least [8, 64], collapsedTmaShape: [4, 64]"."""
    if rows < 8:
        raise SpecError(
            f"nvmma_shared: expected at least 8 rows in dimension d{row_dim}, "
            f"found {rows}: the swizzle pattern repeats every 8 rows, and Triton "
            f'refuses the encoding on a smaller tile ("expected collapsed '
            f'shapePerCTA to be at least [8, {per_row}]")',
            pos,
        )


def required_alignment(enc: Encoding) -> int:
    """Bytes the buffer must be aligned to for the encoding's offsets to be right."""
    return 8 * enc.fields["swizzlingByteWidth"] if enc.kind == "nvmma_shared" else 1


@dataclass(frozen=True)
class EncodedFormula(Formula):
    """A Triton encoding's formula that remembers the encoding it came from, so an
    explanation can name the swizzle it is (`as_cute_swizzle`)."""

    encoding: Encoding
    shape: tuple[int, ...] = ()


def as_cute_swizzle(function) -> tuple[Swizzle, CuteLayout] | None:
    """A swizzled_shared encoding as CuTe's ``Sw<B,M,S> o inner``, when it is one:
    powers of two with vec * maxPhase within the contiguous extent (the column XOR
    then never wraps) and perPhase * maxPhase within the next dimension (the phase
    then never reads a third dimension's bits). `inner` takes (d0, d1, ...)."""
    if not isinstance(function, EncodedFormula) or function.encoding.kind != "swizzled_shared":
        return None
    fields, shape = function.encoding.fields, function.shape
    vec, per_phase, max_phase = fields["vec"], fields["perPhase"], fields["maxPhase"]
    order = fields["order"]
    cols, rows = shape[order[0]], shape[order[1]]
    if vec * max_phase > cols or per_phase * max_phase > rows:
        return None
    stride, scale = [0] * len(shape), 1
    for dim in order:
        stride[dim], scale = scale, scale * shape[dim]
    inner = CuteLayout(tuple(shape), tuple(stride))
    return Swizzle(_log2(max_phase), _log2(vec), _log2(cols * per_phase // vec)), inner


def _log2(power_of_two: int) -> int:
    return power_of_two.bit_length() - 1


def _check_padded_as_triton_reads_it(enc: Encoding, pos: Pos):
    """Triton 3.9's PaddedSharedEncodingAttr::parse and ::verify
    (lib/Dialect/TritonGPU/IR/Dialect.cpp): the fields are ``{offset, block}`` or
    ``{order, shape}``, never a mix (Triton reports "Unexpected attribute" and
    builds the offset form, where the identity would otherwise be read here);
    the offset form names its block bases; each offset basis moves along one
    dimension by a power of two ("Each offset basis must move in at most one
    dimension", "... must be 0 or a power of two")."""
    given = set(enc.fields) - {"intervals"}
    if given & {"offset", "block"} and given & {"order", "shape"}:
        raise SpecError(
            "padded_shared: expected {offset = [...], block = []} or {order = [...], "
            "shape = [...]}, found fields of both (Triton rejects the mix)",
            pos,
        )
    if "offset" in given and "block" not in given:
        raise SpecError(
            "padded_shared: expected 'block = []' beside 'offset', as Triton prints it "
            "(its parser requires both)",
            pos,
        )
    bases = enc.fields.get("offset")
    for basis in bases if isinstance(bases, list) else []:
        moving = [v for v in basis if v] if isinstance(basis, list) else []
        if len(moving) > 1 or any(type(v) is not int or v < 0 or v & (v - 1) for v in moving):
            raise SpecError(
                f"padded_shared: offset basis {basis}: expected a move along one "
                "dimension by a power of two (Triton's verifier rejects others)",
                pos,
            )


def layout(enc: Encoding, shape: tuple[int, ...], pos: Pos = Pos()) -> Formula:
    """The encoding on a tensor of `shape`, over coordinates d0, d1, ..."""
    if len(shape) < 2:
        raise SpecError(f"{enc.kind}: expected a shape of rank 2 or more, found {list(shape)}", pos)
    for n in shape:
        _power_of_two(n, f"{enc.kind} shape {list(shape)}", pos)
    if enc.kind in ("padded_shared", "shared_linear"):
        _check_fields(enc, triton_linear.FIELDS[enc.kind], pos)
        if enc.kind == "padded_shared":
            _check_padded_as_triton_reads_it(enc, pos)
        body = triton_linear.formula(enc.kind, enc.fields, shape, pos)
        if enc.kind == "shared_linear" and "alignment" not in enc.fields:
            raise SpecError(
                "shared_linear: expected ', alignment = N' after the braces, as "
                "Triton prints it (its parser requires it)",
                pos,
            )
    else:
        body = (swizzled_formula if enc.kind == "swizzled_shared" else nvmma_formula)(
            enc, shape, pos
        )
    params = tuple((n, Range(0, s)) for n, s in zip(coordinate_names(len(shape)), shape))
    return EncodedFormula(params, body, enc, tuple(shape))
