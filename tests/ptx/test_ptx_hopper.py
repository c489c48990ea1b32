"""wgmma descriptors and TMA copies read from the PTX (verify.ptx.hopper).

Each verdict class against an oracle written here on integers, sharing no code
with verify: CuTe's Swizzle<B,4,3> on byte addresses (bits [4, 4+B) ^= bits
[7, 7+B)) and the canonical K-major chunk layout, as CUTLASS's make_gmma_desc
builds it. The regression kernels of specs/hopper/ are the cited bugs written
from their descriptions: REFUTED as they were, PROVED as fixed.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, cast

import pytest

from verify.errors import SpecError
from verify.model.wgmma import MatrixDescriptor
from verify.ptx.check import Options, check_ptx, check_ptx_text
from verify.ptx.hopper_tma import parse_tma_map
from verify.smt.solve import Status

ROOT = Path(__file__).parents[2]
SPECS = ROOT / "specs/hopper"
DATA = ROOT / "tests/data/hopper"
MAP_128B = "dataType=FLOAT16,boxDim={64,64},swizzle=128B"
F = ", ".join(f"%f{i}" for i in range(32))


def swizzle(address: int, bits: int) -> int:
    """CuTe's Swizzle<bits,4,3> on a byte address."""
    return address ^ (((address >> 7) & ((1 << bits) - 1)) << 4)


def k_major_byte(row: int, k: int, bits: int, sbo: int) -> int:
    """Byte of f16 element (row, k) from the start of a swizzled K-major tile,
    before the XOR: rows of 16 << bits bytes, 8-row groups `sbo` apart."""
    return (row % 8) * (16 << bits) + (row // 8) * sbo + k * 2


def results(path, **options):
    return check_ptx(str(path), Options(**options))


def counterexample_of(found, prefix: str):
    """The counterexample of the first check named `prefix`; it must have one."""
    cex = next(r for r in found if r.property.startswith(prefix)).counterexample
    assert cex is not None
    return cex


def verdicts(found, prefix: str) -> list[Status]:
    return [r.status for r in found if r.property.startswith(prefix)]


def descriptor_kernel(align: int, mode: int, sbo: int, pack: bool = False) -> str:
    """Threads write a tile at offsets from its buffer; wgmma reads two k-blocks of
    it as B through descriptors of `mode` (PTX encoding) built from the buffer's
    address, as Triton does (shr, and, or) or, with `pack`, as CuTe does (the
    k-block added to the low half through mov.b64 {lo, hi})."""
    const = mode << 62 | (sbo >> 4) << 32 | 1 << 16
    lines = [
        "\tmov.u32 \t%r1, tile;",
        "\tmov.u32 \t%r2, %tid.x;",
        "\tshl.b32 \t%r3, %r2, 4;",
        "\tadd.s32 \t%r4, %r1, %r3;",
        "\tmov.b32 \t%r10, 0;",
        "\tst.shared.v4.b32 \t[%r4], {%r10, %r10, %r10, %r10};",
        "\tbar.sync \t0;",
        "\tshr.u32 \t%r30, %r1, 4;",
        "\tand.b32 \t%r31, %r30, 16383;",
        "\tcvt.u64.u32 \t%rd4, %r31;",
        f"\tor.b64 \t%rd5, %rd4, {const};",
    ]
    for kb in range(2):
        if pack:
            lines += [
                "\tmov.b64 \t{%r40, %r41}, %rd5;",
                f"\tadd.s32 \t%r42, %r40, {2 * kb};",
                f"\tmov.b64 \t%rd{8 + kb}, {{%r42, %r41}};",
            ]
        else:
            lines += [f"\tadd.s64 \t%rd{8 + kb}, %rd5, {2 * kb};"]
        lines.append(
            f"\twgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {{{F}}}, "
            f"{{%r10, %r10, %r10, %r10}}, %rd{8 + kb}, 1, 1, 1, 0;"
        )
    body = "\n".join(lines)
    return f""".version 8.0
.target sm_90a
.address_size 64
.visible .entry k()
.reqntid 128
{{
\t.reg .b32 \t%r<64>;
\t.reg .b64 \t%rd<20>;
\t.reg .f32 \t%f<40>;
\t.shared .align {align} .b8 tile[8192];
{body}
\tret;
}}
"""


# -- placement: the bases each swizzle needs (NVIDIA/Fuser#4096) ----------------------

MODES = [(3, 1, 256), (2, 2, 512), (1, 3, 1024)]  # (PTX encoding, B, repeat bytes)


@pytest.mark.parametrize("mode, bits, repeat", MODES)
@pytest.mark.parametrize("pack", [False, True])
def test_placement_needs_the_pattern_repeat(mode, bits, repeat, pack):
    sbo = 8 * (16 << bits)
    proved = check_ptx_text(descriptor_kernel(repeat, mode, sbo, pack), "k.ptx")
    assert verdicts(proved, "placement") == [Status.PROVED] * 2
    refuted = check_ptx_text(descriptor_kernel(repeat // 2, mode, sbo, pack), "k.ptx")
    assert verdicts(refuted, "placement") == [Status.REFUTED] * 2
    cex = counterexample_of(refuted, "placement")
    base, row, k = cex.instance["base"], cex.instance["row"], cex.instance["k"]
    # The oracle: the writer put the element at base + its byte at base 0; wgmma
    # reads the XOR of the absolute address.
    linear = k_major_byte(row, k, bits, sbo)
    written, read = base + swizzle(linear, bits), swizzle(base + linear, bits)
    assert written != read
    assert f"written at byte {written}" in cex.summary
    assert f"reads byte {read}" in cex.summary


def test_placement_oracle_agrees_at_every_base():
    """PROVED at a base exactly where no element of the 64x16 operand moves in the
    oracle; REFUTED bases are ones where one does."""
    for mode, bits, repeat in MODES:
        sbo = 8 * (16 << bits)
        for align in (128, 256, 512, 1024):
            if align > repeat:
                continue
            moves = any(
                swizzle(base + k_major_byte(r, k, bits, sbo), bits)
                != base + swizzle(k_major_byte(r, k, bits, sbo), bits)
                for base in range(0, 4096, align)
                for r in range(64)
                for k in range(0, 16, 8)
            )
            found = verdicts(check_ptx_text(descriptor_kernel(align, mode, sbo), "k.ptx"), "pl")
            assert found == [Status.REFUTED if moves else Status.PROVED] * 2, (mode, align)


def test_cost_is_operand_bytes_over_128():
    found = check_ptx_text(descriptor_kernel(1024, 1, 1024), "k.ptx")
    cost = [r for r in found if r.property.startswith("wavefronts")]
    assert [(r.status, r.wavefronts) for r in cost] == [(Status.PROVED, 64 * 16 * 2 // 128)] * 2
    assert all("exact" in (r.fidelity or "") for r in cost)


def test_writer_reader_of_register_stores_is_unknown():
    """st.shared writes registers: which elements they hold is not followed."""
    found = check_ptx_text(descriptor_kernel(1024, 1, 1024), "k.ptx")
    unknown = [r for r in found if r.property.startswith("writer_reader")]
    assert [r.status for r in unknown] == [Status.UNKNOWN] * 2
    assert "writes registers" in unknown[0].reason


def test_the_regression_specs():
    for name, align in (("wgmma_sw128_align1024", Status.PROVED), ("wgmma_sw128_align128", None)):
        found = results(SPECS / f"{name}.ptx")
        want = align or Status.REFUTED
        assert verdicts(found, "placement") == [want] * 2, name


# -- TMA ------------------------------------------------------------------------------


def test_tma_box_read_by_wgmma():
    found = results(SPECS / "tma_wgmma_sw128.ptx", tma_maps=(MAP_128B,))
    assert verdicts(found, "writer_reader") == [Status.PROVED] * 2
    assert verdicts(found, "aligned 128") == [Status.PROVED]


@pytest.mark.parametrize("spec", ["tma_wgmma_sbo_mismatch", "tma_wgmma_mode_mismatch"])
def test_tma_box_read_wrong(spec):
    """The element named is one the oracle puts at different bytes."""
    found = results(SPECS / f"{spec}.ptx", tma_maps=(MAP_128B,))
    assert verdicts(found, "writer_reader") == [Status.REFUTED] * 2
    cex = next(r for r in found if r.property.startswith("writer_reader")).counterexample
    row, k = cex.instance["row"], cex.instance["k"]
    written = swizzle(row * 128 + k * 2, 3)  # the box: 64 f16 rows of 128 bytes
    bits, sbo = (3, 512) if spec == "tma_wgmma_sbo_mismatch" else (2, 1024)
    read = swizzle(k_major_byte(row, k, bits, sbo), bits)
    assert written != read
    assert f"written at byte {written}, read from byte {read}" in cex.summary


def test_tma_without_a_map_is_unknown():
    found = results(SPECS / "tma_wgmma_sw128.ptx")
    unknown = [r for r in found if r.property.startswith("writer_reader")]
    assert [r.status for r in unknown] == [Status.UNKNOWN] * 2
    assert "--tma-map" in unknown[0].reason


def test_tma_base_past_the_pattern_tilelang_2379():
    spec = SPECS / "tma_ldmatrix_base.ptx"
    at_128 = results(spec, tma_maps=(MAP_128B,), shared_align=128)
    assert verdicts(at_128, "aligned 128") == [Status.PROVED]
    assert verdicts(at_128, "placement") == [Status.REFUTED]
    cex = next(r for r in at_128 if r.property.startswith("placement")).counterexample
    assert cex.instance["base"] % 1024 and "tilelang#2379" in cex.summary
    at_1024 = results(spec, tma_maps=(MAP_128B,), shared_align=1024)
    assert verdicts(at_1024, "placement") == [Status.PROVED]
    as_declared = results(spec, tma_maps=(MAP_128B,))  # .align 16
    assert verdicts(as_declared, "aligned 128") == [Status.REFUTED]


def test_tma_box_read_with_a_base_offset_from_the_address():
    """A descriptor whose base offset is PTX's (start >> 7) & 7 is decided at each
    base: right where the box starts on the 1024-byte pattern, wrong 128 bytes past
    it (the H200 read 8192 of 8192 bytes wrong there: wgmma_tma_base_h200.md)."""
    spec = SPECS / "tma_wgmma_base_offset.ptx"
    at_1024 = results(spec, tma_maps=(MAP_128B,), shared_align=1024)
    assert verdicts(at_1024, "writer_reader") == [Status.PROVED]
    at_128 = results(spec, tma_maps=(MAP_128B,), shared_align=128)
    assert verdicts(at_128, "writer_reader") == [Status.REFUTED]
    cex = counterexample_of(at_128, "writer_reader")
    base, row, k = cex.instance["base"], cex.instance["row"], cex.instance["k"]
    assert base % 1024
    written = swizzle(base + row * 128 + k * 2, 3)  # TMA: the absolute address
    plain = base + k_major_byte(row, k, 3, 1024)
    pattern_row = ((plain >> 7) - ((base >> 7) & 7)) % 8  # the base offset subtracted
    read = plain ^ pattern_row << 4
    assert written != read
    assert f"written at byte {written}, read from byte {read}" in cex.summary


BLACKWELL_KERNEL = """\
.version 8.7
.target sm_100a
.address_size 64
.visible .entry umma()
.reqntid 128
{
	.reg .b32 %r<8>;
	.reg .b64 %rd<8>;
	.shared .align 1024 .b8 tile[8192];
	mov.u32 %r1, tile;
	shr.u32 %r2, %r1, 4;
	cvt.u64.u32 %rd1, %r2;
	or.b64 %rd2, %rd1, 4611756662049538048;
	mov.u32 %r3, 0;
	tcgen05.mma.cta_group::1.kind::f16 [%r3], %rd2, %rd2, %r3, 1;
	ret;
}
"""


def test_tcgen05_operands_are_unknown(tmp_path):
    """sm_100's descriptor format is on paper only: a tcgen05.mma is reported, never
    passed over (before, the kernel read as fully proved)."""
    path = tmp_path / "umma.ptx"
    path.write_text(BLACKWELL_KERNEL)
    found = results(path)
    assert [r.status for r in found] == [Status.UNKNOWN]
    assert "on paper only" in found[0].reason


@pytest.mark.parametrize(
    "text, found",
    [
        ("dataType=FLOAT16", "expected dataType=TYPE,boxDim="),
        ("dataType=FLOAT16,boxDim={64,x}", "boxDim: expected {INNER,OUTER}"),
        ("dataType=FLOAT16,boxDim={128,8},swizzle=128B", "at most the 128-byte swizzle span"),
        ("dataType=HALF,boxDim={64,8}", "TMA dataType: expected one of"),
    ],
)
def test_bad_tma_map(text, found):
    with pytest.raises(SpecError, match=None) as e:
        parse_tma_map(text)
    assert found in e.value.message


def test_tma_map_names_a_parameter():
    option = parse_tma_map("dataType=CU_TENSOR_MAP_DATA_TYPE_FLOAT16,boxDim={64,8},param=p0")
    assert option.param == "p0" and option.tmap.swizzle == 0 and option.tmap.box == (64, 8)


# -- the Triton tutorial matmul, compiled for sm_90a --------------------------------------


# M = N = K = 512 and the strides of a 512 x 512 row-major matrix
# (benchmarks/hardware/triton_h200.py).
TRITON_PARAMS = tuple(f"param_{n}=512" for n in range(3, 9))
# Triton's descriptor constant: 128B swizzle (bit 62), SBO 1024 (64 << 32).
TRITON_DESC = "4611686293305294848"


def test_triton_matmul_sm90_writer_reader():
    """Every chunk A and B wgmma read holds one block of the global matrix, in order:
    PROVED for every lane, warp, stage and k-tile; an SBO of 512 (0x20 << 32) instead
    reads the second 8-row group from where the writer put row 4's chunks."""
    path = DATA / "matmul.sm90.ptx"
    options = Options(shared_align=1024, assume=TRITON_PARAMS, grid=(16,))
    assert verdicts(check_ptx(str(path), options), "writer_reader") == [Status.PROVED] * 16
    wrong = path.read_text().replace(TRITON_DESC, str(int(TRITON_DESC) - (0x20 << 32)))
    found = check_ptx_text(wrong, "matmul.sm90.ptx", options)
    refuted = [r for r in found if r.property.startswith("writer_reader operand A")]
    assert [r.status for r in refuted] == [Status.REFUTED] * 8
    cex = refuted[0].counterexample
    assert cex is not None
    row, k = cex.instance["row"], cex.instance["k"]
    # The oracle: A is 512 f16 (1024 bytes) a row; the block starts at global byte 0.
    assert (row, k) == (8, 0) and "the element is global byte 8192" in cex.summary
    read = swizzle(k_major_byte(row, k, 3, 512), 3)
    assert f"wgmma reads byte {read}," in cex.summary


def test_triton_matmul_sm90_k_blocks():
    """Each of the two accumulators adds 4 k-blocks: A's K columns are B's K rows.
    A's second k-block started at +64 bytes (field +4) instead of +32: each operand
    is still a block of its matrix, but the sum is not the product."""
    path = DATA / "matmul.sm90.ptx"
    options = Options(assume=TRITON_PARAMS, grid=(16,))
    assert verdicts(check_ptx(str(path), options), "k_blocks") == [Status.PROVED] * 2
    text = path.read_text()
    kb1 = "add.s32 \t%r195, %r184, 2;"
    assert kb1 in text
    found = check_ptx_text(text.replace(kb1, kb1.replace(", 2;", ", 4;")), "m.ptx", options)
    assert verdicts(found, "k_blocks") == [Status.REFUTED, Status.PROVED]
    assert set(verdicts(found, "writer_reader")) == {Status.PROVED}
    cex = counterexample_of(found, "k_blocks")
    assert "multiplies A's K columns from 32 by B's K rows from 16" in cex.summary


COPY = re.compile(
    r"cp\.async\.cg\.shared\.global \[ (%r\d+) \+ 0 \], \[ (%rd\d+) \+ 0 \], 0x10, %r\d+;"
)


def through_registers(text: str, order=(0, 1, 2, 3), first_shift: int = 0) -> str:
    """Triton's matmul with every 16-byte cp.async made an ld.global of the same
    source and an st.shared of its registers in `order`; the first load reads
    `first_shift` bytes further."""
    shifts = iter([first_shift])

    def store(m: re.Match) -> str:
        regs = ", ".join(f"%q{i}" for i in order)
        load = f"ld.global.v4.b32 {{%q0, %q1, %q2, %q3}}, [{m.group(2)}+{next(shifts, 0)}];"
        return f"{load}\n\tst.shared.v4.b32 [{m.group(1)}], {{{regs}}};"

    out = COPY.sub(store, text)
    return out.replace(".reg .b32 \t%r<521>;", ".reg .b32 \t%r<521>;\n\t.reg .b32 \t%q<4>;")


def test_writer_reader_of_stores_of_loaded_registers():
    """st.shared of an ld.global's registers names the global bytes it writes, as a
    cp.async does: PROVED like the copies; one load 16 bytes off REFUTED; the
    registers stored out of order UNKNOWN (which elements they hold is not followed)."""
    text = (DATA / "matmul.sm90.ptx").read_text()
    assert len(COPY.findall(text)) == 48
    options = Options(shared_align=1024, assume=TRITON_PARAMS, grid=(16,))
    same = check_ptx_text(through_registers(text), "m.ptx", options)
    assert verdicts(same, "writer_reader") == [Status.PROVED] * 16
    off = check_ptx_text(through_registers(text, first_shift=16), "m.ptx", options)
    assert Status.REFUTED in verdicts(off, "writer_reader")
    assert "(st.shared at PTX line" in counterexample_of(off, "writer_reader").summary
    swapped = check_ptx_text(through_registers(text, order=(1, 0, 2, 3)), "m.ptx", options)
    unknown = [r for r in swapped if r.property.startswith("writer_reader")]
    assert {r.status for r in unknown} == {Status.UNKNOWN}
    assert "not loaded, in order, by one ld.global" in unknown[0].reason


def test_writer_reader_needs_the_strides():
    found = results(DATA / "matmul.sm90.ptx", shared_align=1024)
    unknown = [r for r in found if r.property.startswith("writer_reader")]
    assert {r.status for r in unknown} == {Status.UNKNOWN}
    assert "--assume" in unknown[0].reason


def test_triton_matmul_sm90():
    """Triton 3.9's 03-matrix-multiplication (specs/triton_kernels/matmul.py, 128x128x64,
    3 stages): 8 wgmma per k-tile, A K-major 64x16 and B MN-major 128x16, both
    128B-swizzled, written by cp.async at offsets from global_smem."""
    path = DATA / "matmul.sm90.ptx"
    aligned = results(path, shared_align=1024)
    assert verdicts(aligned, "placement") == [Status.PROVED] * 16
    cost = [r.wavefronts for r in aligned if r.property.startswith("wavefronts")]
    assert sorted(cost) == [16] * 8 + [32] * 8
    # No static shared memory: global_smem starts the CTA's window, at byte 1024.
    assert verdicts(results(path), "placement") == [Status.PROVED] * 16
    declared = results(path, shared_align=16)  # as .align 16 alone allows
    assert verdicts(declared, "placement") == [Status.REFUTED] * 16


# -- CuTe's tutorial, its first kernel (NT: A and B MN-major), nvcc -arch=sm_90a ------------

# M = N = K = 4096 and both leading dimensions (docs/ptx.md's launch (D)).
CUTE_PARAMS = ("param_0=4096", "param_0+4=4096", "param_0+8=4096", "param_3=4096", "param_7=4096")


def test_cute_wgmma_sm90():
    """16 wgmma m64n64k16 per k-tile, descriptors built through mov.b64 {lo, hi}: every
    operand PROVED for placement (CuTe asserts a 1024-aligned base), writer = reader
    (its cp.async copies) and 16 wavefronts (the H200's, wgmma_kernels_h200.md)."""
    found = results(
        ROOT / "tests/data/ptx/cute_wgmma_sm90a.ptx",
        block=(128,),
        grid=(32, 32),
        shared_align=1024,
        assume=CUTE_PARAMS,
    )
    for check in ("placement", "writer_reader", "wavefronts"):
        assert verdicts(found, check) == [Status.PROVED] * 32, check
    assert verdicts(found, "k_blocks") == [Status.PROVED] * 4  # 2 x 2 accumulators
    assert {r.wavefronts for r in found if r.property.startswith("wavefronts")} == {16}


# -- the descriptors against the PTX interpreter written apart -----------------------------


def test_descriptors_are_the_interpreters(monkeypatch):
    """The descriptor values oracle/ptx_interpreter.py (sharing no code with verify)
    computes at each wgmma of Triton's matmul, through all 8 k-tiles, are exactly the
    ones verify decodes there at the base the interpreter gives global_smem (byte
    1024, as the H200 does): A's and B's at each of the 3 stages."""
    from oracle import ptx_interpreter as oracle
    from verify.ptx import hopper
    from verify.ptx.check import Kernel
    from verify.ptx.parse import read_ptx

    path = DATA / "matmul.sm90.ptx"
    seen: dict[int, set] = {}
    step = oracle._Env._step

    def spy(self, th, ins, active, counts):
        if ins.parts[0] == "wgmma" and "mma_async" in ins.parts:
            for reg in ins.operands[1:3]:
                value = self._value(th, reg, 64)
                seen.setdefault(ins.line, set()).add(MatrixDescriptor.decode(value))
        return step(self, th, ins, active, counts)

    monkeypatch.setattr(oracle._Env, "_step", spy)
    params: dict[int | str, int | bytes] = {0: 1 << 32, 1: 2 << 32, 2: 3 << 32}
    params.update({n: 512 for n in range(3, 9)})
    oracle.run_block(
        path.read_text(),
        "matmul_kernel",
        (128, 1, 1),
        params,
        threads=[0],
        shared_base=1024,
        dynamic_shared_bytes=98304,
    )
    module = read_ptx(str(path))
    kernel = Kernel(module, module.entries()[0], Options(assume=TRITON_PARAMS, grid=(16,)))
    trace = kernel.trace()
    ours: dict[int, set] = {}
    for event in trace.events:
        reads = hopper.wgmma_reads(event) if hopper.handles(event.instr) else []
        assert isinstance(reads, list), reads
        for read in reads:
            _, cases = hopper.decoded(kernel, trace, read)
            ours.setdefault(event.instr.line, set()).update(
                atb for _, base, _, atb in cases if base == 1024
            )
    assert set(seen) == set(ours) and len(seen) == 8
    for line, values in seen.items():
        assert values == ours[line], line
        assert len(values) == 2 * 3  # A and B, 3 stages


# -- Triton with TMA: host tensor descriptors (specs/hopper/tma_matmul.py) ------------------

# Triton's tensordesc_meta for the two descriptors: block [128, 64] and [64, 64], swizzle 3.
TRITON_MAPS = (
    "dataType=FLOAT16,boxDim={64,128},swizzle=128B,param=tma_matmul_param_0",
    "dataType=FLOAT16,boxDim={64,64},swizzle=128B,param=tma_matmul_param_5",
)


def test_triton_tma_matmul_sm90():
    """Triton's TMA copies (the map read through cvt and cvta.param, the destination
    broadcast from lane 0 by shfl.sync.idx) and wgmma: B's 128-wide MN-major operand
    runs over two 64x64 boxes laid end to end; every operand PROVED."""
    path = DATA / "tma_matmul.sm90.ptx"
    found = results(path, tma_maps=TRITON_MAPS)
    for check in ("writer_reader", "wavefronts", "aligned 128"):
        assert set(verdicts(found, check)) == {Status.PROVED}, check
    assert len(verdicts(found, "writer_reader")) == 16
    linear = (TRITON_MAPS[0], TRITON_MAPS[1].replace("128B", "NONE"))
    wrong = results(path, tma_maps=linear)
    refuted = [r for r in wrong if r.property.startswith("writer_reader operand B")]
    assert {r.status for r in refuted} == {Status.REFUTED}
    cex = refuted[0].counterexample
    assert cex is not None
    row, k = cex.instance["row"], cex.instance["k"]
    # The oracle: the linear box holds (n, k) at k * 128 + n * 2; wgmma reads MN-major
    # 128B from chunk (n/8)%8 + (k%8)*8 + (k/8)*64 (+ 512 chunks per 64 n), XORed.
    written = k * 128 + row * 2
    read = swizzle(((row // 8) % 8 + (k % 8) * 8 + (k // 8) * 64) * 16 + (row % 8) * 2, 3)
    assert f"written at byte {written}, read from byte {read}" in cex.summary


# -- the command line ---------------------------------------------------------------------


def test_cli_tma_map():
    from click.testing import CliRunner

    from verify.cli import main

    spec = str(SPECS / "tma_wgmma_sbo_mismatch.ptx")
    refuted = CliRunner().invoke(main, ["ptx", spec, "--tma-map", MAP_128B])
    assert refuted.exit_code == 1 and "REFUTED  writer_reader operand B" in refuted.output
    bad = CliRunner().invoke(main, ["ptx", spec, "--tma-map", "dataType=FLOAT16"])
    assert bad.exit_code == 2 and "error: --tma-map: expected dataType=TYPE" in bad.output
    assert "Traceback" not in bad.output


# -- Triton's attention (06, sm_90): Q loaded once, K copied every iteration -------------

ATTENTION = ROOT / "tests/data/ptx/triton_attention_sm90.ptx"
ATTENTION_OPTIONS: dict[str, Any] = dict(
    block=(128,), grid=(4, 4), shared_align=1024, assume=("param_5=256",)
)
QK = (335, 362, 367, 372)  # the PTX lines of the 4 wgmma of S = Q K^T
KB1 = "add.s32 \t%r101, %r100, 2;"  # B's second k-block: the descriptor's start + 32 bytes


def interpreted_starts(text: str) -> dict[int, list[tuple[int, int, tuple[int, int]]]]:
    """(A's start, B's start, the rest of both descriptors) at each wgmma of S = Q K^T,
    every iteration, from oracle/ptx_interpreter.py (sharing no code with verify) run
    for thread 0; the fields decoded here: bits 0-13 are the start >> 4."""
    from oracle import ptx_interpreter as oracle

    seen: dict[int, list[tuple[int, int, tuple[int, int]]]] = {}
    step = oracle._Env._step

    def spy(self, th, ins, active, counts):
        if ins.line in QK:
            a, b = (self._value(th, reg, 64) for reg in ins.operands[1:3])
            rest = (a & ~0x3FFF, b & ~0x3FFF)
            seen.setdefault(ins.line, []).append(((a & 0x3FFF) << 4, (b & 0x3FFF) << 4, rest))
        return step(self, th, ins, active, counts)

    params: dict[int | str, int | bytes] = {
        0: 1 << 32,
        1: 2 << 32,
        2: 3 << 32,
        3: 4 << 32,
        4: 0x3E000000,
        5: 256,
    }
    original = oracle._Env._step
    oracle._Env._step = spy  # type: ignore[method-assign]
    try:
        oracle.run_block(text, "attn_fwd", (128, 1, 1), params, threads=[0], shared_base=1024)
    finally:
        oracle._Env._step = original  # type: ignore[method-assign]
    return seen


def k_offsets(seen) -> list[list[tuple[int, int]]]:
    """Per iteration, each wgmma's (A's, B's) start from the group's first: both
    operands are K-major 128B tiles of 128-byte rows (the same descriptor fields), so a
    start 32 bytes on is 16 k further in either."""
    runs = list(zip(*(seen[line] for line in QK)))
    assert {rest for run in runs for _, _, rest in run} == {(0x4000004000000000,) * 2}
    return [[(a - run[0][0], b - run[0][1]) for a, b, _ in run] for run in runs]


def test_triton_attention_sm90_k_blocks():
    """Q (st.shared of an ld.global's registers, before the loop) has no loop variable;
    K's blocks are the loop's stages: their keys are joined, not intersected (this was
    UNKNOWN, "no stage is proved a block"). The interpreter's descriptors agree: A and B
    start 0, 32, 64, 96 bytes on in every iteration. B's second k-block at +64 bytes:
    REFUTED, as the interpreter's starts show."""
    text = ATTENTION.read_text()
    oracle_offsets = k_offsets(interpreted_starts(text))
    assert len(oracle_offsets) == 8  # N_CTX 256 / BLOCK_N 32 iterations
    assert all(run == [(0, 0), (32, 32), (64, 64), (96, 96)] for run in oracle_offsets)
    found = check_ptx(str(ATTENTION), Options(**ATTENTION_OPTIONS))
    assert verdicts(found, "k_blocks") == [Status.PROVED]
    assert set(verdicts(found, "writer_reader")) == {Status.PROVED}

    assert text.count(KB1) == 1
    wrong = text.replace(KB1, KB1.replace(", 2;", ", 4;"))
    assert {run[1] for run in k_offsets(interpreted_starts(wrong))} == {(32, 64)}
    found = check_ptx_text(wrong, "attention.ptx", Options(**ATTENTION_OPTIONS))
    assert verdicts(found, "k_blocks") == [Status.REFUTED]
    assert set(verdicts(found, "writer_reader")) == {Status.PROVED}
    cex = counterexample_of(found, "k_blocks")
    # 32 bytes of A's 128-byte rows are 16 k; B's 64 bytes are 32.
    assert "PTX line 362 multiplies A's K columns from 16 by B's K rows from 32" in cex.summary


# -- an unswizzled TMA box read as a K-major operand wider than its rows ----------------


def unswizzled_oracle(box: tuple[int, ...], strides: tuple[int, ...]):
    """None where B (64 x 16 f16, K-major) read through LBO 1024, SBO 128 with no
    swizzle is one block of one global matrix, else the first (row, k) that is not
    (row 1 where the rows overlap): on integers, written here apart from verify. wgmma
    reads (n, k) from byte (n % 8) * 16 + (n / 8) * 128 + (k / 8) * 1024 + (k % 8) * 2
    of the box; the box holds element index i at byte 2 i, inner dimension fastest;
    the global byte of box coordinates (c0, c1, ...) is 2 c0 + sum(c_d * stride_d)."""

    def global_byte(n: int, k: int) -> int:
        index = ((n % 8) * 16 + (n // 8) * 128 + (k // 8) * 1024 + (k % 8) * 2) // 2
        coords = []
        for extent in box:
            coords.append(index % extent)
            index //= extent
        return 2 * coords[0] + sum(c * s for c, s in zip(coords[1:], strides))

    origin, pitch = global_byte(0, 0), global_byte(1, 0) - global_byte(0, 0)
    if abs(pitch) < 32:
        return (1, 0)
    for n in range(64):
        for k in range(16):
            if global_byte(n, k) != origin + n * pitch + 2 * k:
                return (n, k)
    return None


UNSWIZZLED = [
    ("tma_wgmma_none_3d", (8, 64, 2), (128, 16)),  # CUTLASS's: PROVED
    ("tma_wgmma_none_3d", (8, 64, 2), (4096, 16)),  # any row pitch
    ("tma_wgmma_none_3d", (8, 64, 2), (128, 32)),  # k-blocks 32 bytes apart
    ("tma_wgmma_none_3d", (8, 64, 2), (16, 1024)),  # the H200 kernel's stacking, 3-D
    ("tma_wgmma_none_3d", (8, 8, 16), (16, 128)),  # 8-row groups: rows 16 bytes apart
    ("tma_wgmma_none_2d", (8, 128), (16,)),  # the H200 kernel's map
    ("tma_wgmma_none_2d", (8, 128), (32,)),
]


@pytest.mark.parametrize(("spec", "box", "strides"), UNSWIZZLED)
def test_unswizzled_box_wider_than_its_rows(spec, box, strides):
    """Issue 25: this read was UNKNOWN ("the operand reads past the boxes written").
    Which global elements the box's further rows hold is the map's globalStrides;
    given them, every element is decided, as the oracle decides it."""
    dims = ",".join(map(str, box))
    tma_map = f"dataType=FLOAT16,boxDim={{{dims}}},globalStrides={{{','.join(map(str, strides))}}}"
    found = results(SPECS / f"{spec}.ptx", tma_maps=(tma_map,))
    wrong = unswizzled_oracle(box, strides)
    assert verdicts(found, "writer_reader") == [Status.PROVED if wrong is None else Status.REFUTED]
    if wrong is not None:
        cex = counterexample_of(found, "writer_reader")
        assert (cex.instance["row"], cex.instance["k"]) == wrong
    without = results(SPECS / f"{spec}.ptx", tma_maps=(f"dataType=FLOAT16,boxDim={{{dims}}}",))
    assert verdicts(without, "writer_reader") == [Status.UNKNOWN]
    assert "globalStrides" in next(r.reason for r in without if r.property.startswith("writer"))


def test_the_h200_unswizzled_case_as_the_oracle_has_it():
    """The oracle's verdicts on the table above: only CUTLASS's strides (k-blocks 16
    bytes apart, rows at least a row apart) give one block."""
    assert [unswizzled_oracle(b, s) for _, b, s in UNSWIZZLED] == [
        None,
        None,
        (0, 8),
        (1, 0),
        (1, 0),
        (1, 0),
        (0, 8),
    ]


@pytest.mark.parametrize(
    ("shape", "elem", "which", "trans"),
    [("m64n128k16", "f16", "B", 1), ("m64n64k16", "f16", "A", 0), ("m64n32k8", "tf32", "B", 0)],
)
def test_chunk_reader_is_read_address(shape, elem, which, trans):
    """The reader's chunk addresses, evaluated over every chunk at once, are the
    descriptor's read map (ReadMap, element by element) in every mode, at starts and
    base offsets spread over the field's range."""
    from verify.model.wgmma import ReadMap, SwizzleMode, operand
    from verify.ptx.hopper_common import chunk_reader, operand_chunks

    op = operand(shape, elem, which, trans)
    for mode in SwizzleMode:
        for start, lbo, sbo, bo in [(0, 16, 1024, 0), (4112, 2048, 512, 3), (262128, 128, 16, 7)]:
            desc = MatrixDescriptor(start, lbo, sbo, mode, bo)
            want = [ReadMap(desc, op).address(r, k) for r, k in operand_chunks(op)]
            assert chunk_reader(lbo, sbo, mode, op)(start, bo) == want


def test_k_block_stages_are_the_join_of_the_operands_keys():
    """An operand whose blocks carry no loop variable (attention's Q) pairs with every
    stage of the others; operands keyed by different loops' variables are paired at
    every combination, and such a pairing is not taken as one that happens."""
    from verify.model.wgmma import Operand
    from verify.ptx.hopper_kblocks import Block, Blocks, _paired_exactly, _stages
    from verify.ptx.trace import Event

    op = cast(Operand, object())
    first, second = cast(Event, object()), cast(Event, object())
    q = {((), ()): Block("q", 0, 128)}
    k_at = {(((("it0", s),), ())): Block("k", 4096 * s, 128) for s in range(3)}
    blocks: Blocks = {
        (id(first), "A"): (first, op, q),
        (id(first), "B"): (first, op, k_at),
        (id(second), "A"): (second, op, q),
        (id(second), "B"): (second, op, k_at),
    }
    stages = _stages([first, second], blocks)
    assert stages is not None
    assert [env for env, _ in stages] == [{"it0": s} for s in range(3)]
    assert all(_paired_exactly([first, second], blocks, *stage) for stage in stages)
    # B's copies keyed by another loop's variable: 3 x 3 pairings, none known to meet
    other = {(((("it1", s),), ())): Block("k", 4096 * s, 128) for s in range(3)}
    blocks[(id(second), "B")] = (second, op, other)
    stages = _stages([first, second], blocks)
    assert stages is not None and len(stages) == 9
    assert not any(_paired_exactly([first, second], blocks, *stage) for stage in stages)
