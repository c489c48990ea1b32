"""Differential test: every verdict and figure of the solver engine against the
enumeration engine.

Random small specs (CuTe shapes with nested modes, strides, swizzles on element
offsets or on byte addresses, several stages, every base alignment, loop
variables, every instruction class) are written as spec text and checked by both
engines: symbolically (`verify.engines.solver`) and by `verify.engines.enumeration`, which
evaluates the whole domain. Both engines read the notations with verify's own
code, so this tests the encoding, not the notations' meaning; that is the job of
the independent oracle, `oracle`, compared in benchmarks/campaigns/differential.py,
tests/engines/test_campaign.py and tests/oracle/test_oracle.py.
"""

import itertools

import z3
from conftest import WORK
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from verify.engines import enumeration as enumeration_engine
from verify.engines.runner import run_spec
from verify.engines.solver import BankQuery
from verify.model.bank import hardware_wavefronts
from verify.model.program import Program
from verify.smt.solve import Budget, Status
from verify.spec.parser import parse_text

INSTRUCTIONS = [
    "ld.shared.b8",
    "ld.shared.b16",
    "ld.shared.b32",
    "ld.shared.v2.b32",
    "ld.shared.v4.b32",
    "st.shared.b64",
    "st.shared.v4.b32",
    "ldmatrix.x1",
    "ldmatrix.x2.trans",
    "ldmatrix.x4",
    "stmatrix.x2",
]
DTYPES = ["b8", "f16", "f32", "f64"]


@st.composite
def mode(draw):
    if draw(st.booleans()):
        return str(draw(st.sampled_from([1, 2, 3, 4, 8]))), str(draw(st.integers(0, 40)))
    a, b = draw(st.sampled_from([1, 2, 4])), draw(st.sampled_from([1, 2, 4]))
    return f"({a},{b})", f"({draw(st.integers(0, 40))},{draw(st.integers(0, 40))})"


@st.composite
def swizzle(draw):
    b = draw(st.integers(0, 3))
    s = draw(st.integers(max(b, 1), 4)) * draw(st.sampled_from([1, -1]))
    return f"Sw<{b},{draw(st.integers(0, 3))},{s}>"


@st.composite
def layout_text(draw, dtype_bits):
    modes = draw(st.lists(mode(), min_size=1, max_size=2))
    cute = f"({','.join(m[0] for m in modes)}):({','.join(m[1] for m in modes)})"
    kind = draw(st.sampled_from(["plain", "element", "pointer"]))
    if kind == "element":
        return f"{draw(swizzle())} o {cute}", len(modes)
    if kind == "pointer":
        return f"{draw(swizzle())} o smem_ptr[{dtype_bits}b](unset) o {cute}", len(modes)
    return cute, len(modes)


@st.composite
def coordinate(draw):
    a, b, c = (draw(st.integers(0, 9)) for _ in range(3))
    d = draw(st.sampled_from([1, 2, 4, 8]))
    if draw(st.booleans()):
        return f"(({a} * lane) ^ ({b} * q) + {c} * (lane / {d}))"
    return f"({a} * lane + {b} * q + {c} * (lane / {d}))"


@st.composite
def spec_text(draw):
    dtype = draw(st.sampled_from(DTYPES))
    bits = {"b8": 8, "f16": 16, "f32": 32, "f64": 64}[dtype]
    layout, rank = draw(layout_text(bits))
    instr = draw(st.sampled_from(INSTRUCTIONS))
    align = draw(st.sampled_from([1, 2, 4, 16, 128]))
    stages = draw(st.sampled_from([1, 1, 2]))
    buffer = f"buffer align {align}"
    if stages > 1:
        buffer += f" stages 2 stage_bytes {draw(st.integers(1, 64)) * 4}"
    q = draw(st.integers(1, 6))
    coords = ", ".join(f"{draw(coordinate())} % size{i}" for i in range(rank))
    k = draw(st.integers(1, 8))
    return "\n".join(
        [
            f"dtype {dtype}",
            buffer,
            f"layout L = {layout}",
            f"access a = {instr} L({coords}) for q in 0..{q}",
            "check bijective L",
            "check conflict_free a",
            f"check max_ways <= {k} a",
            f"check wavefronts <= {k + 1} a",
            "check aligned 8 a",
        ]
    ) + "\n", rank


def materialise(text: str, rank: int) -> str:
    """Replace the size placeholders by each mode's size, read back from the parse."""
    spec = parse_text(text.replace("% size0", "% 1").replace("% size1", "% 1"))
    sizes = spec.layouts["L"].function.mode_sizes
    for i, n in enumerate(sizes):
        text = text.replace(f"% size{i}", f"% {n}")
    return text


def figures(result):
    return (result.status, result.max_ways, result.wavefronts, result.facts)


@settings(
    max_examples=60,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(spec_text())
def test_solver_agrees_with_enumeration(drawn):
    """Every verdict and figure the same from both engines (exhaustive evaluation of
    the whole domain is the reference: over a finite domain it is a proof)."""
    text = materialise(*drawn)
    spec = parse_text(text, "random.spec")
    solver = run_spec(spec, WORK, engine="z3")
    enumeration = run_spec(spec, WORK, engine="enumeration")
    assert [r.property for r in solver] == [r.property for r in enumeration]
    for s, e in zip(solver, enumeration):
        assert s.status != Status.UNKNOWN, f"\n{text}\n{s}"
        assert figures(s) == figures(e), f"\n{text}\n{s}\n{e}"
        assert (s.engine, e.engine) == ("z3", "enumeration")


def pinned_counts(query, values):
    """Exact per-phase and total counts the encoding allows at one instance."""
    lanes = query.access.instruction.phase_lanes
    pinned = [query.ctx.var(n) == query.ctx.num(v) for n, v in values.items()]

    def exact(new_solver, at_least, limit):
        def reaches(k):
            solver = new_solver()
            solver.add(*pinned, at_least(k))
            return solver.check() == z3.sat

        return next(k for k in range(1, limit + 2) if not reaches(k + 1))

    phases = [
        exact(query._solver, lambda k, c=c: query._at_least(c, k), lanes) for c in query.counts
    ]
    waves_query, waves_at_least = query.wavefront_encoding([lanes] * len(phases))
    return phases, exact(waves_query, waves_at_least, lanes * len(phases))


@settings(
    max_examples=40,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(spec_text(), st.randoms(use_true_random=False))
def test_bank_encoding_counts_exactly_at_every_instance(drawn, rng):
    """Not only the maximum: at each instance the encoding's counts equal the replay's
    (an encoding that under-counts would hide conflicts the maximum never visits)."""
    spec = parse_text(materialise(*drawn), "random.spec")
    program = Program(spec)
    access = program.access("a", None)
    if (
        enumeration_engine.aligned(
            program, access, access.instruction.bytes_per_address, Budget(60)
        ).status
        != Status.PROVED
    ):
        return
    query = BankQuery(access)
    names = access.instance_vars
    instances = [
        dict(zip(names, v))
        for v in itertools.product(
            *(range(access.ranges[n].lo, access.ranges[n].hi) for n in names)
        )
    ]
    for values in rng.sample(instances, min(6, len(instances))):
        cost = query.cost(values)
        phases, total = pinned_counts(query, values)
        assert phases == [p.ways for p in cost.phases], (values, drawn)
        assert total == hardware_wavefronts(access.instruction, access.lane_addresses(values))
