"""`verify synth`: the best layout for a tile's accesses, with its proof.

A spec may leave one layout unknown (``layout A = ?(R, C)``). `synthesize_file`
finds, within a family, the layout that is bijective, keeps every access aligned
and every lane's vector whole, and minimises lexicographically the worst
max-ways, the weighted sum of wavefronts, the footprint and the XOR terms; then
re-checks it with the ordinary engines (`verify.synth.certificate`).

Modules: `problem` (the spec as arrays), `cost` (a table scored), `families`
(the families listed), `gf2` (XOR maps by the solver), `params` (the CuTe and
Triton families by the solver, their parameters as unknowns), `search`,
`certificate`, `output`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the names as type checkers see them ("X as X": a re-export)
    from verify.synth.certificate import Certificate as Certificate
    from verify.synth.search import FAMILIES as FAMILIES
    from verify.synth.search import Answer as Answer

# Imported on first use (PEP 562): checking a spec imports verify.synth.repair,
# and a spec whose checks pass should not pay for the solver search (z3).
_EXPORTS = {
    "FAMILIES": "verify.synth.search",
    "Answer": "verify.synth.search",
    "Certificate": "verify.synth.certificate",
}


def synthesize_file(path: str, family: str = "sw", timeout: float = 60.0, method: str = "solver"):
    """(problem, answer, certificate or None) for the spec at `path`."""
    from verify.errors import SpecError
    from verify.spec.parser import parse_file
    from verify.synth.certificate import certify
    from verify.synth.problem import problem_of
    from verify.synth.search import synthesize

    with open(path, encoding="utf-8") as f:
        source = f.read()
    try:
        problem = problem_of(parse_file(path), source)
    except SpecError as e:
        raise e.located(path).with_source(source) from None
    answer = synthesize(problem, family, timeout, method)
    cert = certify(problem, answer, timeout) if answer.objective is not None else None
    return problem, answer, cert


def __getattr__(name: str):
    """A public name, imported from its module the first time it is asked for."""
    if name not in _EXPORTS:
        raise AttributeError(f"module 'verify.synth' has no attribute {name!r}")
    value = getattr(importlib.import_module(_EXPORTS[name]), name)
    globals()[name] = value
    return value


__all__ = ["FAMILIES", "Answer", "Certificate", "synthesize_file"]
