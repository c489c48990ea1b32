"""TTGIR as pasted: ``#name = #ttg.<...>`` alias lines and ``!ttg.memdesc<...>`` types.

Overview
--------
A memdesc type names a shared-memory buffer the way Triton prints it:
``!ttg.memdesc<SHAPExTYPE, ENCODING, MEMORY SPACE[, mutable][, ALLOCATION SHAPE]>``.
The oracle reads it as the layout ``ENCODING shape (SHAPE)`` of elements TYPE.
ENCODING and MEMORY SPACE are attributes written out or ``#aliases`` defined by
an alias line above (MLIR's attribute aliases). Read the way Triton's own parser
reads these types (tests/ttgir/test_oracle_ttgir.py hands the same text to Triton's
MLIR parser and compares what it builds); what the oracle does not model is
refused: a memory space other than shared memory, an allocation shape other than
the type's own (a view into a larger buffer).

Worked example
--------------
With ``#shared = #ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8,
order = [1, 0]}>`` and ``#smem = #ttg.shared_memory`` above,
``!ttg.memdesc<64x32xbf16, #shared, #smem, mutable>`` is shape (64, 32) of bf16
in the swizzled encoding.

The math
--------
None: reading. MLIR's element types map to the spec's dtypes (f16 -> f16,
f8E4M3FN -> e4m3, ...); a spec without a ``dtype`` line takes the first
memdesc's element type, and every memdesc must store the spec's dtype.
"""

from __future__ import annotations

import re

from oracle.errors import OracleRefusal

_MEMDESC = re.compile(r"!ttg\.memdesc<(?P<body>.*)>$", re.S)
_HEAD = re.compile(r"(?P<shape>\d+(?:x\d+)*)x(?P<element>[A-Za-z][A-Za-z0-9]*)$")
_ALLOCATION = re.compile(r"\d+(?:x\d+)*$")
SHARED_MEMORY = "#ttg.shared_memory"
# MLIR's builtin element types -> the spec's dtype names (README "dtype").
ELEMENT_TYPES = {
    **{t: t for t in ("f16", "bf16", "f32", "tf32", "f64", "i8", "i16", "i32", "i64")},
    "f8E4M3FN": "e4m3",
    "f8E4M3FNUZ": "e4m3",
    "f8E5M2": "e5m2",
    "f8E5M2FNUZ": "e5m2",
}


def alias_name(token: str) -> str:
    """``#shared =`` -> ``#shared``."""
    return token.rstrip("=").strip()


def resolve(text: str, aliases: dict[str, str], at: str) -> str:
    """An attribute as written, or the one its ``#alias`` names."""
    if text.startswith(("#ttg.", "#triton_gpu.")):
        return text
    if text not in aliases:
        raise OracleRefusal(f"{at}: '{text}' is no alias defined above")
    return aliases[text]


def read(text: str, aliases: dict[str, str], at: str) -> tuple[tuple[int, ...], str, str]:
    """(shape, dtype, encoding text) of a memdesc type."""
    m = _MEMDESC.match(text)
    parts = _split(m["body"]) if m else []
    if len(parts) < 3:
        raise OracleRefusal(f"{at}: cannot read the memdesc type {text[:60]!r}")
    head, encoding, space, *rest = parts
    h = _HEAD.match(head)
    if not h or h["element"] not in ELEMENT_TYPES:
        raise OracleRefusal(f"{at}: memdesc shape and element type {head!r} not read")
    shape = tuple(int(n) for n in h["shape"].split("x"))
    if resolve(space, aliases, at) != SHARED_MEMORY:
        raise OracleRefusal(f"{at}: memory space {space} is not {SHARED_MEMORY}")
    encoding = resolve(encoding, aliases, at)
    if encoding == SHARED_MEMORY:
        raise OracleRefusal(f"{at}: the memory space stands where the encoding belongs")
    for part in rest:
        same = _ALLOCATION.match(part) and tuple(int(n) for n in part.split("x")) == shape
        if part != "mutable" and not same:
            raise OracleRefusal(f"{at}: memdesc tail {part!r}: a view or unknown")
    return shape, ELEMENT_TYPES[h["element"]], encoding


def _split(body: str) -> list[str]:
    """The type's parameters: commas outside <>, [] and {}."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(body):
        depth += (ch in "<[{") - (ch in ">]}")
        if ch == "," and depth == 0:
            parts.append(body[start:i].strip())
            start = i + 1
    parts.append(body[start:].strip())
    return parts
