"""Triton's shared-memory encodings, evaluated by Triton's own linear layouts.

Overview
--------
``#ttg.swizzled_shared<{vec = V, perPhase = P, maxPhase = X, order = [1, 0]}> shape
(D0, D1)`` (older spelling ``#triton_gpu.shared<{...}>``),
``#ttg.nvmma_shared<{swizzlingByteWidth = S, transposed = T, elementBitWidth = N}>``
and ``#ttg.shared_linear<{offset = [[...], ...]}, alignment = A>`` are handed to
Gluon's ``to_linear_layout`` (the ``triton`` wheel, no GPU needed), which returns
the encoding as a linear map from offset bits to coordinates. Inverting it gives
each coordinate's element offset; the oracle lists coordinates ``d0, d1, ...``
colexicographically, ``index = d0 + D0*d1 + ...``.

``#ttg.padded_shared<[I:+P, ...] {...}>`` is a linear component plus padding.
Triton 3.9's ``to_linear_layout`` aborts on it, so its linear component -- the
``offset`` bases, or Gluon's ``PaddedSharedLayout.with_identity_for`` for the
``{order = [...], shape = [...]}`` form -- goes through ``to_linear_layout`` as a
``SharedLinearLayout``, and the padding is added by Triton's lowering rule
(`_padded`). tests/ttgir/test_oracle_ttgir.py compares the result with the shared
addresses Triton's own sm_90 lowering computes (PTX of a compiled Gluon kernel).

Worked example
--------------
swizzled_shared vec 8, perPhase 1, maxPhase 8, order [1, 0] on 16x64: Triton's
offset bases 0..5 walk d1 (the contiguous dimension), bases 6.. walk d0 with the
XOR folded in; the element (d0, d1) = (3, 10) gets offset 3*64 + (10 ^ 24) = 210.
padded_shared [32:+8] {order = [1, 0], shape = [64, 64]}: element (1, 0) has linear
offset 64 and is stored at 64 + (64 >> 5 << 3) = 80.

The math
--------
A linear layout maps offset o = sum_b o_b 2^b to coordinate XOR_b (o_b *
basis_b); with one basis per offset bit and the map a bijection onto the
tensor, the table ``offset[coordinate]`` is its inverse. Padding: o is stored at
``o + sum_pairs (o >> log2 I) << log2 P``.

Triton aborts the whole process (a C++ assertion or an LLVM fatal error) on some
invalid inputs, so every field is validated first, by Triton's own parser and
verifier rules (lib/Dialect/TritonGPU/IR/Dialect.cpp, Triton 3.9): power-of-two
extents and parameters, ``order`` a permutation, nvmma_shared 2-D with
swizzlingByteWidth 32/64/128, the contiguous dimension a multiple of the swizzle
row and at least 8 rows; for the linear encodings one basis per offset bit, each
inside the tensor, together a bijection (checked by enumeration), no CTA bases;
padded_shared's bases each moving along one dimension by a power of two, its
intervals distinct, its form ``{offset, block}`` or ``{order, shape}``, never a
mix; shared_linear's alignment written after the braces. Required buffer
alignment: 8*S bytes for nvmma_shared (the README; Triton's ``alignment``
agrees, tested), none for the others (swizzled_shared: Triton reports 16 there;
the README asks for none, and offsets relative to the buffer do not depend on
it; shared_linear's ``alignment`` is how Triton aligns the allocation).
"""

from __future__ import annotations

import ast
import re
from functools import cache, lru_cache

import numpy as np

from oracle.errors import OracleRefusal, OracleUnavailable

_ENCODING = re.compile(r"#(?P<dialect>ttg|triton_gpu)\.(?P<kind>[A-Za-z_]+)<(?P<inner>.*)>$")
# What follows the kind inside <...>, as Triton's parsers read it: {fields} for
# most, padded_shared's [I:+P, ...] before them, shared_linear's alignment after.
_INNER = {
    "padded_shared": re.compile(r"\[(?P<pairs>[^\[\]]*)\]\s*\{(?P<body>.*)\}$"),
    "shared_linear": re.compile(r"\{(?P<body>.*)\}\s*,\s*alignment\s*=\s*(?P<alignment>\d+)$"),
}
_BRACED = re.compile(r"\{(?P<body>[^{}]*)\}$")
_KEY = re.compile(r"\s*(?P<key>[A-Za-z_][A-Za-z0-9_]*)\s*=\s*(?P<value>.*?)\s*$", re.S)
_INTEGERS = re.compile(r"[\[\]\d\s,-]*$")
_PAIR = re.compile(r"\s*(\d+)\s*:\s*\+\s*(\d+)\s*$")
_CTA_FIELDS = ("CTAsPerCGA", "CTASplitNum", "CTAOrder")
_FIELDS = {
    "swizzled_shared": ("vec", "perPhase", "maxPhase", "order", "hasLeadingOffset"),
    "nvmma_shared": ("swizzlingByteWidth", "transposed", "elementBitWidth", "fp4Padded"),
    "padded_shared": ("offset", "block", "order", "shape"),
    "shared_linear": ("offset", "block"),
}


def _value(text: str, kind: str):
    if text in ("true", "false"):
        return text == "true"
    if not text or not _INTEGERS.match(text):
        raise OracleRefusal(f"{kind}: cannot read the value {text[:40]!r}")
    try:
        value = ast.literal_eval(text)
    except (SyntaxError, ValueError):
        raise OracleRefusal(f"{kind}: cannot read the value {text[:40]!r}") from None
    return _tuples(value)


def _tuples(value):
    """Lists as tuples (hashable, for the cache of `offsets`)."""
    return tuple(_tuples(v) for v in value) if isinstance(value, list) else value


def _entries(body: str) -> list[str]:
    """``a = 1, b = [[0, 1], [1, 0]]`` split at the commas outside brackets."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(body):
        depth += (ch == "[") - (ch == "]")
        if ch == "," and depth == 0:
            parts.append(body[start:i])
            start = i + 1
    parts.append(body[start:])
    return [p for p in parts if p.strip()] if body.strip() else []


def parse(text: str) -> tuple[str, dict]:
    """(kind, fields) of ``#ttg.<kind><...>``; padded_shared's pairs are the field
    'pairs', shared_linear's alignment the field 'alignment'."""
    m = _ENCODING.match(text.strip())
    if not m:
        raise OracleRefusal(f"cannot read the Triton encoding {text!r}")
    kind = "swizzled_shared" if m["kind"] == "shared" else m["kind"]
    if kind not in _FIELDS:
        raise OracleRefusal(
            f"Triton encoding '{m['kind']}': the oracle reads "
            "swizzled_shared, nvmma_shared, padded_shared and shared_linear"
        )
    inner = _INNER.get(kind, _BRACED).match(m["inner"].strip())
    if not inner:
        raise OracleRefusal(f"{kind}: cannot read {m['inner'].strip()[:60]!r}")
    fields = {}
    for entry in _entries(inner["body"]):
        e = _KEY.match(entry)
        if not e:
            raise OracleRefusal(f"{kind}: cannot read {entry.strip()[:40]!r}")
        if e["key"] in fields:
            raise OracleRefusal(f"{kind}: the field '{e['key']}' is given twice")
        fields[e["key"]] = _value(e["value"], kind)
    _check_fields(kind, fields)
    if kind == "padded_shared":
        fields["pairs"] = _pairs(inner["pairs"])
    if kind == "shared_linear":
        fields["alignment"] = int(inner["alignment"])
    return kind, fields


def _pairs(text: str) -> tuple[tuple[int, int], ...]:
    """``32:+8, 64:+4`` -> ((32, 8), (64, 4))."""
    pairs = []
    for item in text.split(","):
        m = _PAIR.match(item)
        if not m:
            raise OracleRefusal(f"padded_shared: cannot read the pair {item.strip()!r}")
        pairs.append((int(m[1]), int(m[2])))
    return tuple(pairs)


def _check_fields(kind: str, fields: dict):
    for name, value in fields.items():
        if name in _CTA_FIELDS and kind in ("swizzled_shared", "nvmma_shared"):
            if not isinstance(value, tuple) or (name != "CTAOrder" and any(v != 1 for v in value)):
                raise OracleRefusal(
                    f"{kind}: {name} = {value} splits the tensor over CTAs "
                    "(or is not a list); the oracle reads one CTA's shared memory"
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
    """The arguments `offsets` takes, after every check that keeps Triton alive."""
    if len(shape) < 2 or any(not isinstance(n, int) for n in shape):
        raise OracleRefusal(f"{kind}: expected a flat shape of rank 2 or more, found {shape}")
    for n in shape:
        _power_of_two(n, f"{kind} shape {shape}")
    return _ARGS[kind](fields, shape)


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
    if not isinstance(order, tuple) or sorted(order) != list(range(len(shape))):
        raise OracleRefusal(
            f"{kind}: order {order} is not a permutation of {len(shape)} dimensions"
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


def _linear_args(fields: dict, shape) -> tuple:
    kind = "shared_linear"
    _power_of_two(fields["alignment"], f"{kind} alignment")
    _no_cta_bases(kind, fields)
    return ("linear", _bijective_bases(kind, _need(fields, "offset", kind), shape))


def _padded_args(fields: dict, shape) -> tuple:
    """Triton's PaddedSharedEncodingAttr::parse and ::verify (Dialect.cpp): distinct
    power-of-two intervals, power-of-two paddings, and either ``{offset, block}``
    (each basis moving along one dimension by a power of two) or ``{order, shape}``
    (the identity Gluon's with_identity_for builds)."""
    kind, pairs = "padded_shared", fields["pairs"]
    for interval, padding in pairs:
        _power_of_two(interval, f"{kind} interval")
        _power_of_two(padding, f"{kind} padding")
    if len({i for i, _ in pairs}) != len(pairs):
        raise OracleRefusal(f"{kind}: intervals {[i for i, _ in pairs]} repeat")
    if "offset" in fields or "block" in fields:
        if "order" in fields or "shape" in fields:
            raise OracleRefusal(f"{kind}: 'offset'/'block' and 'order'/'shape' together")
        _need(fields, "block", kind)
        _no_cta_bases(kind, fields)
        bases = _bijective_bases(kind, _need(fields, "offset", kind), shape)
        for basis in bases:
            moving = [v for v in basis if v]
            if len(moving) > 1 or any(v & (v - 1) for v in moving):
                raise OracleRefusal(
                    f"{kind}: basis {list(basis)} must move along one dimension by a power of two"
                )
        return ("padded", pairs, bases)
    return ("padded", pairs, _identity_bases(pairs, fields, shape))


def _identity_bases(pairs, fields: dict, shape) -> tuple:
    kind = "padded_shared"
    order, declared = _need(fields, "order", kind), _need(fields, "shape", kind)
    if not isinstance(order, tuple) or sorted(order) != list(range(len(shape))):
        raise OracleRefusal(f"{kind}: order {order} is not a permutation of {len(shape)} dims")
    if declared != tuple(shape):
        raise OracleRefusal(
            f"{kind}: its shape {declared} is not the tensor's {shape} (a view is not read)"
        )
    from triton.experimental.gluon.language import PaddedSharedLayout

    layout = PaddedSharedLayout.with_identity_for(
        [list(p) for p in pairs], list(shape), list(order)
    )
    return _tuples(layout.offset_bases)


def _no_cta_bases(kind: str, fields: dict):
    if fields.get("block", ()) != ():
        raise OracleRefusal(f"{kind}: block bases split the tensor over CTAs; one CTA is read")


def _bijective_bases(kind: str, bases, shape) -> tuple:
    """One basis per offset bit, each a coordinate inside the tensor, reaching every
    element once (checked by enumerating all XORs of the bases)."""
    total = int(np.prod(shape))
    if (
        not isinstance(bases, tuple)
        or len(bases) != total.bit_length() - 1
        or any(not isinstance(b, tuple) or len(b) != len(shape) for b in bases)
    ):
        raise OracleRefusal(
            f"{kind}: expected {total.bit_length() - 1} offset bases of {len(shape)} "
            f"integers for shape {shape}"
        )
    if any(not 0 <= v < n for b in bases for v, n in zip(b, shape)):
        raise OracleRefusal(f"{kind}: an offset basis lies outside the shape {shape}")
    if total > (1 << 22):
        raise OracleRefusal(f"{kind}: shape {shape} is beyond the limit")
    strides = np.cumprod((1,) + tuple(shape[:-1]))
    reached = np.zeros(1, dtype=np.int64)
    for basis in bases:
        reached = np.concatenate([reached, _xor_index(reached, basis, shape, strides)])
    if len(np.unique(reached)) != total:
        raise OracleRefusal(f"{kind}: the offset bases are not a bijection onto the tensor")
    return bases


_ARGS = {
    "swizzled_shared": _swizzled_args,
    "nvmma_shared": _nvmma_args,
    "shared_linear": _linear_args,
    "padded_shared": _padded_args,
}


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
    from triton.experimental.gluon.language import (
        NVMMASharedLayout,
        SharedLinearLayout,
        SwizzledSharedLayout,
    )

    kind, *params = args
    if kind in ("linear", "padded"):
        encoding = SharedLinearLayout([list(b) for b in params[-1]], [], 16)
    else:
        params = [list(p) if isinstance(p, tuple) else p for p in params]
        make = SwizzledSharedLayout if kind == "swizzled" else NVMMASharedLayout
        encoding = make(*params)
    linear = builder.to_linear_layout(encoding._to_ir(builder), list(shape))
    table = _inverse(linear.offset_bases, shape)
    return _padded(table, params[0]) if kind == "padded" else table


def _padded(linear: np.ndarray, pairs) -> np.ndarray:
    """Triton's padding of a linear offset o: ``o + sum (o >> log2 I) << log2 P`` over
    the pairs. Written from Triton 3.9's lowering, which every shared load and store
    of a padded encoding goes through: ``emitPadding`` in
    lib/Conversion/TritonGPUToLLVM/Utility.cpp (``padOffset += (smemOffset >>
    log2(interval)) << log2(padding)`` per pair, in bytes or elements alike) added
    to the offset by ``lowerLdStShared`` / ``lowerLocalPointers`` (``smemOffset =
    add(smemOffset, padOffset)``); Gluon's PaddedSharedLayout docstring says the
    same ("if a position corresponds to multiple intervals, the padding amounts are
    summed")."""
    padding = np.zeros_like(linear)
    for interval, pad in pairs:
        padding += (linear >> (interval.bit_length() - 1)) << (pad.bit_length() - 1)
    return linear + padding


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
