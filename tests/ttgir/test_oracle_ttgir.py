"""The oracle's reading of TTGIR as pasted -- alias lines, memdesc types,
#ttg.shared_linear and #ttg.padded_shared -- against Triton itself, and verify
against the oracle on specs that use each form.

Triton answers three ways here: its MLIR parser reads the pasted text (the same
alias lines and memdesc type, in a module) into Gluon layout objects, which must
be what the oracle read; its sm_90 lowering of a store into a padded buffer
computes shared addresses (PTX of a compiled Gluon kernel, evaluated for every
lane), which must be the oracle's padded offsets; and its verifier rejects what
the oracle refuses.
"""

import os
import random
import re

import numpy as np
import pytest
from test_oracles import oracle

from benchmarks.campaigns.differential import compare
from oracle import OracleRefusal, triton_encodings
from oracle import memdesc as oracle_memdesc
from oracle.reading import read
from oracle.spec_generator import (
    linear_bases,
    padded_shared,
    shared_linear,
    ttgir_family,
    unit_bases,
)
from verify.errors import SpecError
from verify.spec.parser import parse_text

SWIZZLED = "#ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>"
NVMMA = "#ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>"


@pytest.fixture(scope="module")
def triton():
    oracle("triton")
    import triton

    return triton


# -- Triton's parser reads the pasted text as the oracle does ---------------------------


def parsed_by_triton(tmp_path, aliases: list[str], memdesc: str):
    """(Gluon layout, printed type) Triton's MLIR parser builds from the alias lines
    and a memdesc type, as a TTGIR module holding one local_alloc of that type."""
    from triton._C.libtriton import gluon_ir, ir

    context = ir.context()
    ir.load_dialects(context)
    module = "\n".join(aliases) + (
        '\nmodule attributes {"ttg.num-warps" = 1 : i32, "ttg.num-ctas" = 1 : i32, '
        '"ttg.threads-per-warp" = 32 : i32} {\n  tt.func @f() {\n'
        f"    %0 = ttg.local_alloc : () -> {memdesc}\n    tt.return\n  }}\n}}\n"
    )
    path = tmp_path / "case.ttgir"
    path.write_text(module)
    parsed = ir.parse_mlir_module(str(path), context)
    allocs = []
    parsed.walk(lambda op: allocs.append(op) if op.get_name() == "ttg.local_alloc" else None)
    value = allocs[0].get_result(0)
    layout = gluon_ir.GluonOpBuilder(context).get_gluon_layout_from_memdesc(value)
    return layout, str(value.get_type())


def tritons_args(layout) -> tuple:
    """A Gluon layout object as the oracle's `validate` writes its arguments."""
    name = type(layout).__name__
    if name == "PaddedSharedLayout":
        pairs = tuple(tuple(p) for p in layout.interval_padding_pairs)
        return ("padded", pairs, tuple(tuple(b) for b in layout.offset_bases))
    if name == "SharedLinearLayout":
        return ("linear", tuple(tuple(b) for b in layout.offset_bases))
    if name == "SwizzledSharedLayout":
        return ("swizzled", layout.vec, layout.per_phase, layout.max_phase, tuple(layout.order))
    assert name == "NVMMASharedLayout", name
    width, bits = layout.swizzle_byte_width, layout.element_bitwidth
    return ("nvmma", width, bits, 2, bool(layout.transposed))


def random_encoding(rng: random.Random, shape) -> str:
    kind = rng.choice(["padded", "identity", "linear", "swizzled"])
    pairs = [(1 << rng.randint(1, 10), rng.choice([1, 2, 4, 8]))]
    if kind == "padded":
        bases = unit_bases(shape)
        rng.shuffle(bases)
        return padded_shared(pairs, f"offset = {bases}, block = []")
    if kind == "identity":
        order = list(range(len(shape)))
        rng.shuffle(order)
        return padded_shared(pairs, f"order = {order}, shape = {list(shape)}")
    if kind == "linear":
        return shared_linear(linear_bases(rng, shape), rng.choice([16, 128]))
    order = list(range(len(shape)))
    rng.shuffle(order)
    return (
        f"#ttg.swizzled_shared<{{vec = {rng.choice([1, 4, 8])}, perPhase = "
        f"{rng.choice([1, 2])}, maxPhase = {rng.choice([1, 4, 8])}, order = {order}}}>"
    )


def oracle_reading(aliases: list[str], memdesc: str):
    """(shape, dtype, validate's arguments) the oracle reads from the same text."""
    table = {line.split("=")[0].strip(): line.split("=", 1)[1].strip() for line in aliases}
    shape, dtype, text = oracle_memdesc.read(memdesc, table, "here")
    kind, fields = triton_encodings.parse(text)
    return shape, dtype, triton_encodings.validate(kind, fields, shape)


@pytest.mark.parametrize("seed", range(24))
def test_tritons_parser_reads_pasted_ttgir_as_the_oracle_does(triton, tmp_path, seed):
    rng = random.Random(seed)
    shape = rng.choice([(8, 4), (16, 64), (64, 64), (4, 8, 16), (32, 8)])
    element, dtype = rng.choice([("f16", "f16"), ("bf16", "bf16"), ("f8E4M3FN", "e4m3")])
    encoding = NVMMA if seed == 0 else random_encoding(rng, shape)
    dims = "x".join(map(str, shape))
    aliases = ["#smem = #ttg.shared_memory"]
    if rng.random() < 0.7:
        aliases.append(f"#shared = {encoding}")
        encoding = "#shared"
    if seed == 0:
        shape, dims, element, dtype = (64, 64), "64x64", "f16", "f16"
    memdesc = f"!ttg.memdesc<{dims}x{element}, {encoding}, #smem, mutable, {dims}>"
    layout, printed = parsed_by_triton(tmp_path, aliases, memdesc)
    mine = oracle_reading(aliases, memdesc)
    assert mine == (shape, dtype, tritons_args(layout))
    assert printed.startswith(f"!ttg.memdesc<{dims}x{element}, ")


# -- Triton's lowering stores a padded buffer where the oracle says ----------------------

# One register a thread, one element a register: Triton's store writes element
# (r, c) the value r * C + c at the shared address its lowering computes.
STORE_KERNEL = """
from triton.experimental import gluon
from triton.experimental.gluon import language as gl


@gluon.jit
def store(blocked: gl.constexpr, shared: gl.constexpr, R: gl.constexpr, C: gl.constexpr):
    rows = gl.arange(0, R, layout=gl.SliceLayout(1, blocked))
    cols = gl.arange(0, C, layout=gl.SliceLayout(0, blocked))
    index = gl.expand_dims(rows, 1) * C + gl.expand_dims(cols, 0)
    gl.allocate_shared_memory(gl.int32, [R, C], shared).store(index)
"""


def compiled_ptx(tmp_path, shared, shape) -> str:
    """PTX of STORE_KERNEL for sm_90, one warp, compiled on this CPU."""
    import importlib.util

    import triton
    from triton.backends.compiler import GPUTarget
    from triton.experimental.gluon import language as gl
    from triton.experimental.gluon._runtime import GluonASTSource

    path = tmp_path / "store_kernel.py"  # @gluon.jit reads its function's source file
    path.write_text(STORE_KERNEL)
    spec = importlib.util.spec_from_file_location("store_kernel", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    blocked = gl.BlockedLayout([1, 1], [8, 4], [1, 1], [1, 0])
    names = ("blocked", "shared", "R", "C")
    source = GluonASTSource(
        module.store,
        signature=dict.fromkeys(names, "constexpr"),
        constexprs={(0,): blocked, (1,): shared, (2,): shape[0], (3,): shape[1]},
    )
    # Triton 3.9 warns unless this is set; "1" is its default (fused multiply-adds).
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    compiled = triton.compile(source, target=GPUTarget("cuda", 90, 32), options={"num_warps": 1})
    return compiled.asm["ptx"]


_OPS = {  # integer PTX operations by name, the width from the type suffix
    "and": lambda a, b: a & b,
    "or": lambda a, b: a | b,
    "xor": lambda a, b: a ^ b,
    "shl": lambda a, b: a << b,
    "shr": lambda a, b: a >> b,
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul.lo": lambda a, b: a * b,
}
_LINE = re.compile(r"(?P<op>[a-z][a-z0-9.]*)\s+(?P<args>[^;]*);")
_STORE = re.compile(r"\[(?P<reg>%r\d+)(?:\+(?P<off>-?\d+))?\],\s*\{?(?P<vals>[^}]*)\}?")


def byte_permute(a: np.ndarray, b: np.ndarray, selector: int) -> np.ndarray:
    """PTX prmt.b32 (default mode): byte i of the result is byte (selector's nibble
    i & 7) of the 8 bytes b:a (a lowest), or that byte's sign replicated when the
    nibble's bit 3 is set."""
    both = (b.astype(np.int64) << 32) | a
    out = np.zeros_like(a)
    for i in range(4):
        nibble = selector >> (4 * i) & 0xF
        byte = both >> (8 * (nibble & 7)) & 0xFF
        if nibble & 8:
            byte = np.where(byte & 0x80, 0xFF, 0)
        out |= byte << (8 * i)
    return out


def stored_offsets(ptx: str) -> dict[int, int]:
    """Value stored -> element offset (byte address / 4), for every lane, by
    evaluating the kernel's straight-line PTX (global_smem at 0). An instruction
    this evaluator does not know fails the test rather than being skipped."""
    body = ptx.split("$L__func_begin0:")[1].split("ret;")[0]
    regs: dict[str, np.ndarray] = {}
    lanes = np.arange(32, dtype=np.int64)
    stored: dict[int, int] = {}

    def value(arg: str) -> np.ndarray:
        arg = arg.strip()
        special = {"%tid.x": lanes, "global_smem": np.zeros(32, dtype=np.int64)}
        if arg in special:
            return special[arg]
        return regs[arg] if arg.startswith("%") else np.full(32, int(arg, 0), dtype=np.int64)

    for m in _LINE.finditer(re.sub(r"//[^\n]*|\.loc[^\n]*", "", body)):
        op, args = m["op"], m["args"]
        if op.startswith("st.shared"):
            s = _STORE.match(args.strip())
            assert s, args
            base = regs[s["reg"]] + int(s["off"] or 0)
            for k, reg in enumerate(s["vals"].split(",")):
                for address, element in zip(base + 4 * k, value(reg)):
                    stored[int(element)] = int(address) // 4
            continue
        dst, *srcs = [a.strip() for a in args.split(",")]
        name, kind = op.split(".")[0], op.split(".")[1]
        mask = (1 << int(kind[1:])) - 1 if kind[1:].isdigit() else 0xFFFFFFFF
        if name in ("mov", "cvt"):  # cvt.uN.uM: to N bits
            regs[dst] = value(srcs[0]) & mask
        elif op == "mad.lo.s32":
            regs[dst] = (value(srcs[0]) * value(srcs[1]) + value(srcs[2])) & mask
        elif op == "prmt.b32":
            regs[dst] = byte_permute(value(srcs[0]), value(srcs[1]), int(srcs[2].rstrip("U"), 0))
        else:
            operation, width = op.rsplit(".", 1)
            assert operation in _OPS, f"PTX instruction {op} is not evaluated here"
            bits = (1 << int(width[1:])) - 1
            regs[dst] = _OPS[operation](value(srcs[0]), value(srcs[1])) & bits
    return stored


def random_padded_cases(count: int) -> list:
    """(pairs, shape, order or 'shuffled') of random padded layouts: one or two
    pairs with intervals 2..2048 and paddings 1..16, an identity of either order
    or one-bit bases shuffled."""
    rng, cases = random.Random("padded lowering"), []
    for _ in range(count):
        shape = rng.choice([(8, 8), (16, 32), (32, 64), (64, 64), (4, 128), (128, 8)])
        intervals = rng.sample([1 << k for k in range(1, 12)], rng.choice([1, 2]))
        pairs = [[i, rng.choice([1, 2, 4, 8, 16])] for i in intervals]
        cases.append((pairs, shape, rng.choice([[1, 0], [0, 1], "shuffled"])))
    return cases


PADDED_CASES = [
    ([[8, 1]], (8, 4), None),
    ([[32, 8]], (32, 64), [1, 0]),
    ([[64, 4], [16, 1]], (32, 32), [0, 1]),
    ([[4, 2]], (16, 16), "shuffled"),
    ([[128, 16], [8, 1]], (64, 32), "shuffled"),
    ([[2, 1], [4, 2]], (8, 8), [1, 0]),
] + random_padded_cases(12)


@pytest.mark.parametrize("pairs,shape,order", PADDED_CASES)
def test_padded_offsets_are_where_tritons_lowering_stores(triton, tmp_path, pairs, shape, order):
    """Read as pasted (the identity as {order, shape}, other bases as {offset, block})."""
    from triton.experimental.gluon import language as gl

    if order is None:  # Gluon's docstring example
        bases = [[0, 1], [0, 2], [2, 0], [4, 0], [1, 0]]
    elif order == "shuffled":
        bases = unit_bases(shape)
        random.Random(str(shape)).shuffle(bases)
    else:
        bases = gl.PaddedSharedLayout.with_identity_for(pairs, list(shape), order).offset_bases
    shared = gl.PaddedSharedLayout(pairs, bases, [], list(shape))
    stored = stored_offsets(compiled_ptx(tmp_path, shared, shape))
    body = (
        f"order = {order}, shape = {list(shape)}"
        if isinstance(order, list)
        else f"offset = {bases}, block = []"
    )
    text = padded_shared([tuple(p) for p in pairs], body)
    table = read(f"dtype i32\nlayout L = {text} shape {shape}").layouts["L"]
    rows, cols = shape
    assert len(stored) == rows * cols
    for r in range(rows):
        for c in range(cols):
            assert table.table[r + rows * c] == stored[r * cols + c], (r, c)


# -- what Triton rejects, the oracle refuses ---------------------------------------------

REJECTED = [
    # Triton's verifier: padded bases move along one dimension by a power of two.
    "#ttg.padded_shared<[8:+1] {offset = [[0, 1], [1, 1], [2, 0]], block = []}>",
    "#ttg.padded_shared<[8:+1] {offset = [[0, 1], [0, 3], [1, 0]], block = []}>",
    # Triton's parser: the offset form names block too.
    "#ttg.padded_shared<[8:+1] {offset = [[0, 1], [0, 2], [1, 0]]}>",
    "#ttg.padded_shared<[8:+3] {order = [1, 0], shape = [2, 4]}>",
    "#ttg.padded_shared<[8:+1, 8:+2] {order = [1, 0], shape = [2, 4]}>",
    # shared_linear: the alignment after the braces, and only there.
    "#ttg.shared_linear<{offset = [[0, 1], [0, 2], [1, 0]]}>",
    "#ttg.shared_linear<{offset = [[0, 1], [0, 2], [1, 0]], alignment = 16}, alignment = 16>",
]
# Both printed forms at once: Triton's parser reports "Unexpected attribute" and
# builds the offset form; verify used to read the identity here (issue 15 item 5).
MIXED = "#ttg.padded_shared<[8:+1] {offset = [[1, 0], [0, 1], [0, 2]], block = [], order = [1, 0]}>"


def rejected_by_verify_and_the_oracle(encoding: str, memdesc: str):
    text = f"dtype f16\n#shared = {encoding}\nlayout L = {memdesc}\n"
    with pytest.raises(SpecError, match="t.spec:2:1: error: |t.spec:3:12: error: "):
        parse_text(text, "t.spec")
    with pytest.raises(OracleRefusal):
        read(text)


@pytest.mark.parametrize("encoding", REJECTED)
def test_what_tritons_parser_rejects_verify_and_the_oracle_reject(triton, tmp_path, encoding):
    memdesc = "!ttg.memdesc<2x4xf16, #shared, #ttg.shared_memory, mutable>"
    with pytest.raises(RuntimeError):
        parsed_by_triton(tmp_path, [f"#shared = {encoding}"], memdesc)
    rejected_by_verify_and_the_oracle(encoding, memdesc)


def test_both_padded_forms_at_once_are_rejected_not_read_as_the_identity(triton, tmp_path, capfd):
    memdesc = "!ttg.memdesc<2x4xf16, #shared, #ttg.shared_memory, mutable>"
    layout, _ = parsed_by_triton(tmp_path, [f"#shared = {MIXED}"], memdesc)
    assert "Unexpected attribute" in capfd.readouterr().err
    assert layout.offset_bases == [[1, 0], [0, 1], [0, 2]]  # not the identity of order
    rejected_by_verify_and_the_oracle(MIXED, memdesc)


@pytest.mark.parametrize(
    "text,message",
    [
        ("layout L = #nope shape (8, 8)", "no alias defined above"),
        ("#s = #ttg.shared_memory\n#s = #ttg.shared_memory", "defined twice"),
        ("layout L = !ttg.memdesc<8x8xf16, #ttg.shared_memory, #ttg.shared_memory>", "memory"),
        (f"layout L = !ttg.memdesc<8x8xf16, {SWIZZLED}, #ttg.tensor_memory>", "not #ttg.shared"),
        (f"layout L = !ttg.memdesc<8x8xf16, {SWIZZLED}, #ttg.shared_memory, 16x8>", "a view"),
        (f"layout L = !ttg.memdesc<8x8xf7, {SWIZZLED}, #ttg.shared_memory>", "element type"),
        (f"dtype f32\nlayout L = !ttg.memdesc<8x8xf16, {SWIZZLED}, #ttg.shared_memory>", "dtype"),
    ],
)
def test_the_oracle_refuses_what_it_does_not_model(triton, text, message):
    with pytest.raises(OracleRefusal, match=message):
        read(text + "\n")


def test_a_memdesc_gives_the_dtype_when_the_spec_has_none(triton):
    spec = read(f"layout L = !ttg.memdesc<64x64xbf16, {SWIZZLED}, #ttg.shared_memory>\n")
    assert spec.dtype == "bf16"


# -- verify against the oracle -------------------------------------------------------

PADDED_DOCSTRING = (
    "#ttg.padded_shared<[8:+1, 16:+4] {offset = [[0, 1], [0, 2], [2, 0], [4, 0], [1, 0]], "
    "block = []}>"
)
LINEAR_8X4 = (
    "#ttg.shared_linear<{offset = [[0, 1], [0, 2], [1, 0], [2, 0], [4, 0]]}, alignment = 16>"
)
HAND_WRITTEN = [
    f"""dtype f16
#shared = {SWIZZLED}
#smem = #ttg.shared_memory
layout A = !ttg.memdesc<64x64xf16, #shared, #smem, mutable>
layout B = #shared shape (64, 64)
layout C = {SWIZZLED} shape (64, 64)
access rd = ldmatrix.x4 A(lane % 16, 8 * (lane / 16) + 16 * k) for k in 0..4
check conflict_free rd
check equivalent A, B
check equivalent A, C
""",
    """#p = #ttg.padded_shared<[32:+8] {order = [1, 0], shape = [64, 64]}>
layout A = !ttg.memdesc<64x64xf16, #p, #ttg.shared_memory, mutable, 64x64>
access rd = ld.shared.v4.b32 A(lane, 8 * k) for k in 0..2
check conflict_free rd
check bijective A
""",
    f"""dtype f32
buffer align 128 stages 2 stage_bytes 160
layout A = {PADDED_DOCSTRING} shape (8, 4)
layout S = {LINEAR_8X4} shape (8, 4)
access rd = ld.shared.b32 A(lane / 4, lane % 4)
access r2 = st.shared.b32 S(lane / 4, lane % 4)
check conflict_free rd
check max_ways <= 1 r2
check wavefronts == 1 r2
check bijective A
check bijective S
check equivalent A, S
""",
    f"""#n = {NVMMA}
layout W = !ttg.memdesc<64x64xf16, #n, #ttg.shared_memory, mutable>
access rd = ldmatrix.x4 W(lane % 16, 8 * (lane / 16) + 16 * k) for k in 0..4
check conflict_free rd
""",
]


@pytest.mark.parametrize("text", HAND_WRITTEN)
def test_verify_and_the_oracle_agree_on_each_form(triton, text):
    bad, counts = compare(text)
    assert not bad and not counts["one_sided"] and not counts["rejected"], (bad, counts)
    assert counts["comparisons"] >= 2


@pytest.mark.parametrize("seed", range(40))
def test_verify_and_the_oracle_agree_on_random_ttgir_specs(triton, seed):
    """Random shared_linear bases, padded pairs and bases, aliases, memdescs, and
    `equivalent` between writings: every verdict and figure compared."""
    text = ttgir_family(random.Random(f"ttgir:{seed}"))
    bad, counts = compare(text)
    assert not bad and not counts["one_sided"], (text, bad, counts)
