"""wgmma matrix descriptors (verify.model.wgmma) against two oracles sharing no code
with it: CUTLASS's make_gmma_desc and CuTe's swizzled pointers (a host C++ program,
tests/data/hopper/gmma_desc_oracle.cpp, its output committed), and the H200's own
reads (benchmarks/hardware/wgmma/probe.cu, tests/data/hopper/wgmma_h200_maps.txt).
The sm_100 tcgen05 format, on paper only, against CUTLASS's UMMA::SmemDescriptor
bitfields (tests/data/hopper/umma_desc_oracle.cpp, its output committed)."""

from __future__ import annotations

import csv
import gzip
import re
from pathlib import Path

import pytest

from verify.errors import SpecError
from verify.model.expr import Var, compiled, evaluate
from verify.model.wgmma import (
    DESCRIPTOR_FORMATS,
    OPERAND_BITS,
    SM90_WGMMA,
    SM100_TCGEN05,
    MatrixDescriptor,
    Operand,
    ReadMap,
    SwizzleMode,
    check_writer_reader,
    core_matrices,
    core_matrix_bank_groups,
    operand,
    read_address,
    read_wavefronts,
)

ROOT = Path(__file__).parents[2]
DATA = ROOT / "tests/data/hopper"
PROBE = ROOT / "benchmarks/hardware/wgmma/probe.cu"
CONFIG = re.compile(r'\{"(\w+)", (\d+), (\d+), (\d+), (\d+), (\d+), (\d+), (\d+)\}')


def cutlass_cases():
    with gzip.open(DATA / "gmma_desc_oracle.txt.gz", "rt") as f:
        lines = f.read().splitlines()
    for head, addresses in zip(lines[0::2], lines[1::2]):
        fields = dict(kv.split("=") for kv in head.split()[1:])
        yield fields, [int(a) for a in addresses.split()[1:]]


def flat(desc: MatrixDescriptor, op: Operand) -> list[int]:
    return [a for row in ReadMap(desc, op).table() for a in row]


def test_decode_names_the_fields_at_their_bits():
    desc = MatrixDescriptor.decode(0x4000004000010002)  # CUTLASS K-major SW128 f16, k-block 1
    assert desc == MatrixDescriptor(32, 16, 1024, SwizzleMode.B128, 0)
    assert MatrixDescriptor.decode(7 << 49 | 3 << 62).base_offset == 7
    assert MatrixDescriptor.decode(3 << 62).swizzle is SwizzleMode.B32
    assert MatrixDescriptor.decode(1 << 14 | 1 << 30 | 1 << 46).start_address == 0  # gaps


# CUTLASS's UMMA::LayoutType codes (cute/arch/mma_sm100_desc.hpp), by the mode they name.
UMMA_LAYOUTS = {0: SwizzleMode.NONE, 2: SwizzleMode.B128, 4: SwizzleMode.B64, 6: SwizzleMode.B32}


def test_tcgen05_format_is_cutlass_s_bitfields():
    """Every descriptor CUTLASS's UMMA::SmemDescriptor packs decodes to its fields
    in the tcgen05 table entry, and encodes back to the same 64 bits."""
    with open(DATA / "umma_desc_oracle.txt") as f:
        rows = [[int(x) for x in line.split()] for line in f]
    assert len(rows) == 240
    for layout, start, lbo, sbo, base_offset, value in rows:
        want = MatrixDescriptor(start, lbo, sbo, UMMA_LAYOUTS[layout], base_offset)
        assert MatrixDescriptor.decode(value, SM100_TCGEN05) == want
        assert want.encode(SM100_TCGEN05) == value


@pytest.mark.parametrize("mode", list(SwizzleMode))
def test_the_formats_differ_where_the_documents_say(mode):
    """tcgen05's 3-bit codes at 61-63 are sm_90's 2-bit codes at 62-63 with a new low
    bit (1: 128B with 32-byte atoms), so for the four shared modes the two formats
    differ only in tcgen05's fixed 0b001 at 46-48."""
    desc = MatrixDescriptor(1024, 16, 1024, mode, 3)
    sm90, sm100 = desc.encode(SM90_WGMMA), desc.encode(SM100_TCGEN05)
    assert sm90 == desc.encode()  # sm_90 is the default
    assert sm90 ^ sm100 == 1 << 46
    assert set(DESCRIPTOR_FORMATS.values()) == {SM90_WGMMA, SM100_TCGEN05}
    assert SM90_WGMMA.validated and not SM100_TCGEN05.validated


@pytest.mark.parametrize(
    "value, found",
    [
        (2 << 61, "bits 46-48: expected 0b1, found 0b0"),
        (1 << 46 | 1 << 61, "expected one of 0 (none), 2 (128B), 4 (64B), 6 (32B), found 1"),
        (1 << 46 | 1 << 52, "leading-dimension mode 1 (LBO an absolute address) is not modelled"),
    ],
)
def test_tcgen05_refuses_what_it_does_not_model(value, found):
    with pytest.raises(SpecError, match=re.escape(found)):
        MatrixDescriptor.decode(value, SM100_TCGEN05)


def test_the_module_s_worked_example():
    reads = ReadMap(MatrixDescriptor(0, 16, 1024, SwizzleMode.B128), Operand(64, 16, 16, "K"))
    assert (reads.address(1, 8), reads.address(1, 0)) == (128, 144)


def test_encode_inverts_decode():
    for value in (0x4000004000010002, 0xC000008000100500, 0x0000000800800200, 5 << 49 | 1 << 62):
        assert MatrixDescriptor.decode(value).encode() == value


def test_modes_repeat_every_256_512_1024_bytes():
    assert [m.repeat_bytes for m in (SwizzleMode.B32, SwizzleMode.B64, SwizzleMode.B128)] == [
        256,
        512,
        1024,
    ]
    assert [m.row_chunks for m in SwizzleMode] == [1, 8, 4, 2]


def test_every_cutlass_descriptor_reads_what_cute_addresses():
    cases = list(cutlass_cases())
    assert len(cases) == 80
    for fields, addresses in cases:
        desc = MatrixDescriptor.decode(int(fields["desc"], 16))
        bits = OPERAND_BITS[fields["type"]]
        op = Operand(int(fields["rows"]), 256 // bits, bits, fields["major"])
        assert flat(desc, op) == addresses, fields


def test_cutlass_cases_cover_every_mode_major_and_type():
    seen = {(f["type"], f["major"], f["atom"]) for f, _ in cutlass_cases()}
    atoms = {"INTER", "SW32", "SW64", "SW128"}
    assert seen == {(t, "K", a) for t in ("f16", "tf32", "s8") for a in atoms} | {
        ("f16", "MN", a) for a in atoms
    }


def h200_maps():
    configs = {name: tuple(map(int, rest)) for name, *rest in CONFIG.findall(PROBE.read_text())}
    with open(DATA / "wgmma_h200_maps.txt") as f:
        for line in f:
            name, _, *addresses = line.split()[1:]
            trans, mode, start, lbo, sbo, bo, _ = configs[name]
            desc = MatrixDescriptor(start, lbo, sbo, SwizzleMode(mode), bo)
            yield name, desc, Operand(64, 16, 16, "MN" if trans else "K"), list(map(int, addresses))


def test_every_h200_read_map_is_the_model_s():
    maps = list(h200_maps())
    assert len(maps) == 42
    for name, desc, op, addresses in maps:
        assert flat(desc, op) == addresses, name


def test_the_h200_maps_decide_the_base_offset():
    """Ignoring the base offset would get every element of these wrong."""
    shifted = [(n, d, o, a) for n, d, o, a in h200_maps() if d.base_offset and d.swizzle]
    assert len(shifted) == 7
    for name, desc, op, addresses in shifted:
        ignored = MatrixDescriptor(
            desc.start_address, desc.leading_byte_offset, desc.stride_byte_offset, desc.swizzle
        )
        assert all(g != w for g, w in zip(flat(ignored, op), addresses)), name


def test_wavefronts_are_the_h200_s_on_every_launch():
    with open(ROOT / "benchmarks/results/wgmma_h200.csv") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 58
    for row in rows:
        operands = 2 if row["a_from"] == "shared" else 1
        model = int(row["repeats"]) * operands * read_wavefronts(Operand(64, 16, 16, row["major"]))
        assert int(row["wavefronts"]) == model, row["config"]


@pytest.mark.parametrize("major", ["K", "MN"])
def test_no_descriptor_puts_two_rows_of_a_core_matrix_in_one_bank_group(major):
    """Why the count cannot grow. A core matrix's rows lie W*16 bytes apart from its
    first; LBO and SBO only move that origin, and the start reaches every 16-aligned
    origin of the 1024-byte period, so the first core matrix at every start, every
    base offset and mode covers them all (the start symbolic, evaluated at each)."""
    op = Operand(64, 16, 16, major)
    first = core_matrices(op)[0]
    checked = 0
    for mode in SwizzleMode:
        for bo in range(8):
            desc = MatrixDescriptor(0, 144, 2064, mode, bo)
            at = compiled(read_address(desc, op, Var("row"), Var("k"), start=Var("s")))
            for s in range(0, 1024, 16):
                groups = {at({"row": r, "k": k, "s": s}) // 16 % 8 for r, k in first}
                assert len(groups) == 8, (desc, s)
                checked += 1
    assert checked == 4 * 8 * 64
    canonical = MatrixDescriptor(0, 16, 1024, SwizzleMode.B128)
    swapped = [1, 0, 3, 2, 5, 4, 7, 6]  # row r's chunk c lands in group c ^ r
    assert core_matrix_bank_groups(canonical, op)[1 if major == "K" else 2] == swapped


def test_a_symbolic_start_gives_the_concrete_addresses():
    desc = MatrixDescriptor(0, 16, 1024, SwizzleMode.B128)
    op = operand("m64n128k16", "bf16", "B", 0)
    at = read_address(desc, op, Var("row"), Var("k"), start=Var("s"))
    for s in (0, 32, 1024, 1152):
        shifted = MatrixDescriptor(s, 16, 1024, SwizzleMode.B128)
        for row, k in ((0, 0), (1, 8), (77, 15), (127, 3)):
            assert evaluate(at, {"row": row, "k": k, "s": s}) == ReadMap(shifted, op).address(
                row, k
            )


def test_operand_shapes_from_the_instruction():
    assert operand("m64n256k16", "f16", "B", 1) == Operand(256, 16, 16, "MN")
    assert operand("m64n8k8", "tf32", "A") == Operand(64, 8, 32, "K")
    assert operand("m64n24k32", "e4m3", "B") == Operand(24, 32, 8, "K")
    assert read_wavefronts(operand("m64n256k32", "s8", "B")) == 64


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: operand("m64n64k16", "tf32", "A"), "expected k8"),
        (lambda: operand("m64n64k8", "tf32", "A", 1), "only .f16/.bf16"),
        (lambda: operand("m32n64k16", "f16", "A"), "expected m64"),
        (lambda: operand("m64n12k16", "f16", "B"), "multiple of 8"),
        (lambda: operand("m64n64k16", "f64", "B"), "expected one of"),
        (lambda: MatrixDescriptor(8, 16, 1024, SwizzleMode.B128), "multiple of 16"),
        (lambda: MatrixDescriptor(0, 16, 1 << 18, SwizzleMode.B128), "multiple of 16"),
        (lambda: MatrixDescriptor(0, 16, 1024, SwizzleMode.B128, 8), "0..7"),
        (lambda: MatrixDescriptor.decode(1 << 64), "64-bit"),
        (
            lambda: ReadMap(
                MatrixDescriptor(0, 16, 1024, SwizzleMode.B128), Operand(64, 16, 16, "K")
            ).address(64, 0),
            "outside",
        ),
    ],
)
def test_bad_input_is_a_spec_error(call, message):
    with pytest.raises(SpecError, match=re.escape(message)):
        call()


def test_the_worked_example_of_docs_hopper_prints_what_it_says(capsys):
    doc = (ROOT / "docs/hopper.md").read_text()
    example = doc[doc.index("## Worked example") :]
    code = re.search(r"```python\n(.*?)```", example, re.S)
    output = re.search(r"```text\n(.*?)```", example, re.S)
    assert code and output
    exec(compile(code[1], "docs/hopper.md", "exec"), {})
    assert capsys.readouterr().out == output[1]


CUTE_TYPES = {"f16": "half_t", "tf32": "tfloat32_t", "s8": "int8_t"}


def test_verify_s_gmma_atoms_are_what_cutlass_s_descriptors_read():
    """writer = reader on every k-block of CUTLASS's 64-row tiles: verify's own GMMA
    atom term (tile_to_shape, as CollectiveMma builds the tile) as the writer, the
    descriptor make_gmma_desc printed as the reader, at every 128-aligned base."""
    cases = [(f, a) for f, a in cutlass_cases() if f["rows"] == "64" and f["offset"] == "0"]
    assert len(cases) == 56
    for fields, _ in cases:
        bits = OPERAND_BITS[fields["type"]]
        op = Operand(64, 256 // bits, bits, fields["major"])
        atom = f"GMMA::Layout_{fields['major']}_{fields['atom']}_Atom<{CUTE_TYPES[fields['type']]}>"
        writer = f"tile_to_shape({atom}, (64, {fields['tile_k']}))"
        k = f"k + {op.k * int(fields['kblock'])}"
        desc = MatrixDescriptor.decode(int(fields["desc"], 16))
        report, mismatch = check_writer_reader(
            writer, fields["type"], desc, op, align=128, coords=("row", k)
        )
        assert report.ok and mismatch is None, fields
