"""A layout given as text in any notation verify reads, outside a spec file.

`parse_layout` wraps the text in a one-statement spec (`layout_statement`) and
parses it with the spec parser, so a layout passed to the API or to `verify map`
meets the same grammar, notation rules and dtype checks as one in a spec; its
errors are located in the text as given.
"""

from __future__ import annotations

import re

from verify.errors import Pos, SpecError
from verify.spec.ast import LayoutDef
from verify.spec.names import canonical_dtype, unknown_dtype_message
from verify.spec.parser import parse_text

DEFAULT_LAYOUT_NAME = "L"


def parse_layout(
    text: str, shape: tuple[int, ...] | None = None, dtype: str | None = None
) -> LayoutDef:
    """A layout from CuTe text (``Sw<3,3,3> o (_8,_64):(_64,_1)``), a formula
    (``L(r in 0..8, c in 0..64) = 64*r + c``), or a Triton shared encoding
    (``#ttg.swizzled_shared<{...}>``), which needs the tensor `shape`. With a
    `dtype`, an element width the notation names (``<half_t>``, ``elementBitWidth``,
    ``smem_ptr[16b]``) must be the dtype's, as in a spec."""
    text = text.strip()
    dtype = check_dtype(dtype)
    source = layout_statement(text, shape)
    shift = len(source) - len(text) - len(_shape_suffix(shape))
    # The dtype travels as a first statement, so the spec's own checks apply.
    dtype_lines = 1 if dtype else 0
    try:
        spec = parse_text(f"dtype {dtype}\n{source}" if dtype else source, "<layout>")
    except SpecError as e:
        line = e.pos.line - dtype_lines
        col = max(1, e.pos.col - shift) if line == 1 else e.pos.col
        raise SpecError(
            e.message,
            Pos(line, col),
            "<layout>",
            text.splitlines()[0] if line == 1 and text else None,
        ) from None
    if len(spec.layouts) != 1 or spec.accesses or spec.checks:
        raise SpecError("expected exactly one layout", Pos(1, 1), "<layout>")
    return next(iter(spec.layouts.values()))


def layout_statement(
    text: str, shape: tuple[int, ...] | None = None, name: str | None = None
) -> str:
    """The spec statement defining layout `name` (default L) from `text` in any
    notation `parse_layout` reads; a formula keeps its own name unless `name` is given."""
    text = text.strip()
    if shape is not None and not text.startswith("#"):
        raise SpecError(
            f"a shape is given only with a Triton encoding (#ttg.<...>), found {text[:40]!r}",
            Pos(1, 1),
            "<layout>",
        )
    if shape is None and text.startswith("#"):
        raise SpecError(
            "a Triton encoding needs the tensor shape: expected --shape D0,D1 "
            "(Python: shape=(D0, D1))",
            Pos(1, 1),
            "<layout>",
        )
    if "=" in text.split("<")[0]:  # a formula: NAME(params) = expr
        return "layout " + (
            re.sub(r"^[A-Za-z][A-Za-z0-9_]*(?=\s*\()", name, text) if name else text
        )
    return f"layout {name or DEFAULT_LAYOUT_NAME} = {text}{_shape_suffix(shape)}"


def _shape_suffix(shape: tuple[int, ...] | None) -> str:
    return "" if shape is None else f" shape ({', '.join(str(int(n)) for n in shape)})"


def check_dtype(dtype: str | None) -> str | None:
    """verify's name for `dtype`, which may be spelt as people do (half, float, ...)."""
    if dtype is None:
        return None
    canonical = canonical_dtype(dtype)
    if canonical is None:
        raise SpecError(unknown_dtype_message(dtype))
    return canonical
