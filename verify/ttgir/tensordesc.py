"""Triton's ``tensordesc_meta`` of a TTGIR module that was given without it.

The compiler fills ``metadata["tensordesc_meta"]`` with ``mod.get_tensordesc_metadata()``
on the TTGIR module (``triton/backends/nvidia/compiler.py``, ``make_ttgir`` and
``gluon_to_ttgir``): one entry per ``!tt.tensordesc`` argument, which the launcher
encodes as the tensor map (`verify.ptx.tensormaps`). A compiled kernel carries it
(`verify run`, Triton's cache); for a TTGIR file (`verify ttgir`) this module asks
Triton's same function, in a child process as `verify.ttgir.extract` does (the
native parser may abort on hostile input), and only for a module that has such an
argument.

Run as ``python -m verify.ttgir.tensordesc FILE``: prints the list as JSON, or
``{"error": ...}``.
"""

from __future__ import annotations

import json
import subprocess
import sys

from verify.ttgir import lower

CHILD_TIMEOUT = 120.0


def needed(text: str) -> bool:
    """Whether the module has a tensor-descriptor argument (its map is the host's)."""
    return "!tt.tensordesc<" in text


def metadata(text: str) -> list[dict] | str:
    """The module's tensordesc_meta, or why it cannot be had (a sentence)."""
    if not needed(text):
        return []
    try:
        child, _ = lower.run_on_module(text, ["-m", "verify.ttgir.tensordesc"], CHILD_TIMEOUT)
    except subprocess.TimeoutExpired:
        return "Triton's get_tensordesc_metadata did not finish"
    out = lower.last_json(child.stdout)
    if out is None:
        return f"Triton's get_tensordesc_metadata failed (exit status {child.returncode})"
    if isinstance(out, dict):
        return f"Triton's get_tensordesc_metadata failed: {out.get('error')}"
    return out


def tma_ops(result) -> list[str]:
    """The TTGIR op label (as `verify.ttgir.from_ptx` names ops) a PTX TMA copy's
    check decides, by its direction: the TTGIR reader lists these ops without a
    location, so their checks cannot be attached by line; TTGIR's "not modelled"
    for them gives way to the copies' own checks, reported at their Python lines."""
    parts = result.facts.get("instruction", "").split(".")
    if parts[:4] != ["cp", "async", "bulk", "tensor"] or len(parts) < 6:
        return []
    load = parts[5].startswith("shared")
    return ["async_tma_copy_global_to_local" if load else "async_tma_copy_local_to_global"]


def main(path: str) -> int:
    try:
        from triton._C.libtriton import ir
    except ImportError as e:
        print(json.dumps({"error": f"triton is not installed ({e})"}))
        return 0
    context = ir.context()
    ir.load_dialects(context)
    try:
        module = ir.parse_mlir_module(path, context)
        print(json.dumps(module.get_tensordesc_metadata()))
    except (RuntimeError, TypeError) as e:
        print(json.dumps({"error": str(e)}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
