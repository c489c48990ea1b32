"""Model against hardware for one probe case: the data moved and the wavefronts."""
from __future__ import annotations

from dataclasses import dataclass

from verify.bank import bank_cost
from verify.gpu import fragments
from verify.gpu.probe import Case, Outcome, address_tag_fill, explicit_fill
from verify.instructions import Instruction

CP_ASYNC_SOURCE = [(j * 7 + 3) & 0xFF for j in range(32 * 16)]


def cp_async(size: int) -> Instruction:
    """cp.async as a bank-model access group, for comparison only (not modelled)."""
    return Instruction(f"cp.async.{size}", "cp.async", size, 32, {8: 16, 16: 8}.get(size, 32))


@dataclass
class Agreement:
    predicted: int
    measured: int | None
    wavefronts_ok: bool | None      # None: no measurement, or a class the model does not cover
    data_ok: bool | None
    detail: str = ""


def dump_size(case: Case) -> int:
    return min(max(case.addresses) + 16 + 15 & ~15, 48 * 1024)


def _initial(case: Case) -> bytearray:
    return address_tag_fill() if case.fill is None else explicit_fill(case.fill)


def _load_data(instr: Instruction, case: Case, outcome: Outcome) -> tuple[bool, str]:
    init = _initial(case)
    for (lane, reg, byte), shared in sorted(fragments.receivers(instr, case.addresses).items()):
        got = (outcome.registers[lane][reg] >> (8 * byte)) & 0xFF
        if got != init[shared]:
            return False, (f"lane {lane} register {reg} byte {byte}: expected shared byte "
                           f"{shared} (0x{init[shared]:02x}), got 0x{got:02x}")
    return True, ""


def _store_data(instr: Instruction, case: Case, outcome: Outcome) -> tuple[bool, str]:
    init = _initial(case)
    if instr.family == "cp.async":
        possible = {}
        for lane, a in enumerate(case.addresses):
            for k in range(instr.bytes_per_address):
                possible.setdefault(a + k, set()).add(CP_ASYNC_SOURCE[16 * lane + k])
    else:
        possible = {s: {fragments.register_tag_byte(rb) for rb in rbs}
                    for s, rbs in fragments.writers(instr, case.addresses).items()}
    for s, got in enumerate(outcome.shared):
        allowed = possible.get(s, {init[s]})
        if got not in allowed:
            return False, (f"shared byte {s}: expected one of {sorted(allowed)}, got {got}")
    return True, ""


def compare(instr: Instruction, case: Case, outcome: Outcome, base: int) -> Agreement:
    """`base` is the shared-window address of the probe's buffer (banks use absolute addresses)."""
    predicted = bank_cost(instr, [base + a for a in case.addresses]).wavefronts
    data_ok, detail = None, ""
    if case.data:
        check = _store_data if instr.is_store or instr.family == "cp.async" else _load_data
        data_ok, detail = check(instr, case, outcome)
    measured = outcome.wavefronts
    ok = None
    if measured is not None and instr.family != "cp.async":
        ok = measured == predicted if instr.exact else measured <= predicted
    return Agreement(predicted, measured, ok, data_ok, detail)
