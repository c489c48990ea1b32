"""What is assumed about a kernel's parameters: each ``.param`` is a variable
over every value its type allows, unless ``--assume NAME=VALUE`` fixes it or
``--assume 'NAME%M==R'`` puts it in a residue class (then it is ``M * q + R``).
A parameter is named ``param_N`` (the N-th ``.param`` of the entry, from 0) or
by its full PTX name."""

from __future__ import annotations

import re
from collections import OrderedDict
from dataclasses import replace

from verify.engines.runner import run_spec
from verify.errors import SpecError
from verify.model.expr import Const, Expr, Range, Var, free_vars
from verify.ptx import ir
from verify.ptx.values import Context, Unknown
from verify.results import CheckResult
from verify.smt.solve import Status

# A 64-bit parameter is taken to be below 2^48: every pointer is (the GPU's virtual
# addresses have 49 bits), and so is every size a kernel can be given.
POINTER_BITS = 48
_ASSUME = re.compile(
    r"^\s*(?P<name>[A-Za-z_$][\w$]*)(?:\+(?P<offset>\d+))?\s*"
    r"(?:=\s*(?P<value>\d+)|%\s*(?P<m>\d+)\s*==\s*(?P<r>\d+)|<\s*(?P<bound>\d+))\s*$"
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
        self.bounds: dict[tuple[int, int], int] = {}  # NAME<B: every value below B
        self.vars: dict[str, tuple[int, int]] = {}  # a variable -> the parameter it reads
        for text in texts:
            self._read(text)

    def _read(self, text: str) -> None:
        m = _ASSUME.match(text)
        if not m:
            raise SpecError(f"--assume {text!r}: expected NAME=VALUE, 'NAME%M==R' or 'NAME<BOUND'")
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
        elif m["bound"] is not None:
            if int(m["bound"]) < 1:
                raise SpecError(f"--assume {text!r}: expected a bound of at least 1")
            self.bounds[key] = min(int(m["bound"]), self.bounds.get(key, int(m["bound"])))
        else:
            mod, rem = int(m["m"]), int(m["r"])
            if mod < 1 or rem >= mod:
                raise SpecError(f"--assume {text!r}: expected 0 <= R < M")
            self.classes[key] = (mod, rem)

    def value(self, name: str, offset: int = 0, bits: int = 0) -> Expr | Unknown:
        """What ``ld.param`` of `bits` bits reads at `offset` bytes into `name`.
        A parameter under a bound is named by its full PTX name
        (``matmul_kernel_param_7``, in a class its quotient ``..._q``): a
        ``param_N`` variable is taken for a pointer where a copy's source is placed
        (`verify.ptx.memory.POINTER`), and a bounded one is a value, not a base."""
        i = self.index.get(name)
        if i is None:
            return Unknown(f"a load from {name}, not a parameter of the kernel")
        key = (i, offset)
        var = f"param_{i}" + (f"_{offset}" if offset else "")
        if key in self.bounds:
            full = self.fn.params[i].name + (f"_{offset}" if offset else "")
            var = var if full.startswith("param_") else full
        limit = 1 << min(bits or self.fn.params[i].element_bytes * 8, POINTER_BITS)
        limit = min(limit, self.bounds.get(key, limit))
        if key in self.fixed:
            if self.fixed[key] >= self.bounds.get(key, self.fixed[key] + 1):
                raise SpecError(
                    f"--assume: {self.name_of(key)} = {self.fixed[key]} is not below "
                    f"its bound {self.bounds[key]}"
                )
            return Const(self.fixed[key])
        self.vars[var] = key
        if key in self.classes:
            mod, rem = self.classes[key]
            if rem >= limit:
                raise SpecError(
                    f"--assume: no value of {self.name_of(key)} below {limit} is {rem} mod {mod}"
                )
            q = f"{var}_q"
            self.vars[q] = key
            # M * q + R < limit for q in 0..ceil((limit - R) / M)
            self.ctx.ranges[q] = Range(0, -(-(limit - rem) // mod))
            return self.ctx.op("+", self.ctx.op("*", Var(q), Const(mod)), Const(rem))
        self.ctx.ranges[var] = Range(0, limit)
        return Var(var)

    def name_of(self, key: tuple[int, int]) -> str:
        """``param_N`` (``param_N+OFF`` for a struct's field), as --assume reads it."""
        return f"param_{key[0]}" + (f"+{key[1]}" if key[1] else "")

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
    counterexample or reason. Only the checks an alignment can change are asked
    (`_ALIGNMENT_BLIND`), each by bisection over the ladder (`_least_rungs`); an
    answer counts only once `settled` (what the kernel's guards and src-size
    operands make of a spec's verdict) leaves it PROVED."""
    default = _alignment_knobs(kernel, spec, accesses, align)
    ladder = alignment_ladder(default)
    open_ = {k: r for k, r in failed.items() if not k[1].startswith(_ALIGNMENT_BLIND)}
    if not ladder or not open_:
        return
    questions = Questions(kernel, spec, settled)

    def decide(rung: int, keys: list) -> set:
        return questions.proved(_raised(spec, align, default, ladder[rung]), keys)

    for key, rung in _least_rungs(list(open_), len(ladder), decide).items():
        _note(failed[key], ladder[rung], default)


# in_bounds reads an access's offsets in its allocation (and a copy's in its global
# tile), never the base: no alignment changes it, so it is not asked again.
_ALIGNMENT_BLIND = ("in_bounds",)


def _least_rungs(keys: list, rungs: int, decide) -> dict:
    """The least rung (0..rungs-1) at which `decide(rung, keys)` proves each of
    `keys`, for those the strongest proves. A stronger alignment only removes
    instances, so the rungs that prove a check are an upper run of the ladder:
    the strongest first (what it does not prove no rung does), then each check
    by bisection, the checks that ask the same rung in one call. Every rung stated
    is one that `decide` proved. Each rung is asked at most once per check, and a
    check is asked at most 1 + ceil(log2(rungs)) times: 3 on a ladder of 4 (a
    global pointer at its default 16 bytes: 32..256), where asking from the
    weakest up took 4."""
    top = rungs - 1
    low = {k: -1 for k in decide(top, keys)}  # the highest rung known not to prove it
    high = dict.fromkeys(low, top)  # the lowest rung known to prove it
    while True:
        asks: dict[int, list] = {}
        for k in low:
            if high[k] - low[k] > 1:
                asks.setdefault((low[k] + high[k]) // 2, []).append(k)
        if not asks:
            return high
        for rung, asked in sorted(asks.items()):
            proved = decide(rung, asked)
            for k in asked:
                if k in proved:
                    high[k] = rung
                else:
                    low[k] = rung


def _raised(spec, align: int, default: dict, under: dict) -> dict[int, str]:
    """The spec lines that an alignment sets, as they read at `under`."""
    out = {}
    for i, text in enumerate(spec.lines, 1):
        if text == f"buffer align {align}" and "shared_align" in under:
            out[i] = f"buffer align {under['shared_align']}"
        elif "global_align" in under and text == f"global align {default['global_align']}":
            out[i] = f"global align {under['global_align']}"
    return out


# Answers to questions already asked, across kernels of one process: (the spec's
# lines that no access owns, one access's lines with its names replaced, the
# property, engine, timeout) -> the engine's result. Only definite answers are kept
# (an UNKNOWN may be a timeout that a later call would not hit).
_ANSWERS: OrderedDict[tuple, CheckResult] = OrderedDict()
MAX_ANSWERS = 4096


class Questions:
    """The failed checks of one allocation's spec, asked again at raised
    alignments. Accesses whose lines read alike but for their names (a0, G0) ask
    one question: it is decided once, for the first of them, and its answer is
    each one's, settled for each access by `settled`."""

    def __init__(self, kernel, spec, settled):
        self.kernel, self.spec, self.settled = kernel, spec, settled
        self.lines_of: dict[int, list[int]] = {}  # id(access) -> its lines
        self.names: dict[int, set[str]] = {}
        for line, (access, name) in spec.origin.items():
            self.lines_of.setdefault(id(access), []).append(line)
            self.names.setdefault(id(access), set()).add(name)
        self.question = {
            a: tuple(self._plain(a, spec.lines[i - 1]) for i in ls)
            for a, ls in self.lines_of.items()
        }

    def _plain(self, access: int, text: str) -> str:
        for name in self.names[access]:
            text = re.sub(rf"\b{re.escape(name)}\b", "@" + name[0], text)
        return text

    def _key(self, header: tuple, line: int, prop: str) -> tuple:
        a = id(self.spec.origin[line][0])
        o = self.kernel.options
        return (header, self.question[a], self._plain(a, prop), o.run.key())

    def proved(self, raised: dict[int, str], keys: list) -> set:
        """The (line, property) keys of `keys` that the spec, its lines `raised`
        as given, proves (each settled for its own access)."""
        lines = [raised.get(i, t) for i, t in enumerate(self.spec.lines, 1)]
        header = tuple(
            t for i, t in enumerate(lines, 1) if i not in self.spec.origin and t[:1] != "#"
        )
        answers: dict[tuple, CheckResult] = {}
        asked: dict[tuple, int] = {}  # question -> the access (id) that asks it
        for line, prop in keys:
            key = self._key(header, line, prop)
            if key in _ANSWERS:
                _ANSWERS.move_to_end(key)
                answers[key] = _ANSWERS[key]
            else:
                asked.setdefault(key[1], id(self.spec.origin[line][0]))
        if asked:
            answers.update(self._decide(lines, header, set(asked.values())))
        out = set()
        for line, prop in keys:
            found = answers.get(self._key(header, line, prop))
            if found is not None and found.status == Status.PROVED:
                mine = replace(found, line=line, property=prop, facts=dict(found.facts))
                if self.settled(mine).status == Status.PROVED:
                    out.add((line, prop))
        return out

    def _decide(self, lines: list[str], header: tuple, asking: set[int]) -> dict:
        """One spec run with only the accesses `asking` kept (every other access's
        lines blanked to a comment, so the lines keep their numbers)."""
        origin = self.spec.origin
        kept = [
            "#" if i in origin and id(origin[i][0]) not in asking else t
            for i, t in enumerate(lines, 1)
        ]
        o = self.kernel.options
        try:
            decided = run_spec(self.spec.read(self.spec.label, kept), o.run)
        except SpecError:
            return {}
        out = {}
        for r in decided:
            if r.line in origin:
                key = self._key(header, r.line, r.property)
                out[key] = r
                if r.status != Status.UNKNOWN:
                    _ANSWERS[key] = r
                    while len(_ANSWERS) > MAX_ANSWERS:
                        _ANSWERS.popitem(last=False)
        return out


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
    _state(result, proved_under_text(holds, under, default, otherwise))


# -- value classes ---------------------------------------------------------------

# A failed check whose instruction reads an integer parameter left free (neither
# fixed nor in a class) is decided again with ``NAME % M == 0`` assumed, for these M:
# up to 256, a row stride of any element size that starts every row at a 256-byte
# line. ``NAME % 2M == 0`` holds only where ``NAME % M == 0`` does, so what 256 does
# not prove no smaller modulus does, and the least one is found by bisection
# (`_least_rungs`): at most 4 checks of the kernel per parameter.
CLASS_MODULI = (2, 4, 8, 16, 32, 64, 128, 256)
MAX_CLASS_PARAMS = 1  # per kernel: the parameter that the most failed checks read
_CLASS_CHECKS = ("aligned", "conflict_free", "wavefronts", "max_ways")
_searching = False  # a kernel checked for a class states no class of its own


def state_classes(kernel, placed: dict, results: list[CheckResult], recheck) -> None:
    """Each failed check of `kernel` that ``NAME % M == 0`` proves, for a parameter
    its instruction's addresses read (`_reads`), gets the least such
    M (`proved_when`, and a sentence as `proved_under`'s). `recheck(options)` checks
    the kernel again (`verify.ptx.check`): the whole kernel, traced again with the
    class among its assumptions and decided by the engines as any kernel is; a
    check counts as proved there when it is PROVED, or REFUTED with a
    `proved_under` (then the alignment is stated with the class)."""
    global _searching
    if _searching:
        return
    failed = {
        (r.facts.get("ptx_line"), r.property): r
        for r in results
        if r.status != Status.PROVED and r.property.split()[0] in _CLASS_CHECKS
    }
    by_line = {a.event.instr.line: a for found in placed.values() for a in found}
    reads: dict[tuple[int, int], list] = {}
    a = kernel.assumptions
    for key in failed:
        access = by_line.get(key[0])
        if access is None:
            continue
        for param in sorted({a.vars[v] for v in _reads(access) if v in a.vars}):
            if param not in a.fixed and param not in a.classes:
                reads.setdefault(param, []).append(key)
    ranked = sorted(reads, key=lambda p: (-len(reads[p]), p))[:MAX_CLASS_PARAMS]
    for param in ranked:
        name = a.name_of(param)
        for key, (mod, under_class) in _least_classes(
            kernel, recheck, name, reads[param], failed
        ).items():
            if "proved_when" not in failed[key].facts:
                _note_class(failed[key], name, mod, under_class)


def _least_classes(kernel, recheck, name: str, keys: list, failed: dict) -> dict:
    """key -> (the least M of `CLASS_MODULI` under whose ``name % M == 0`` the
    kernel's check proves it, that check's result)."""
    checked: dict[int, dict] = {}

    def decide(rung: int, asked: list) -> set:
        mod = CLASS_MODULI[rung]
        if mod not in checked:
            checked[mod] = _checked_under(kernel, recheck, f"{name}%{mod}==0")
        return {k for k in asked if k in checked[mod] and _holds(checked[mod][k], failed[k])}

    least = _least_rungs(keys, len(CLASS_MODULI), decide)
    return {k: (CLASS_MODULI[r], checked[CLASS_MODULI[r]][k]) for k, r in least.items()}


def _reads(access) -> set[str]:
    """The variables an access's addresses read: its shared offset and its global
    source. Not its guard's nor its src-size's: the guards' reader keeps no
    residue class (a class makes no mask whole there), and a kernel checked again
    for each of a Triton mask's bounds would cost several kernel checks for nothing."""
    out: set[str] = set()
    for e in (access.offset, access.source):
        if isinstance(e, Expr):
            out |= free_vars(e)
    return out | (access.source_vars or set())


def _checked_under(kernel, recheck, assumption: str) -> dict:
    global _searching
    _searching = True
    try:
        found = recheck(replace(kernel.options, assume=(*kernel.options.assume, assumption)))
    except SpecError:
        return {}
    finally:
        _searching = False
    return {(r.facts.get("ptx_line"), r.property): r for r in found}


def _holds(result: CheckResult, without: CheckResult) -> bool:
    """`result` (under a class) proves what `without` (the same check without
    it) does not: PROVED, or proved under an alignment weaker than `without`'s
    (a class that only repeats `without`'s `proved_under` adds nothing)."""
    if result.status == Status.PROVED:
        return True
    under = result.facts.get("proved_under")
    return under is not None and under != without.facts.get("proved_under")


def _note_class(result: CheckResult, name: str, mod: int, under_class: CheckResult) -> None:
    """`proved_when` in the facts ({"assume": "param_7%64==0"}, with the
    `proved_under` that the class needs too), and in words beside the
    counterexample or reason: 'ideal when param_7 % 64 == 0 (--assume
    'param_7%64==0'); 8 wavefronts without it'."""
    assumption = f"{name}%{mod}==0"
    when, flags = f"{name} % {mod} == 0", f"--assume '{assumption}'"
    facts: dict = {"assume": assumption}
    under = under_class.facts.get("proved_under") if under_class.status != Status.PROVED else None
    if under:
        facts["proved_under"] = under
        when += " and " + " and ".join(_KNOBS[k][0].format(n=n) for k, n in under.items())
        flags += " " + " ".join(_KNOBS[k][1].format(n=n) for k, n in under.items())
    result.facts["proved_when"] = facts
    holds = "ideal" if result.property.startswith("conflict_free") else "proved"
    if result.wavefronts is not None:
        otherwise = f"{result.wavefronts} wavefronts"
    else:
        otherwise = result.status.value
    _state(result, f"{holds} when {when} ({flags}); {otherwise} without it")


def _state(result: CheckResult, sentence: str) -> None:
    if result.counterexample is not None:
        cex = result.counterexample
        result.counterexample = replace(cex, notes=(*cex.notes, sentence))
    else:
        result.reason = f"{result.reason}; {sentence}" if result.reason else sentence
