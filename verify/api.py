"""The Python entry points, shared by the CLI."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping

from verify.engines.options import RunOptions
from verify.engines.runner import run_spec
from verify.errors import SpecError
from verify.model.bank import BankCost, CopyCost, bank_cost, hardware_copy_cost, hardware_wavefronts
from verify.model.expr import Var, compiled
from verify.model.instructions import parse_instruction
from verify.report.text import Report
from verify.spec import layout_text
from verify.spec.ast import LayoutDef
from verify.spec.layout_text import DEFAULT_LAYOUT_NAME, check_dtype, layout_statement
from verify.spec.parser import parse_file, parse_text
from verify.verdicts import Status

MAX_MAP_SIZE = 1 << 22


def parse_layout(layout, shape: tuple[int, ...] | None = None, dtype: str | None = None):
    """A `LayoutDef` from text in any notation a spec takes, or from a pycute
    `Layout`/`Swizzle`/`ComposedLayout` (see `notation`); the text's rules are
    `verify.spec.layout_text.parse_layout`'s."""
    return layout_text.parse_layout(notation(layout), shape, dtype)


def offsets(layout, dtype: str | None = None, shape: tuple[int, ...] | None = None) -> list[int]:
    """[L(0), ..., L(size-1)] in CuTe's 1-D order, in elements.

    A layout given as text or as a pycute object is parsed with `dtype` (see
    `parse_layout`), so a notation naming another element width is refused; a
    parsed `LayoutDef` was checked against the dtype it was parsed with.

    A pointer swizzle (``Sw<..> o smem_ptr[Nb] o L``) acts on byte addresses; its
    offsets are converted back to elements of N bits. A Triton encoding needs the
    tensor `shape`; its coordinates (d0, d1, ...) are listed colexicographically,
    index = d0 + D0*d1 + ...
    """
    ldef = layout if isinstance(layout, LayoutDef) else parse_layout(layout, shape, dtype)
    check_dtype(dtype)
    size = ldef.function.size()
    if size > MAX_MAP_SIZE:
        raise SpecError(f"layout has {size} coordinates: expected at most {MAX_MAP_SIZE} to list")
    at = compiled(ldef.value(ldef.function.idx2crd(Var("index"))))
    values = [at({"index": i}) for i in range(size)]
    if ldef.pointer_swizzle is None:
        return values
    assert ldef.pointer_bits is not None, "a pointer swizzle comes with its pointer width"
    eb = ldef.pointer_bits // 8
    if any(v % eb for v in values):
        raise SpecError(
            f"{ldef.pointer_swizzle} moves bytes inside a {ldef.pointer_bits}-bit "
            "element, so its offsets are not whole elements"
        )
    return [v // eb for v in values]


def wavefront_cost(instr: str, addresses: list[int]) -> BankCost:
    """The phase model's cost of one warp instruction (per phase, its ways)."""
    try:
        return bank_cost(parse_instruction(instr), list(addresses))
    except ValueError as e:
        raise SpecError(str(e)) from None


def copy_wavefront_cost(instr: str, addresses: list[int], sources: list[int]) -> CopyCost:
    """A cp.async's cost from its shared destinations and global sources: rule C for
    .ca; rule S for .cg where it applies, else bound G (`CopyCost.exact` and
    `CopyCost.fidelity` say which)."""
    instruction = parse_instruction(instr)
    if not instruction.is_copy:
        raise SpecError(
            f"{instruction.name} has no global sources: sources are given only for cp.async"
        )
    try:
        return hardware_copy_cost(instruction, list(addresses), list(sources))
    except ValueError as e:
        raise SpecError(str(e)) from None


def wavefronts(instr: str, addresses: list[int], sources: list[int] | None = None) -> int:
    """Wavefronts of one warp instruction whose lane i uses byte `addresses[i]`, by the
    H200's measured rules: the phase model, rule L for 64/128-bit loads (exact), and
    for cp.async (whose lane i copies from global byte `sources[i]`) rule C for .ca
    (exact) and rule S for .cg (exact where no two lanes copy one 16-byte source chunk
    into one 128-byte shared line; bound G, an upper bound, there).

    Raises SpecError unless there is one address per address lane of the
    instruction (32 for ld/st.shared and cp.async, 8 per matrix for
    ldmatrix/stmatrix), each below 2^32 and naturally aligned, and sources exactly
    for cp.async; the message names the lane at fault."""
    instruction = parse_instruction(instr)
    if instruction.is_copy or sources is not None:
        if sources is None:
            raise SpecError(
                f"{instruction.name}: its cost depends on the global source "
                "addresses as much as on the destinations: expected sources "
                "(one per lane)"
            )
        return copy_wavefront_cost(instr, addresses, sources).wavefronts
    try:
        return hardware_wavefronts(instruction, list(addresses))
    except ValueError as e:
        raise SpecError(str(e)) from None


def spec_paths(paths: list[str]) -> list[str]:
    """Spec files named directly, plus every *.spec under named directories, sorted."""
    out = []
    for p in paths:
        if os.path.isdir(p):
            for root, _, files in os.walk(p):
                out += [os.path.join(root, f) for f in files if f.endswith(".spec")]
        else:
            out.append(p)
    return sorted(dict.fromkeys(out), key=lambda p: (os.path.dirname(p), p))


def check(
    path: str,
    timeout: float | None = 60.0,
    engine: str = "auto",
    *,
    options: RunOptions | None = None,
) -> Report:
    """Run every check of one spec file, each decided by `engine` under `timeout`
    seconds, or as `options` say (`verify.engines.options.RunOptions`, which may
    also count z3 resource units) when given."""
    run = _options(timeout, engine, options)
    try:
        spec = parse_file(path)
        return Report(_suggested(spec, run_spec(spec, run), None, run))
    except SpecError as e:
        raise _with_file_source(e.located(path), path) from None


def check_text(
    text: str,
    name: str = "<string>",
    timeout: float | None = 60.0,
    engine: str = "auto",
    *,
    options: RunOptions | None = None,
) -> Report:
    """Run every check of a spec given as text; results and errors name the file
    `name`. `timeout`, `engine` and `options` as `check` takes them."""
    run = _options(timeout, engine, options)
    try:
        spec = parse_text(text, name)
        return Report(_suggested(spec, run_spec(spec, run), text, run))
    except SpecError as e:
        raise e.located(name).with_source(text) from None


def _suggested(spec, results, source, run):
    """`results`, each failing bank check with a suggested layout (`verify.synth.repair`,
    loaded only when some check is refuted and failed: it needs numpy)."""
    if not any(r.status == Status.REFUTED and not r.passed for r in results):
        return results
    from verify.synth import repair as suggest

    return suggest.attach(spec, results, source, run)


def _options(timeout: float | None, engine: str, options: RunOptions | None) -> RunOptions:
    return options if options is not None else RunOptions(engine, timeout)


def check_layout(
    layout,
    accesses: Mapping[str, str] | None = None,
    checks: Iterable[str] = (),
    *,
    name: str = DEFAULT_LAYOUT_NAME,
    dtype: str | None = None,
    shape: tuple[int, ...] | None = None,
    align: int | None = None,
    stages: int | None = None,
    stage_bytes: int | None = None,
    timeout: float | None = 60.0,
    engine: str = "auto",
    options: RunOptions | None = None,
) -> Report:
    """Check a layout given as a Python value, read by `accesses` ({name: access}).

    `layout` is text in any notation `parse_layout` reads or a pycute
    `Layout`/`Swizzle`/`ComposedLayout`; it is called `name` in the accesses and
    checks. Each access is written as after ``access NAME =`` in a spec
    (``"ldmatrix.x1 L(lane, 8 * q) for q in 0..8"``), each check as after
    ``check`` (``"conflict_free rd"``, ``"max_ways <= 2 rd expect refuted"``).
    Accesses get their implicit in_bounds and alignment checks as in a spec;
    `timeout`, `engine` and `options` as `check` takes them."""
    text = layout_spec(
        layout,
        accesses,
        checks,
        name=name,
        dtype=dtype,
        shape=shape,
        align=align,
        stages=stages,
        stage_bytes=stage_bytes,
    )
    return check_text(text, "<layout>", options=_options(timeout, engine, options))


def layout_spec(
    layout,
    accesses: Mapping[str, str] | None = None,
    checks: Iterable[str] = (),
    *,
    name: str = DEFAULT_LAYOUT_NAME,
    dtype: str | None = None,
    shape: tuple[int, ...] | None = None,
    align: int | None = None,
    stages: int | None = None,
    stage_bytes: int | None = None,
) -> str:
    """The spec text `check_layout` checks, one statement a line."""
    buffer = " ".join(
        f"{option} {value}"
        for option, value in (("align", align), ("stages", stages), ("stage_bytes", stage_bytes))
        if value is not None
    )
    lines = [f"dtype {dtype}"] if dtype else []
    lines += [f"buffer {buffer}"] if buffer else []
    lines.append(layout_statement(notation(layout), shape, name))
    lines += [f"access {access} = {text}" for access, text in (accesses or {}).items()]
    lines += [f"check {c}" for c in checks]
    return "\n".join(lines) + "\n"


def notation(layout) -> str:
    """verify's text for a layout: text as it is, pycute objects converted
    (``Layout((8,64),(64,1))`` -> ``(8,64):(64,1)``, ``Swizzle(3,3,3)`` ->
    ``Sw<3,3,3>``, ``ComposedLayout(B, off, A)`` -> ``B o off o A``)."""
    if isinstance(layout, str):
        return layout
    # pycute is an optional dependency: its classes are recognised by their fields.
    if all(hasattr(layout, f) for f in ("layoutB", "offset", "layoutA")):
        return f"{notation(layout.layoutB)} o {int(layout.offset)} o {notation(layout.layoutA)}"
    if all(hasattr(layout, f) for f in ("bits", "base", "shift")):
        return f"Sw<{int(layout.bits)},{int(layout.base)},{int(layout.shift)}>"
    if hasattr(layout, "shape") and hasattr(layout, "stride"):
        return f"{_int_tuple(layout.shape)}:{_int_tuple(layout.stride)}"
    raise TypeError(
        "expected a layout as text or a pycute Layout, Swizzle or ComposedLayout, "
        f"found {type(layout).__name__}"
    )


def _int_tuple(value) -> str:
    if isinstance(value, (tuple, list)):
        return "(" + ",".join(_int_tuple(v) for v in value) + ")"
    return str(int(value))


def _with_file_source(error: SpecError, path: str) -> SpecError:
    """`error` with the source line it points at, read back from `path`."""
    try:
        with open(path, encoding="utf-8") as f:
            return error.with_source(f.read())
    except (OSError, UnicodeDecodeError):
        return error
