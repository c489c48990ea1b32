"""What `verify draw` shows: one instance of an access, drawn as the seed
articles draw a tile.

Shared memory is cut into rows of 128 bytes (one turn of the 32 banks), each row
into cells of 16 bytes (the seeds' bank groups G0-G7, four banks each) or of one
element. Each phase of the instruction gets its own panel: the cells its lanes
touch carry the lane numbers, and the cells of the lanes that collide in the
phase's busiest bank are marked. Cells are coloured by bank group.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, replace

from verify.engines.runner import run_spec
from verify.engines.witness import shown_instance
from verify.errors import SpecError
from verify.model.bank import BANKS, WORD_BYTES, phase_cost
from verify.model.program import BASE, STAGE, Access, Program
from verify.report.text import ranges_text
from verify.results import CheckResult, Counterexample
from verify.spec.ast import Spec
from verify.spec.names import did_you_mean

ROW_BYTES = BANKS * WORD_BYTES  # one turn of the banks
CHUNK_BYTES = 16  # the seeds' cell: one bank group of 4 banks
GROUP_BANKS = CHUNK_BYTES // WORD_BYTES
# Rows between the first and last touched one are all drawn when there are few.
MAX_GAP_FILL_ROWS = 16
# Instances searched for the worst one; above this the first instance is drawn.
MAX_SEARCHED_INSTANCES = 4096


@dataclass(frozen=True)
class Cell:
    row: int  # index into Picture.rows
    col: int  # index into Picture.columns
    address: int  # first byte
    lanes: tuple[int, ...]  # lanes of this panel's phase that touch it
    colliding: bool  # touched by a lane in the phase's busiest bank

    @property
    def bank_group(self) -> int:
        return (self.address // CHUNK_BYTES) % (BANKS // GROUP_BANKS)


@dataclass(frozen=True)
class Panel:
    title: str
    lanes: range
    ways: int
    cells: tuple[Cell, ...]  # every cell of every drawn row
    words_per_column: tuple[int, ...]  # most distinct words any bank of the column serves


@dataclass(frozen=True)
class Picture:
    title: str
    instance: dict[str, int]  # as reports print it: loops, stage, base in bytes
    columns: tuple[str, ...]  # "G0" ... or "b0" ...
    rows: tuple[int, ...]  # byte address at which each drawn row starts
    cell_bytes: int
    panels: tuple[Panel, ...]


def draw_access(
    spec: Spec,
    access_name: str | None = None,
    instance: str | None = None,
    by: str | None = None,
    timeout: float = 60.0,
) -> Picture:
    """The picture of `access_name` (default: the first access) at the instance
    given as 'q=3,base=0', else at a refuted bank check's counterexample, else at
    the worst instance."""
    program = Program(spec)
    name = _access_name(spec, access_name)
    access = program.access(name, spec.accesses[name].pos)
    fixed = _parse_instance(program, access, instance) if instance else {}
    values, how = _choose_instance(program, access, fixed, timeout)
    cell_bytes = _cell_bytes(program, access, by)
    return _picture(program, access, values, how, cell_bytes)


def _access_name(spec: Spec, name: str | None) -> str:
    if not spec.accesses:
        raise SpecError("nothing to draw: expected an access in the spec")
    if name is None:
        return next(iter(spec.accesses))
    if name not in spec.accesses:
        raise SpecError(
            f"--access: unknown access '{name}': expected one of "
            f"{sorted(spec.accesses)}{did_you_mean(name, spec.accesses)}"
        )
    return name


def _parse_instance(program: Program, access: Access, text: str) -> dict[str, int]:
    """'q=3,stage=1,base=1024' (as reports print an instance) -> internal values."""
    names = {
        **{v: v for v in access.instance_vars if v not in (BASE, STAGE)},
        "stage": STAGE,
        "base": BASE,
    }
    values = {}
    for item in filter(None, (s.strip() for s in text.split(","))):
        key, _, value = item.partition("=")
        key = key.strip()
        if key not in names:
            raise SpecError(
                f"--instance: unknown variable '{key}': expected one of "
                f"{sorted(names)}{did_you_mean(key, names)}"
            )
        try:
            number = int(value, 0)
        except ValueError:
            raise SpecError(f"--instance: expected {key}=INTEGER, found {item!r}") from None
        values[names[key]] = _internal_value(program, access, names[key], number)
    return values


def _internal_value(program: Program, access: Access, var: str, value: int) -> int:
    if var == BASE:
        align = program.spec.buffer.align
        if value % align:
            raise SpecError(
                f"--instance: base {value} is not a multiple of the buffer's alignment {align}"
            )
        value //= align
        # Bases repeat with the layout's period (see verify.model.program): draw the one inside it.
        value %= access.ranges[BASE].hi
    r = access.ranges[var]
    if not r.lo <= value < r.hi:
        raise SpecError(f"--instance: {var.lstrip('$')}={value} is outside {r}")
    return value


def _choose_instance(
    program: Program, access: Access, given: dict[str, int], timeout: float
) -> tuple[dict[str, int], str]:
    free = [v for v in access.instance_vars if v not in given and access.ranges[v].size > 1]
    values = {**{v: access.ranges[v].lo for v in access.instance_vars}, **given}
    if not free:
        return values, "the given instance" if given else "its only instance"
    if not given:
        found = _counterexample_instance(program, access, timeout)
        if found is not None:
            return found
    count = math.prod(access.ranges[v].size for v in free)
    if count > MAX_SEARCHED_INSTANCES:
        return values, f"the first of {count} instances"
    candidates = (
        {**values, **dict(zip(free, point))}
        for point in itertools.product(
            *(range(access.ranges[v].lo, access.ranges[v].hi) for v in free)
        )
    )
    worst = max(candidates, key=lambda candidate: _cost(access, candidate))
    return worst, f"the worst of {count} instances"


def _cost(access: Access, values: dict[str, int]) -> tuple[int, int]:
    addresses = access.lane_addresses(values)
    ways = [phase_cost(access.instruction, p, addresses).ways for p in access.instruction.phases]
    return max(ways), sum(ways)


def _counterexample_instance(program: Program, access: Access, timeout: float):
    """The instance of a refuted bank check of `access`, as the report prints it."""
    spec = program.spec
    checks = [
        c for c in spec.checks if c.target == access.name and c.kind in ("max_ways", "wavefronts")
    ]
    if not checks:
        return None
    only = replace(
        spec,
        accesses={access.name: spec.accesses[access.name]},
        checks=checks,
        layouts={access.layout.name: access.layout},
    )
    for result in run_spec(only, timeout):
        cex = _bank_counterexample(result)
        if cex is not None:
            return _from_shown(program, access, cex.instance), (
                f"the counterexample of '{result.property}'"
            )
    return None


def _bank_counterexample(result: CheckResult) -> Counterexample | None:
    """The counterexample of a refuted explicit bank check, else None."""
    if result.implicit or result.max_ways is None:
        return None
    return result.counterexample


def _from_shown(program: Program, access: Access, shown: dict[str, int]) -> dict[str, int]:
    """A report's instance (stage, base in bytes) back to internal values."""
    values = {
        v: shown.get(v, access.ranges[v].lo) for v in access.instance_vars if v not in (BASE, STAGE)
    }
    values[STAGE] = shown.get("stage", 0)
    values[BASE] = shown.get("base", 0) // program.spec.buffer.align
    return values


def _cell_bytes(program: Program, access: Access, by: str | None) -> int:
    if by is None:
        by = "chunk" if access.instruction.bytes_per_address >= CHUNK_BYTES else "element"
    if by == "chunk":
        return CHUNK_BYTES
    if by == "element":
        return program.elem_bytes(access.definition.pos, access.layout)
    raise SpecError(f"--by: expected 'chunk' or 'element', found {by!r}")


def _picture(
    program: Program, access: Access, values: dict[str, int], how: str, cell_bytes: int
) -> Picture:
    instr = access.instruction
    addresses = access.lane_addresses(values)
    rows = _drawn_rows(addresses, instr.bytes_per_address)
    columns = ROW_BYTES // cell_bytes
    panels = tuple(_panel(instr, phase, addresses, rows, cell_bytes) for phase in instr.phases)
    shown = shown_instance(program, values)
    where = ", ".join(f"{k}={v}" for k, v in shown.items())
    worst = max(p.ways for p in panels)
    title = (
        f"{program.file}: access {access.name} ({instr.name} on {access.layout.name}) at "
        f"{where} ({how}): max {worst}-way, {sum(p.ways for p in panels)} wavefronts "
        f"(ideal {instr.ideal_wavefronts})"
    )
    labels = (
        tuple(f"G{g}" for g in range(columns))
        if cell_bytes == CHUNK_BYTES
        else tuple(f"b{(c * cell_bytes) // WORD_BYTES}" for c in range(columns))
    )
    return Picture(title, shown, labels, rows, cell_bytes, panels)


def _drawn_rows(addresses: list[int], width: int) -> tuple[int, ...]:
    """Start addresses of the 128-byte rows touched, with the rows between them
    when the gap is small (so an 8-row tile is drawn whole)."""
    touched = sorted(
        {
            a // ROW_BYTES
            for address in addresses
            for a in range(address, address + width, WORD_BYTES)
        }
    )
    if touched[-1] - touched[0] < MAX_GAP_FILL_ROWS:
        touched = list(range(touched[0], touched[-1] + 1))
    return tuple(r * ROW_BYTES for r in touched)


def _panel(
    instr, lanes: range, addresses: list[int], rows: tuple[int, ...], cell_bytes: int
) -> Panel:
    cost = phase_cost(instr, lanes, addresses)
    hot = {b for b, words in cost.words_by_bank.items() if len(words) == cost.ways}
    colliding = set()
    if cost.ways > 1:
        colliding = {
            lane for lane in lanes if _banks(addresses[lane], instr.bytes_per_address) & hot
        }
    touching: dict[int, list[int]] = {}
    for lane in lanes:
        for byte in range(
            addresses[lane],
            addresses[lane] + instr.bytes_per_address,
            min(cell_bytes, instr.bytes_per_address),
        ):
            cell = byte - byte % cell_bytes
            if lane not in touching.setdefault(cell, []):
                touching[cell].append(lane)
    cells = []
    for r, start in enumerate(rows):
        for c in range(ROW_BYTES // cell_bytes):
            address = start + c * cell_bytes
            who = tuple(touching.get(address, ()))
            cells.append(Cell(r, c, address, who, bool(set(who) & colliding)))
    per_column = tuple(
        max(len(cost.words_by_bank.get(b, ())) for b in _column_banks(c, cell_bytes))
        for c in range(ROW_BYTES // cell_bytes)
    )
    title = f"lanes {lanes.start}-{lanes.stop - 1}: {cost.ways}-way" + (
        f", lanes {ranges_text(sorted(colliding))} collide in bank"
        f"{'s' if len(hot) > 1 else ''} {ranges_text(sorted(hot))}"
        if colliding
        else ""
    )
    return Panel(title, lanes, cost.ways, tuple(cells), per_column)


def _column_banks(column: int, cell_bytes: int) -> set[int]:
    """Banks of the bytes a column of cells covers (every row is one turn of the banks)."""
    return _banks(column * cell_bytes, cell_bytes)


def _banks(address: int, width: int) -> set[int]:
    return {(a // WORD_BYTES) % BANKS for a in range(address, address + width, WORD_BYTES)}
