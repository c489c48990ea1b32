"""A Triton kernel's shared-memory instructions decided from its PTX, reported at
its TTGIR ops and Python lines.

TTGIR says what the kernel's buffers are (encodings, shapes, which views are
equivalent) and which Python line each op comes from; it does not say which
instructions Triton emits for an op: that is decided while lowering (vector
widths chosen over the aligned block as a set, with registers permuted inside a
vector; convert_layout and reduction scratch; cp.async sources through
``% M``). The PTX says exactly that. So `check` keeps TTGIR's buffer checks
(``bijective``, ``equivalent``) and replaces every per-op check (in_bounds,
aligned, conflict_free, not modelled) by the checks `verify.ptx.check` decides
for the PTX instructions of that op, each found through the ``.loc`` line
Triton writes from the same Python location as the op's ``loc``.

Where the PTX comes from: ``PtxOptions.ptx`` (a file given with ``--ptx``), the
compiled kernel's own ``asm["ptx"]`` (`verify triton`), else Triton lowers the
module here (`verify.ttgir.lower`). If lowering fails, every op is decided by
TTGIR's rules as before, and each result says why (`facts["instructions"]`).

The launch, as the compiler promises it: the block is the PTX's ``.reqntid``
(``num_warps``); the dynamic shared memory has Triton's allocated size and a
base 128-byte aligned (`TRITON_SHARED_BASE_ALIGN` says why), or more where a
buffer asks for more; global pointers as `verify.ptx` assumes them; an
integer parameter with ``tt.divisibility = D`` is ``param_N % D == 0`` (Triton
specialises the kernel only for such values). ``--assume NAME=V`` takes
Triton's parameter names (the TTGIR ``tt.func`` arguments, in the order of the
PTX ``.param`` list) as well as ``param_N``.
"""

from __future__ import annotations

import contextlib
import gc
import os
import re
from dataclasses import dataclass, field, replace

from verify.engines.options import RunOptions
from verify.errors import SpecError
from verify.ptx import check as ptx_check
from verify.ptx import tensormaps
from verify.ptx.parse import parse_ptx
from verify.results import CheckResult
from verify.smt.solve import Status
from verify.ttgir import lower, tensordesc
from verify.ttgir.module import (
    KernelChecker,
    nothing_to_verify,
    prepare_kernel,
    ran,
    read_source,
    run_kernel,
)

# The checks TTGIR writes for one op (the rest, bijective and equivalent, are the
# buffer's and stay); "not" is "not modelled: <op>".
_PER_OP = {"in_bounds", "aligned", "max_ways", "wavefronts", "conflict_free", "not"}
# Which TTGIR ops a PTX instruction can come from, by its kind.
_LOADS = {
    "ttg.local_load",
    "ttg.convert_layout",
    "tt.reduce",
    "tt.scan",
    "tt.histogram",
    "tt.gather",
}
_STORES = {"ttg.local_store", "ttg.local_alloc", "ttg.convert_layout", "tt.reduce", "tt.scan"}
_COPIES = {"ttg.async_copy_global_to_local"}
_MMA = {"ttng.warp_group_dot"}
_ARG = re.compile(r"%([A-Za-z_][\w$.-]*)\s*:\s*(!?[\w.<>]+(?:<[^>]*>)?)\s*(\{[^}]*\})?")
_DIVISIBILITY = re.compile(r"tt\.divisibility\s*=\s*(\d+)")


@dataclass
class PtxOptions:
    """How `check` gets and reads the PTX. ``use=False``: TTGIR's rules only."""

    use: bool = True
    ptx: str | None = None  # a PTX file to read instead of lowering
    ptx_text: str | None = None  # PTX already in hand (a compiled kernel's asm["ptx"])
    ptx_name: str | None = None  # how results name it (``matmul_kernel.ptx``)
    shared_bytes: int | None = None  # its dynamic shared memory (metadata.shared)
    grid: tuple[int, ...] | None = None
    global_align: int | None = None
    shared_align: int | None = None
    assume: tuple[str, ...] = field(default_factory=tuple)
    target: str | None = None  # ``cuda:NN`` for a module without ttg.target (--target)
    # metadata["tensordesc_meta"]; None: asked of Triton (verify.ttgir.tensordesc)
    tensordesc_meta: list | None = None


def check(
    path_or_text: str,
    run: RunOptions = RunOptions(),
    options: PtxOptions | None = None,
) -> list[CheckResult]:
    """Every check of a kernel's TTGIR, its per-op checks decided from the PTX."""
    options = options or PtxOptions()
    name, text = read_source(path_or_text)
    if not options.use:
        return mark_ttgir(
            run_kernel(path_or_text, run, options.target).results,
            "TTGIR's lowering rules (--no-ptx)",
        )
    checker = prepare_kernel(path_or_text, run, options.target)
    try:
        ptx, ptx_name, shared = _ptx(text, name, options)
    except lower.NotLowered as e:
        why = f"TTGIR's lowering rules: Triton could not lower the module ({e})"
        return mark_ttgir(ran(checker).results, why)
    in_hand = replace(options, ptx_text=ptx, ptx_name=ptx_name, shared_bytes=shared)
    results = check_first(checker, text, in_hand)
    if not checker.results:
        raise nothing_to_verify(checker.name)
    return results


def _ptx(text: str, name: str, options: PtxOptions) -> tuple[str, str, int | None]:
    if options.ptx_text is not None:
        shown = options.ptx_name or os.path.basename(name) + ".ptx"
        return options.ptx_text, shown, options.shared_bytes
    if options.ptx is not None:
        try:
            with open(options.ptx, encoding="utf-8", errors="replace") as f:
                given = f.read()
        except OSError as e:
            raise SpecError(f"cannot read the PTX file: {e.strerror}", None, options.ptx) from None
        # Triton's PTX declares no size for ``global_smem``: without one, in_bounds
        # of it is UNKNOWN, as for `verify ptx`.
        return given, options.ptx, options.shared_bytes
    lowered = lower.lower(text, name, options.target)
    return lowered.ptx, lowered.name, lowered.shared


def mark_ttgir(results: list[CheckResult], why: str) -> list[CheckResult]:
    """Each per-op check of `results` decided by TTGIR's rules, for reason `why`."""
    for r in results:
        if _per_op(r):
            r.facts["instructions"] = "ttgir"
            r.facts["instructions_why"] = why
    return results


def _per_op(result: CheckResult) -> bool:
    return result.property.split(" ", 1)[0].rstrip(":") in _PER_OP


def _op_label(result: CheckResult) -> str:
    """The op a TTGIR per-op check is about: ``conflict_free local_load %y`` ->
    ``local_load %y``; ``aligned 16 X from global`` -> X; ``not modelled: X`` -> X."""
    words = result.property.removeprefix("not modelled:").split()
    if words and words[0] in _PER_OP:
        words = words[1:]
    if words and words[0].isdigit():
        words = words[1:]
    if "from" in words:
        words = words[: words.index("from")]
    return " ".join(words)


@contextlib.contextmanager
def collector_paused():
    """Python's cyclic garbage collector paused while one kernel is checked, and
    resumed (if it ran before) after. A check allocates many short-lived objects
    (expression trees, positions, result records) that reference counting frees,
    and each burst of them starts a collection that, in a process holding
    Triton's compiler, walks a large heap: over the catalog's kernels in
    Triton's hook, 176 collections and 66-69 ms of verify's 0.79 s of CPU. What
    a check finds does not depend on when cycles are freed; the cycles it leaves
    are collected once the collector runs again."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def merge(checker: KernelChecker, text: str, options: PtxOptions) -> list[CheckResult]:
    """TTGIR's buffer checks, and each op's checks from the PTX `options` give
    (see the module doc; best in hand, ``ptx_text``), decided under the checker's
    run options; `checker` has run."""
    with collector_paused():
        from_ptx, decided = _ptx_checks(checker, text, options)
        return _merged(checker.results, from_ptx, decided)


def check_first(checker: KernelChecker, text: str, options: PtxOptions) -> list[CheckResult]:
    """`merge`'s results for a `checker` that has not run: the PTX is checked
    first, then TTGIR's checks skip the accesses of each op the PTX decides
    (those `merge` would drop), so only buffers, views and the ops the PTX
    leaves undecided cost TTGIR's checks."""
    with collector_paused():
        from_ptx, decided = _ptx_checks(checker, text, options)
        checker.decided_elsewhere = {op for op, seen in decided.items() if seen != {Status.UNKNOWN}}
        return _merged(checker.run(), from_ptx, decided)


def _ptx_checks(
    checker: KernelChecker, text: str, options: PtxOptions
) -> tuple[list[CheckResult], dict[str, set[Status]]]:
    """The PTX's checks, attached to their TTGIR ops, and each op label's statuses."""
    ptx, ptx_name, shared = _ptx(text, checker.name, options)
    params = parameters(text)
    module = parse_ptx(ptx, ptx_name)  # its tensor maps: verify.ptx.tensormaps
    meta = options.tensordesc_meta
    maps = tensormaps.read(module, (lambda: tensordesc.metadata(text)) if meta is None else meta)
    ptx_options = ptx_check.Options(
        grid=options.grid,
        global_align=options.global_align,
        shared_align=_shared_align(checker, options.shared_align),
        dynamic_shared=shared,
        assume=_assumptions(params, options.assume),
        run=checker.options,
        tma_maps=tensormaps.tma_maps(module, maps),
    )
    try:
        from_ptx = ptx_check.check_module(module, ptx_options)
    except SpecError as e:  # no thread shared-memory instruction: TTGIR's checks stand
        if "no shared-memory instruction" not in e.message:
            raise
        from_ptx = []
    ops = _ops_by_line(checker)
    decided: dict[str, set[Status]] = {}  # op label -> the statuses of its PTX checks
    for r in from_ptx:
        for label in _attach(r, ops) or tensordesc.tma_ops(r):
            decided.setdefault(label, set()).add(r.status)
        r.facts["instructions"] = "ptx"
        r.facts["ptx"] = ptx_name
    tensormaps.annotate(from_ptx, module, maps)
    return from_ptx, decided


def _merged(
    ttgir: list[CheckResult], from_ptx: list[CheckResult], decided: dict[str, set[Status]]
) -> list[CheckResult]:
    kept = []
    for r in ttgir:
        op = _op_label(r) if _per_op(r) else None
        if op is None:
            kept.append(r)
        elif op not in decided:
            r.facts["instructions"] = "ttgir"
            r.facts["instructions_why"] = (
                "TTGIR's lowering rules: no PTX shared-memory instruction has this op's Python line"
            )
            kept.append(r)
        elif decided[op] == {Status.UNKNOWN} and r.status is not Status.UNKNOWN:
            # the PTX decides none of the op's instructions (a runtime value it
            # cannot bound): TTGIR's rules, which quantify over what the compiler's
            # hints allow, are shown beside them, never in their place
            r.facts["instructions"] = "ttgir"
            r.facts["instructions_why"] = (
                "TTGIR's lowering rules: the PTX left every instruction of this op UNKNOWN"
            )
            kept.append(r)
    return sorted(kept + from_ptx, key=lambda r: (r.file, r.line, r.facts.get("ptx_line", 0)))


# Where a Triton kernel's dynamic shared memory starts: it has no static shared
# memory, so ``global_smem`` begins right after the 1 KB every block reserves on
# sm_80+ (CUDA's cudaDevAttrReservedSharedMemoryPerBlock); the H200 put every
# kernel's first shared byte at 1024 (benchmarks/results/ptx_h200.md,
# "Placement"). Bank and global-line figures repeat every 128 bytes, so 128 is
# assumed (the PTX itself declares only ``.align 16``).
TRITON_SHARED_BASE_ALIGN = 128


def _shared_align(checker: KernelChecker, given: int | None) -> int:
    """``--shared-align``, else the larger of TRITON_SHARED_BASE_ALIGN and the
    largest alignment a buffer asks of Triton's allocation."""
    if given:
        return given
    aligns = [b["shared"]["alignment"] for b in checker.found["buffers"] if b.get("shared")]
    return max([TRITON_SHARED_BASE_ALIGN, *aligns])


def parameters(text: str) -> list[tuple[str, int | None]]:
    """The entry's arguments in order (the PTX ``.param`` list begins with them):
    (name, tt.divisibility of an integer argument, else None)."""
    m = re.search(r"tt\.func\s+(?:public\s+)?@[\w$.]+\s*\(", text)
    if not m:
        return []
    depth, end = 1, m.end()
    while end < len(text) and depth:
        depth += {"(": 1, ")": -1}.get(text[end], 0)
        end += 1
    out = []
    for arg in _split_args(text[m.end() : end - 1]):
        a = _ARG.match(arg.strip())
        if not a:
            continue
        div = _DIVISIBILITY.search(a[3] or "")
        integer = re.fullmatch(r"i\d+", a[2]) is not None
        out.append((a[1], int(div[1]) if div and integer else None))
    return out


def _split_args(signature: str) -> list[str]:
    """Split at the commas that separate arguments (not those inside <>, {}, ())."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(signature):
        depth += ch in "<{(["
        depth -= ch in ">})]"
        if ch == "," and depth == 0:
            parts.append(signature[start:i])
            start = i + 1
    parts.append(signature[start:])
    return parts


def _assumptions(params: list[tuple[str, int | None]], given: tuple[str, ...]) -> tuple[str, ...]:
    """The user's assumptions with Triton's names as ``param_N``, and the
    divisibility Triton compiled each integer argument for (where the user gave
    no value of that argument)."""
    index = {name: i for i, (name, _) in enumerate(params)}
    out = []
    named = set()
    for text in given:
        m = re.match(r"\s*([A-Za-z_$][\w$]*)(.*)$", text)
        if m and m[1] in index:
            text = f"param_{index[m[1]]}{m[2]}"
        out.append(text)
        m = re.match(r"\s*param_(\d+)\b", text)
        if m:
            named.add(int(m[1]))
    for i, (_, div) in enumerate(params):
        if div and div > 1 and i not in named:
            out.append(f"param_{i}%{div}==0")
    return tuple(out)


def _ops_by_line(checker: KernelChecker) -> dict[tuple[str, int], list[dict]]:
    out: dict[tuple[str, int], list[dict]] = {}
    for op in checker.found["ops"]:
        loc = op.get("loc")
        if loc:
            out.setdefault((os.path.basename(loc["file"]), loc["line"]), []).append(op)
    return out


def _kind(opcode: str) -> set[str]:
    head = opcode.split(".")[0]
    if opcode.startswith("cp.async"):
        return _COPIES
    if head == "wgmma":
        return _MMA
    if head in ("ld", "ldmatrix"):
        return _LOADS
    if head in ("st", "stmatrix"):
        return _STORES
    return set()


def _attach(result: CheckResult, ops: dict[tuple[str, int], list[dict]]) -> list[str]:
    """Name the TTGIR op(s) a PTX check comes from in its property and facts, and
    report it at their Python line; their labels (none where no op of its kind
    has a line of the instruction's ``.loc`` chain). The chain is searched from
    the innermost frame out: an op inlined from a @jit helper has the helper's
    line in TTGIR, where `verify.ptx` reports the outermost call."""
    kinds = _kind(result.facts.get("instruction", ""))
    frames = result.facts.get("source") or [f"{result.file}:{result.line}"]
    candidates: list[dict] = []
    for frame in frames:
        file, _, line = frame.rpartition(":")
        at = ops.get((os.path.basename(file), int(line)), []) if line.isdigit() else []
        candidates = [op for op in at if op["op"] in kinds]
        if candidates:
            break
    if not candidates:
        return []
    result.file, result.line = candidates[0]["loc"]["file"], candidates[0]["loc"]["line"]
    labels = sorted({_label(op) for op in candidates})
    label = labels[0] if len(labels) == 1 else _joined(labels)
    words = result.property.split(" ", 1)
    if len(words) == 2:
        head, rest = words
        if head == "aligned":
            number, rest = rest.split(" ", 1)
            head = f"{head} {number}"
        result.property = f"{head} {label}: {rest}"
    result.facts["ttgir_op"] = label
    return labels


def _label(op: dict) -> str:
    short = op["op"].split(".", 1)[1]
    return f"{short} {op['name']}" if op.get("name") else short


def _joined(labels: list[str]) -> str:
    """``local_load %a_81|%a_122``: several ops of one kind at one line."""
    kinds = sorted({label.split(" ", 1)[0] for label in labels})
    names = [label.split(" ", 1)[1] for label in labels if " " in label]
    if len(kinds) == 1 and names:
        return f"{kinds[0]} {'|'.join(names)}"
    return "|".join(labels)
