"""A kernel's PTX -> traced shared-memory instructions -> verify specs -> results
at each instruction's PTX line and source line.

Per kernel (`check_ptx_text`): the block geometry (--block, else the PTX's own
.reqntid/.maxntid), the parameters' values (`Assumptions`), one thread traced
symbolically (`verify.ptx.trace`), each shared-memory instruction placed in its
allocation (`verify.ptx.memory`), one spec per allocation (`verify.ptx.specgen`)
run by verify's own runner, every result relabelled with the instruction and
its lines. An instruction under a guard or branch is checked for every lane and
instance, which a proof covers; a refutation stands only where the guard holds
at the counterexample (`verify.ptx.guards`). What cannot be decided is UNKNOWN
with its reason.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, replace

from verify.engines.options import RunOptions
from verify.engines.runner import run_spec
from verify.errors import Pos, SpecError
from verify.model import shared_memory
from verify.model.expr import Const, Expr, Range, Var, bounds, free_vars
from verify.ptx import assume, guards, hopper, ir, memory, specgen
from verify.ptx.assume import Assumptions
from verify.ptx.ops import Machine
from verify.ptx.parse import parse_ptx, read_ptx
from verify.ptx.trace import Trace, Tracer
from verify.ptx.values import Context, Unknown, Value
from verify.results import CheckResult, Counterexample
from verify.smt.solve import Status

WARP = 32
_GENERATED_SOURCE = re.compile(r"\bG\d+\b")  # a copy's global layout in its spec (specgen)
SHARED_WINDOW = 1 << 24  # bytes: every shared address lies below this
_GRID = (1 << 31, 1 << 16, 1 << 16)  # CUDA's largest grid


@dataclass
class Options:
    block: tuple[int, ...] | None = None
    grid: tuple[int, ...] | None = None
    kernel: str | None = None
    global_align: int | None = None
    shared_align: int | None = None
    dynamic_shared: int | None = None
    assume: tuple[str, ...] = ()
    tma_maps: tuple[str, ...] = ()  # --tma-map: host-built tensor maps (verify.ptx.hopper)
    run: RunOptions = RunOptions()  # how each check is decided: engine and budget


def parse_dims(text: str, what: str) -> tuple[int, int, int]:
    """``128`` / ``32,8`` / ``32,8,1`` -> (x, y, z)."""
    try:
        dims = [int(x) for x in text.split(",")]
    except ValueError:
        raise SpecError(f"--{what} {text!r}: expected X[,Y[,Z]], e.g. 128 or 32,8") from None
    if not 1 <= len(dims) <= 3 or any(d < 1 for d in dims):
        raise SpecError(f"--{what} {text!r}: expected one to three positive integers")
    return (dims + [1, 1])[:3]  # type: ignore[return-value]


class Kernel:
    """One entry function being checked."""

    def __init__(self, module: ir.Module, fn: ir.Function, options: Options):
        self.module, self.fn, self.options = module, fn, options
        self.block = self._block()
        threads = self.block[0] * self.block[1] * self.block[2]
        self.threads = threads
        ranges = {"lane": Range(0, WARP), "warp": Range(0, -(-threads // WARP))}
        grid = options.grid or _GRID
        for axis, n in zip("xyz", grid):
            ranges[f"ctaid_{axis}"] = Range(0, n)
        self.ctx = Context(ranges)
        self.assumptions = Assumptions(fn, options.assume, self.ctx)
        self.shared = self._shared_variables()

    def _block(self) -> tuple[int, int, int]:
        if self.options.block:
            b = tuple(self.options.block) + (1, 1)
            return (b[0], b[1], b[2])
        for key in ("reqntid", "maxntid"):
            if key in self.fn.perf:
                dims = list(self.fn.perf[key]) + [1, 1]
                return (dims[0], dims[1], dims[2])
        raise SpecError(
            f"kernel {self.fn.name} declares no .reqntid or .maxntid: give the block "
            "shape, e.g. --block 128 or --block 32,8",
            Pos(self.fn.line, 1),
            self.module.file,
        )

    def _shared_variables(self) -> dict[str, tuple[str, ir.Variable]]:
        found = [v for v in self.module.variables + self.fn.variables if v.space == "shared"]
        out = {}
        for i, v in enumerate(found):
            name = f"{memory.SHARED_SYMBOL}{i}"
            self.ctx.ranges[name] = Range(0, SHARED_WINDOW)
            out[v.name] = (name, v)
        return out

    def assumed(self) -> dict:
        """What a verdict on this kernel rests on, as the options set it (None:
        every value the PTX allows)."""
        o = self.options
        return {
            "block": list(self.block),
            "grid": list(o.grid) if o.grid else None,
            "global_align": o.global_align,
            "shared_align": o.shared_align,
            "dynamic_shared": o.dynamic_shared,
            "params": list(o.assume),
        }

    def shared_label(self, allocation: str) -> str:
        return next(n for n, (a, _) in self.shared.items() if a == allocation)

    def shared_variable(self, allocation: str) -> ir.Variable:
        return next(v for a, v in self.shared.values() if a == allocation)

    def global_align(self, accesses: list[memory.Access]) -> int:
        """--global-align, else what cp.async itself demands (a source aligned to its
        size) or the pointer's declared .align, whichever is larger."""
        if self.options.global_align:
            return self.options.global_align
        need = 16
        for a in accesses:
            if a.source_param:
                need = max(need, a.bytes, self.assumptions.pointer_align(a.source_param))
        return need

    # -- the thread's view ------------------------------------------------------

    def special(self, reg: str) -> Value:
        x, y, _ = self.block
        t: Expr = self.ctx.op("+", self.ctx.op("*", Var("warp"), Const(WARP)), Var("lane"))
        op = self.ctx.op
        table: dict[str, Value] = {
            "%tid.x": op("%", t, Const(x)),
            "%tid.y": op("%", op("/", t, Const(x)), Const(y)),
            "%tid.z": op("/", t, Const(x * y)),
            "%laneid": Var("lane"),
            "%ntid.x": Const(self.block[0]),
            "%ntid.y": Const(self.block[1]),
            "%ntid.z": Const(self.block[2]),
            **{f"%ctaid.{a}": Var(f"ctaid_{a}") for a in "xyz"},
        }
        if self.options.grid:
            table.update({f"%nctaid.{a}": Const(n) for a, n in zip("xyz", self.options.grid)})
        if reg in table:
            return table[reg]
        return Unknown(f"the special register {reg}")

    def symbol(self, name: str) -> Value:
        if name in self.shared:
            return Var(self.shared[name][0])
        return Unknown(f"the address of {name}, not a shared variable")

    def widths(self) -> dict[str, int]:
        out = {}
        for v in self.fn.variables:
            if v.space == "reg":
                bits = 1 if v.type == "pred" else v.element_bytes * 8
                out[v.name] = bits
        return out

    def trace(self) -> Trace:
        machine = Machine(self.ctx, self.special, self.symbol, self.assumptions.value)
        return Tracer(self.fn, machine, self.ctx, self.widths()).run(memory.is_memory)


def _source(module: ir.Module, instr: ir.Instr) -> tuple[str, int]:
    outer = instr.source.outer
    if outer is None:
        return module.file, instr.line
    return outer


def _label(instr: ir.Instr, ptx: str) -> str:
    return f"{instr.opcode} [{os.path.basename(ptx)}:{instr.line}]"


def _facts(kernel: Kernel, access: memory.Access) -> dict:
    instr = access.event.instr
    return {
        "instruction": instr.opcode,
        "ptx_line": instr.line,
        "kernel": kernel.fn.name,
        "source": [f"{f}:{n}" for f, n in instr.source.frames],
        "allocation": kernel.shared_label(access.allocation) if access.allocation else None,
        "assumed": kernel.assumed(),
    }


def _unknown(kernel: Kernel, access: memory.Access, what: str, reason: str) -> CheckResult:
    file, line = _source(kernel.module, access.event.instr)
    result = CheckResult(
        file,
        line,
        f"{what} {_label(access.event.instr, kernel.module.file)}",
        Status.UNKNOWN,
        reason=reason,
    )
    result.facts.update(_facts(kernel, access))
    return result


def _why_not(access: memory.Access, trace: Trace, ctx: Context) -> str:
    """Why a placed access cannot be written as a spec, or ''."""
    offset = access.offset
    assert isinstance(offset, Expr)
    for v in sorted(free_vars(offset)):
        loop = trace.loops.get(v)
        if loop is not None and loop.trip is None:
            return (
                f"its address depends on the iteration of the loop at PTX line "
                f"{loop.header_line}, whose trip count is unknown: {loop.why_no_trip}"
            )
    try:
        top = bounds(offset, ctx.ranges)[1]
    except SpecError as e:
        return f"its offset cannot be bounded: {e.message}"
    if top >= 1 << 32:
        wide = sorted(v for v in free_vars(offset) if ctx.ranges[v].size > 1 << 16)
        return f"its offset is unbounded through {', '.join(wide)} (--assume decides it)"
    return ""


def _kernel_results(kernel: Kernel) -> list[CheckResult]:
    trace = kernel.trace()
    results: list[CheckResult] = []
    placed: dict[str, list[memory.Access]] = {}
    for event in trace.events:
        if hopper.handles(event.instr):
            continue  # wgmma and TMA: checked below, by verify.ptx.hopper
        access = memory.access_of(event, kernel.ctx, kernel.symbol)
        if access.allocation is None:
            if access.reason:
                what = "not modelled:" if access.reason.startswith("not modelled") else "unknown:"
                reason = access.reason.removeprefix("not modelled: ")
                results.append(_unknown(kernel, access, what.rstrip(":"), reason))
            continue
        why = _why_not(access, trace, kernel.ctx)
        if why:
            results.append(_unknown(kernel, access, "unknown", why))
            continue
        placed.setdefault(access.allocation, []).append(access)
    for allocation, accesses in placed.items():
        results += _allocation_results(kernel, trace, allocation, accesses)
    results += hopper.check(kernel, trace, placed)
    # a failed check that a parameter's residue class proves: the kernel checked again
    recheck = lambda options: _kernel_results(Kernel(kernel.module, kernel.fn, options))  # noqa: E731
    assume.state_classes(kernel, placed, results, recheck)
    results.sort(key=lambda r: (r.facts.get("ptx_line", 0), r.property))
    _warn_footprint(kernel, results)
    return results


def _capability(module: ir.Module) -> int | None:
    """The compute capability of `.target sm_90a` (90), None when none is named."""
    for name in module.target:
        found = re.fullmatch(r"sm_(\d+)[a-z]?", name)
        if found:
            return int(found.group(1))
    return None


def _warn_footprint(kernel: Kernel, results: list[CheckResult]):
    """The kernel's static shared arrays plus --dynamic-shared, on its first check:
    a warning there when its target cannot give one block that much (issue 27).
    Padding between the arrays is not counted: the sum is a least footprint, so a
    warning is never wrong."""
    capability = _capability(kernel.module)
    sizes = [v.size for _, v in kernel.shared.values() if v.size is not None]
    footprint = sum(sizes) + (kernel.options.dynamic_shared or 0)
    warning = shared_memory.over_limit(footprint, capability) if capability else None
    if warning and results:
        results[0].facts["footprint_bytes"] = footprint
        results[0].facts.setdefault("warnings", []).append(warning)


def _allocation_results(kernel, trace, allocation, accesses) -> list[CheckResult]:
    label = kernel.shared_label(allocation)
    variable = kernel.shared_variable(allocation)
    align = variable.align or 1
    if variable.size is None and kernel.options.shared_align:
        align = max(align, kernel.options.shared_align)
    size = variable.size if variable.size is not None else kernel.options.dynamic_shared
    spec, refused = specgen.build(
        allocation,
        label,
        align,
        size,
        accesses,
        kernel.ctx.ranges,
        kernel.global_align(accesses),
    )
    results = [_unknown(kernel, a, "unknown", why) for a, why in refused]
    name = f"{kernel.module.file}#{kernel.fn.name}#{label}"
    try:
        checked = run_spec(spec.read(name), kernel.options.run)
    except SpecError as e:
        return results + [
            _unknown(kernel, a, "unknown", f"verify refused its spec: {e.message}")
            for a in spec.names.values()
        ]

    def settled(r: CheckResult) -> CheckResult:
        access, _ = spec.origin[r.line]
        return _relabel(kernel, trace, r, access, spec, variable.size is None and size is None)

    failed = {}
    for r in checked:
        origin = spec.origin.get(r.line)
        if origin is None or r.property.startswith("in_bounds") and " from " in r.property:
            continue
        key = (r.line, r.property)
        results.append(settled(r))
        if results[-1].status != Status.PROVED:
            failed[key] = results[-1]
    assume.state_proved_under(kernel, spec, accesses, align, failed, settled)
    return results


def _relabel(kernel, trace, result: CheckResult, access, spec, unsized: bool) -> CheckResult:
    instr = access.event.instr
    words = result.property.split()
    for i, w in enumerate(words):
        if w in spec.names:
            words[i] = _label(instr, kernel.module.file)
    result.property = " ".join(words)
    result.file, result.line = _source(kernel.module, instr)
    result.facts.update(_facts(kernel, access))
    if unsized and result.property.startswith("in_bounds"):
        result.status = Status.UNKNOWN
        result.counterexample = None
        result.reason = (
            "the size of the dynamic shared memory is not stated (--dynamic-shared BYTES)"
        )
    settled = zfill_figures(guards.settle(result, access, trace, kernel), access)
    if settled.counterexample is not None:
        settled.counterexample = _with_threads(kernel, settled.counterexample)
    return settled


# Measured on the H200 (benchmarks/results/ptx_h200.md, "cp.async.cg with a src-size
# operand costs twice"; benchmarks/hardware/ptx/zfill.cu:29-38): a 16-byte .cg copy
# whose src-size is a register is LDGSTS.E.BYPASS.128.ZFILL and costs 8 wavefronts
# for 32 lanes copying 512 contiguous bytes, whatever the src-size values, where the
# same copy without src-size costs rule S's 4; Nsight's ideal doubles with it (8).
# A src-size that is 0 or the copy size (Triton's masks) is a predicate to ptxas,
# not this form (`verify.ptx.memory._zero_or`).
ZFILL_FACTOR = 2
ZFILL_NOTE = (
    "ZFILL form (register src-size): twice rule S and its ideal, as the H200 measured "
    "for contiguous and neighbour-swapped destinations (ptx_h200.md); other patterns "
    "are assumed to double too"
)


def zfill_figures(result: CheckResult, access: memory.Access) -> CheckResult:
    """A .cg copy in its ZFILL form: rule S's wavefronts and ideal, both doubled.
    The verdict stands (both sides double), the figures are the hardware's."""
    if not access.zfill or result.wavefronts is None:
        return result
    result.wavefronts *= ZFILL_FACTOR
    if result.ideal_wavefronts is not None:
        result.ideal_wavefronts *= ZFILL_FACTOR
    result.fidelity = f"{result.fidelity}; {ZFILL_NOTE}" if result.fidelity else ZFILL_NOTE
    result.facts["zfill"] = True
    return result


def _with_threads(kernel: Kernel, cex: Counterexample) -> Counterexample:
    """The counterexample with the threads its lanes are, ``thread 37 = tid
    (5, 1, 0)``: the lane is the thread's index mod 32 in its warp; a copy's
    source rows read ``global <-``, not the generated layout's name (``G0 <-``)."""
    rows = tuple(
        replace(r, label=_GENERATED_SOURCE.sub("global", r.label)) if r.label else r
        for r in cex.rows
    )
    cex = replace(cex, rows=rows)
    warp = cex.instance.get("warp", 0)
    lanes = [row.lane for row in cex.rows if row.lane is not None][:4]
    if not lanes:
        return cex
    x, y, _ = kernel.block
    shown = []
    for lane in lanes:
        t = warp * WARP + lane
        shown.append(f"lane {lane} is thread {t} = tid ({t % x}, {t // x % y}, {t // (x * y)})")
    more = ", ..." if len(cex.rows) > len(lanes) else ""
    return replace(cex, notes=(*cex.notes, "; ".join(shown) + more))


def check_module(module: ir.Module, options: Options) -> list[CheckResult]:
    kernels = module.entries()
    if options.kernel:
        name = options.kernel
        # the exact name, else a C++ name inside its mangling (_Z16transpose_paddedPf...),
        # else any name containing it
        kernels = (
            [k for k in kernels if k.name == name]
            or [k for k in kernels if f"{len(name)}{name}" in k.name]
            or [k for k in kernels if name in k.name]
        )
        if len(kernels) != 1:
            names = ", ".join(k.name for k in module.entries())
            raise SpecError(
                f"--kernel {options.kernel!r} names {len(kernels)} of the kernels ({names})",
                Pos(1, 1),
                module.file,
            )
    if not kernels:
        raise SpecError("nothing to verify: no .entry with a body", Pos(1, 1), module.file)
    results: list[CheckResult] = []
    for fn in kernels:
        touches_shared = any(isinstance(i, ir.Instr) and memory.is_memory(i) for i in fn.body)
        if touches_shared or len(kernels) == 1:
            results += _kernel_results(Kernel(module, fn, options))
    if not results:
        raise SpecError(
            "nothing to verify: no shared-memory instruction found", Pos(1, 1), module.file
        )
    return results


def check_ptx_text(
    text: str, name: str = "<ptx>", options: Options | None = None
) -> list[CheckResult]:
    return check_module(parse_ptx(text, name), options or Options())


def check_ptx(path: str, options: Options | None = None) -> list[CheckResult]:
    return check_module(read_ptx(path), options or Options())
