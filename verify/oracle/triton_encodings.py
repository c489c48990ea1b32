"""Triton's shared-memory encodings, evaluated by Triton's own linear layouts.

Overview
--------
``#ttg.swizzled_shared<{vec = V, perPhase = P, maxPhase = X, order = [1, 0]}> shape
(D0, D1)`` (older spelling ``#triton_gpu.shared<{...}>``) and
``#ttg.nvmma_shared<{swizzlingByteWidth = S, transposed = T, elementBitWidth = N}>
shape (D0, D1)`` are handed to Gluon's ``to_linear_layout`` (the ``triton``
wheel, no GPU needed), which returns the encoding as a linear map from offset
bits to coordinates. Inverting it gives each coordinate's element offset; the
oracle lists coordinates ``d0, d1, ...`` colexicographically, ``index = d0 +
D0*d1 + ...``.

Worked example
--------------
swizzled_shared vec 8, perPhase 1, maxPhase 8, order [1, 0] on 16x64: Triton's
offset bases 0..5 walk d1 (the contiguous dimension), bases 6.. walk d0 with the
XOR folded in; the element (d0, d1) = (3, 10) gets offset 3*64 + (10 ^ 24) = 210.

The math
--------
A linear layout maps offset o = sum_b o_b 2^b to coordinate XOR_b (o_b *
basis_b); with one basis per offset bit and the map a bijection onto the
tensor, the table ``offset[coordinate]`` is its inverse.

Triton aborts the whole process (a C++ assertion) on some invalid inputs, so
every field is validated first: power-of-two extents and parameters, ``order`` a
permutation, nvmma_shared 2-D with swizzlingByteWidth 32/64/128, the contiguous
dimension a multiple of the swizzle row and at least 8 rows. Required buffer
alignment: 8*S bytes for nvmma_shared (the README; Triton's ``alignment`` agrees,
tested), none for swizzled_shared (Triton reports 16 there; the README asks for
none, and offsets relative to the buffer do not depend on it).
"""

from __future__ import annotations

import re
from functools import cache, lru_cache

import numpy as np

from verify.oracle.errors import OracleRefusal, OracleUnavailable

_ENCODING = re.compile(r"#(?P<dialect>ttg|triton_gpu)\.(?P<kind>[A-Za-z_]+)<\{(?P<body>[^}]*)\}>$")
_ENTRY = re.compile(
    r"\s*(?P<key>[A-Za-z_][A-Za-z0-9_]*)\s*=\s*"
    r"(?P<value>\[[^\]]*\]|true|false|-?\d+)\s*(,|$)"
)
_CTA_FIELDS = ("CTAsPerCGA", "CTASplitNum", "CTAOrder")
_FIELDS = {
    "swizzled_shared": ("vec", "perPhase", "maxPhase", "order", "hasLeadingOffset"),
    "nvmma_shared": ("swizzlingByteWidth", "transposed", "elementBitWidth", "fp4Padded"),
}


def _value(text: str):
    if text.startswith("["):
        return tuple(int(v) for v in text[1:-1].split(",") if v.strip())
    if text in ("true", "false"):
        return text == "true"
    return int(text)


def parse(text: str) -> tuple[str, dict]:
    """(kind, fields) of ``#ttg.<kind><{name = value, ...}>``."""
    m = _ENCODING.match(text.strip())
    if not m:
        raise OracleRefusal(f"cannot read the Triton encoding {text!r}")
    kind = "swizzled_shared" if m["kind"] == "shared" else m["kind"]
    if kind not in _FIELDS:
        raise OracleRefusal(
            f"Triton encoding '{m['kind']}': the oracle reads swizzled_shared and nvmma_shared"
        )
    fields, rest = {}, m["body"]
    while rest.strip():
        e = _ENTRY.match(rest)
        if not e:
            raise OracleRefusal(f"{kind}: cannot read {rest.strip()[:40]!r}")
        fields[e["key"]] = _value(e["value"])
        rest = rest[e.end() :]
    _check_fields(kind, fields)
    return kind, fields


def _check_fields(kind: str, fields: dict):
    for name, value in fields.items():
        if name in _CTA_FIELDS:
            if name != "CTAOrder" and any(v != 1 for v in value):
                raise OracleRefusal(
                    f"{kind}: {name} = {list(value)} splits the tensor over "
                    "CTAs; the oracle reads one CTA's shared memory"
                )
        elif name not in _FIELDS[kind]:
            raise OracleRefusal(f"{kind}: unknown field '{name}'")


def _power_of_two(value, what: str):
    if not isinstance(value, int) or value < 1 or value & (value - 1):
        raise OracleRefusal(f"{what}: expected a power of two, found {value}")


def _need(fields: dict, name: str, kind: str):
    if name not in fields:
        raise OracleRefusal(f"{kind}: missing the field '{name}'")
    return fields[name]


def required_alignment(kind: str, fields: dict) -> int:
    return 8 * fields["swizzlingByteWidth"] if kind == "nvmma_shared" else 1


def validate(kind: str, fields: dict, shape: tuple[int, ...]) -> tuple:
    """The Gluon constructor arguments, after every check that keeps Triton alive."""
    if len(shape) < 2 or any(not isinstance(n, int) for n in shape):
        raise OracleRefusal(f"{kind}: expected a flat shape of rank 2 or more, found {shape}")
    for n in shape:
        _power_of_two(n, f"{kind} shape {shape}")
    if kind == "swizzled_shared":
        return _swizzled_args(fields, shape)
    return _nvmma_args(fields, shape)


def _swizzled_args(fields: dict, shape) -> tuple:
    kind = "swizzled_shared"
    if fields.get("hasLeadingOffset", False):
        raise OracleRefusal(
            "triton_gpu.shared with hasLeadingOffset = true: the oracle reads "
            "it only as #ttg.nvmma_shared"
        )
    vec, per, most = (_need(fields, k, kind) for k in ("vec", "perPhase", "maxPhase"))
    order = _need(fields, "order", kind)
    for value, what in ((vec, "vec"), (per, "perPhase"), (most, "maxPhase")):
        _power_of_two(value, f"{kind} {what}")
    if sorted(order) != list(range(len(shape))):
        raise OracleRefusal(
            f"{kind}: order {list(order)} is not a permutation of {len(shape)} dimensions"
        )
    if np.prod(shape) < 2:
        raise OracleRefusal(f"{kind}: a one-element tensor has no offset bits in Triton")
    return ("swizzled", vec, per, most, tuple(order))


def _nvmma_args(fields: dict, shape) -> tuple:
    kind = "nvmma_shared"
    width, bits = _need(fields, "swizzlingByteWidth", kind), _need(fields, "elementBitWidth", kind)
    transposed = fields.get("transposed", False)
    if width not in (32, 64, 128):
        raise OracleRefusal(
            f"{kind} swizzlingByteWidth {width}: the oracle reads 32, 64 and "
            "128 (the unswizzled interleave's alignment is not specified)"
        )
    if bits not in (8, 16, 32, 64) or fields.get("fp4Padded", False):
        raise OracleRefusal(
            f"{kind} elementBitWidth {bits}: expected 8, 16, 32 or 64, without fp4Padded"
        )
    if len(shape) != 2:
        raise OracleRefusal(f"{kind}: the oracle reads 2-D shapes, found {shape}")
    contiguous, rows = (shape[0], shape[1]) if transposed else (shape[1], shape[0])
    if contiguous % (width * 8 // bits) or rows < 8:
        raise OracleRefusal(
            f"{kind}: shape {shape} needs a contiguous extent that is a "
            f"multiple of {width * 8 // bits} elements and at least 8 rows"
        )
    return ("nvmma", width, bits, 2, bool(transposed))


@cache
def _builder():
    try:
        from triton._C.libtriton import gluon_ir, ir
    except ImportError:
        raise OracleUnavailable(
            "triton is not installed: the oracle evaluates #ttg "
            "encodings with Triton's own linear layouts"
        ) from None
    context = ir.context()
    ir.load_dialects(context)
    return context, gluon_ir.GluonOpBuilder(context)


@lru_cache(maxsize=256)
def offsets(args: tuple, shape: tuple[int, ...]) -> np.ndarray:
    """Element offset of every coordinate, coordinates colexicographic (d0 fastest)."""
    _, builder = _builder()
    from triton.experimental.gluon.language import NVMMASharedLayout, SwizzledSharedLayout

    kind, *params = args
    params = [list(p) if isinstance(p, tuple) else p for p in params]
    encoding = SwizzledSharedLayout(*params) if kind == "swizzled" else NVMMASharedLayout(*params)
    linear = builder.to_linear_layout(encoding._to_ir(builder), list(shape))
    return _inverse(linear.offset_bases, shape)


def _inverse(bases, shape) -> np.ndarray:
    """offset[coordinate index] from the offset-bit bases (see module doc)."""
    strides = np.cumprod((1,) + tuple(shape[:-1]))
    total = int(np.prod(shape))
    if len(bases) != total.bit_length() - 1:
        raise OracleRefusal(f"Triton's layout has {len(bases)} offset bits for {total} elements")
    table = np.full(total, -1, dtype=np.int64)
    coord = np.zeros(total, dtype=np.int64)  # coordinate index of each offset, by XOR
    for bit, basis in enumerate(bases):
        half = 1 << bit
        coord[half : 2 * half] = _xor_index(coord[:half], basis, shape, strides)
    table[coord] = np.arange(total)
    if np.any(table < 0):
        raise OracleRefusal("Triton's layout is not a bijection onto the tensor")
    return table


def _xor_index(indices: np.ndarray, basis, shape, strides) -> np.ndarray:
    """Coordinate indices of (coordinate XOR basis) for coordinates given by index."""
    out = np.zeros_like(indices)
    for n, s, b in zip(shape, strides, basis):
        out += ((indices // s % n) ^ b) * s
    return out
