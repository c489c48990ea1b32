"""How much shared memory one thread block may use, by compute capability.

Source: the CUDA C++ Programming Guide, "Compute Capabilities", the table
"Technical Specifications per Compute Capability", row "Maximum amount of shared
memory per thread block" (opted in with cudaFuncSetAttribute beyond 48 KB). The
row above it, per SM, is 1 KB more (228 KB on 9.0, 164 KB on 8.0): the guide
notes that 1 KB of each SM's shared memory is reserved for the system and never
given to a block, so a block's limit is the per-block row.
"""

from __future__ import annotations

KB = 1024

# Compute capability (major * 10 + minor) -> bytes one block may allocate.
SHARED_BYTES_PER_BLOCK = {
    70: 96 * KB,
    72: 96 * KB,
    75: 64 * KB,
    80: 163 * KB,
    86: 99 * KB,
    87: 163 * KB,
    89: 99 * KB,
    90: 227 * KB,
    100: 227 * KB,
    120: 99 * KB,
}


def limit(capability: int) -> int | None:
    """The most shared memory one block of `capability` may use (None: not tabled)."""
    return SHARED_BYTES_PER_BLOCK.get(capability)


def size_text(n: int) -> str:
    """'256 KB (262144 bytes)': the KB figure the guide uses, then the exact bytes."""
    kb = f"{n // KB} KB" if n % KB == 0 else f"{n / KB:.1f} KB"
    return f"{kb} ({n} bytes)"


def over_limit(footprint: int, capability: int) -> str | None:
    """A warning when `footprint` bytes of shared memory cannot be one block's on
    sm_`capability` (the kernel would fail to launch), else None."""
    most = limit(capability)
    if most is None or footprint <= most:
        return None
    return (
        f"footprint {size_text(footprint)} is more than one block may use on "
        f"sm_{capability}, {size_text(most)} (CUDA C++ Programming Guide, Technical "
        "Specifications per Compute Capability): the kernel cannot launch"
    )
