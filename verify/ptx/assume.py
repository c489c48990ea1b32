"""What is assumed about a kernel's parameters: each ``.param`` is a variable
over every value its type allows, unless ``--assume NAME=VALUE`` fixes it or
``--assume 'NAME%M==R'`` puts it in a residue class (then it is ``M * q + R``).
A parameter is named ``param_N`` (the N-th ``.param`` of the entry, from 0) or
by its full PTX name."""

from __future__ import annotations

import re
from dataclasses import replace

from verify.engines.runner import run_spec
from verify.errors import SpecError
from verify.model.expr import Const, Expr, Range, Var
from verify.ptx import ir
from verify.ptx.values import Context, Unknown
from verify.results import CheckResult
from verify.smt.solve import Status
from verify.spec.parser import parse_text

# A 64-bit parameter is taken to be below 2^48: every pointer is (the GPU's virtual
# addresses have 49 bits), and so is every size a kernel can be given.
POINTER_BITS = 48
_ASSUME = re.compile(
    r"^\s*(?P<name>[A-Za-z_$][\w$]*)(?:\+(?P<offset>\d+))?\s*(?:=\s*(?P<value>\d+)|%\s*(?P<m>\d+)\s*==\s*(?P<r>\d+))\s*$"
)


class Assumptions:
    """The values ``ld.param`` reads. A parameter (or, for a struct passed by value,
    a field at a byte offset: ``param_0+8``) is a variable ``param_0`` (``param_0_8``)
    over every value of the width it is read with, below 2^48 for 64 bits."""

    def __init__(self, fn: ir.Function, texts: tuple[str, ...], ctx: Context):
        self.fn, self.ctx = fn, ctx
        self.index = {p.name: i for i, p in enumerate(fn.params)}
        self.index.update({f"param_{i}": i for i in range(len(fn.params))})
        self.fixed: dict[tuple[int, int], int] = {}
        self.classes: dict[tuple[int, int], tuple[int, int]] = {}
        for text in texts:
            self._read(text)

    def _read(self, text: str) -> None:
        m = _ASSUME.match(text)
        if not m:
            raise SpecError(f"--assume {text!r}: expected NAME=VALUE or 'NAME%M==R'")
        name = m["name"]
        if name not in self.index:
            known = ", ".join(f"param_{i} ({p.name})" for i, p in enumerate(self.fn.params))
            raise SpecError(
                f"--assume {text!r}: {self.fn.name} has no parameter {name!r}; "
                f"its parameters: {known or 'none'}"
            )
        key = (self.index[name], int(m["offset"] or 0))
        if m["value"] is not None:
            self.fixed[key] = int(m["value"])
        else:
            mod, rem = int(m["m"]), int(m["r"])
            if mod < 1 or rem >= mod:
                raise SpecError(f"--assume {text!r}: expected 0 <= R < M")
            self.classes[key] = (mod, rem)

    def value(self, name: str, offset: int = 0, bits: int = 0) -> Expr | Unknown:
        """What ``ld.param`` of `bits` bits reads at `offset` bytes into `name`."""
        i = self.index.get(name)
        if i is None:
            return Unknown(f"a load from {name}, not a parameter of the kernel")
        key = (i, offset)
        var = f"param_{i}" + (f"_{offset}" if offset else "")
        limit = 1 << min(bits or self.fn.params[i].element_bytes * 8, POINTER_BITS)
        if key in self.fixed:
            return Const(self.fixed[key])
        if key in self.classes:
            mod, rem = self.classes[key]
            q = f"{var}_q"
            self.ctx.ranges[q] = Range(0, max(1, (limit - rem) // mod))
            return self.ctx.op("+", self.ctx.op("*", Var(q), Const(mod)), Const(rem))
        self.ctx.ranges[var] = Range(0, limit)
        return Var(var)

    def pointer_align(self, var: str) -> int:
        i = int(var.removeprefix("param_").split("_")[0])
        return self.fn.params[i].align or 1


# A verdict that fails at the alignments assumed by default is decided again at
# these (bytes), each knob the user left unset (--global-align, --shared-align)
# raised to the rung; 256 is what cudaMalloc guarantees (CUDA C++ Programming Guide,
# "Device Memory Accesses"). A stronger alignment only removes instances, so what
# the strongest rung does not prove no weaker one does.
ALIGNMENTS = (16, 32, 64, 128, 256)
MAX_REDECISIONS = 5  # per allocation (and so per check): its spec run again at most 5 times
_KNOBS = {
    "global_align": ("every global pointer is {n}-byte aligned", "--global-align {n}"),
    "shared_align": ("the dynamic shared base is {n}-byte aligned", "--shared-align {n}"),
}


def alignment_ladder(current: dict[str, int]) -> list[dict[str, int]]:
    """The settings to decide again at, weakest first: each knob of `current` (the
    knobs the user left unset, at their default) raised to each stronger rung."""
    ladder = []
    for rung in ALIGNMENTS:
        raised = {k: max(v, rung) for k, v in current.items()}
        if raised != current and raised not in ladder:
            ladder.append(raised)
    return ladder[-MAX_REDECISIONS:]


def proved_under_text(
    holds: str, under: dict[str, int], default: dict[str, int], otherwise: str
) -> str:
    """'ideal when every global pointer is 128-byte aligned (--global-align 128);
    16 wavefronts at the default (16 bytes)'."""
    when = " and ".join(_KNOBS[k][0].format(n=n) for k, n in under.items())
    flags = " ".join(_KNOBS[k][1].format(n=n) for k, n in under.items())
    at = ", ".join(f"{default[k]} bytes" for k in under)
    return f"{holds} when {when} ({flags}); {otherwise} at the default ({at})"


def _alignment_knobs(kernel, spec, accesses, align: int) -> dict[str, int]:
    """The alignments the user left at their default and could raise, at that default:
    global pointers where copies read them, the dynamic shared base."""
    knobs = {}
    if kernel.options.global_align is None and any(a.source is not None for a in accesses):
        knobs["global_align"] = kernel.global_align(accesses)
    dynamic = kernel.shared_variable(spec.allocation).size is None
    if dynamic and kernel.options.shared_align is None:
        knobs["shared_align"] = align
    return knobs


def state_proved_under(kernel, spec, accesses, align: int, failed: dict, settled) -> None:
    """Each failed check of `kernel` (a `verify.ptx.check.Kernel`) that a stronger
    alignment proves gets the least such one (`proved_under`) beside its
    counterexample or reason. The allocation's spec, from the trace already made, is
    decided again at most `MAX_REDECISIONS` times, each time with only the accesses
    whose checks are still open: the strongest rung first, then the weaker ones
    from the weakest for what the strongest proves. An answer counts only once
    `settled` (what the kernel's guards and src-size operands make of a spec's
    verdict) leaves it PROVED."""
    default = _alignment_knobs(kernel, spec, accesses, align)
    ladder = alignment_ladder(default)
    if not ladder:
        return
    open_ = _proved_at(kernel, spec, ladder[-1], default, align, failed, settled)
    least = dict.fromkeys(open_, ladder[-1])
    for under in ladder[:-1]:
        if not open_:
            break
        proved = _proved_at(kernel, spec, under, default, align, open_, settled)
        least.update(dict.fromkeys(proved, under))
        open_ = {k: r for k, r in open_.items() if k not in proved}
    for key, under in least.items():
        _note(failed[key], under, default)


def _proved_at(kernel, spec, under, default, align: int, failed: dict, settled) -> dict:
    """The checks of `failed` that `spec`, its alignments raised to `under`, proves."""
    text = _failed_only(spec, failed).replace(
        f"buffer align {align}", f"buffer align {under.get('shared_align', align)}", 1
    )
    if "global_align" in under:
        text = text.replace(
            f"global align {default['global_align']}", f"global align {under['global_align']}", 1
        )
    try:
        decided = run_spec(
            parse_text(text + "\n", spec.label), kernel.options.timeout, kernel.options.engine
        )
    except SpecError:
        return {}
    found = {(r.line, r.property): r for r in decided}
    return {k: v for k, v in failed.items() if k in found and _proved(found[k], settled)}


def _failed_only(spec, failed: dict) -> str:
    """`spec`'s text with only the accesses (and their checks) that have a failed
    check: every other line `spec.origin` ties to an access is blanked to a comment,
    so the lines keep their numbers."""
    kept = {id(spec.origin[line][0]) for line, _ in failed}
    return "\n".join(
        "#" if i + 1 in spec.origin and id(spec.origin[i + 1][0]) not in kept else t
        for i, t in enumerate(spec.text.splitlines())
    )


def _proved(result: CheckResult, settled) -> bool:
    return result.status == Status.PROVED and settled(result).status == Status.PROVED


def _note(result: CheckResult, under: dict, default: dict) -> None:
    """`proved_under` in the facts, and in words beside the counterexample or reason."""
    result.facts["proved_under"] = under
    if result.property.startswith("conflict_free"):
        holds = "ideal"
    else:
        holds = "proved"
    if result.wavefronts is not None:
        otherwise = f"{result.wavefronts} wavefronts"
    else:
        otherwise = result.status.value
    sentence = proved_under_text(holds, under, default, otherwise)
    if result.counterexample is not None:
        cex = result.counterexample
        result.counterexample = replace(cex, notes=(*cex.notes, sentence))
    else:
        result.reason = f"{result.reason}; {sentence}" if result.reason else sentence
