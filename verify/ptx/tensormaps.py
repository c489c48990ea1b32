"""The tensor maps a kernel's TMA copies read, from the kernel itself: Triton's
``tensordesc_meta`` for the maps its launcher builds on the host, and the
``tensormap.replace`` instructions of the maps a kernel builds on the device.

A ``cp.async.bulk.tensor`` names its tensor map by a 64-bit address; the map's
element type, box and swizzle fix where the box lands in shared memory
(`verify.model.tma`). The PTX holds them in two cases, and this module reads both
into the `--tma-map` terms `verify.ptx.hopper` takes (``dataType=...,boxDim={...},
swizzle=...,param=KEY``), each with where its fields come from:

* **Triton's host descriptors** (``TensorDescriptor`` arguments). The launcher
  encodes each map with ``cuTensorMapEncodeTiled`` from the kernel's metadata,
  ``tensordesc_meta``: one entry per descriptor argument, in order
  (``triton/backends/nvidia/driver.py`` ``make_tensordesc_arg``:
  ``fill_tma_descriptor_tiled(ptr, swizzle, elem_size, elem_type, block_size,
  ...)``). ``block_size`` is [outer, ..., inner] and the driver is given it
  reversed (``driver.c``: ``blockSizeInt[rank - i - 1]``), so ``boxDim`` is
  ``block_size`` reversed; ``swizzle`` is ``CUtensorMapSwizzle`` (3: 128B);
  ``elem_type`` is the device's enum (below), which the launcher maps to the
  host's. In the PTX each such argument is a ``.param .align 64 .b8 NAME[128]``
  (the 128-byte CUtensorMap, by value), in the same order: the i-th of them is
  entry i's map, keyed by its parameter name.
* **Maps built on the device** (``tl.make_tensor_descriptor``; CUTLASS's
  ``tma_descriptor_replace``): the kernel writes a 128-byte template in shared
  memory with ``tensormap.replace.tile.FIELD.shared::cta.b1024.bN [tmpl], (ord,)
  value`` (PTX ISA 9.7.9.27 "tensormap.replace"), then copies it to global memory
  with ``tensormap.cp_fenceproxy.global.shared::cta... [dst], [tmpl], 128`` (PTX
  ISA "tensormap.cp_fenceproxy"); a copy reads it through ``dst`` (a ``cvta`` of
  it). Fields: ``rank`` is rank - 1, ``box_dim`` ord i the box's extent i
  (innermost first), ``elemtype`` the tensor-map element type (0 u8, 1 u16, 2 u32,
  3 s32, 4 u64, 5 s64, 6 f16, 7 f32, 8 f32.ftz, 9 f64, 10 bf16, 11 tf32, 12
  tf32.ftz; 13-15 sub-byte types, not modelled), ``swizzle_mode`` 0 none, 1 32B,
  2 64B, 3 128B, ``interleave_layout`` 0 none, ``element_stride`` 1. A value is an
  immediate or a register set once by ``mov`` of one. The fields the kernel does
  not replace are the template's: 0 where a ``st.shared`` of 0 to the template
  precedes the build (Triton zero-fills it: ``TMAToLLVM.cpp`` ``zero_fill_tma``),
  otherwise unknown; a map whose box, element type or swizzle is unknown is not
  given (its copies stay UNKNOWN, and `annotate` says why). The map is keyed by
  the register the copies reach it by (`map_root`).

Nothing here decides anything: the maps are inputs to `verify.ptx.hopper`, whose
engines decide placement and writer = reader.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from verify.errors import SpecError
from verify.model import tma as tma_model
from verify.ptx import ir

# tensormap.replace's .elemtype (PTX ISA), Triton's ``elem_type`` in tensordesc_meta.
ELEMTYPE = {
    0: "UINT8",
    1: "UINT16",
    2: "UINT32",
    3: "INT32",
    4: "UINT64",
    5: "INT64",
    6: "FLOAT16",
    7: "FLOAT32",
    8: "FLOAT32_FTZ",
    9: "FLOAT64",
    10: "BFLOAT16",
    11: "TFLOAT32",
    12: "TFLOAT32_FTZ",
}
SWIZZLE = {0: "NONE", 1: "32B", 2: "64B", 3: "128B"}
MAP_BYTES = 128  # a CUtensorMap
_CHAIN = ("mov", "cvt", "cvta")


@dataclass(frozen=True)
class Found:
    """One tensor map the kernel holds: ``key`` is what its copies name it by (a
    parameter, or the register the copies read it through); ``option`` its
    ``--tma-map`` text, None where it cannot be known (``why``)."""

    kernel: str
    key: str
    source: str
    option: str | None = None
    why: str = ""

    @property
    def tmap(self) -> tma_model.TensorMap | None:
        return None if self.option is None else _tensor_map(self.option)


def _tensor_map(option: str) -> tma_model.TensorMap:
    fields = dict(re.findall(r"(\w+)=(\{[^}]*\}|[^,]+)", option))
    box = tuple(int(x) for x in fields["boxDim"].strip("{}").split(","))
    return tma_model.TensorMap.encode_tiled(
        "CU_TENSOR_MAP_DATA_TYPE_" + fields["dataType"],
        box,
        swizzle="CU_TENSOR_MAP_SWIZZLE_" + fields["swizzle"],
    )


def _option(
    elemtype: int, box: list[int], swizzle: int, key: str, strides: list[int] | None = None
) -> tuple[str | None, str]:
    """The --tma-map text of a map (globalStrides where given), or why it is not modelled."""
    if elemtype not in ELEMTYPE:
        return None, f"element type {elemtype} (a sub-byte TMA type) is not modelled"
    if swizzle not in SWIZZLE:
        return None, f"swizzle mode {swizzle} is not modelled (sm_90 has 0-3)"
    text = (
        f"dataType={ELEMTYPE[elemtype]},boxDim={{{','.join(map(str, box))}}},"
        f"swizzle={SWIZZLE[swizzle]}"
        + (f",globalStrides={{{','.join(map(str, strides))}}}" if strides else "")
        + f",param={key}"
    )
    try:
        _tensor_map(text)
    except SpecError as e:
        return None, f"the map is not one the driver encodes: {e.message}"
    return text, ""


# -- Triton's metadata -------------------------------------------------------------


def descriptor_params(fn: ir.Function) -> list[str]:
    """The entry's CUtensorMap parameters (``.param .align 64 .b8 NAME[128]``), in order."""
    return [
        p.name
        for p in fn.params
        if p.space == "param" and p.align == 64 and p.type == "b8" and p.count == MAP_BYTES
    ]


def from_metadata(fn: ir.Function, meta: list[dict]) -> list[Found]:
    """The maps of Triton's ``tensordesc_meta`` entries, each keyed by its parameter."""
    params = descriptor_params(fn)
    if len(params) != len(meta):
        why = (
            f"Triton's tensordesc_meta has {len(meta)} entries but the PTX entry "
            f"{fn.name} has {len(params)} tensor-map parameters"
        )
        return [Found(fn.name, p, "tensordesc_meta", None, why) for p in params]
    out = []
    for i, (param, entry) in enumerate(zip(params, meta)):
        if not isinstance(entry, dict):
            entry = {}
        block = entry.get("block_size")
        block = list(block) if isinstance(block, list) else []
        source = (
            f"Triton's tensordesc_meta[{i}]: block_size {block}, elem_type "
            f"{entry.get('elem_type')}, swizzle {entry.get('swizzle')}"
        )
        if entry.get("is_im2col") or entry.get("fp4_padded"):
            what = "im2col" if entry.get("is_im2col") else "fp4-padded"
            out.append(Found(fn.name, param, source, None, f"an {what} tensor map is not modelled"))
            continue
        try:
            elemtype, swizzle = int(entry["elem_type"]), int(entry["swizzle"])
        except (KeyError, TypeError, ValueError):
            out.append(Found(fn.name, param, source, None, f"entry {i} is not one Triton writes"))
            continue
        option, why = _option(elemtype, block[::-1], swizzle, param)
        out.append(Found(fn.name, param, source, option, why))
    return out


# -- maps built on the device --------------------------------------------------------


def _definitions(fn: ir.Function) -> dict[str, list[ir.Instr]]:
    out: dict[str, list[ir.Instr]] = {}
    for i in fn.body:
        if isinstance(i, ir.Instr) and i.operands and isinstance(i.operands[0], ir.Reg):
            out.setdefault(i.operands[0].name, []).append(i)
    return out


def map_root(fn: ir.Function, operand: ir.Operand, defs=None) -> str | None:
    """What an address operand comes from through movs and conversions: a symbol's
    name (a parameter, ``global_smem``), else the first register not so defined
    (``%rd12 = add.s64 %rd9, 128``): the key a TMA copy and the
    ``tensormap.cp_fenceproxy`` that wrote its map share."""
    defs = _definitions(fn) if defs is None else defs
    for _ in range(8):  # a chain of movs and conversions, never a loop
        if isinstance(operand, ir.Addr):
            if operand.offset:
                return None
            operand = operand.base  # type: ignore[assignment]
        if isinstance(operand, ir.Sym):
            return operand.name
        if not isinstance(operand, ir.Reg):
            return None
        defining = defs.get(operand.name, [])
        if (
            len(defining) != 1
            or defining[0].parts[0] not in _CHAIN
            or len(defining[0].operands) != 2
            or not isinstance(defining[0].operands[1], (ir.Reg, ir.Sym))
        ):
            return operand.name
        operand = defining[0].operands[1]
    return None


def _constant(operand: ir.Operand, defs) -> int | None:
    if isinstance(operand, ir.Imm):
        return operand.value
    if isinstance(operand, ir.Reg):
        defining = defs.get(operand.name, [])
        if len(defining) == 1 and defining[0].parts[0] == "mov":
            value = defining[0].operands[1]
            return value.value if isinstance(value, ir.Imm) else None
    return None


def _zero_root(instr: ir.Instr, fn, defs) -> str | None:
    """The template a ``st.shared`` of 0 writes into (its address the template's
    plus a per-thread offset, as Triton's zero-fill), else None."""
    if instr.parts[0] != "st" or len(instr.operands) != 2:
        return None
    address, value = instr.operands
    if _constant(value, defs) != 0 or not isinstance(address, ir.Addr):
        return None
    base: ir.Operand | None = address.base
    for _ in range(4):  # the per-thread offset added to the template's address
        defining = defs.get(base.name, []) if isinstance(base, ir.Reg) else []
        if len(defining) != 1 or defining[0].parts[0] != "add":
            break
        base = defining[0].operands[1]
    return map_root(fn, base, defs) if base is not None else None


def built_on_device(fn: ir.Function) -> list[Found]:
    """The maps the kernel builds in shared memory and copies to global memory, keyed
    by the copy's destination register (the module doc)."""
    defs = _definitions(fn)
    pending: dict[str, dict] = {}  # template root -> fields replaced since its last copy
    zeroed: dict[str, int] = {}  # template root -> line of a zero-fill since its last copy
    builds: dict[str, list[Found]] = {}
    for instr in fn.body:
        if not isinstance(instr, ir.Instr) or not instr.operands:
            continue
        parts = instr.parts
        if parts[:2] == ["tensormap", "replace"] and len(parts) > 3:
            template = map_root(fn, instr.operands[0], defs)
            if template is None or len(instr.operands) < 2:
                continue
            fields = pending.setdefault(template, {"lines": []})
            fields["lines"].append(instr.line)
            *ords, value = instr.operands[1:]
            where = parts[3] if not ords else (parts[3], _constant(ords[0], defs))
            new = _constant(value, defs)
            # written twice before one copy (two branches?): neither value is known
            fields[where] = new if fields.get(where, new) == new else None
        elif parts[:2] == ["tensormap", "cp_fenceproxy"] and len(instr.operands) >= 2:
            template = map_root(fn, instr.operands[1], defs)
            key = map_root(fn, instr.operands[0], defs)
            if template is None or key is None:
                continue
            fields = pending.pop(template, {"lines": []})
            built = _device_map(fn, key, fields, instr.line, zeroed.pop(template, None))
            if len(defs.get(key, [])) > 1:  # the copies may read another address by it
                why = f"{key}, the map's address, is set more than once"
                built = Found(fn.name, key, built.source, None, why)
            builds.setdefault(key, []).append(built)
        else:
            template = _zero_root(instr, fn, defs)
            if template is not None:
                zeroed.setdefault(template, instr.line)
    out = []
    for key, maps in builds.items():
        if len({f.option for f in maps}) > 1 or any(f.option is None for f in maps):
            lines = "; ".join(f.source for f in maps)
            why = next((f.why for f in maps if f.why), "different maps are built into one address")
            out.append(Found(fn.name, key, lines, None, why))
        else:
            out.append(maps[0])
    return out


def _device_map(fn, key: str, fields: dict, line: int, zero_line: int | None) -> Found:
    lines = fields["lines"]
    span = f"{lines[0]}-{lines[-1]}" if lines else "none"
    source = (
        f"tensormap.replace at PTX lines {span}, copied to global memory by "
        f"tensormap.cp_fenceproxy at line {line}"
    )
    if zero_line is not None:
        source += f" (template zero-filled at line {zero_line})"

    def field(name, ord_=None, default_zero=False):
        where = name if ord_ is None else (name, ord_)
        if where in fields:
            return fields[where]
        return 0 if default_zero and zero_line is not None else None

    rank = field("rank", default_zero=True)
    if rank is None:
        return Found(fn.name, key, source, None, "its rank is not written by the kernel")
    rank += 1
    box = [field("box_dim", i) for i in range(rank)]
    elemtype, swizzle = field("elemtype"), field("swizzle_mode", default_zero=True)
    interleave = field("interleave_layout", default_zero=True)
    strides = [field("element_stride", i) for i in range(rank)]
    missing = [f"box_dim {i}" for i, b in enumerate(box) if b is None]
    missing += [n for n, v in (("elemtype", elemtype), ("swizzle_mode", swizzle)) if v is None]
    missing += [] if interleave is not None else ["interleave_layout"]
    if missing:
        why = (
            f"its {', '.join(missing)} {'is' if len(missing) == 1 else 'are'} not set to a "
            "constant by the kernel (a register, or the template's own, not zero-filled)"
        )
        return Found(fn.name, key, source, None, why)
    if interleave:
        return Found(fn.name, key, source, None, f"interleave layout {interleave} is not modelled")
    if any(s not in (None, 1) for s in strides):
        return Found(fn.name, key, source, None, f"element strides {strides} are not modelled")
    source += f": box_dim {box}, elemtype {elemtype}, swizzle_mode {swizzle}"
    # globalStrides (bytes, of dimensions 1..rank-1) where the kernel writes every
    # one a constant; a stride in a register (a runtime shape) is left out
    given = [field("global_stride", i) for i in range(rank - 1)]
    global_strides = given if given and None not in given else None
    if global_strides:
        source += f", global_stride {global_strides}"
    elif given:
        source += ", global_stride not a constant (not given)"
    option, why = _option(elemtype, box, swizzle, key, global_strides)
    return Found(fn.name, key, source, option, why)


# -- what the checks are given ------------------------------------------------------


def copies(fn: ir.Function) -> list[tuple[ir.Instr, str | None]]:
    """Every ``cp.async.bulk.tensor`` of `fn` and the key of the map it reads."""
    defs = _definitions(fn)
    out = []
    for instr in fn.body:
        if isinstance(instr, ir.Instr) and instr.parts[:4] == ["cp", "async", "bulk", "tensor"]:
            tensor = next((o for o in instr.operands if isinstance(o, ir.TensorAddr)), None)
            out.append((instr, map_root(fn, tensor.tensor_map, defs) if tensor else None))
    return out


def read(module: ir.Module, meta=None) -> list[Found]:
    """Every map of `module`'s entries: from `meta` (Triton's tensordesc_meta of its
    one entry, or why it could not be had; or a function giving either, called only
    where a TMA copy reads a tensor-map parameter) and from tensormap.replace."""
    found = []
    entries = [f for f in module.functions if f.entry]
    if callable(meta):
        wanted = any(key in descriptor_params(fn) for fn in entries for _, key in copies(fn) if key)
        meta = meta() if wanted else None
    for fn in entries:
        if isinstance(meta, str):
            found += [
                Found(fn.name, p, "tensordesc_meta", None, meta) for p in descriptor_params(fn)
            ]
        elif meta and len(entries) == 1:
            found += from_metadata(fn, meta)
        found += built_on_device(fn)
    return found


def tma_maps(module: ir.Module, found: list[Found]) -> tuple[str, ...]:
    """The --tma-map texts of `found`: one per map, keyed by its parameter or
    register; and, where the checks bind copies to maps only by parameter, one
    without a key when every copy of the module whose map is not a parameter reads
    a device-built map and all of those are the same (so it is theirs)."""
    texts = tuple(f.option for f in found if f.option is not None)
    by_key = {(f.kernel, f.key): f for f in found}
    device = set()
    for fn in module.functions:
        params = {p.name for p in fn.params}
        for _, key in copies(fn):
            f = by_key.get((fn.name, key or ""))
            if f is None or f.option is None:  # a map not known: it would get this one
                return texts
            if key not in params:
                device.add(f.option.rsplit(",param=", 1)[0])
    if len(device) == 1:
        return (*texts, device.pop())
    return texts


def annotate(results, module: ir.Module, found: list[Found]) -> None:
    """Each TMA copy's result says where its map's fields come from
    (``facts["tensor_map_source"]``); one left UNKNOWN for want of a map the kernel
    builds but that cannot be read says why, in place of asking for --tma-map."""
    keys = {}
    for fn in module.functions:
        by_key = {f.key: f for f in found if f.kernel == fn.name}
        for instr, key in copies(fn):
            if key in by_key:
                keys[(fn.name, instr.line)] = by_key[key]
    for r in results:
        f = keys.get((r.facts.get("kernel"), r.facts.get("ptx_line")))
        if f is None:
            continue
        r.facts["tensor_map_source"] = f.source
        shown = f.option.rsplit(",param=", 1)[0] if f.option else f"not read ({f.why})"
        r.facts["tensor_map_read"] = f"{f.key}: {shown}"
        if not (r.reason and "--tma-map" in r.reason):
            continue
        if f.option is None:
            r.reason = f"the tensor map ({f.source}) cannot be read: {f.why}"
        else:  # read, but the copy was not paired with it
            r.reason = (
                f"the tensor map is built on the device ({f.source}), but the TMA checks "
                "pair a copy with its map only through a parameter, and this kernel's "
                "device-built maps differ"
            )
