"""`verify gpu` and `verify fragments`: a spec's accesses on a real GPU, and the
register fragments the model predicts for them.

Instances: every instance when there are at most `limit`; otherwise a seeded
sample plus the model's worst instances (max-ways and wavefronts). Each runs with
the buffer at the probe's real shared-memory address, and a base chosen so that
the bits a pointer swizzle reads are those of the instance (see
`verify.model.program.base_period`).

Data: shared memory is filled through the layout (the producer mapping) with a
16-bit tag per halfword that names the logical element; for 8-bit types the
probe's address tags are used and mapped back through the layout.
"""

from __future__ import annotations

import itertools
import math
import random
from dataclasses import dataclass

from verify.engines.options import RunOptions
from verify.engines.solver import BankQuery
from verify.engines.witness import shown_instance
from verify.gpu import fragments
from verify.gpu.compare import Agreement, compare, dump_size, estimate_by_timing
from verify.gpu.probe import SMEM_BYTES, SOURCE_BYTES, Case, GpuError, Probe, op_name
from verify.model.expr import Var, evaluate
from verify.model.layout import coordinate_vars
from verify.model.program import BASE, STAGE, Access, Program, base_period


@dataclass
class SpotRow:
    access: str
    instance: dict[str, int]
    agreement: Agreement | None
    note: str = ""

    @property
    def ok(self) -> bool:
        a = self.agreement
        return a is not None and a.wavefronts_ok is not False and a.data_ok is not False


MAX_TAGGED_ELEMENTS = 1 << 20


def element_addresses(program: Program, access: Access, base_units: int) -> dict[int, tuple]:
    """Byte address -> (stage, coordinate) for every element of the access's layout."""
    ldef = access.layout
    count = ldef.function.size() * program.spec.buffer.stages
    if count > MAX_TAGGED_ELEMENTS:
        raise GpuError(
            f"layout '{ldef.name}' has {count} elements (all stages): the spot check "
            f"tags at most {MAX_TAGGED_ELEMENTS}; check a smaller tile of it"
        )
    names = [n for n, _ in coordinate_vars(ldef.function)]
    addr = program.address(ldef, [Var(n) for n in names], ldef.pos)
    ranges = [r for _, r in coordinate_vars(ldef.function)]
    out = {}
    for stage in range(program.spec.buffer.stages):
        for coord in itertools.product(*(range(r.lo, r.hi) for r in ranges)):
            env = {**dict(zip(names, coord)), STAGE: stage, BASE: base_units}
            out[evaluate(addr, env)] = (stage, coord)
    return out


def instances(access: Access, limit: int, samples: int, seed: int, options: RunOptions):
    """Every instance of `access` up to `limit` of them, else `samples` drawn by `seed`;
    with the solver's worst instances for max-ways and wavefronts (each searched under
    a budget of `options`)."""
    names = [n for n in access.instance_vars if n != BASE]
    axes = [range(access.ranges[n].lo, access.ranges[n].hi) for n in names]
    total = 1
    for a in axes:
        total *= len(a)
    if total <= limit:
        chosen = [dict(zip(names, c)) | {BASE: 0} for c in itertools.product(*axes)]
    else:
        rng = random.Random(seed)
        chosen = [
            {n: rng.choice(a) for n, a in zip(names, axes)} | {BASE: 0} for _ in range(samples)
        ]
    try:
        query = BankQuery(access)
        worst = [query.max_ways(options.budget()), query.wavefronts(options.budget())]
    except ValueError:  # misaligned: no bank figures, spot_case will say so
        worst = []
    for best in worst:
        chosen.append({n: best.witness[n] for n in names} | {BASE: best.witness[BASE]})
    unique = {tuple(sorted(c.items())): c for c in chosen}
    return list(unique.values())


def absolute_base(program: Program, access: Access, smem_base: int, base_units: int) -> int:
    """An aligned base >= the probe's buffer that agrees with the instance's base
    on every bit that can matter."""
    align = program.spec.buffer.align
    period = max(base_period(access.layout), align)
    base = smem_base + ((align * base_units - smem_base) % period)
    if base % align:
        raise GpuError(f"the probe's buffer at {smem_base} cannot hold a base aligned to {align}")
    return base


def _fill(program, access, base_units, buffer_start) -> dict[int, int] | None:
    eb = program.elem_bytes(access.layout.pos, access.layout)
    if eb == 1:
        return None
    fill = {}
    for index, address in enumerate(sorted(element_addresses(program, access, base_units))):
        for h in range(eb // 2):
            offset = address + 2 * h - buffer_start
            if 0 <= offset <= SMEM_BYTES - 2:
                fill[offset] = (index * (eb // 2) + h) % 65535 + 1
    return fill


def copy_sources(program: Program, access: Access, env: dict) -> tuple[list[int] | None, str]:
    """A cp.async's global byte addresses for the instance, as offsets into the probe's
    source buffer: the spec's `from G(...)` at global base 0, moved down by a multiple
    of 128 bytes and of `global align N` to start in the buffer's first line (which
    keeps every source's bank, alignment and which sources share a 128-byte line)."""
    assert access.source is not None, f"{access.name}: a copy without its global source"
    sources = access.source.lane_addresses(env)
    step = math.lcm(128, program.spec.global_align)
    shift = min(sources) // step * step
    sources = [s - shift for s in sources]
    if max(sources) + 16 > SOURCE_BYTES:
        return None, "its global sources span more than the probe's 64 KB source buffer"
    return sources, ""


def spot_case(program: Program, access: Access, values: dict, probe_base: int):
    base_abs = absolute_base(program, access, probe_base, values.get(BASE, 0))
    env = {**values, BASE: base_abs // program.spec.buffer.align}
    addrs = [a - probe_base for a in access.lane_addresses(env)]
    if min(addrs) < 0 or max(addrs) + 16 > SMEM_BYTES:
        return None, env, "does not fit the probe's 48 KB buffer"
    if any((a + probe_base) % access.instruction.bytes_per_address for a in addrs):
        return None, env, "misaligned: the hardware would fault, nothing was run"
    sources = None
    if access.instruction.is_copy:
        sources, note = copy_sources(program, access, env)
        if sources is None:
            return None, env, note
    case = Case(
        op_name(access.instruction),
        addrs,
        fill=_fill(program, access, env[BASE], probe_base),
        sources=sources,
    )
    if access.instruction.is_store or access.instruction.is_copy:
        case.dump_bytes = dump_size(case)
    return case, env, ""


def spot_check(
    program: Program,
    probe: Probe,
    limit=64,
    samples=16,
    seed=0,
    options: RunOptions | None = None,
    use_ncu=True,
) -> list[SpotRow]:
    rows, cases = [], []
    options = options or RunOptions()
    for name in program.spec.accesses:
        access = program.access(name, None)
        for values in instances(access, limit, samples, seed, options):
            case, env, note = spot_case(program, access, values, probe.smem_base)
            shown = shown_instance(program, env)
            if case is None:
                rows.append(SpotRow(name, shown, None, note))
                continue
            case.measure = use_ncu and probe.has_ncu
            rows.append(SpotRow(name, shown, None))
            cases.append((rows[-1], access, case))
    if use_ncu and not probe.has_ncu:
        outcomes = estimate_by_timing(probe, [(a.instruction, c) for _, a, c in cases])
    else:
        outcomes = probe.run([c for _, _, c in cases], use_ncu=use_ncu)
    for (row, access, case), outcome in zip(cases, outcomes):
        row.agreement = compare(access.instruction, case, outcome, probe.smem_base)
    return rows


def fragment_lines(program: Program, access: Access) -> list[str]:
    """Per lane and register, the logical elements the instruction moves (first instance)."""
    values = {n: access.ranges[n].lo for n in access.instance_vars}
    addrs = access.lane_addresses(values)
    owner = element_addresses(program, access, values.get(BASE, 0))
    eb = program.elem_bytes(access.layout.pos, access.layout)
    per_reg: dict[tuple[int, int], list[str]] = {}
    for (lane, reg, _byte), shared in sorted(fragments.pairs(access.instruction, addrs)):
        start = shared - (shared - min(owner)) % eb if owner else shared
        stage, coord = owner.get(start, (None, None))
        label = f"{access.layout.name}{coord}" if coord is not None else f"byte {shared}"
        if stage:
            label += f"@stage{stage}"
        names = per_reg.setdefault((lane, reg), [])
        if label not in names:
            names.append(label)
    arrow = "<-" if not access.instruction.is_store else "->"
    return [
        f"lane {lane:2} d{reg} {arrow} " + ", ".join(labels)
        for (lane, reg), labels in sorted(per_reg.items())
    ]
