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

from verify.errors import SpecError
from verify.spec.parser import parse_file
from verify.synth.certificate import Certificate, certify
from verify.synth.problem import problem_of
from verify.synth.search import FAMILIES, Answer, synthesize


def synthesize_file(path: str, family: str = "sw", timeout: float = 60.0, method: str = "solver"):
    """(problem, answer, certificate or None) for the spec at `path`."""
    with open(path, encoding="utf-8") as f:
        source = f.read()
    try:
        problem = problem_of(parse_file(path), source)
    except SpecError as e:
        raise e.located(path).with_source(source) from None
    answer = synthesize(problem, family, timeout, method)
    cert = certify(problem, answer, timeout) if answer.objective is not None else None
    return problem, answer, cert


__all__ = ["FAMILIES", "Answer", "Certificate", "synthesize_file"]
