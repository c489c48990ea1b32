"""The bit-vector width a query needs, decided without z3: the enumeration
engine asks it too (the same SpecError past MAX_WIDTH, whichever engine runs), and
a check decided by enumeration should not load the solver."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from verify.errors import SpecError
from verify.model.expr import Expr, Range, max_intermediate

# Widths above this mean a spec with absurd magnitudes; reject rather than crawl.
MAX_WIDTH = 192


def width_for(exprs: Iterable[Expr], ranges: Mapping[str, Range], extra: int = 0) -> int:
    """Bits so that every subexpression, every range bound (queries constrain each
    variable to its range) and values up to `extra` fit, with margin.

    The margin of two bits leaves room for sums of two terms built by the
    property encodings (``addr + size``) without wrap-around.
    Raises SpecError past MAX_WIDTH, whichever engine then evaluates the values.
    """
    top = max(
        [extra, *(r.hi for r in ranges.values()), *(max_intermediate(e, ranges) for e in exprs)]
    )
    width = max(8, top.bit_length() + 2)
    if width > MAX_WIDTH:
        raise SpecError(f"values need {width} bits: expected magnitudes below 2^{MAX_WIDTH - 2}")
    return width
