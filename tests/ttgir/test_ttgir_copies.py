"""`verify ttgir` on cp.async (``ttg.async_copy_global_to_local``, issue 18 item 3):
the copy's instruction as Triton 3.9 lowers it, its global source traced from the
pointer tensor, runtime strides quantified over their divisibility, and pointers
that cannot be traced listed not modelled with why."""

import math
import os
import random
import re
from dataclasses import replace

import conftest
import pytest

pytest.importorskip("triton")

from benchmarks import triton_compile  # noqa: E402
from benchmarks.triton_compile import TILE_SUM  # noqa: E402
from verify.engines.runner import run_spec  # noqa: E402
from verify.notation import triton_lowering as lowering  # noqa: E402
from verify.smt.solve import Status  # noqa: E402
from verify.spec.parser import parse_text  # noqa: E402
from verify.ttgir import specgen
from verify.ttgir.module import run_kernel  # noqa: E402

KERNELS = "specs/triton_kernels"
COPY = "async_copy_global_to_local"


def compile_ttgir(path: str, name: str, signature: dict, constants: dict, hints: dict) -> str:
    """A kernel's sm_80 TTGIR, compiled here on the CPU; `hints`: parameter ->
    tt.divisibility (as Triton's launcher gives them)."""
    fn = getattr(triton_compile.load(path, f"_copies_{name}"), name)
    attrs = triton_compile.divisible(signature, hints)
    source = triton_compile.source(fn, signature, constants, attrs)
    return triton_compile.compile_for(source, 80, {"num_warps": 4}).asm["ttgir"]


def by_property(checker) -> dict:
    return {r.property: r for r in checker.results}


# -- the catalog's tile_sum, end to end ------------------------------------------------


def test_two_rows_per_quarter_warp_share_source_banks_for_some_strides():
    """BLOCK_N = 32 fp16: a quarter-warp's 8 lanes copy two 64-byte rows; their
    sources are stride_xm * 2 bytes apart, a multiple of 32 bytes (divisibility
    16), so for strides that are multiples of 64 elements both rows read banks
    0-15: 2 wavefronts a phase, 8 (ideal 4). Rule C: exact."""
    checker = run_kernel(f"{KERNELS}/tile_sum_32.sm80.ttgir", conftest.WORK)
    found = by_property(checker)
    copy = found[f"conflict_free {COPY} %acc_54"]
    assert (copy.status, copy.wavefronts, copy.ideal_wavefronts) == (Status.REFUTED, 8, 4)
    assert (copy.file, copy.line) == ("specs/triton_kernels/tile_sum.py", 18)
    assert copy.fidelity is not None and copy.fidelity.startswith("exact (rule C")
    assert copy.counterexample is not None
    assert copy.counterexample.instance["stride_xm_div16"] == 0
    assert found[f"in_bounds {COPY} %acc_54 from global"].status == Status.PROVED
    assert found[f"aligned 16 {COPY} %acc_54 from global"].status == Status.PROVED
    assert {(d["op"], d["instruction"], d["per_warp"]) for d in checker.copies} == {
        (f"{COPY} %acc_{n}", "cp.async.ca.16", 1) for n in (21, 27, 54)
    }


def test_one_row_per_quarter_warp_is_conflict_free_for_every_stride():
    checker = run_kernel(f"{KERNELS}/tile_sum_64.sm80.ttgir", conftest.WORK)
    copies = [r for r in checker.results if r.property.startswith(f"conflict_free {COPY}")]
    assert len(copies) == 3
    for r in copies:
        assert (r.status, r.wavefronts, r.ideal_wavefronts) == (Status.PROVED, 4, 4)
        assert r.fidelity is not None and r.fidelity.startswith("exact (rule C")
    assert {(d["instruction"], d["per_warp"]) for d in checker.copies} == {("cp.async.ca.16", 2)}


def test_the_cli_reports_the_copy_at_the_kernels_line():
    import subprocess
    import sys

    out = subprocess.run(
        [sys.executable, "-m", "verify.cli", "ttgir", f"{KERNELS}/tile_sum_32.sm80.ttgir"],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 1
    assert (
        f"specs/triton_kernels/tile_sum.py:18: REFUTED  conflict_free {COPY} %acc_21  ["
        in out.stdout
    )
    assert "model: exact (rule C: source-to-destination bank edges" in out.stdout


# -- runtime strides: quantified over their divisibility --------------------------------


def _copy_line(spec_text: str, access: str) -> str:
    return next(line for line in spec_text.splitlines() if line.startswith(f"access {access} "))


def test_the_stride_residue_loop_agrees_with_every_actual_stride():
    """Differential: the spec quantifies stride_xm = 16 * v over v in 0..4 (bytes
    modulo 128). Substituting every actual stride 0, 16, ..., 496 elements (no
    reduction) into the same access gives the same worst case, and each stride
    costs what its residue costs."""
    checker = run_kernel(f"{KERNELS}/tile_sum_32.sm80.ttgir", conftest.WORK)
    copy = checker.copies[0]
    text, access = copy["spec"].text, copy["access"]
    line = _copy_line(text, access)
    assert "stride_xm_div16 in 0..4" in line and "* 16 * stride_xm_div16" in line
    per_residue = {v: _cost(text, access, line, f"{16 * v}", 1 << 16) for v in range(4)}
    for stride in range(0, 512, 16):
        assert _cost(text, access, line, str(stride), 1 << 16) == per_residue[(stride // 16) % 4]
    quantified = next(r for r in checker.results if r.property == f"conflict_free {copy['op']}")
    assert quantified.wavefronts == max(per_residue.values()) == 8
    assert per_residue == {0: 8, 1: 8, 2: 4, 3: 8}


def _cost(text: str, access: str, line: str, stride: str, size: int) -> int:
    """The worst wavefronts of `access` with the residue loop replaced by one stride."""
    fixed = line.replace("16 * stride_xm_div16", stride).replace(", stride_xm_div16 in 0..4", "")
    layout = re.search(r"from (G\w+)\(", line)
    assert layout is not None
    body = [
        (f"layout {layout[1]} = {size}:1" if ln.startswith(f"layout {layout[1]} ") else ln)
        for ln in text.splitlines()
        if not ln.startswith(("access ", "check conflict_free"))
    ]
    spec = "\n".join(body + [fixed, f"check conflict_free {access}"]) + "\n"
    results = run_spec(parse_text(spec, "<stride>"), 30)
    wavefronts = next(r for r in results if r.property == f"conflict_free {access}").wavefronts
    assert wavefronts is not None, "a decided copy check has its figure"
    return wavefronts


@pytest.mark.parametrize(
    ("stride", "status", "wavefronts"),
    [(96, Status.PROVED, 4), (64, Status.REFUTED, 8), (80, Status.REFUTED, 8)],
)
def test_a_constant_stride_decides_the_verdict(stride, status, wavefronts):
    """stride_xm as a constexpr: 96 elements = 192 bytes puts the second row 64
    bytes (16 banks) past the first modulo 128 (disjoint); 64 puts it on the same
    banks; 80 (160 bytes, 32 modulo 128) on half of them, which costs as much."""
    ttgir = compile_ttgir(
        f"{KERNELS}/tile_sum.py",
        "tile_sum",
        {**TILE_SUM, "stride_xm": "constexpr"},
        {"stride_xm": stride, "BLOCK_M": 32, "BLOCK_N": 32},
        {"x_ptr": 16, "out_ptr": 16},
    )
    checker = run_kernel(ttgir, conftest.WORK)
    copies = [r for r in checker.results if r.property.startswith(f"conflict_free {COPY}")]
    assert copies and all((r.status, r.wavefronts) == (status, wavefronts) for r in copies)
    assert not any("_div" in _copy_line(d["spec"].text, d["access"]) for d in checker.copies)


def test_a_weaker_divisibility_hint_quantifies_over_more_residues():
    """tt.divisibility 8 on stride_xm: 16-byte steps, so 8 residues modulo 128
    bytes; the copies still vectorise to 16 bytes (rows stay 16-byte aligned)."""
    ttgir = compile_ttgir(
        f"{KERNELS}/tile_sum.py",
        "tile_sum",
        TILE_SUM,
        {"BLOCK_M": 32, "BLOCK_N": 32},
        {"x_ptr": 16, "out_ptr": 16, "stride_xm": 8},
    )
    checker = run_kernel(ttgir, conftest.WORK)
    lines = [_copy_line(d["spec"].text, d["access"]) for d in checker.copies]
    assert lines and all("stride_xm_div8 in 0..8" in line for line in lines)
    assert {d["instruction"] for d in checker.copies} == {"cp.async.ca.16"}
    copies = [r for r in checker.results if r.property.startswith(f"conflict_free {COPY}")]
    assert all((r.status, r.wavefronts) == (Status.REFUTED, 8) for r in copies)


# -- the width of a copy without the pipeliner's hint: AxisInfo's, bounded both ways ------


@pytest.mark.parametrize("hint", [16, 8, 4, 2])
def test_a_gluon_copy_width_follows_the_stride_divisibility_as_in_the_ptx(hint):
    """Gluon's async_load carries no contiguity hint: Triton's AxisInfo proves the
    rows 2 * hint bytes aligned (up to 16), so 16, 16, 8 and 4-byte copies; verify's
    lower bound of AxisInfo and its upper bound from the traced rows meet there,
    and the instruction is the PTX's."""
    fn = triton_compile.load(f"{KERNELS}/gluon_async_copy.py", "_gluon_copy").async_copy_rows
    signature = {"x_ptr": "*fp16", "y_ptr": "*fp16", "stride": "i32"}
    attrs = triton_compile.divisible(signature, {"x_ptr": 16, "y_ptr": 16, "stride": hint})
    source = triton_compile.source(fn, signature, {}, attrs)
    compiled = triton_compile.compile_for(source, 80, {"num_warps": 4})
    emitted = {
        f"cp.async.{kind}.{int(size, 0)}"
        for kind, size in re.findall(
            r"cp\.async\.(c[ag])\.shared\.global \[[^\]]*\], \[[^\]]*\], (0x[0-9a-f]+)",
            compiled.asm["ptx"],
        )
    }
    checker = run_kernel(compiled.asm["ttgir"], conftest.WORK)
    assert {d["instruction"] for d in checker.copies} == emitted
    assert emitted == {
        {16: "cp.async.cg.16", 8: "cp.async.cg.16", 4: "cp.async.ca.8", 2: "cp.async.ca.4"}[hint]
    }


# -- what is not traced stays UNKNOWN, with why -----------------------------------------

GATHER = """
import triton
import triton.language as tl


@triton.jit
def gather_rows(x_ptr, idx_ptr, out_ptr, stride_xm, n_tiles, BLOCK_M: tl.constexpr,
                BLOCK_N: tl.constexpr):
    rows = tl.load(idx_ptr + tl.arange(0, BLOCK_M))
    cols = tl.arange(0, BLOCK_N)
    ptrs = x_ptr + rows[:, None] * stride_xm + cols[None, :]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for _ in tl.range(0, n_tiles, num_stages=3):
        acc += tl.load(ptrs, cache_modifier=".ca").to(tl.float32)
        ptrs += BLOCK_M * stride_xm
    tl.store(out_ptr + tl.arange(0, BLOCK_M)[:, None] * BLOCK_N + cols[None, :], acc)
"""


def test_a_gathered_pointer_is_listed_not_modelled_with_the_reason(tmp_path):
    path = tmp_path / "gather.py"
    path.write_text(GATHER)
    signature = {
        "x_ptr": "*fp16",
        "idx_ptr": "*i32",
        "out_ptr": "*fp32",
        "stride_xm": "i32",
        "n_tiles": "i32",
        "BLOCK_M": "constexpr",
        "BLOCK_N": "constexpr",
    }
    ttgir = compile_ttgir(
        str(path),
        "gather_rows",
        signature,
        {"BLOCK_M": 32, "BLOCK_N": 64},
        {"x_ptr": 16, "stride_xm": 16},
    )
    checker = run_kernel(ttgir, conftest.WORK)
    listed = [r for r in checker.results if r.property.startswith(f"not modelled: {COPY}")]
    assert len(listed) == 3 and not checker.copies
    for r in listed:
        assert r.status == Status.UNKNOWN and r.line == 14
        assert "cannot be traced: tt.load computes the pointer" in r.reason
    assert not any(COPY in r.property and r.status != Status.UNKNOWN for r in checker.results)


def test_offsets_that_wrap_by_less_than_128_bytes_are_not_modelled():
    """The tutorial matmul's B: (pid_n * 128 + arange) % N with N a multiple of 16
    and unit stride wraps by multiples of 32 bytes, so its banks depend on N; A's
    (offs_am % M) * stride_am wraps by multiples of 16 * 16 * 2 bytes, nothing
    modulo 128, and is modelled."""
    checker = run_kernel(f"{KERNELS}/matmul.sm80.ttgir", conftest.WORK)
    found = by_property(checker)
    b = found[f"not modelled: {COPY} %b_156"]
    assert "wrap (arith.remsi) by multiples of 32 bytes" in b.reason
    a = found[f"conflict_free {COPY} %a_148"]
    assert a.status == Status.UNKNOWN and "bound G" in a.reason
    assert a.fidelity is not None and a.fidelity.startswith("upper bound")


CATALOG_TTGIR = sorted(f for f in os.listdir(KERNELS) if f.endswith(".ttgir"))


@pytest.mark.parametrize("name", CATALOG_TTGIR)
def test_catalog_cg_copies_are_decided_by_rule_s_or_say_why_not(name):
    """Every .cg copy of the catalog's kernels is decided by rule S on sources
    exact up to the base (attention, gluon_async_copy), or, where the trace keeps
    them modulo 128 bytes only (matmul's A: offsets wrapped by % M), UNKNOWN by
    bound G with the copy and the reason named; never REFUTED by bound G."""
    checker = run_kernel(f"{KERNELS}/{name}", conftest.WORK)
    found = by_property(checker)
    for copy in (d for d in checker.copies if ".cg." in d["instruction"]):
        r = found[f"conflict_free {copy['op']}"]
        assert r.fidelity is not None, r.property
        if r.status == Status.UNKNOWN:
            assert r.fidelity.startswith("upper bound (bound G"), r.fidelity
            assert "(verify ttgir: the offsets wrap (arith.remsi" in r.reason, r.reason
            assert name.startswith("matmul.")
        else:
            assert "rule S" in r.fidelity, r.fidelity


def test_a_wrapped_cg_source_keeps_bound_g_and_says_why():
    checker = run_kernel(f"{KERNELS}/matmul.sm90.ttgir", conftest.WORK)
    copies = [r for r in checker.results if r.property.startswith(f"conflict_free {COPY}")]
    assert copies
    for r in copies:
        assert r.status == Status.UNKNOWN and r.fidelity is not None
        assert r.fidelity.startswith("upper bound (bound G"), r.fidelity
        assert "known modulo 128 bytes only" in r.reason and "wrap" in r.reason, r.reason


def test_cg_copies_of_attention_are_refuted_by_rule_s_at_a_global_base():
    """K and V tiles of 64 halves per row (128 bytes), constant row stride: a row
    is one line when the base is line-aligned, two otherwise; rule S, exact, 24
    wavefronts (ideal 4) at global base 32 bytes, where bound G said 32."""
    checker = run_kernel(f"{KERNELS}/attention.sm80.ttgir", conftest.WORK)
    copies = [r for r in checker.results if r.property.startswith(f"conflict_free {COPY}")]
    assert len(copies) == 6
    for r in copies:
        assert (r.status, r.wavefronts) == (Status.REFUTED, 24), r.property
        assert r.fidelity is not None and r.fidelity.startswith("exact (rule S")
        assert r.counterexample is not None and r.counterexample.instance["gbase"] % 128


# -- the lowering rule and the source's reduction, unit by unit ---------------------------


def _row_cvt() -> lowering.Cvt:
    """8 consecutive fp16 per thread, lanes 8 apart, warps 256 apart."""
    return lowering.Cvt((1, 2, 4), (8, 16, 32, 64, 128), (256, 512), ((0, 1), (0, 2), (0, 4)))


@pytest.mark.parametrize(
    ("hint", "bound", "cache", "instruction"),
    [
        (8, 8, "", "cp.async.cg.16"),
        (8, 8, "ca", "cp.async.ca.16"),
        (4, 4, "cg", "cp.async.ca.8"),
        (2, 2, "", "cp.async.ca.4"),
        (16, 16, "", "cp.async.cg.16"),
    ],
)
def test_copy_width_and_cache_operator(hint, bound, cache, instruction):
    assert lowering.copy_lowering(_row_cvt(), 16, hint, bound, cache).instruction == instruction


def test_copy_width_undecided_or_refused():
    undecided = lowering.copy_lowering(_row_cvt(), 16, 1, 8, "")
    assert undecided.instruction is None and "AxisInfo" in undecided.reason
    narrow = lowering.copy_lowering(_row_cvt(), 16, 1, 1, "")
    assert narrow.instruction is None and "4 bytes at least" in narrow.reason


def test_exact_sources_keep_constants_and_split_the_stride():
    """Row stride s (hint 16, fp16: 32-byte steps) over 4 rows of 8 halves:
    constants spread 7 halves = 14 bytes, so strides below 142 bytes are each
    kept (a in 0..5) and 4 more reach every residue modulo 128; a sign loop
    mirrors the rows for negative strides."""
    copy = {"dims": {"0": [[1, ["s"]]], "1": [[1, []]]}, "wraps": [], "params": {"s": 16}}
    address, size, loops = specgen.exact_source_address(copy, ["r", "c"], [4, 8], 2)
    assert address == "(c) * 1 + ((r) ^ (3 * s_neg)) * 16 * s_div16"
    assert loops == [("s_div16", 9), ("s_neg", 2)]
    assert size == 7 + 16 * 8 * 3 + 1
    constant = {"dims": {"0": [[64, []]], "1": [[1, []]]}, "wraps": [], "params": {}}
    assert specgen.exact_source_address(constant, ["r", "c"], [4, 8], 2)[:2] == (
        "(r) * 64 + (c) * 1",
        64 * 3 + 7 + 1,
    )


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"wraps": [256]}, "wrap"),
        ({"dims": {"0": [[1, ["s"]]], "1": [[1, ["t"]]]}}, "more than one runtime stride"),
        ({"dims": {"0": [[-1, []]]}}, "negative"),
        ({"dims": {"0": [[1, ["s", "t"]]]}}, "product"),
    ],
)
def test_sources_not_written_exactly_say_why(change, reason):
    copy = {
        "dims": {"0": [[1, ["s"]]], "1": [[1, []]]},
        "wraps": [],
        "params": {"s": 16, "t": 16},
        **change,
    }
    with pytest.raises(specgen.NotExact, match=reason):
        specgen.exact_source_address(copy, ["r", "c"], [4, 8], 2)


def test_a_base_pointer_hinted_beyond_16_bytes_leaves_the_base_residue_open():
    assert specgen.base_residues_known({"base": ["x_ptr", 16]}, 16) is None
    assert specgen.base_residues_known({"base": ["x_ptr", None]}, 16) is None
    assert "tt.divisibility 128" in (specgen.base_residues_known({"base": ["x", 128]}, 16) or "")
    assert "not built from one pointer" in (specgen.base_residues_known({"base": None}, 16) or "")


def test_source_terms_are_reduced_modulo_128_bytes():
    copy = {
        "dims": {"0": [[1, ["s"]]], "1": [[1, []]]},
        "wraps": [64],
        "params": {"s": 16},
    }
    address, size, loops = specgen.source_address(copy, ["r", "c"], [4, 8], 2)
    assert (address, loops) == ("(r) * 16 * s_div16 + (c) * 1", [("s_div16", 4)])
    assert size == 16 * 3 * 3 + 7 + 1
    wide = {**copy, "params": {"s": 64}}
    assert specgen.source_address(wide, ["r", "c"], [4, 8], 2)[0] == "(c) * 1"
    with pytest.raises(ValueError, match="wrap"):
        specgen.source_address({**copy, "wraps": [16]}, ["r", "c"], [4, 8], 2)
    with pytest.raises(ValueError, match="product"):
        specgen.source_address({**copy, "dims": {"0": [[1, ["s", "t"]]]}}, ["r"], [4], 2)


# -- differential: the traced form against concrete evaluation of the TTGIR ------------


def _divide(a, b):
    """arith.divsi: the quotient rounded toward zero."""
    import numpy as np

    return np.sign(a) * np.sign(b) * (np.abs(a) // np.abs(b))


class _Concrete:
    """Evaluates the integer and pointer values of a parsed TTGIR module with numpy,
    for drawn parameter values and program id; written apart from
    verify.ttgir.pointers (which reasons symbolically) to check it. Loop-carried
    values take their initial value (iteration 0); a loop's induction variable, a
    scalar block argument, takes a drawn value."""

    BINARY = {
        "arith.addi": lambda a, b: a + b,
        "tt.addptr": lambda a, b: a + b,
        "arith.subi": lambda a, b: a - b,
        "arith.muli": lambda a, b: a * b,
        "arith.divsi": _divide,
        "arith.remsi": lambda a, b: a - _divide(a, b) * b,
        "arith.minsi": lambda a, b: a if a < b else b,
    }

    def __init__(self, defs: dict, loops: dict, values: dict):
        self.defs, self.loops, self.values = defs, loops, dict(values)

    def __call__(self, value):
        import numpy as np

        vid = value.id()
        if vid not in self.values:
            if vid in self.loops:
                self.values[vid] = self(self.loops[vid][0])
            elif vid not in self.defs and not str(value.get_type()).startswith("tensor<"):
                self.values[vid] = self.values["induction"]
            else:
                self.values[vid] = self._op(self.defs[vid], value, np)
        return self.values[vid]

    def _op(self, op, value, np):
        name, operand = op.get_name(), op.get_operand
        shape = value.get_shape() if str(value.get_type()).startswith("tensor<") else None
        if name == "tt.make_range":
            return np.arange(op.get_int_attr("start"), op.get_int_attr("end"), dtype=np.int64)
        if name == "arith.constant":
            return (
                np.full(shape, op.get_constant_value(), dtype=np.int64)
                if shape
                else op.get_constant_value()
            )
        if name in ("tt.get_program_id", "tt.get_num_programs"):
            return self.values[name]
        if name == "tt.splat":
            return np.full(shape, self(operand(0)), dtype=np.int64)
        if name == "tt.expand_dims":
            return np.expand_dims(self(operand(0)), op.get_int_attr("axis"))
        if name == "tt.broadcast":
            return np.broadcast_to(self(operand(0)), shape)
        if name in ("arith.extsi", "ttg.convert_layout"):
            return self(operand(0))
        return self.BINARY[name](self(operand(0)), self(operand(1)))


@pytest.mark.parametrize(
    "name", ["matmul.sm80", "softmax.sm80", "attention.sm80", "tile_sum_32.sm80"]
)
def test_the_traced_source_is_the_pointer_tensor_modulo_128_bytes(name):
    """For drawn parameters (each a multiple of its tt.divisibility) and program
    ids, every copy's pointer tensor evaluated op by op equals the traced form
    modulo 128 bytes, up to one offset for the whole tensor; where the trace
    kept a wrap it cannot drop, modulo the wrap's divisor."""
    import numpy as np

    path = f"{KERNELS}/{name}.ttgir"
    found, copies, signatures, (defs, args, loops), alive = _walk(path)
    draw = random.Random(name)
    for _ in range(4):
        params = {n: (d or 1) * draw.randrange(1, 64) for n, d in signatures[0]}
        values = {vid: params[n] for vid, (n, _) in args.items()}
        values.update(
            {
                "tt.get_program_id": draw.randrange(64),
                "tt.get_num_programs": 64,
                "induction": draw.randrange(64),
            }
        )
        evaluate = _Concrete(defs, loops, values)
        for op, entry in zip(copies, found):
            copy, elem = entry["copy"], 2 if "f16" in entry["memdesc"]["element"] else 4
            actual = np.asarray(evaluate(op.get_operand(0)), dtype=np.int64)
            grid = np.indices(actual.shape)
            traced = sum(
                k * np.prod([params[p] for p in ps], dtype=np.int64) * grid[int(d)]
                for d, monos in copy["dims"].items()
                for k, ps in monos
            )
            moved = (actual - actual.flat[0]) - (traced - traced.flat[0])
            wraps = [g for g in copy["wraps"] if (g * elem) % 128]
            modulus = min(wraps) if wraps else 128 // elem
            assert (moved % modulus == 0).all(), (name, entry["name"], params)


def _walk(path: str):
    """(the extractor's copy entries, Triton's copy ops in the same order, the
    kernel's parameter hints, (defs, args, loops), the parsed module) of a file."""
    from triton._C.libtriton import ir

    from verify.ttgir import extract
    from verify.ttgir.module import read_module

    found = [op for op in read_module(path)[1]["ops"] if op["op"] == f"ttg.{COPY}"]
    context = ir.context()
    ir.load_dialects(context)
    walked: list = []
    module = ir.parse_mlir_module(path, context)
    module.walk(walked.append)
    with open(path) as f:
        signatures = extract._signatures(f.read())
    copies = [op for op in walked if op.get_name() == f"ttg.{COPY}"]
    assert len(copies) == len(found) > 0
    return found, copies, signatures, extract._def_use(walked, signatures), (context, module)


def test_parameter_hints_are_read_with_or_without_locations():
    from verify.ttgir.extract import _signatures

    with open(f"{KERNELS}/softmax.sm80.ttgir") as f:
        with_locs = _signatures(f.read())[0]
    assert with_locs[2:] == [
        ("input_row_stride", 16),
        ("output_row_stride", 16),
        ("n_rows", None),
        ("n_cols", None),
    ]
    bare = (
        "  tt.func public @f(%arg0: !tt.ptr<f16> {tt.divisibility = 16 : i32}, "
        "%arg1: !tt.ptr<f16, 1>, %arg2: i32 {tt.divisibility = 8 : i32}) "
        "attributes {noinline = false} {"
    )
    assert _signatures(bare) == [[("arg0", 16), ("arg1", None), ("arg2", 8)]]


@pytest.mark.parametrize("name", ["tile_sum_32.sm80", "tile_sum_64.sm80", "softmax.sm80"])
def test_the_solver_and_enumeration_agree_on_the_generated_copy_checks(name):
    """The copy checks a kernel generates, decided by z3's encoding of rule C and
    by enumerating it: the same verdicts and figures."""
    figures = {}
    for engine in ("z3", "enumeration"):
        checker = run_kernel(f"{KERNELS}/{name}.ttgir", replace(conftest.WORK, engine=engine))
        figures[engine] = {
            r.property: (r.status, r.wavefronts)
            for r in checker.results
            if r.property.startswith(f"conflict_free {COPY}")
        }
    assert figures["z3"] and figures["z3"] == figures["enumeration"]


# -- differential: exact .cg sources against the hardware rule on actual addresses -------


def _matched(pattern: str, text: str) -> re.Match:
    found = re.search(pattern, text)
    assert found is not None, (pattern, text)
    return found


def _access_parts(line: str) -> tuple[list[str], dict[str, int]]:
    """The destination coordinates and the loop ranges of a generated access line."""
    start = line.index(" B(") + 3
    depth, parts, current = 0, [], ""
    for ch in line[start:]:
        if ch == ")" and depth == 0:
            break
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if ch == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += ch
    loops = {v: int(n) for v, n in re.findall(r"(\w+) in 0\.\.(\d+)", line.split(" for ")[-1])}
    return parts + [current], loops


class _Lanes:
    """A copy's lanes, instance by instance: each lane's tensor coordinate (the
    generated access line's, evaluated here) and shared offset (bytes)."""

    def __init__(self, line: str, solve, elem: int):
        import itertools

        from verify.model.instructions import parse_instruction

        self.instr = parse_instruction(line.split(" = ", 1)[1].split(" ", 1)[0])
        coords, loops = _access_parts(line)
        names = [v for v in ("r", "warp") if v in loops]
        self.instances = []
        for values in itertools.product(*(range(loops[v]) for v in names)):
            at = [
                tuple(eval(c, {}, {"lane": lane, **dict(zip(names, values))}) for c in coords)  # noqa: S307
                for lane in range(32)
            ]
            self.instances.append((tuple(zip(*at)), [elem * solve(list(a)) for a in at]))
        self.elem = elem

    def worst(self, pointer, shared_base: int) -> int:
        """The worst rule S cost over the instances, on the real global addresses
        (the evaluated pointer tensor, bytes) and shared destinations."""
        from verify.model import bank

        worst = 0
        for index, offsets in self.instances:
            sources = [self.elem * int(a) for a in pointer[index]]
            destinations = [shared_base + o for o in offsets]
            worst = max(worst, bank.cg_cost(self.instr, destinations, sources).wavefronts)
        return worst


def _assert_large_strides_cost_their_class(costs: dict, line: str, elem: int):
    """The case split of `specgen.exact_source_address`, on actual addresses: a
    stride of at least the spec's threshold (its last 128 / gcd(step, 128) values
    of the stride loop) costs what the stride in that run with its residue costs,
    at each base, for either sign."""
    var, count = _matched(r"(\w+_div\d+) in 0\.\.(\d+)", line).groups()
    period = 128 // math.gcd(128, elem * int(var.rsplit("_div", 1)[1]))
    first = int(count) - period
    compared = 0
    for (multiple, residue), cost in costs.items():
        size = abs(multiple)
        if size >= first:
            kept = first + (size - first) % period
            same = costs.get((kept if multiple > 0 else -kept, residue))
            assert same is None or same == cost, (multiple, residue, cost, same)
            compared += same is not None and kept != size
    assert compared, "no stride above the threshold was compared with its class"


# The base pointers' residues modulo 128 that the rule S comparison below tries:
# every multiple of 16 in the marked `exhaustive` set; by default a fixed seeded
# sample of two (rule S at every stride and shared base costs about 2 s of CPU a
# residue for matmul's copies).
EVERY_RESIDUE = tuple(range(0, 128, 16))
SAMPLED_RESIDUES = tuple(sorted(random.Random("cg residues").sample(EVERY_RESIDUE, 2)))


@pytest.mark.parametrize(
    "residues",
    [
        pytest.param(SAMPLED_RESIDUES, id="sampled"),
        pytest.param(EVERY_RESIDUE, id="every", marks=pytest.mark.exhaustive),
    ],
)
@pytest.mark.parametrize("name", ["gluon_async_copy.sm80", "attention.sm80", "matmul.sm80"])
def test_cg_figures_hold_for_actual_strides_and_bases(name, residues):
    """Each .cg copy of a kernel, on the addresses its TTGIR computes for actual
    strides (every multiple of the hint from -12 to 11 times it, and large ones of
    both signs) and base pointers (far from 0, at each of `residues` modulo 128):
    rule S on those addresses never exceeds verify's figure; some actual launch
    reaches the figure verify refuted a copy with; and a copy left UNKNOWN by
    bound G (matmul's A, wrapped by % M) is one whose bound holds."""
    import numpy as np

    path = f"{KERNELS}/{name}.ttgir"
    found, copies, signatures, (defs, args, loops), alive = _walk(path)
    checker = run_kernel(path, conftest.WORK)
    results = by_property(checker)
    draw = random.Random(name)
    hints = dict(signatures[0])
    strides = [n for n, _ in signatures[0] if "stride" in n]
    multiples = list(range(-12, 12)) + [
        draw.choice((-1, 1)) * draw.randrange(64, 4096) for _ in range(4)
    ]
    seen: set[str] = set()  # copies whose access reads the same (their loop's twins)
    for decided in (d for d in checker.copies if ".cg." in d["instruction"]):
        entry = next(e for e in found if decided["op"].endswith(e["name"]))
        op = copies[found.index(entry)]
        line = _copy_line(decided["spec"].text, decided["access"])
        reads = re.sub(r"from G\w+\(", "from G(", line.split(" = ", 1)[1])
        if reads in seen:
            continue
        seen.add(reads)
        elem = 2 if "f16" in entry["memdesc"]["element"] else 4
        solve = lowering.offset_solver(
            entry["memdesc"]["shared"]["offset"], entry["memdesc"]["alloc_shape"]
        )
        lanes = _Lanes(line, solve, elem)
        align = int(_matched(r"buffer align (\d+)", decided["spec"].text)[1])
        result = results[f"conflict_free {decided['op']}"]
        assert result.status in (Status.REFUTED, Status.UNKNOWN) and result.fidelity is not None
        costs: dict[tuple[int, int], int] = {}
        for multiple in multiples if strides else [0]:
            for residue in residues:
                params = {n: (hints[n] or 1) * draw.randrange(1, 64) for n in hints}
                params.update({s: (hints[s] or 1) * multiple for s in strides})
                base = (1 << 40) + 128 * draw.randrange(1 << 10) + residue
                params[entry["copy"]["base"][0]] = base // elem  # the copy's pointer argument
                values = {vid: params[n] for vid, (n, _) in args.items()}
                # program 0 of the grid: a launch whatever M, N and K were drawn
                values.update({"tt.get_program_id": 0, "tt.get_num_programs": 1, "induction": 0})
                pointer = np.asarray(_Concrete(defs, loops, values)(op.get_operand(0)))
                costs[multiple, residue] = max(
                    lanes.worst(pointer, shared) for shared in range(0, 128, align)
                )
        worst = max(costs.values())
        assert result.wavefronts is not None and worst <= result.wavefronts
        if "_neg in" in line:
            _assert_large_strides_cost_their_class(costs, line, elem)
        if result.status == Status.UNKNOWN:
            continue
        assert result.counterexample is not None
        refuted = int(_matched(r"(\d+) wavefronts", result.counterexample.summary)[1])
        assert refuted <= worst, (decided["op"], refuted, worst)
