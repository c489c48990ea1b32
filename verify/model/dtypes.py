"""Element types: the one table of names and widths.

verify's own names (``f16``, ``bf16``, ``e4m3``, ``b32`` ...) with their bits; the
spellings of CUDA, CUTLASS, PyTorch, Triton and NumPy for them; the C++ names a
CuTe atom takes (``half_t``, ``float``); and the PTX type qualifiers an
instruction takes (``.b16``, ``.f16x2``). Specs, notations and instructions all
read them here, so a type has one width everywhere.
"""

from __future__ import annotations

import re

BITS = {
    **{t: 8 for t in ("i8", "u8", "s8", "b8", "f8", "e4m3", "e5m2")},
    **{t: 16 for t in ("f16", "bf16", "i16", "u16", "s16", "b16")},
    **{t: 32 for t in ("f32", "tf32", "i32", "u32", "s32", "b32")},
    **{t: 64 for t in ("f64", "i64", "u64", "s64", "b64")},
}
DTYPE_BYTES = {t: bits // 8 for t, bits in BITS.items()}

# The spellings of CUDA, CUTLASS, PyTorch, Triton and NumPy, to verify's own.
DTYPE_ALIASES = {
    **dict.fromkeys(("fp16", "half", "half_t", "float16", "__half"), "f16"),
    **dict.fromkeys(("bfloat16", "bfloat16_t", "__nv_bfloat16"), "bf16"),
    **dict.fromkeys(("float", "float32", "fp32"), "f32"),
    **dict.fromkeys(("tfloat32", "tfloat32_t", "fp32_tf32"), "tf32"),
    **dict.fromkeys(("double", "float64", "fp64"), "f64"),
    **dict.fromkeys(
        ("fp8", "float_e4m3_t", "fp8e4m3", "fp8_e4m3", "float8_e4m3fn", "fp8e4nv", "__nv_fp8_e4m3"),
        "e4m3",
    ),
    **dict.fromkeys(
        ("float_e5m2_t", "fp8e5m2", "fp8_e5m2", "float8_e5m2", "fp8e5", "__nv_fp8_e5m2"), "e5m2"
    ),
    **{
        f"{t}{n}{suffix}": f"{t[0]}{n}"
        for t in ("int", "uint")
        for n in (8, 16, 32, 64)
        for suffix in ("", "_t")
    },
}

# The C++ element types of CuTe's atoms (``Layout_K_SW128_Atom<half_t>``), besides
# verify's own names.
_CUTE_SPELLINGS = (
    "int8_t",
    "uint8_t",
    "float_e4m3_t",
    "float_e5m2_t",
    "half_t",
    "bfloat16_t",
    "float",
    "tfloat32_t",
    "int32_t",
    "uint32_t",
    "double",
    "int64_t",
    "uint64_t",
)
CUTE_TYPE_BITS = {**BITS, **{t: BITS[DTYPE_ALIASES[t]] for t in _CUTE_SPELLINGS}}

# PTX type qualifiers: .b8 ... .f64 (verify's names of that form), and the packed ones.
PTX_TYPE_BITS = {
    **{t: bits for t, bits in BITS.items() if re.fullmatch(r"[bsuf]\d+", t)},
    "b128": 128,
    "bf16": 16,
    "f16x2": 32,
    "bf16x2": 32,
}


def canonical_dtype(name: str) -> str | None:
    """verify's name for dtype `name` (``half_t`` -> ``f16``), or None if unknown."""
    if name in BITS:
        return name
    return DTYPE_ALIASES.get(name) or DTYPE_ALIASES.get(name.lower())
