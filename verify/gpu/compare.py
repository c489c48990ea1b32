"""Model against hardware for one probe case: the data moved and the wavefronts."""

from __future__ import annotations

from dataclasses import dataclass

from verify.gpu import fragments
from verify.gpu.probe import Case, Outcome, Probe, address_tag_fill, explicit_fill, op_name
from verify.model.bank import bank_cost, hardware_copy_cost
from verify.model.instructions import Instruction


def cp_async(size: int) -> Instruction:
    """cp.async as a bank-model access group, for comparison only (not modelled)."""
    return Instruction(f"cp.async.{size}", "cp.async", size, 32, {8: 16, 16: 8}.get(size, 32))


@dataclass
class Agreement:
    predicted: int
    measured: int | None
    wavefronts_ok: bool | None  # None: no measurement, or a class the model does not cover
    data_ok: bool | None
    detail: str = ""
    estimated: bool = False  # measured by clock64 calibration, not ncu
    bound: bool = False  # `predicted` is an upper bound (cp.async.cg's bound G), not exact


def source_byte(j: int) -> int:
    """Byte j of the probe's cp.async source buffer."""
    return (j * 7 + 3) & 0xFF


def dump_size(case: Case) -> int:
    return min(max(case.addresses) + 16 + 15 & ~15, 48 * 1024)


def _initial(case: Case) -> bytearray:
    return address_tag_fill() if case.fill is None else explicit_fill(case.fill)


def _load_data(instr: Instruction, case: Case, outcome: Outcome) -> tuple[bool, str]:
    init = _initial(case)
    for (lane, reg, byte), shared in sorted(fragments.receivers(instr, case.addresses).items()):
        got = (outcome.registers[lane][reg] >> (8 * byte)) & 0xFF
        if got != init[shared]:
            return False, (
                f"lane {lane} register {reg} byte {byte}: expected shared byte "
                f"{shared} (0x{init[shared]:02x}), got 0x{got:02x}"
            )
    return True, ""


def _store_data(instr: Instruction, case: Case, outcome: Outcome) -> tuple[bool, str]:
    init = _initial(case)
    if instr.family == "cp.async":
        possible: dict[int, set[int]] = {}
        sources = case.sources or [16 * lane for lane in range(len(case.addresses))]
        for a, src in zip(case.addresses, sources):
            for k in range(instr.bytes_per_address):
                possible.setdefault(a + k, set()).add(source_byte(src + k))
    else:
        possible = {
            s: {fragments.register_tag_byte(rb) for rb in rbs}
            for s, rbs in fragments.writers(instr, case.addresses).items()
        }
    for s, got in enumerate(outcome.shared):
        allowed = possible.get(s, {init[s]})
        if got not in allowed:
            return False, (f"shared byte {s}: expected one of {sorted(allowed)}, got {got}")
    return True, ""


def _calibration(instr: Instruction) -> tuple[list[int], list[int]]:
    """An ideal pattern (contiguous) and a worst one (every lane in one bank group)."""
    n, size = instr.address_lanes, instr.bytes_per_address
    return [size * lane for lane in range(n)], [128 * lane for lane in range(n)]


def estimate_by_timing(probe: Probe, items: list[tuple[Instruction, Case]]) -> list[Outcome]:
    """Wavefronts from clock64 when ncu is missing.

    Per instruction, an ideal and a worst pattern (whose model costs are exact for
    stores, ldmatrix/stmatrix and <= 32-bit loads) calibrate cycles -> wavefronts
    linearly; each case's cycles are then read off that line and rounded.
    """
    ops: dict[str, Instruction] = {}
    for instr, _ in items:
        ops.setdefault(op_name(instr), instr)
    calib = {
        op: [Case(op, p, measure=False, data=False, timing=True) for p in _calibration(i)]
        for op, i in ops.items()
    }
    timed = [
        Case(
            c.op,
            c.addresses,
            measure=False,
            data=c.data,
            dump_bytes=c.dump_bytes,
            fill=c.fill,
            timing=True,
        )
        for _, c in items
    ]
    flat = [c for pair in calib.values() for c in pair] + timed
    results = probe.run(flat, use_ncu=False)
    lines = {}
    for k, (op, instr) in enumerate(ops.items()):
        (lo, hi) = results[2 * k : 2 * k + 2]
        waves = [
            bank_cost(instr, [probe.smem_base + a for a in p]).wavefronts
            for p in _calibration(instr)
        ]
        slope = (_cycles(hi) - _cycles(lo)) / max(1, waves[1] - waves[0])
        lines[op] = (_cycles(lo), waves[0], slope)
    outcomes = results[2 * len(ops) :]
    for (instr, _), o in zip(items, outcomes):
        c0, w0, slope = lines[op_name(instr)]
        o.wavefronts = max(w0, round(w0 + (_cycles(o) - c0) / slope)) if slope > 0 else w0
        o.estimated = True
    return outcomes


def compare(instr: Instruction, case: Case, outcome: Outcome, base: int) -> Agreement:
    """`base` is the shared-window address of the probe's buffer (banks use absolute
    addresses). Loads and stores: the phase model; cp.async: the H200's rules for
    its destinations and the case's global sources (rule C, rule S or bound G)."""
    shared = [base + a for a in case.addresses]
    if instr.is_copy:
        sources = case.sources or [16 * lane for lane in range(len(shared))]
        cost = hardware_copy_cost(instr, shared, sources)
        predicted, exact = cost.wavefronts, cost.exact
    else:
        predicted, exact = bank_cost(instr, shared).wavefronts, instr.exact
    data_ok, detail = None, ""
    if case.data:
        check = _store_data if instr.is_store or instr.is_copy else _load_data
        data_ok, detail = check(instr, case, outcome)
    measured = outcome.wavefronts
    ok = None
    if measured is not None and not (instr.is_copy and outcome.estimated):
        ok = measured == predicted if exact else measured <= predicted
    return Agreement(predicted, measured, ok, data_ok, detail, outcome.estimated, not exact)


def _cycles(outcome: Outcome) -> int:
    """The clock64 cycles of a case run with timing (the probe times every such case)."""
    assert outcome.cycles is not None, "a timed case comes back with its cycles"
    return outcome.cycles
