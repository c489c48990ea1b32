"""TTGIR's shared-memory buffer type, as pasted into a spec.

Overview
--------
``layout A = !ttg.memdesc<64x64xf16, #shared, #smem, mutable>`` says everything
a layout statement needs: the shape (64x64), the element type (f16, checked
against the spec's dtype, or the dtype when the spec has none) and the encoding
(inline, or an alias defined above by ``#shared = #ttg.swizzled_shared<...>``).
The memory space must be shared memory (``#ttg.shared_memory`` or an alias of
it); ``mutable`` is accepted; a trailing allocation shape is accepted only when
it is the shape itself (a view into a larger allocation is placed by the
allocation's encoding, which this type alone does not say).

Worked example
--------------
``!ttg.memdesc<128x64xbf16, #ttg.nvmma_shared<{swizzlingByteWidth = 128,
transposed = false, elementBitWidth = 16}>, #ttg.shared_memory, mutable, 128x64>``
-> shape (128, 64), element bf16, the nvmma encoding.

The math
--------
None: this is reading. The element type names are MLIR's (f16, bf16, f32, i8,
f8E4M3FN, ...), mapped to verify's dtypes.
"""

from __future__ import annotations

import re

from verify.errors import Pos, SpecError
from verify.spec.names import canonical_dtype

_MEMDESC = re.compile(r"!ttg\.memdesc<(?P<body>.*)>$")
_SHAPE_AND_TYPE = re.compile(r"(?P<shape>\d+(?:x\d+)*)x(?P<element>[A-Za-z]\w*)$")
_ALLOCATION = re.compile(r"\d+(?:x\d+)*$")
SHARED_MEMORY = "#ttg.shared_memory"
# MLIR's float8 spellings -> verify's dtypes (the others are verify's own names).
_MLIR_TYPES = {"f8E4M3FN": "e4m3", "f8E5M2": "e5m2", "f8E4M3FNUZ": "e4m3", "f8E5M2FNUZ": "e5m2"}


def read_memdesc(text: str, aliases: dict[str, str], pos: Pos) -> tuple[tuple[int, ...], str, str]:
    """(shape, element dtype, encoding text) of a memdesc type."""
    m = _MEMDESC.match(text)
    parts = top_level_split(m["body"]) if m else []
    if len(parts) < 3:
        raise SpecError(
            f"expected '!ttg.memdesc<SHAPExTYPE, #encoding, #ttg.shared_memory"
            f"[, mutable]>', found {text!r}",
            pos,
        )
    head, encoding, space, *rest = parts
    shape, element = _shape_and_type(head, pos)
    encoding = _resolve(encoding, aliases, "encoding", pos)
    if _resolve(space, aliases, "memory space", pos) != SHARED_MEMORY:
        raise SpecError(
            f"memdesc memory space {space}: expected {SHARED_MEMORY} (or an alias "
            "of it); other memories have no shared-memory banks",
            pos,
        )
    _check_tail(rest, shape, pos)
    return shape, element, encoding


def top_level_split(body: str) -> list[str]:
    """Split at commas outside <...>, [...] and {...}."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(body):
        depth += (ch in "<[{") - (ch in ">]}")
        if ch == "," and depth == 0:
            parts.append(body[start:i].strip())
            start = i + 1
    parts.append(body[start:].strip())
    return parts


def _shape_and_type(head: str, pos: Pos) -> tuple[tuple[int, ...], str]:
    m = _SHAPE_AND_TYPE.match(head)
    if not m:
        raise SpecError(
            f"memdesc: expected a shape and element type like '64x64xf16', found {head!r}", pos
        )
    element = _MLIR_TYPES.get(m["element"]) or canonical_dtype(m["element"])
    if element is None:
        raise SpecError(
            f"memdesc element type '{m['element']}': expected one of f16, bf16, "
            f"f32, f64, i8, i16, i32, i64, f8E4M3FN, f8E5M2",
            pos,
        )
    return tuple(int(n) for n in m["shape"].split("x")), element


def _resolve(text: str, aliases: dict[str, str], what: str, pos: Pos) -> str:
    if not text.startswith("#") or text.startswith(("#ttg.", "#triton_gpu.")):
        return text
    if text not in aliases:
        raise SpecError(
            f"memdesc {what} '{text}': expected an alias defined above "
            f"(as '{text} = #ttg.<...>') or the attribute itself",
            pos,
        )
    return aliases[text]


def _check_tail(rest: list[str], shape: tuple[int, ...], pos: Pos):
    """``mutable`` and the allocation shape, which must be the shape itself."""
    for part in rest:
        if part == "mutable":
            continue
        if _ALLOCATION.match(part):
            allocation = tuple(int(n) for n in part.split("x"))
            if allocation != shape:
                raise SpecError(
                    f"memdesc of a view ({'x'.join(map(str, shape))}) into a "
                    f"larger allocation ({part}): expected the allocation's own "
                    "memdesc (the view's placement follows the allocation)",
                    pos,
                )
            continue
        raise SpecError(
            f"memdesc: expected 'mutable' or the allocation shape after the "
            f"memory space, found {part!r}",
            pos,
        )


def element_type_errors(spec, types: list[tuple[str, Pos]]) -> list[SpecError]:
    """Each memdesc's element type must be the dtype; a spec without a dtype
    statement takes the first memdesc's."""
    if not types:
        return []
    if spec.dtype is None:
        spec.dtype, spec.dtype_pos = types[0]
    return [
        SpecError(
            f"memdesc stores {element} elements: expected the dtype, {spec.dtype}, found {element}",
            pos,
        )
        for element, pos in types
        if element != spec.dtype
    ]
