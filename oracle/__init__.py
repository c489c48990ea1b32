"""A brute-force oracle for verify's specs that shares no code with verify's
reading of the notations -- only the grammar file.

Overview
--------
``answers(text)`` parses a spec with lark and ``verify/spec/grammar.lark``, reads
every construct by its source's own definition (CuTe layouts, swizzles,
composition and tile_to_shape by pycute; GMMA atoms from CUTLASS's header
built with pycute; Triton encodings by Triton's linear layouts, padded_shared's
padding by the rule of Triton's lowering, TTGIR alias lines and memdesc types by
`oracle.memdesc`; formulas by a small interpreter of the parse tree), and
answers every check verify would run, implicit ones included, by enumerating its
whole finite domain with its own bank model and instruction table.

Worked example
--------------
::

    >>> answers("dtype f16\\nlayout A = (8,64):(64,1)\\n"
    ...         "access rd = ldmatrix.x1 A(lane, 0)\\ncheck conflict_free rd")
    {'in_bounds rd': Answer(holds=True, ...), 'aligned 16 rd': Answer(holds=True, ...),
     'conflict_free rd': Answer(holds=False, max_ways=8, wavefronts=8, cosize=None)}

The math
--------
Keys are the ``property`` strings of verify's runner: explicit checks as
written (whitespace collapsed, ``expect`` dropped), implicit ``in_bounds A`` and
``aligned N A`` per access (N its bytes per lane; left out when an explicit
``aligned M A`` with N | M exists), and ``base_aligned L`` per layout that
needs an aligned buffer and has no explicit check. Checks whose meaning depends
on coordinates outside a layout's domain -- alignment and bank checks of an
access whose ``in_bounds`` fails -- are left out: no notation defines them there.
So are the checks of an access written ``by`` a thread map, which the oracle
does not read (see `reading.Spec.unread_accesses`).

A cp.async (``... from G(coords)``, ``global align N``) adds ``in_bounds A from G``
and ``aligned N A from G``; its bank checks use the oracle's own rule C / bound G
(`hardware.copy_cost`, from docs/hardware.md), and a check bound G cannot decide
is left out, as verify reports it UNKNOWN (see `_copy_check`).
"""

from __future__ import annotations

from oracle.errors import OracleRefusal, OracleUnavailable
from oracle.facts import AccessFacts, Answer, Facts
from oracle.layouts import LIMIT
from oracle.reading import Check, read

__all__ = ["answers", "Answer", "OracleRefusal", "OracleUnavailable"]


def answers(text: str, file: str = "case.spec", *, limit: int | None = None) -> dict[str, Answer]:
    """Every check of the spec `text`, keyed by verify's property string.

    Raises `OracleRefusal` (message prefixed by `file`) when the spec is invalid by
    the oracle's reading or too large to enumerate (more than `limit`, default 2
    million, evaluations for one layout, access or equivalence).
    """
    saved = LIMIT.value
    LIMIT.value = limit or saved
    try:
        return _answer_all(Facts(read(text)))
    except OracleRefusal as e:
        raise type(e)(f"{file}: {e.message}") from None
    finally:
        LIMIT.value = saved


def _answer_all(facts: Facts) -> dict[str, Answer]:
    spec, out = facts.spec, {}
    for name in spec.accesses:
        out.update(_implicit_access(facts, name))
    explicit = {c.target for c in spec.checks if c.kind == "base_aligned"}
    for name, layout in spec.layouts.items():
        if layout.required_align > 1 and name not in explicit:
            out[f"base_aligned {name}"] = facts.base_aligned(Check("base_aligned", "", name))
    for check in spec.checks:
        if check.target in spec.unread_accesses:
            continue
        answer = _explicit(facts, check)
        if answer is not None:
            out[check.text] = answer
    return out


def _implicit_access(facts: Facts, name: str) -> dict[str, Answer]:
    access = facts.access(name, facts.spec.accesses[name].at)
    out = {f"in_bounds {name}": Answer(access.in_bounds)}
    n = access.access.instruction.bytes_per_lane
    covered = any(
        c.kind == "aligned" and c.target == name and c.bound >= n and c.bound % n == 0
        for c in facts.spec.checks
    )
    if access.in_bounds and not covered:
        out[f"aligned {n} {name}"] = Answer(access.naturally_aligned)
    source = facts.spec.accesses[name].source_layout
    if source is not None:
        out[f"in_bounds {name} from {source}"] = Answer(access.source_in_bounds)
        if access.source_in_bounds:
            out[f"aligned {n} {name} from {source}"] = Answer(access.source_aligned)
    return out


def _explicit(facts: Facts, check: Check) -> Answer | None:
    if check.kind in ("bijective", "base_aligned", "equivalent_layouts", "equivalent_exprs"):
        return getattr(facts, check.kind)(check)
    access = facts.access(check.target, check.at)
    if not access.in_bounds:
        return None
    if check.kind == "aligned":
        if check.bound < 1 or check.bound & (check.bound - 1):
            raise OracleRefusal(f"{check.at}: aligned {check.bound}: not a power of two")
        return Answer(access.aligned_to(check.bound))
    if access.source is not None:
        return _copy_check(access, check)
    if not access.naturally_aligned:
        return Answer(False)
    ways, waves = access.bank_figures
    value = {"conflict_free": ways, "max_ways": ways, "wavefronts": waves}[check.kind]
    bound = 1 if check.kind == "conflict_free" else check.bound
    holds = value == bound if check.exact else value <= bound
    return Answer(holds, max_ways=ways, wavefronts=waves)


def _copy_check(access: AccessFacts, check: Check) -> Answer | None:
    """A cp.async's ``wavefronts`` or ``conflict_free`` check (README: conflict_free
    is wavefronts at most the ideal, one per phase). Rule C (.ca) is exact. For .cg,
    rule S is exact where it applies and bound G, an upper bound, elsewhere, so a
    check the figures cannot decide is left out (verify reports it UNKNOWN)."""
    if check.kind == "max_ways":
        raise OracleRefusal(f"{check.at}: max_ways of a cp.async is not defined")
    if not access.source_in_bounds:
        return None
    if not (access.naturally_aligned and access.source_aligned):
        return Answer(False)
    instr = access.access.instruction
    bound = instr.phases if check.kind == "conflict_free" else check.bound
    exact = check.exact and check.kind == "wavefronts"
    if instr.copy == "ca":
        waves = access.copy_wavefronts()
        return Answer(waves == bound if exact else waves <= bound, wavefronts=waves)
    return _cg_check(*access.cg_figures, bound, exact)


def _cg_check(known: int | None, at_most: int | None, bound: int, exact: bool) -> Answer | None:
    """`known`: the largest rule S cost where rule S is exact; `at_most`: the largest
    bound G cost elsewhere (each None if no instance is of that kind). The true
    largest cost is at least `known` and at most the larger of the two."""
    top = max(v for v in (known, at_most) if v is not None)
    if known is not None and known > bound:
        return Answer(False, wavefronts=top)
    if top < bound and exact:
        return Answer(False, wavefronts=top)
    if top <= bound and not exact:
        return Answer(True, wavefronts=top)
    if exact and known == bound and top <= bound:
        return Answer(True, wavefronts=top)
    return None
