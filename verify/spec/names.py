"""Spelling help for messages: "did you mean", and the dtype names people use."""
from __future__ import annotations

import difflib
from typing import Iterable

from verify.program import DTYPE_BYTES

# The spellings of CUDA, CUTLASS, PyTorch, Triton and NumPy, to verify's own.
DTYPE_ALIASES = {
    **dict.fromkeys(("fp16", "half", "half_t", "float16", "__half"), "f16"),
    **dict.fromkeys(("bfloat16", "bfloat16_t", "__nv_bfloat16"), "bf16"),
    **dict.fromkeys(("float", "float32", "fp32"), "f32"),
    **dict.fromkeys(("tfloat32", "tfloat32_t", "fp32_tf32"), "tf32"),
    **dict.fromkeys(("double", "float64", "fp64"), "f64"),
    **dict.fromkeys(("fp8", "float_e4m3_t", "fp8e4m3", "fp8_e4m3", "float8_e4m3fn",
                     "fp8e4nv", "__nv_fp8_e4m3"), "e4m3"),
    **dict.fromkeys(("float_e5m2_t", "fp8e5m2", "fp8_e5m2", "float8_e5m2", "fp8e5",
                     "__nv_fp8_e5m2"), "e5m2"),
    **{f"{t}{n}{suffix}": f"{t[0]}{n}" for t in ("int", "uint") for n in (8, 16, 32, 64)
       for suffix in ("", "_t")},
}


def canonical_dtype(name: str) -> str | None:
    """verify's name for dtype `name` (``half_t`` -> ``f16``), or None if unknown."""
    if name in DTYPE_BYTES:
        return name
    return DTYPE_ALIASES.get(name) or DTYPE_ALIASES.get(name.lower())


def unknown_dtype_message(name: str) -> str:
    return (f"unknown dtype '{name}': expected one of {', '.join(sorted(DTYPE_BYTES))} "
            f"(or fp16, half, bfloat16, float, ...){did_you_mean(name, [*DTYPE_BYTES, *DTYPE_ALIASES])}")


def did_you_mean(word: str, candidates: Iterable[str]) -> str:
    """'; did you mean 'x'?' for the candidate closest to `word`, or ''."""
    close = difflib.get_close_matches(word, sorted(set(candidates)), n=1, cutoff=0.6)
    return f"; did you mean '{close[0]}'?" if close else ""
