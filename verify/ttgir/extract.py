"""Read a TTGIR module with Triton's own MLIR bindings and print, as JSON, every
shared-memory operation with the layouts Triton itself computes for it.

Run as ``python -m verify.ttgir.extract FILE``, in a child process: the native
parser and Triton's layout code may abort on hostile input, and a child that dies
cannot take the verifier with it (`verify.ttgir.module` turns that into a located
error). Nothing here re-derives a layout: distributed encodings (blocked, linear,
nvidia_mma, dot_op, slice) and shared encodings become linear layouts through
Gluon's ``GluonOpBuilder.to_linear_layout``, the function Triton's own Gluon
frontend uses (``triton/experimental/gluon/language/_semantic.py``).

Output: ``{"target", "num_warps", "threads_per_warp", "ops", "buffers"}``, or
``{"error": ...}``; MLIR's diagnostics go to stderr. Each data op carries
``loops``: the Python source location of every ``scf.for`` around it, outermost
first (how often it runs is a question of those loops' trip counts).
"""

from __future__ import annotations

import json
import os
import re
import sys
from typing import Any

from verify.ttgir import pointers

# The four operations that move data between registers and shared memory.
DATA_OPS = (
    "ttg.local_alloc",
    "ttg.local_store",
    "ttg.local_load",
    "ttg.async_copy_global_to_local",
)
# Views keep the buffer and change how it is seen.
VIEW_OPS = (
    "ttg.memdesc_index",
    "ttg.memdesc_subslice",
    "ttg.memdesc_trans",
    "ttg.memdesc_reshape",
    "ttg.memdesc_reinterpret",
)
# Operations that take a buffer without reading or writing its elements.
BOOKKEEPING = (
    "ttg.local_dealloc",
    "ttng.warp_group_dot_wait",
    "ttg.async_wait",
    "ttg.async_commit_group",
    "ttng.fence_async_shared",
    "scf.yield",
    "scf.for",
    "scf.if",
    "scf.while",
    "scf.condition",
    "tt.return",
)
_OP_LINE = re.compile(
    r"^\s*(?:(?P<result>%[\w$.-]+)(?::\d+)?\s*=\s*)?\"?"
    r"(?P<op>ttg\.(?:local_alloc|local_store|local_load|"
    r"async_copy_global_to_local))\b(?P<rest>.*)$"
)
_FILE_LINE = re.compile(r'"(?P<file>[^"]+)":(?P<line>\d+):(?P<col>\d+)')
# ``#loc24 = loc(callsite(#loc9 at #loc3))``: the body of each location alias.
_LOC_ALIAS = re.compile(r"^(#loc\d*) = loc\((.*)\)\s*$", re.MULTILINE)
_LOC_REF = re.compile(r"#loc\d*\b")
MAX_LOC_EXPANSIONS = 64
# Shapes and the element type are read from the printed memdesc type: the bindings
# have no accessor for them. ``!ttg.memdesc<128x16xf16, #enc, #smem, mutable, 128x64>``
_MEMDESC = re.compile(
    r"^!ttg\.memdesc<(?P<shape>(?:\d+x)+)(?P<elem>[a-zA-Z]\w*)"
    r"(?P<rest>.*?)(?:,\s*(?P<alloc>\d+(?:x\d+)*))?>$"
)
_ENCODING = re.compile(r"#ttg\.\w+<\{[^}]*\}>")
_FOR_LINE = re.compile(r"^\s*(?:%[\w$.-]+(?::\d+)?\s*=\s*)?scf\.for\b")
_CLOSE_LOC = re.compile(r"^\s*\}(.*)$")
# ``%stride_am: i32 {tt.divisibility = 16 : i32} loc(...)``: one function parameter.
_PARAM = re.compile(r"%(?P<name>[\w$.-]+): (?:[^\s{,()<]|<[^>]*>)+(?: \{(?P<attrs>[^}]*)\})?")
_DIVISIBILITY = re.compile(r"\btt\.divisibility = (\d+)")


# One context for a long-lived reader's calls, made again after this many reads
# (types and attributes it has uniqued stay in it until then).
CONTEXT_READS = 256
_CONTEXT: list = [None, 0]  # the context, reads in it


def _new_context(ir):
    context = ir.context()
    ir.load_dialects(context)
    return context


def _context(ir):
    if _CONTEXT[0] is None or _CONTEXT[1] >= CONTEXT_READS:
        _CONTEXT[:] = [_new_context(ir), 0]
    _CONTEXT[1] += 1
    return _CONTEXT[0]


def main(path: str, reuse_context: bool = False) -> int:
    """Print the JSON document of what `path`'s TTGIR holds. With `reuse_context`
    (a long-lived reader: `verify.integrations.extract_worker`), the MLIR context
    of an earlier call is parsed into again: making one and loading Triton's
    dialects costs a millisecond, a third of reading a small kernel."""
    try:
        from triton._C.libtriton import gluon_ir, ir
    except ImportError as e:
        print(json.dumps({"error": "missing_triton", "detail": str(e)}))
        return 0
    context = _context(ir) if reuse_context else _new_context(ir)
    try:
        module = ir.parse_mlir_module(path, context)
    except RuntimeError as e:
        print(json.dumps({"error": "parse", "detail": str(e)}))
        return 0
    builder = gluon_ir.GluonOpBuilder(context)
    with open(path, encoding="utf-8") as f:
        text = f.read()
    extractor = Extractor(module, builder, _text_ops(text, path))
    extractor.signatures = _signatures(text)
    print(json.dumps(extractor.run()))
    return 0


def _text_ops(text: str, path: str) -> list[dict]:
    """The printed result name, TTGIR line, enclosing loops and, for an op without
    a result, the location of each data op, in file order: the printed one, else
    the op's own place in `path` (MLIR's location for an op parsed without one;
    the stored value's would be its definition's, a function argument's line).

    Triton's bindings do not expose SSA names, nor an operation's location (only a
    value's), nor an operation's parent; the printed text is only read for those,
    matched to the parsed ops by order (walk order is file order for these ops,
    which hold no regions)."""
    aliases = dict(_LOC_ALIAS.findall(text))
    out = []
    for number, line in enumerate(text.splitlines(), 1):
        m = _OP_LINE.match(line)
        if m:
            entry: dict[str, Any] = {"op": m["op"], "name": m["result"], "ttgir_line": number}
            cache = re.search(r"\bcache(?:Modifier|_modifier) = (\w+)", m["rest"])
            if cache:  # the bindings do not read enum attributes
                entry["cache"] = cache[1]
            if m["result"] is None:  # local_store: name it by the stored value
                operand = re.match(r"\s*(%[\w$.-]+)", m["rest"])
                entry["name"] = operand[1] if operand else None
                entry["loc"] = _printed_location(m["rest"], aliases) or {
                    "file": path,
                    "line": number,
                    "col": m.start("op") + 1,
                }
            out.append(entry)
    loops = _loop_spans(text, aliases)
    for entry in out:
        entry["loops"] = [loc for first, last, loc in loops if first < entry["ttgir_line"] < last]
    return out


def _signatures(text: str) -> list[list[tuple[str, int | None]]]:
    """Each ``tt.func``'s parameters in order: (name, ``tt.divisibility`` or None).
    The bindings give neither an argument's name nor its attributes."""
    out = []
    for line in text.splitlines():
        if re.match(r"^\s*tt\.func\b", line):
            params = []
            for m in _PARAM.finditer(line.split("(", 1)[-1]):
                hint = _DIVISIBILITY.search(m["attrs"] or "")
                params.append((m["name"], int(hint[1]) if hint else None))
            out.append(params)
    return out


def _loop_spans(text: str, aliases: dict[str, str]) -> list[tuple[int, int, dict | None]]:
    """(first line, closing line, Python location) of every ``scf.for``, outermost
    first. A region opens where a line leaves more ``{`` than ``}`` and closes at
    the line that brings the count back; MLIR prints a region op's location after
    the closing brace (``} loc(#loc106)``)."""
    spans, open_loops, depth = [], [], 0
    for number, line in enumerate(text.splitlines(), 1):
        before = depth
        depth += line.count("{") - line.count("}")
        if _FOR_LINE.match(line) and depth > before:
            open_loops.append((number, before))
        while open_loops and depth <= open_loops[-1][1]:
            first, _ = open_loops.pop()
            closing = _CLOSE_LOC.match(line)
            spans.append(
                (first, number, _printed_location(closing[1], aliases) if closing else None)
            )
    return sorted(spans)


def _printed_location(rest: str, aliases: dict[str, str]) -> dict | None:
    """The first ``"FILE":L:C`` of an op's trailing ``loc(...)``, ``#locN`` aliases
    expanded in order (for ``callsite(A at B)`` that is A, the innermost frame, as
    for a value's location); a bounded number of expansions, as aliases nest."""
    m = re.search(r"\bloc\((.*)\)\s*$", rest)
    body = m[1] if m else ""
    for _ in range(MAX_LOC_EXPANSIONS):
        found, ref = _FILE_LINE.search(body), _LOC_REF.search(body)
        if found and (ref is None or found.start() < ref.start()):
            return {"file": found["file"], "line": int(found["line"]), "col": int(found["col"])}
        if ref is None:
            return None
        body = body[: ref.start()] + aliases.get(ref[0], "") + body[ref.end() :]
    return None


class Extractor:
    def __init__(self, module, builder, text_ops: list[dict]):
        self.module = module
        self.builder = builder
        self.text_ops = text_ops
        self.views: dict[int, tuple[str, int | None]] = {}  # value id -> (op, source id)
        self.allocs: dict[int, dict] = {}
        self.ops: list[dict] = []
        self.signatures: list[list[tuple[str, int | None]]] = []
        self.tracer = pointers.Tracer({}, {}, {})

    def run(self) -> dict:
        top = self.module.get_operation()
        found: list[Any] = []  # Triton's operations (its bindings carry no types)
        self.module.walk(found.append)
        self.tracer = pointers.Tracer(*_def_use(found, self.signatures))
        for op in found:
            self._visit(op)
        self._name_ops()
        for entry in self.ops:
            entry["buffer"] = self._root(entry.pop("_memdesc_id"), entry)
        return {
            "target": top.get_str_attr("ttg.target"),
            "num_warps": top.get_int_attr("ttg.num-warps"),
            # Absent, Triton takes 32 (TritonGPUDialect::getThreadsPerWarp,
            # lib/Dialect/TritonGPU/IR/Dialect.cpp).
            "threads_per_warp": top.get_int_attr("ttg.threads-per-warp") or 32,
            "ops": self.ops,
            "buffers": list(self.allocs.values()),
        }

    # -- one operation ---------------------------------------------------------

    def _visit(self, op):
        name = op.get_name()
        if name in VIEW_OPS:
            self.views[op.get_result(0).id()] = (name, op.get_operand(0).id())
            return
        if name == "ttg.local_alloc":
            result = op.get_result(0)
            self.allocs[result.id()] = {
                "id": result.id(),
                **self._memdesc(result),
                "loc": _location(result),
            }
        if name in DATA_OPS:
            self.ops.append(self._data_op(op, name))
        elif name == "ttg.convert_layout":
            self._convert_layout(op)
        elif name == "tt.reduce":
            self._reduce(op)
        elif name not in BOOKKEEPING and "barrier" not in name:
            self._other_shared_use(op, name)

    def _data_op(self, op, name: str) -> dict:
        memdesc, tensor = _operands(op, name)
        entry = {
            "op": name,
            "loc": _location(op.get_result(0) if op.get_num_results() else tensor),
            "memdesc": self._memdesc(memdesc),
            "_memdesc_id": memdesc.id(),
            "tensor": self._tensor(tensor) if tensor is not None else None,
        }
        if name == "ttg.async_copy_global_to_local":
            dim = _vector_dim(entry["tensor"])
            entry["copy"] = pointers.trace_copy(
                self.tracer, op, dim, _per_thread(entry["tensor"], dim)
            )
        return entry

    def _convert_layout(self, op):
        """A conversion that is not trivial may go through scratch shared memory."""
        source, result = op.get_operand(0), op.get_result(0)
        if self.builder.is_convert_layout_trivial(result.get_type(), source):
            return
        self.ops.append(
            {
                "op": "ttg.convert_layout",
                "loc": _location(result),
                "memdesc": None,
                "_memdesc_id": None,
                "tensor": None,
                "types": [str(source.get_type()), str(result.get_type())],
            }
        )

    def _reduce(self, op):
        """A reduction whose axis spans several warps exchanges the warps' partial
        results through scratch shared memory (Triton's ``ReduceOpHelper``,
        lib/Analysis/Utility.cpp: not ``isWarpSynchronous`` when the axis has
        more than one warp with unique data, i.e. a warp basis of the operand's
        linear layout moves along the axis); one within a warp uses shuffles."""
        source, axis = op.get_operand(0), op.get_int_attr("axis")
        try:
            shape = list(self.builder.get_shape_from_tensor(source))
            layout = self.builder.get_gluon_layout_from_tensor(source)
            linear = self.builder.to_linear_layout(layout._to_ir(self.builder), shape)
            across_warps = any(basis[axis] for basis in linear.warp_bases)
        except Exception:  # noqa: BLE001 -- a layout Gluon cannot name: listed, not guessed
            across_warps = True
        if across_warps:
            self.ops.append(
                {
                    "op": "tt.reduce",
                    "loc": _location(op.get_result(0)),
                    "memdesc": None,
                    "_memdesc_id": None,
                    "tensor": None,
                }
            )

    def _other_shared_use(self, op, name: str):
        operands = [op.get_operand(i) for i in range(op.get_num_operands())]
        buffers = [str(v.get_type()) for v in operands]
        buffers = [t for t in buffers if t.startswith("!ttg.memdesc")]
        if not buffers:
            return
        loc_value = op.get_result(0) if op.get_num_results() else operands[0]
        tensor_memory = all("#ttng.tensor_memory" in t for t in buffers)
        self.ops.append(
            {
                "op": name,
                "loc": _location(loc_value),
                "memdesc": None,
                "_memdesc_id": None,
                "tensor": None,
                "memory": "tensor" if tensor_memory else "shared",
            }
        )

    # -- layouts, through Triton ------------------------------------------------

    def _memdesc(self, value) -> dict:
        """Shape, element type, encoding text and Triton's linear layout of the
        encoding on the allocation shape the view reports (offset -> coordinate)."""
        text = str(value.get_type())
        m = _MEMDESC.match(text)
        if not m:
            return {"type": text, "error": "not a memdesc type Triton 3.9 prints"}
        shape = [int(n) for n in m["shape"].rstrip("x").split("x")]
        alloc = [int(n) for n in m["alloc"].split("x")] if m["alloc"] else shape
        encoding = _ENCODING.search(m["rest"])
        out = {
            "type": text,
            "shape": shape,
            "alloc_shape": alloc,
            "element": m["elem"],
            "encoding": encoding[0] if encoding else None,
        }
        try:
            layout = self.builder.get_gluon_layout_from_memdesc(value)
            # Leading dimensions beyond the encoding's rank are buffers (stages):
            # the encoding lays out one of them, and they follow one another.
            stage_shape = alloc[len(alloc) - _encoding_rank(layout, len(alloc)) :]
            out["stage_shape"] = stage_shape
            if type(layout).__name__ == "PaddedSharedLayout":
                # Triton 3.9's to_linear_layout aborts the process on it ("padded
                # shared encoding has no linear layout; use paddedLinearLayout").
                out["error"] = "padded_shared: Triton's to_linear_layout has no layout for it"
                return out
            if all(n == 1 for n in stage_shape):
                # One element a stage: no offsets to lay out (Triton's linear
                # layout of it has no bases); the buffer of an mbarrier.
                out["one_element"] = True
                return out
            linear = self.builder.to_linear_layout(layout._to_ir(self.builder), out["stage_shape"])
            out["shared"] = {
                "offset": linear.offset_bases,
                "block": linear.block_bases,
                "alignment": linear.alignment,
            }
        except Exception as e:  # noqa: BLE001 -- an encoding Gluon cannot name
            out["error"] = f"{type(e).__name__}: {e}"
        return out

    def _tensor(self, value) -> dict:
        text = str(value.get_type())
        out: dict[str, object] = {"type": text}
        try:
            shape = list(self.builder.get_shape_from_tensor(value))
            layout = self.builder.get_gluon_layout_from_tensor(value)
            linear = self.builder.to_linear_layout(layout._to_ir(self.builder), shape)
            out.update(
                shape=shape,
                encoding=repr(layout),
                register=linear.reg_bases,
                lane=linear.lane_bases,
                warp=linear.warp_bases,
                block=linear.block_bases,
            )
        except Exception as e:  # noqa: BLE001 -- reported as not modelled, with why
            out["layout_error"] = f"{type(e).__name__}: {e}"
        return out

    # -- naming and buffers -----------------------------------------------------

    def _name_ops(self):
        data = [e for e in self.ops if e["op"] in DATA_OPS]
        if [e["op"] for e in data] == [t["op"] for t in self.text_ops]:
            for entry, printed in zip(data, self.text_ops):
                entry.update(
                    name=printed["name"], ttgir_line=printed["ttgir_line"], loops=printed["loops"]
                )
                if printed.get("loc"):
                    entry["loc"] = printed["loc"]
                if "copy" in entry:
                    entry["copy"]["cache"] = printed.get("cache", "")

    def _root(self, value_id: int | None, entry: dict) -> int | None:
        """The allocation a memdesc comes from, and the views on the way."""
        chain = []
        while value_id is not None and value_id not in self.allocs:
            if value_id not in self.views:
                break  # a block argument: a loop-carried buffer
            view, value_id = self.views[value_id]
            chain.append(view)
        entry["views"] = chain
        return value_id if value_id in self.allocs else None


def _encoding_rank(layout, default: int) -> int:
    """How many trailing dimensions a shared encoding lays out: its order's, a
    shared_linear's bases' or a padded one's shape's (Triton asserts, natively,
    when given a shape of another rank), an nvmma's ``rank`` (2 if unprinted)."""
    if hasattr(layout, "order"):
        return len(layout.order)
    if type(layout).__name__ == "SharedLinearLayout":
        return len(layout.offset_bases[0]) if layout.offset_bases else default
    if type(layout).__name__ == "PaddedSharedLayout":
        return len(layout.shape)
    return getattr(layout, "rank", 2)


def _def_use(ops: list, signatures: list) -> tuple[dict, dict, dict]:
    """(result id -> defining op, function-argument id -> (name, divisibility),
    iter_arg id -> (initial value, yielded value)) for `pointers.Tracer`. A
    region's block is reached through an op inside it (the bindings give a
    block's parent region, not a region's blocks)."""
    defs = {op.get_result(i).id(): op for op in ops for i in range(op.get_num_results())}
    blocks = {}  # region id -> (block, its terminator if scf.yield)
    for op in ops:
        block = op.get_block()
        if block is not None:
            region = block.get_parent().id()
            if op.get_name() == "scf.yield" or region not in blocks:
                blocks[region] = (block, op if op.get_name() == "scf.yield" else None)
    args, loops = {}, {}
    funcs = [op for op in ops if op.get_name() == "tt.func"]
    for func, params in zip(funcs, signatures):
        block, _ = blocks.get(func.get_region(0).id(), (None, None))
        if block is not None and block.get_num_arguments() == len(params):
            for i, param in enumerate(params):
                args[block.get_argument(i).id()] = param
    for op in ops:
        if op.get_name() != "scf.for":
            continue
        block, yield_op = blocks.get(op.get_region(0).id(), (None, None))
        if block is None or yield_op is None:
            continue
        for i in range(1, block.get_num_arguments()):  # argument 0: the induction variable
            loops[block.get_argument(i).id()] = (op.get_operand(2 + i), yield_op.get_operand(i - 1))
    return defs, args, loops


def _vector_dim(tensor: dict) -> int | None:
    """The dimension a thread's consecutive registers run along (Triton's
    ``order[0]``): that of the first register basis that moves."""
    for basis in tensor.get("register", []):
        for dim, step in enumerate(basis):
            if step:
                return dim
    return None


def _per_thread(tensor: dict, dim: int | None) -> int:
    """Consecutive elements a thread holds along `dim`: the leading register
    bases 1, 2, 4, ... in that dimension alone (``getContigPerThread``)."""
    count = 1
    for basis in tensor.get("register", []):
        wanted = [count if d == dim else 0 for d in range(len(basis))]
        if list(basis) != wanted:
            break
        count *= 2
    return count


def _operands(op, name: str):
    """(the buffer, the register tensor) of a data op (ODS operand order)."""
    if name == "ttg.local_alloc":
        return op.get_result(0), (op.get_operand(0) if op.get_num_operands() else None)
    if name == "ttg.local_load":
        return op.get_operand(0), op.get_result(0)
    return op.get_operand(1), op.get_operand(0)  # local_store, async_copy (pointers)


def _location(value) -> dict | None:
    """A value's source location: the innermost frame of its (callsite) location
    that lies outside Triton's own package, so that ``tl.max`` inlined from
    triton/language/standard.py is reported at the user's line that calls it."""
    found = list(_FILE_LINE.finditer(str(value.get_loc())))
    user = [m for m in found if not _in_triton(m["file"])]
    if not found:
        return None
    m = (user or found)[0]
    return {"file": m["file"], "line": int(m["line"]), "col": int(m["col"])}


def _in_triton(path: str) -> bool:
    """Whether `path` names a file of the installed Triton package. The path is
    where the module was compiled, often relative to that machine's directory
    (``.venv/lib/.../triton/language/standard.py``), so it is matched by its part
    after the last ``triton`` folder, not resolved against this process's cwd."""
    parts = os.path.normpath(path).split(os.sep)
    if "triton" not in parts[:-1]:
        return False
    tail = parts[len(parts) - 1 - parts[::-1].index("triton") :]
    return os.path.isfile(os.path.join(_triton_dir(), *tail[1:]))


def _triton_dir() -> str:
    import triton

    return os.path.dirname(os.path.abspath(triton.__file__))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
