"""Differential test: every verdict and figure of the solver against brute force.

Random small specs (CuTe shapes with nested modes, strides, swizzles on element
offsets or on byte addresses, several stages, every base alignment, loop
variables, every instruction class) are written as spec text, checked
symbolically, and compared with `verify.enumerate`, which walks the whole domain.
"""
import z3
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from verify import bv
from verify.enumerate import _values, access_facts, aligned_to, layout_facts
from verify.properties import BankQuery
from verify.program import Program
from verify.runner import run_spec
from verify.solve import Status
from verify.spec.parser import parse_text

INSTRUCTIONS = ["ld.shared.b8", "ld.shared.b16", "ld.shared.b32", "ld.shared.v2.b32",
                "ld.shared.v4.b32", "st.shared.b64", "st.shared.v4.b32", "ldmatrix.x1",
                "ldmatrix.x2.trans", "ldmatrix.x4", "stmatrix.x2"]
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
    return "\n".join([
        f"dtype {dtype}", buffer, f"layout L = {layout}",
        f"access a = {instr} L({coords}) for q in 0..{q}",
        "check bijective L", "check conflict_free a", f"check max_ways <= {k} a",
        f"check wavefronts <= {k + 1} a", "check aligned 8 a"]) + "\n", rank


def materialise(text: str, rank: int) -> str:
    """Replace the size placeholders by each mode's size, read back from the parse."""
    spec = parse_text(text.replace("% size0", "% 1").replace("% size1", "% 1"))
    sizes = spec.layouts["L"].function.mode_sizes
    for i, n in enumerate(sizes):
        text = text.replace(f"% size{i}", f"% {n}")
    return text


def by_property(results):
    return {r.property: r for r in results}


def expected_status(holds: bool) -> Status:
    return Status.PROVED if holds else Status.REFUTED


@settings(max_examples=60, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(spec_text())
def test_solver_agrees_with_enumeration(drawn):
    text = materialise(*drawn)
    spec = parse_text(text, "random.spec")
    program = Program(spec)
    access = program.access("a", None)
    results = by_property(run_spec(spec, timeout=120))
    truth = access_facts(program, access)
    layout = layout_facts(program, spec.layouts["L"])
    n = access.instruction.bytes_per_address

    context = f"\n{text}\n{truth}\n{layout}"
    assert all(r.status != Status.UNKNOWN for r in results.values()), context
    assert results["in_bounds a"].status == expected_status(truth.in_bounds), context
    if f"aligned {n} a" in results:
        assert results[f"aligned {n} a"].status == expected_status(truth.aligned), context
    assert results["aligned 8 a"].status == expected_status(aligned_to(program, access, 8)), context
    assert results["bijective L"].status == expected_status(layout.bijective), context
    assert results["bijective L"].facts["cosize"] == layout.cosize, context
    if truth.aligned:
        cf = results["conflict_free a"]
        assert (cf.max_ways, cf.wavefronts) == (truth.max_ways, truth.wavefronts), context
        assert cf.status == expected_status(truth.max_ways <= 1), context
        k = next(int(p.split()[2]) for p in results if p.startswith("max_ways <="))
        assert results[f"max_ways <= {k} a"].status == expected_status(truth.max_ways <= k)
        w = results[f"wavefronts <= {k + 1} a"]
        assert w.status == expected_status(truth.wavefronts <= k + 1), context
    else:
        assert results["conflict_free a"].status == Status.REFUTED, context


def pinned_counts(query, values):
    """Exact per-phase and total counts the encoding allows at one instance."""
    solver = query._solver()
    solver.add([query.ctx.var(n) == query.ctx.num(v) for n, v in values.items()])

    def exact(term, limit):
        return next(k for k in range(1, limit + 2)
                    if solver.check(query._at_least(term, k + 1)) != z3.sat)
    lanes = query.access.instruction.phase_lanes
    phases = [exact(c, lanes) for c in query.counts]
    return phases, exact(bv.sum_of(query.counts), lanes * len(phases))


@settings(max_examples=40, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(spec_text(), st.randoms(use_true_random=False))
def test_bank_encoding_counts_exactly_at_every_instance(drawn, rng):
    """Not only the maximum: at each instance the encoding's counts equal the replay's
    (an encoding that under-counts would hide conflicts the maximum never visits)."""
    spec = parse_text(materialise(*drawn), "random.spec")
    program = Program(spec)
    access = program.access("a", None)
    if not access_facts(program, access).aligned:
        return
    query = BankQuery(access)
    instances = list(_values(program, {n: access.ranges[n] for n in access.instance_vars},
                             access.layout))
    for values in rng.sample(instances, min(6, len(instances))):
        cost = query.cost(values)
        phases, total = pinned_counts(query, values)
        assert phases == [p.ways for p in cost.phases], (values, drawn)
        assert total == cost.wavefronts, (values, drawn)
