"""A compiled kernel's TTGIR -> verify specs -> results at the kernel's source lines.

`read_module` runs `verify.ttgir.extract` in a child process (Triton's parser and
layout code may abort on hostile input) after bounding the input; `check_module`
turns each buffer into a spec (`verify.ttgir.specgen`), runs it with verify's own
runner, and relabels every result with the op's Python file and line, and its
name (``conflict_free local_load %y``). Ops verify does not model are results
too: UNKNOWN, ``not modelled: <op>``, with the reason.
"""

from __future__ import annotations

import importlib
import json
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import replace

from verify.engines.options import RunOptions
from verify.engines.runner import run_spec
from verify.errors import Pos, SpecError
from verify.model import shared_memory
from verify.notation import triton_lowering as lowering
from verify.results import CheckResult
from verify.smt.solve import Status
from verify.ttgir import specgen

MAX_TTGIR_BYTES = 16 << 20
MAX_NESTING = 200
EXTRA = "pip install 'verify-smem[triton]'"
# MLIR prints ``loc("FILE":L:C): error: MSG`` (or ``FILE:L:C: error: MSG``).
_DIAGNOSTIC = re.compile(
    r'^(?:loc\()?"?(?P<file>[^"]*?)"?:(?P<line>\d+):(?P<col>\d+)\)?: '
    r"error: (?P<msg>.*)$",
    re.MULTILINE,
)
COPY = "ttg.async_copy_global_to_local"
_NOT_THREAD_OPS = {
    "ttng.warp_group_dot": "wgmma reads its shared-memory operands itself (not a thread "
    "instruction); the buffer's layout is checked, its bank "
    "behaviour is not",
    "ttg.convert_layout": "a layout conversion that may go through scratch shared memory, "
    "whose swizzle Triton chooses during lowering; not modelled yet",
    "tt.reduce": "a reduction across warps exchanges partial results through scratch "
    "shared memory that Triton lays out while lowering (ReduceOpHelper); "
    "not modelled yet",
}
# Views that keep each element where the buffer's encoding puts it, or (reinterpret
# of the same element type and shape) read the same bytes through another encoding:
# the op's accesses follow its own view, and `check equivalent` compares the two.
_MODELLED_VIEWS = ("ttg.memdesc_index", "ttg.memdesc_subslice", "ttg.memdesc_reinterpret")


def require_triton():
    """Triton's MLIR bindings, or a clear error naming the extra that installs them."""
    try:
        importlib.import_module("triton._C.libtriton")
    except ImportError:
        raise SpecError(f"reading TTGIR needs Triton's MLIR bindings: {EXTRA}") from None


def read_source(path_or_text: str) -> tuple[str, str]:
    """(display name, text) of a TTGIR file, or of TTGIR given as text."""
    looks_like_text = path_or_text.lstrip().startswith(("#", "module"))
    if "\n" in path_or_text or (looks_like_text and not os.path.isfile(path_or_text)):
        return "<ttgir>", path_or_text
    try:
        with open(path_or_text, "rb") as f:
            raw = f.read(MAX_TTGIR_BYTES + 1)
    except OSError as e:
        raise SpecError(f"cannot read TTGIR: {e.strerror}", None, path_or_text) from None
    if len(raw) > MAX_TTGIR_BYTES:
        raise SpecError(f"TTGIR file larger than {MAX_TTGIR_BYTES} bytes", Pos(1, 1), path_or_text)
    try:
        return path_or_text, raw.decode("utf-8")
    except UnicodeDecodeError as e:
        line = raw[: e.start].count(b"\n") + 1
        raise SpecError(
            "expected UTF-8 TTGIR text, found binary data", Pos(line, 1), path_or_text
        ) from None


def _bound(name: str, text: str):
    """Reject what could exhaust the native parser before it sees the text, and
    text with nothing in it (MLIR reads that as an empty module)."""
    if not text.strip():
        raise SpecError(
            "expected a TTGIR module ('module attributes {...} { tt.func ... }'), "
            "found an empty file",
            Pos(1, 1),
            name,
        )
    if len(text.encode("utf-8")) > MAX_TTGIR_BYTES:
        raise SpecError(f"TTGIR larger than {MAX_TTGIR_BYTES} bytes", Pos(1, 1), name)
    if "\0" in text:
        nul_line = text[: text.index("\0")].count("\n") + 1
        raise SpecError("expected TTGIR text, found a NUL byte", Pos(nul_line, 1), name)
    depth = 0
    for number, line in enumerate(text.splitlines(), 1):
        for ch in line:
            depth += ch in "([{"
            depth -= ch in ")]}"
            if depth > MAX_NESTING:
                raise SpecError(
                    f"expected at most {MAX_NESTING} nested brackets, found more",
                    Pos(number, 1),
                    name,
                )


def read_module(path_or_text: str) -> tuple[str, dict]:
    """(display name, what `verify.ttgir.extract` found), or a located SpecError."""
    require_triton()
    name, text = read_source(path_or_text)
    _bound(name, text)
    with tempfile.TemporaryDirectory() as tmp:
        copy = os.path.join(tmp, "kernel.ttgir")
        with open(copy, "w", encoding="utf-8") as f:
            f.write(text)
        child = subprocess.run(
            [sys.executable, "-m", "verify.ttgir.extract", copy],
            capture_output=True,
            text=True,
            timeout=300,
            env={**os.environ, "PYTHONPATH": _package_root()},
        )
    stderr = child.stderr.replace(copy, name)
    if child.returncode != 0:
        raise _parse_error(name, stderr) or SpecError(
            f"Triton's MLIR parser stopped on this input (exit status {child.returncode}): "
            f"{_first_line(stderr)}",
            Pos(1, 1),
            name,
        )
    # Locations MLIR takes from the parsed file itself (a module without Python
    # locations) name the input, not the temporary copy.
    found = json.loads(child.stdout.replace(json.dumps(copy), json.dumps(name)))
    if found.get("error") == "missing_triton":
        raise SpecError(f"reading TTGIR needs Triton's MLIR bindings: {EXTRA}", None, name)
    if found.get("error"):
        raise _parse_error(name, stderr) or SpecError(
            f"Triton could not parse this TTGIR: {_first_line(stderr)}", Pos(1, 1), name
        )
    return name, found


def _package_root() -> str:
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    return os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p)


def _first_line(stderr: str) -> str:
    lines = [
        line
        for line in stderr.splitlines()
        if line.strip() and "nanobind" not in line and "leaked" not in line
    ]
    return lines[0][:300] if lines else "no diagnostic"


def _parse_error(name: str, stderr: str) -> SpecError | None:
    m = _DIAGNOSTIC.search(stderr)
    if not m:
        return None
    return SpecError(m["msg"].strip(), Pos(int(m["line"]), int(m["col"])), name)


# -- from ops to checks --------------------------------------------------------------


def _where(name: str, op: dict) -> tuple[str, int]:
    if op.get("loc"):
        return op["loc"]["file"], op["loc"]["line"]
    return name, op.get("ttgir_line", 0)


def _label(op: dict) -> str:
    short = op["op"].split(".", 1)[1]
    return f"{short} {op['name']}" if op.get("name") else short


def not_modelled(where: tuple[str, int], label: str, reason: str) -> CheckResult:
    return CheckResult(where[0], where[1], f"not modelled: {label}", Status.UNKNOWN, reason=reason)


def _memdesc_reason(md: dict) -> str | None:
    """Why a buffer's encoding or element type is not modelled, if it is not."""
    if md.get("one_element"):
        return (
            "a buffer of one element a stage (an mbarrier's, as ttng.init_barrier "
            "takes, or a scalar's): no layout to check, and its operations are not "
            "modelled"
        )
    if md.get("error") or "shared" not in md:
        return f"shared encoding not modelled: {md.get('error', md.get('type'))}"
    if not (md.get("encoding") or "").startswith(("#ttg.swizzled_shared", "#ttg.nvmma_shared")):
        return f"shared encoding not modelled: {md.get('encoding') or md['type']}"
    if lowering.element_bits(md["element"]) is None:
        return f"element type {md['element']} not modelled"
    stage = md.get("stage_shape") or md["alloc_shape"]
    try:
        specgen.layout_text(md["encoding"], stage, md["shared"]["offset"])
    except ValueError as e:
        return f"shared encoding not modelled: {e}"
    return None


class KernelChecker:
    def __init__(self, name: str, found: dict, run: RunOptions):
        self.name = name
        self.found = found
        self.options = run  # how each check is decided (engine and budget)
        target = found.get("target") or ""
        self.capability = int(target.split(":")[1]) if target.startswith("cuda:") else 0
        self.results: list[CheckResult] = []
        # Each modelled op's instruction and how many a warp issues per execution:
        # thread shared-memory instructions, then cp.async (ldgsts) apart.
        self.decisions: list[dict] = []
        self.copies: list[dict] = []
        # Labels of ops whose instructions another reading decides (the PTX's:
        # `verify.ttgir.from_ptx.check_first`): their buffers' checks and views
        # stay, their own accesses are not checked here.
        self.decided_elsewhere: set[str] = set()

    def run(self) -> list[CheckResult]:
        target = self.found.get("target")
        if target is None:
            raise SpecError(
                'expected a module with a "ttg.target" attribute ("cuda:90" or '
                "another NVIDIA target), found none",
                Pos(1, 1),
                self.name,
            )
        if not target.startswith("cuda:"):
            raise SpecError(
                f"target {target!r}: verify models NVIDIA targets (cuda:NN) only",
                Pos(1, 1),
                self.name,
            )
        buffers: dict[int, tuple[dict, list[dict]]] = {
            b["id"]: (b, []) for b in self.found["buffers"]
        }
        for op in self.found["ops"]:
            if op["op"] == "ttg.local_alloc" and op["tensor"] is None:
                continue  # an empty allocation: the buffer itself
            reason = self._unsupported(op)
            root = op.get("buffer") or self._by_signature(op)
            if reason is None and root is None:
                reason = "reached through a loop-carried value that matches no single allocation"
            if reason is not None:
                self.results.append(not_modelled(_where(self.name, op), _label(op), reason))
            else:
                buffers[root][1].append(op)
        for buffer, ops in buffers.values():
            self.results += self._check_buffer(buffer, ops)
        self.results.sort(key=lambda r: (r.file, r.line))
        return self.results

    def _by_signature(self, op: dict):
        """A loop-carried view: the allocation with its element type, encoding and
        tile, if exactly one has them."""
        md = op["memdesc"] or {}
        same = [
            b["id"]
            for b in self.found["buffers"]
            if (b.get("element"), b.get("encoding"), b.get("stage_shape"))
            == (md.get("element"), md.get("encoding"), md.get("alloc_shape"))
        ]
        return same[0] if len(same) == 1 else None

    def _unsupported(self, op: dict) -> str | None:
        if op["op"] in _NOT_THREAD_OPS:
            return _NOT_THREAD_OPS[op["op"]]
        if op["memdesc"] is None and op.get("memory") == "tensor":
            return f"{op['op']} works on tensor memory, not shared memory: not modelled"
        if op["memdesc"] is None:
            return f"{op['op']} takes a shared-memory buffer; verify does not model this operation"
        if op["op"] == COPY and "untraced" in op.get("copy", {"untraced": "not read"}):
            return f"its global source cannot be traced: {op.get('copy', {}).get('untraced')}"
        md, tensor = op["memdesc"], op["tensor"] or {}
        reason = _memdesc_reason(md)
        if reason:
            return reason
        if tensor.get("layout_error"):
            return f"register layout not modelled: {tensor['layout_error']}"
        if any(any(basis) for basis in tensor.get("block") or []):  # zero bases: a copy each
            return "a layout split over several CTAs (block bases) is not modelled"
        moved = [v for v in op.get("views", []) if v not in _MODELLED_VIEWS]
        if not moved and "ttg.memdesc_reinterpret" in op.get("views", []):
            moved = self._reinterpreted_elsewhere(op)
        if moved:
            return (
                f"seen through {moved[0]}: views that permute or reinterpret a "
                "buffer are not modelled yet"
            )
        if len(md["shape"]) != len(md["stage_shape"]):
            return "an op on several stages of a buffer at once is not modelled"
        if self.found["threads_per_warp"] != 32:
            return "warps of other than 32 threads are not modelled"
        return None

    def _reinterpreted_elsewhere(self, op: dict) -> list[str]:
        """A reinterpret view is modelled when it keeps the buffer's element type
        and tile (only the encoding differs); else it moves elements."""
        buffer: dict = next((b for b in self.found["buffers"] if b["id"] == op.get("buffer")), {})
        md = op["memdesc"]
        same = (md["element"], md["alloc_shape"]) == (
            buffer.get("element"),
            buffer.get("stage_shape"),
        )
        return [] if same else ["ttg.memdesc_reinterpret to another element type or shape"]

    # -- one buffer --------------------------------------------------------------

    def _check_buffer(self, buffer: dict, ops: list[dict]) -> list[CheckResult]:
        where = _where(self.name, buffer)
        label = _label({"op": "ttg.local_alloc", "name": self._buffer_name(buffer)})
        reason = _memdesc_reason(buffer)
        if reason:
            return [not_modelled(where, label, reason)] + [
                not_modelled(_where(self.name, op), _label(op), f"its buffer: {reason}")
                for op in ops
            ]
        spec = specgen.BufferSpec(label)
        bits = lowering.element_bits(buffer["element"])
        assert bits is not None, "_memdesc_reason refuses an element type with no width"
        stage_shape = buffer["stage_shape"]
        stages = 1
        for n in buffer["shape"][: len(buffer["shape"]) - len(stage_shape)]:
            stages *= n
        stage_elems = 1
        for n in stage_shape:
            stage_elems *= n
        specgen.header(
            spec,
            bits,
            max(16, buffer["shared"]["alignment"]),
            stages,
            stage_elems * bits // 8,
            _layout("B", buffer, stage_shape),
            where,
            label,
        )
        extra = []
        views: dict[str, str] = {}
        for index, op in enumerate(ops):
            extra += self._add_op(spec, f"op{index}", op, bits, buffer, views)
        try:
            spec_read = spec.read(f"{self.name}#{label}")
        except SpecError as e:  # an encoding verify cannot read costs its buffer only
            why = f"its layout is not modelled: {e.message}"
            return [not_modelled(where, label, why)] + [
                not_modelled(_where(self.name, op), _label(op), f"its buffer: {why}") for op in ops
            ]
        # A .cg copy whose sources are written modulo 128 bytes only (banks, not the
        # global lines rule S reads: `specgen.exact_source_address` says why) makes
        # the whole buffer's .cg copies answered by bound G (the flag is per spec).
        spec_read.sources_modulo_128 = bool(spec.banks_only)
        results = run_spec(spec_read, self.options)
        self._footprint(results, stages * stage_elems * bits // 8)
        return [_why_banks_only(self._relabel(r, spec), spec) for r in results] + extra

    def _footprint(self, results: list[CheckResult], footprint: int):
        """The buffer's bytes, all stages, on its bijective check; a warning there
        when the target cannot give one block that much (issue 27)."""
        warning = shared_memory.over_limit(footprint, self.capability)
        for r in results:
            if r.property.startswith("bijective"):
                r.facts["footprint_bytes"] = footprint
                r.facts["warnings"] = [warning] if warning else []

    def _buffer_name(self, buffer: dict) -> str | None:
        for op in self.found["ops"]:
            if op["op"] == "ttg.local_alloc" and op.get("buffer") == buffer["id"]:
                return op.get("name")
        return None

    def _add_op(
        self, spec, name: str, op: dict, bits: int, buffer: dict, views: dict
    ) -> list[CheckResult]:
        where, label = _where(self.name, op), _label(op)
        md, tensor = op["memdesc"], op["tensor"]
        if md["encoding"] != buffer["encoding"] and md["encoding"] not in views:
            views[md["encoding"]] = f"V{len(views)}"
            view = views[md["encoding"]]
            specgen.add_equivalence(
                spec, view, _layout(view, md, md["alloc_shape"]), where, spec.name, label
            )
        layout = views.get(md["encoding"], "B")
        if label in self.decided_elsewhere:
            return []
        if tensor is None:
            return [not_modelled(where, label, "no register tensor to read or write")]
        solve = lowering.offset_solver(md["shared"]["offset"], md["alloc_shape"])
        cvt = lowering.make_cvt(tensor, solve)
        if op["op"] == COPY:
            low = _copy_lowering(cvt, bits, op["copy"], tensor, self.capability)
        else:
            low = lowering.choose(
                cvt,
                bits,
                op["op"] != "ttg.local_load",
                self.capability,
                mask_span(solve, md["shape"], md["alloc_shape"]),
                _product(md["alloc_shape"]),
            )
        if low.instruction is None:
            return [not_modelled(where, label, low.reason)]
        access = specgen.access_for(label, where, tensor, cvt, low, md["shape"], md["alloc_shape"])
        if op["op"] == COPY:
            try:
                _add_source(spec, name, access, op["copy"], tensor, cvt, low, bits)
            except ValueError as e:
                return [not_modelled(where, label, f"its global source: {e}")]
        specgen.add_access(spec, name, access, layout)
        (self.copies if op["op"] == COPY else self.decisions).append(
            {
                "op": label,
                "file": where[0],
                "line": where[1],
                "instruction": low.instruction,
                "per_warp": access.instructions_per_warp,
                "loops": op.get("loops", []),
                "spec": spec,
                "access": name,
            }
        )
        return []

    def _relabel(self, result: CheckResult, spec) -> CheckResult:
        """The result in the kernel's terms: its Python line, the op's SSA name, and
        ``global`` for the source layout a copy's spec names (``Gop0``), in the
        property and in the counterexample's source rows (``global <-``: the global
        address the lane above copies from)."""
        file, line, names = spec.origin.get(result.line, (self.name, 0, {}))
        words = [names.get(w, w) for w in result.property.replace(",", " ,").split()]
        result.property = " ".join(words).replace(" ,", ",")
        result.file, result.line = file, line
        cex = result.counterexample
        if cex is not None and any(r.label for r in cex.rows):
            rows = tuple(
                replace(r, label=" ".join(names.get(w, w) for w in r.label.split()))
                for r in cex.rows
            )
            result.counterexample = replace(cex, rows=rows)
        return result


def _copy_lowering(cvt, bits: int, copy: dict, tensor: dict, capability: int):
    """A cp.async's instruction, or why there is none (`lowering.copy_lowering`)."""
    if capability < 80:
        return lowering.Lowering(None, reason="cp.async needs sm_80 or later")
    if not all(any(b) for b in tensor["lane"] + tensor["warp"]):
        return lowering.Lowering(
            None,
            reason="lanes or warps that hold the same elements (Triton predicates "
            "the copies of all but one off), which is not modelled",
        )
    least = max(copy["contiguity"], copy.get("contiguity_lower", 1))
    return lowering.copy_lowering(cvt, bits, least, copy["vector_bound"], copy.get("cache", ""))


def _add_source(spec, name: str, access, copy: dict, tensor: dict, cvt, low, bits: int):
    """Give a copy's access its global side: the traced address of each lane's
    first element (the coordinates without a subslice's offset), in a 1-D
    global layout ``G<name>`` that holds every value; ValueError if the trace
    cannot be written (`specgen.source_address`)."""
    shape = tensor["shape"]
    plain = specgen.access_for(access.label, access.where, tensor, cvt, low, shape, shape)
    if ".cg." in low.instruction:
        try:
            reason = specgen.base_residues_known(copy, 16)
            if reason:
                raise specgen.NotExact(reason)
            address, size, loops = specgen.exact_source_address(
                copy, plain.coords, shape, bits // 8
            )
        except specgen.NotExact as e:
            address, size, loops = specgen.source_address(copy, plain.coords, shape, bits // 8)
            spec.banks_only[access.label] = str(e)  # only once the copy is modelled
    else:
        address, size, loops = specgen.source_address(copy, plain.coords, shape, bits // 8)
    layout = f"G{name}"
    specgen.add_source_layout(spec, layout, size, access.where)
    access.source = f"{layout}({address})"
    access.loops += loops


BANKS_ONLY = "the sources are known modulo 128 bytes only"


def _why_banks_only(result: CheckResult, spec) -> CheckResult:
    """Say which copy's source could not be written exactly, and why, on a check
    that bound G left UNKNOWN for that reason."""
    if result.reason is None or BANKS_ONLY not in result.reason:
        return result
    label = result.property.removeprefix("conflict_free ")
    if label in spec.banks_only:
        why = spec.banks_only[label]
    else:
        other, why = next(iter(spec.banks_only.items()))
        why = f"{other}, a .cg copy into the same buffer, is known so because {why}"
    result.reason = f"{result.reason} (verify ttgir: {why})"
    return result


def _layout(name: str, md: dict, stage_shape: list[int]):
    """``layout NAME = ...`` of a buffer or view's encoding (`specgen.layout_statement`)."""
    encoding = _as_shared_linear(md) if _nvmma_beyond_notation(md, stage_shape) else md["encoding"]
    return specgen.layout_statement(name, encoding, stage_shape, md["shared"]["offset"])


def _nvmma_beyond_notation(md: dict, stage_shape: list[int]) -> bool:
    """An nvmma_shared encoding outside what verify's Triton notation reads (2-D
    tiles of the encoding's own element width), which Triton lays out all the
    same: N-D tiles (a printed ``rank``), and elements of another width than
    elementBitWidth, whose swizzle is computed for that width and addressed in
    the buffer's elements (nvmmaSharedToLinearLayout, lib/Dialect/TritonGPU/IR/
    LinearLayoutConversions.cpp; Triton's verifier accepts the mismatch)."""
    encoding = md["encoding"] or ""
    if not encoding.startswith("#ttg.nvmma_shared"):
        return False
    width = re.search(r"elementBitWidth = (\d+)", encoding)
    other_width = width is not None and int(width[1]) != lowering.element_bits(md["element"])
    return len(stage_shape) != 2 or "rank =" in encoding or other_width


def _as_shared_linear(md: dict) -> str:
    """The buffer's encoding as the linear layout Triton computes for it."""

    def bases(vectors: list[list[int]]) -> str:
        return "[" + ", ".join("[" + ", ".join(map(str, v)) + "]" for v in vectors) + "]"

    shared = md["shared"]
    return (
        f"#ttg.shared_linear<{{offset = {bases(shared['offset'])}, "
        f"block = {bases(shared['block'])}}}, alignment = {shared['alignment']}>"
    )


# Encodings and ops that Triton emits for one architecture family only
# (lib/Dialect/TritonGPU/Transforms/AccelerateMatmul.cpp picks the MMA version by
# compute capability; tensor memory is sm_100's): the least target each implies.
_TARGET_HINTS = (
    (re.compile(r"\bttng\.(?:tmem_|tc_gen5)|#ttng\.tensor_memory"), "cuda:100"),
    (re.compile(r"versionMajor\s*=\s*3\b|\bttng\.warp_group_dot\b"), "cuda:90"),
    (re.compile(r"versionMajor\s*=\s*2\b"), "cuda:80"),
)


def infer_target(text: str) -> str | None:
    """The target a module without ``ttg.target`` was written for, where its
    encodings or ops name one architecture family; else None."""
    for pattern, target in _TARGET_HINTS:
        if pattern.search(text):
            return target
    return None


def _product(shape: list[int]) -> int:
    out = 1
    for n in shape:
        out *= n
    return out


def mask_span(solve, view_shape: list[int], stage_shape: list[int]) -> int:
    """The offset bits a subslice's start may set: Triton's
    ``SharedMemoryObject::getMaskSpanOffsets`` (lib/Conversion/TritonGPUToLLVM/
    Utility.cpp), the OR of the offsets of coordinates 2^j along each dimension
    for view extent <= 2^j < buffer extent; 0 for a whole buffer."""
    out = 0
    for dim, (view, whole) in enumerate(zip(view_shape, stage_shape)):
        for j in range(view.bit_length() - 1, whole.bit_length() - 1):
            coord = [0] * len(stage_shape)
            coord[dim] = 1 << j
            out |= solve(coord)
    return out


def run_kernel(
    path_or_text: str, run: RunOptions = RunOptions(), target: str | None = None
) -> KernelChecker:
    """A kernel's checker after its run: ``results`` (nothing to check is an error,
    not a pass, as for a spec), ``decisions`` (each modelled thread op's
    instruction) and ``copies`` (each modelled cp.async's). `target`
    (``cuda:90``) stands for a ``ttg.target`` the module does not carry, as
    Triton's lit tests give it on their RUN lines; else it is inferred from
    the encodings (`infer_target`)."""
    return ran(prepare_kernel(path_or_text, run, target))


def prepare_kernel(
    path_or_text: str, run: RunOptions = RunOptions(), target: str | None = None
) -> KernelChecker:
    """`run_kernel`'s checker before it runs (read, its target found)."""
    name, found = read_module(path_or_text)
    found["target"] = module_target(found.get("target"), target, read_source(path_or_text)[1], name)
    return KernelChecker(name, found, run)


_OWN_TARGET = re.compile(r'"?ttg\.target"?\s*=')


def module_target(own: str | None, given: str | None, text: str, name: str) -> str | None:
    """The target a module is checked for: its own ``ttg.target``; else `given`
    (``--target``, ``cuda:NN``), which overrides what its encodings imply; else
    `infer_target`'s. A module whose own target differs from `given` is an error
    naming both, at its ``ttg.target``."""
    if own is not None and given is not None and own != given:
        m = _OWN_TARGET.search(text)
        line = text.count("\n", 0, m.start()) + 1 if m else 1
        col = m.start() - text.rfind("\n", 0, m.start()) if m else 1
        raise SpecError(
            f'expected the module\'s ttg.target to be "{given}" as --target gives it, '
            f'found "{own}"',
            Pos(line, col),
            name,
        )
    return own or given or infer_target(text)


def ran(checker: KernelChecker) -> KernelChecker:
    """`checker` after its run; nothing to check is an error, not a pass."""
    if not checker.run():
        raise nothing_to_verify(checker.name)
    return checker


def nothing_to_verify(name: str) -> SpecError:
    return SpecError(
        "nothing to verify: no shared-memory allocation or operation found", Pos(1, 1), name
    )


def check_module(path_or_text: str, run: RunOptions = RunOptions()) -> list[CheckResult]:
    """Every check of a kernel (see `run_kernel`), each decided under `run` as
    `verify.engines.runner.run_spec` decides a spec's."""
    return run_kernel(path_or_text, run).results
