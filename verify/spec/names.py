"""Spelling help for messages: "did you mean", and the dtype names people use."""

from __future__ import annotations

import difflib
from collections.abc import Iterable

# canonical_dtype is verify.model.dtypes', imported here too for the parser's dtype messages.
from verify.model.dtypes import DTYPE_ALIASES, DTYPE_BYTES, canonical_dtype  # noqa: F401


def unknown_dtype_message(name: str) -> str:
    return (
        f"unknown dtype '{name}': expected one of {', '.join(sorted(DTYPE_BYTES))} "
        f"(or fp16, half, bfloat16, float, ...){did_you_mean(name, [*DTYPE_BYTES, *DTYPE_ALIASES])}"
    )


def did_you_mean(word: str, candidates: Iterable[str]) -> str:
    """'; did you mean 'x'?' for the candidate closest to `word`, or ''."""
    close = difflib.get_close_matches(word, sorted(set(candidates)), n=1, cutoff=0.6)
    return f"; did you mean '{close[0]}'?" if close else ""
