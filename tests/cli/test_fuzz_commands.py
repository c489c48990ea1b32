"""A fuzzer over every command and Python entry point: specs, synth problems,
baselines, sweep templates, TTGIR, command-line values. Whatever the input,
verify answers with a result, a located error (exit 2) or a TypeError/SpecError
from the API -- never an internal error (exit 4) or another exception.

The inputs are built from pieces of valid specs (layouts, accesses, checks of
every kind) recombined and mutated, so most of them reach the engines, the
synthesiser and the reports rather than stopping at the parser (tests/spec/test_fuzz.py
covers token soup). Hypothesis runs derandomized on a fixed number of cases;
``VERIFY_FUZZ_SCALE=N`` multiplies every count (the long runs of issue 27 used
``VERIFY_FUZZ_SCALE=16``, over 13,000 inputs: benchmarks/results/fuzz_commands.md).
"""

import contextlib
import json
import os
import re

import conftest
import pycute
import pytest
from click.testing import CliRunner
from conftest import SPECS
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import verify
from verify.cli import main
from verify.errors import SpecError

SCALE = int(os.environ.get("VERIFY_FUZZ_SCALE", "1"))
COUNTED = {"inputs": 0}


def cases(n: int):
    return settings(
        max_examples=n * SCALE,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    )


def run(args: list[str]):
    """The command's exit status and output; any exception but SystemExit, and
    exit 4, are verify's bugs."""
    COUNTED["inputs"] += 1
    result = CliRunner().invoke(main, args)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise AssertionError(f"verify {' '.join(args)} raised") from result.exception
    assert result.exit_code != 4, f"verify {' '.join(args)}: {result.output}"
    assert "verify: internal error" not in result.output, result.output
    assert not re.search(r'"internal[ _]error": (?!null|0\b)', result.output), result.output
    return result.exit_code, result.output


# -- pieces of specs -------------------------------------------------------------

DTYPES = ["f16", "bf16", "f32", "tf32", "i8", "f64", "b8", "e4m3", "half", "f17", ""]
BUFFERS = [
    "",
    "buffer align 16",
    "buffer align 128",
    "buffer align 1024",
    "buffer align 4",
    "buffer align 3",
    "buffer align 128 stages 2 stage_bytes 1024",
    "buffer align 128 stages 3 stage_bytes 100",
    "buffer align 16 stages 2 stage_bytes 16384",
    "buffer align 128 stages 0 stage_bytes 0",
    "buffer stages 2",
]
LAYOUTS = [
    "(_8,_64):(_64,_1)",
    "Sw<3,3,3> o (_8,_64):(_64,_1)",
    "Sw<3,3,3> o _0 o (8,64):(64,1)",
    "Sw<3,4,3> o smem_ptr[16b](unset) o (_8,_64):(_64,_1)",
    "Sw<2,3,3> o (16,64):(64,1)",
    "(8,65):(65,1)",
    "(8,72):(72,1)",
    "(32,32):(1,32)",
    "(32,33):(1,33)",
    "((_8,_8),_64):((_64,_512),_1)",
    "_32:_1",
    "(16,16):(16,1)",
    "(0,8):(1,8)",
    "(8,8):(0,1)",
    "Sw<3,3,-3> o (8,64):(64,1)",
    "Sw<4,3,2> o (8,64):(64,1)",
    "tile_to_shape((8,64):(64,1), (16, 64))",
    "tile_to_shape(Sw<3,3,3> o (8,64):(64,1), (64, 64), (1,0))",
    "composition((8,64):(64,1), (64,8):(8,1))",
    "GMMA::Layout_K_SW128_Atom<half_t>",
    "GMMA::Layout_MN_SW64_Atom<float>",
    "tma(SWIZZLE_128B, f16, (64, 8))",
    "#ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}> shape (8, 64)",
    "#ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}> shape (8, 60)",
    "#ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}> "
    "shape (8, 64)",
    "#ttg.padded_shared<[64:+8] {order = [1, 0], shape = [8, 64]}> shape (8, 64)",
    "#ttg.shared_linear<{offset = [[0, 1], [0, 2], [1, 0]]}, alignment = 16> shape (2, 4)",
]
FORMULAS = [
    "A(r in 0..8, c in 0..64) = 64*r + (c ^ ((r & 7) << 3))",
    "A(r in 0..8, c in 0..64) = 65 * r + c",
    "A(r in 0..8, c in 0..64) = r / 0 + c",
    "A(r in 0..8, c in 0..64) = (r << 40) + c",
    "A(i in 0..512) = i ^ (i >> 3 & 56)",
]
INSTRUCTIONS = [
    "ldmatrix.x1",
    "ldmatrix.sync.aligned.m8n8.x1.shared.b16",
    "ldmatrix.x2.trans",
    "ldmatrix.x4",
    "stmatrix.x4",
    "ld.shared.b32",
    "ld.shared.v2.b32",
    "ld.shared.v4.b32",
    "st.shared.v4.b32",
    "ld.shared.b16",
    "ld.shared.b8",
    "ld.shared.b64",
    "SM75_U32x4_LDSM_N",
    "cp.async.ca.4",
    "cp.async.cg.16",
]
COORDS = [
    "(lane, 8 * q)",
    "(lane % 8, 8 * (lane / 8))",
    "(lane % 16, 8 * (lane / 16) + 16 * q)",
    "(lane / 8 + 4 * q, 8 * (lane % 8))",
    "(lane, 0)",
    "(q, lane)",
    "(lane % 8, lane / 8)",
    "(lane)",
    "(lane * 16)",
    "(lane, 8 * q, 0)",
    "(lane - 40, 0)",
    "(lane, 64)",
]
LOOPS = ["", *(f" for q in {lo}..{hi}" for lo, hi in ((0, 8), (0, 2), (0, 1), (4, 2), (0, 0)))]
CHECKS = [
    "bijective A",
    "conflict_free rd",
    "conflict_free rd expect refuted",
    "max_ways <= 2 rd",
    "max_ways == 8 rd",
    "max_ways <= 0 rd",
    "max_ways == 1 rd expect proved",
    "wavefronts <= 4 rd",
    "wavefronts == 1 rd",
    "wavefronts <= 0 rd",
    "aligned 16 rd",
    "aligned 3 rd",
    "in_bounds rd",
    "base_aligned A",
    "equivalent A B",
    "conflict_free nothing",
    "bijective Q",
]


def access_lines(draw, layout: str) -> list[str]:
    lines = []
    for name in draw(st.lists(st.sampled_from(["rd", "wr", "rd"]), min_size=1, max_size=2)):
        instr = draw(st.sampled_from(INSTRUCTIONS))
        coord = draw(st.sampled_from(COORDS))
        source = f" from G{draw(st.sampled_from(COORDS))}" if instr.startswith("cp.") else ""
        loop = draw(st.sampled_from(LOOPS))
        lines.append(f"access {name} = {instr} {layout}{coord}{source}{loop}")
    return lines


def mutated(draw, text: str) -> str:
    """The text, or a copy with a few characters deleted, doubled or replaced."""
    for _ in range(draw(st.integers(0, 2))):
        if not text:
            break
        i = draw(st.integers(0, len(text) - 1))
        how = draw(st.sampled_from(["delete", "double", "digit", "none"]))
        if how == "delete":
            text = text[:i] + text[i + 1 :]
        elif how == "double":
            text = text[: i + 1] + text[i:]
        elif how == "digit":
            text = text[:i] + draw(st.sampled_from("0179")) + text[i + 1 :]
    return text


@st.composite
def mutations(draw, text: str) -> str:
    return mutated(draw, text)


@st.composite
def specs(draw) -> str:
    dtype = draw(st.sampled_from(DTYPES))
    lines = [f"dtype {dtype}"] if dtype else []
    lines.append(draw(st.sampled_from(BUFFERS)))
    if draw(st.booleans()):
        lines.append(f"layout {draw(st.sampled_from(FORMULAS))}")
    else:
        lines.append(f"layout A = {draw(st.sampled_from(LAYOUTS))}")
    if draw(st.booleans()):
        lines.append(f"layout B = {draw(st.sampled_from(LAYOUTS))}")
    lines += ["global align 16", "layout G = (8,64):(64,1)"]
    lines += access_lines(draw, "A")
    lines += [f"check {c}" for c in draw(st.lists(st.sampled_from(CHECKS), max_size=3))]
    return mutated(draw, "\n".join(lines) + "\n")


REPORT_OPTIONS = st.sampled_from(
    [
        [],
        ["--json"],
        ["--format", "github"],
        ["--format", "sarif"],
        ["--format", "junit"],
        ["-q"],
        ["--check-expect"],
        ["--raw-verdicts"],
        ["--raw-verdicts", "--format", "github"],
        ["--raw-verdicts", "--check-expect"],  # opposite rules: a usage error
        ["--engine", "z3"],
        ["--engine", "enumeration"],
    ]
)


@cases(120)
@given(text=specs(), options=REPORT_OPTIONS)
def test_check_command_on_recombined_specs(tmp_path, text, options):
    path = tmp_path / "f.spec"
    path.write_text(text)
    run([str(path), "--timeout", "2", *options])


@cases(10)
@given(
    text=specs(),
    options=st.sampled_from(
        [[], ["--access", "wr"], ["--instance", "q=3"], ["--instance", "x"], ["--by", "element"]]
    ),
    out=st.sampled_from(["d.svg", "d.html", "d.txt"]),
)
def test_draw_and_fragments_commands_on_recombined_specs(tmp_path, text, options, out):
    path = tmp_path / "f.spec"
    path.write_text(text)
    run(["draw", str(path), "--timeout", "2", "-o", str(tmp_path / out), *options])
    run(["fragments", str(path)])


@cases(60)
@given(text=specs())
def test_python_check_text_on_recombined_specs(text):
    COUNTED["inputs"] += 1
    try:
        verify.check_text(text, "f.spec", timeout=2)
    except SpecError as e:
        assert str(e).startswith("f.spec"), str(e)


# -- verify synth ----------------------------------------------------------------

SHAPES = ["8, 64", "8, 8", "4, 8", "16, 16", "8, 0", "3, 8", "1, 1", "32, 32", "2, 64"]


@st.composite
def synth_problems(draw) -> str:
    dtype = draw(st.sampled_from(DTYPES[:7]))
    lines = [f"dtype {dtype}", draw(st.sampled_from(BUFFERS))]
    lines.append(f"layout A = ?({draw(st.sampled_from(SHAPES))})")
    if draw(st.integers(0, 3)) == 0:
        lines += ["global align 16", "layout G = (8,64):(64,1)"]
    lines += access_lines(draw, "A")
    lines += [f"check {c}" for c in draw(st.lists(st.sampled_from(CHECKS), max_size=3))]
    return mutated(draw, "\n".join(lines) + "\n")


@cases(40)
@given(
    text=synth_problems(),
    options=st.sampled_from(
        [[], ["--json"], ["--family", "pad"], ["--family", "nvmma"], ["--method", "list"]]
    ),
)
def test_synth_on_recombined_problems(tmp_path, text, options):
    path = tmp_path / "f.synth"
    path.write_text(text)
    run(["synth", str(path), "--timeout", "2", *options])


# -- baselines -------------------------------------------------------------------

PLAIN = os.path.join(SPECS, "seed", "ldmatrix_x1_8x64_plain.spec")


def json_containers(inner):
    return st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner)


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 10) | st.sampled_from(["", "proved", "x"]),
    json_containers,
    max_leaves=6,
)
FIELDS = ["spec", "property", "status", "max_ways", "wavefronts", "line"]


@st.composite
def baselines(draw) -> str:
    record = {
        "spec": os.path.normpath(PLAIN),
        "property": draw(st.sampled_from(["conflict_free rd", "max_ways == 8 rd", "bijective A"])),
        "status": draw(st.sampled_from(["proved", "refuted", "unknown"])),
        "max_ways": draw(st.sampled_from([None, 1, 8, 0])),
        "wavefronts": draw(st.sampled_from([None, 1, 8])),
    }
    for field in draw(st.lists(st.sampled_from(FIELDS), max_size=2)):
        record[field] = draw(JSON_VALUES)
    doc = draw(
        st.sampled_from(["object", "raw", "list"]).map(
            lambda how: {"object": {"checks": [record]}, "list": [record], "raw": None}[how]
        )
    )
    if doc is None:
        doc = {"checks": draw(JSON_VALUES)}
    return mutated(draw, json.dumps(doc))


@cases(60)
@given(text=baselines(), update=st.booleans())
def test_check_command_with_any_baseline(tmp_path, text, update):
    path = tmp_path / "b.json"
    path.write_text(text)
    run([PLAIN, "--baseline", str(path), *(["--update-baseline"] if update else [])])


# -- sweep templates -------------------------------------------------------------

TEMPLATE = """dtype ${dtype}
buffer align ${ALIGN}
layout A = Sw<${SW},3,3> o (${M},64):(64,1)
access rd = ${INSTR} A(lane % 16 + 16 * i, 8 * (lane / 16)) for i in 0..${N}
check conflict_free rd
check max_ways <= ${W} rd
"""
PARAMS = {
    "dtype": ["f16", "f32", "bf16", "nope", ""],
    "ALIGN": ["16", "128", "3", "_128"],
    "SW": ["0", "3", "4", "-1"],
    "M": ["16", "64", "_64", "0", "12"],
    "INSTR": ["ldmatrix.x4", "ld.shared.b32", "cp.async.cg.16", "bogus"],
    "N": ["1", "2", "0"],
    "W": ["1", "2", "0", "x"],
}


@st.composite
def sweeps(draw) -> list[str]:
    args = []
    for name, values in PARAMS.items():
        if draw(st.integers(0, 9)) == 0:
            continue  # a parameter the template names but no --param gives
        chosen = draw(st.lists(st.sampled_from(values), min_size=1, max_size=2))
        args += ["--param", f"{name}={','.join(chosen)}"]
    if draw(st.integers(0, 9)) == 0:
        args += ["--param", draw(st.sampled_from(["X=1", "dtype=f16", "=1", "M"]))]
    return args


@cases(30)
@given(
    params=sweeps(),
    template=mutations(TEMPLATE),
    fmt=st.sampled_from([[], ["--json"], ["--check-expect"], ["--raw-verdicts"]]),
)
def test_sweep_on_any_template_and_parameters(tmp_path, params, template, fmt):
    path = tmp_path / "t.spec"
    path.write_text(template)
    run(["sweep", str(path), "-j", "1", "--no-cache", "--timeout", "2", *params, *fmt])


# -- TTGIR -----------------------------------------------------------------------

KERNEL = os.path.join(SPECS, "triton_kernels", "gluon_transpose_swizzled.sm80.ttgir")


@st.composite
def ttgir_texts(draw) -> str:
    with open(KERNEL, encoding="utf-8") as f:
        lines = f.read().splitlines()
    how = draw(st.sampled_from(["drop", "truncate", "mutate", "empty"]))
    if how == "empty":
        return draw(st.sampled_from(["", "\n", "// only a comment\n", "module {\n}\n"]))
    if how == "drop":
        i = draw(st.integers(0, len(lines) - 1))
        return "\n".join(lines[:i] + lines[i + 1 :]) + "\n"
    if how == "truncate":
        return "\n".join(lines[: draw(st.integers(1, len(lines)))]) + "\n"
    i = draw(st.integers(0, len(lines) - 1))
    lines[i] = mutated(draw, lines[i])
    return "\n".join(lines) + "\n"


@cases(8)
@given(text=ttgir_texts(), as_json=st.booleans())
def test_ttgir_command_on_damaged_kernels(tmp_path, text, as_json):
    path = tmp_path / "k.ttgir"
    path.write_text(text)
    run(["ttgir", str(path), "--timeout", "2", *(["--json"] if as_json else [])])


# -- PTX -------------------------------------------------------------------------

PTX = [
    os.path.join(conftest.DATA, "ptx", name)
    for name in ("transpose_sm80.ptx", "pipeline_sm80.ptx", "ldmatrix_swizzle_sm90a.ptx")
]


@st.composite
def ptx_texts(draw) -> str:
    with open(draw(st.sampled_from(PTX)), encoding="utf-8") as f:
        lines = f.read().splitlines()
    for _ in range(draw(st.integers(1, 3))):
        i = draw(st.integers(0, len(lines) - 1))
        how = draw(st.sampled_from(["drop", "mutate", "duplicate"]))
        if how == "drop":
            del lines[i]
        elif how == "duplicate":
            lines.insert(i, lines[i])
        else:
            lines[i] = mutated(draw, lines[i])
    return "\n".join(lines) + "\n"


@cases(20)
@given(
    text=ptx_texts(),
    options=st.sampled_from(
        [[], ["--json"], ["--block", "128"], ["--block", "0,1"], ["--assume", "param_0=0"]]
    ),
)
def test_ptx_command_on_damaged_kernels(tmp_path, text, options):
    path = tmp_path / "k.ptx"
    path.write_text(text)
    run(["ptx", str(path), "--timeout", "2", *options])


# -- command-line values ---------------------------------------------------------

NUMBERS = st.sampled_from(["0", "16", "128", "-1", "0x10", "4294967296", "3", "x", "1e3", ""])


@cases(80)
@given(
    instr=st.sampled_from([*INSTRUCTIONS, "ldmatrix.x3", "", "ld.shared.b33"]),
    addresses=st.lists(NUMBERS, min_size=1, max_size=40),
    extra=st.sampled_from([[], ["--json"], ["--sources", "0"], ["--sources", "0,16"]]),
)
def test_wavefronts_command_on_any_values(instr, addresses, extra):
    run(["wavefronts", instr, *addresses, *extra])


@cases(80)
@given(
    layout=st.sampled_from([*LAYOUTS, *FORMULAS, "", "Sw<3,3,3>", "(8,64)"]).flatmap(mutations),
    options=st.lists(
        st.sampled_from(
            [
                ["--json"],
                ["--shape", "8,64"],
                ["--shape", "x"],
                ["--shape", "0,0"],
                ["--dtype", "f16"],
                ["--dtype", "f99"],
            ]
        ),
        max_size=2,
    ),
)
def test_map_command_on_any_layout(layout, options):
    run(["map", layout, *[o for pair in options for o in pair]])


# -- the Python API --------------------------------------------------------------

API_VALUES = st.one_of(
    st.sampled_from(LAYOUTS + FORMULAS),
    st.none(),
    st.integers(-2, 9),
    st.lists(st.integers(0, 4), max_size=3),
    st.just(pycute.Layout((8, 64), (64, 1))),
    st.just(pycute.Layout(((2, 4), 8), ((1, 16), 2))),
    st.just(pycute.ComposedLayout(pycute.Swizzle(3, 3, 3), 0, pycute.Layout((8, 64), (64, 1)))),
    st.just(pycute.Swizzle(2, 3, 3)),
)


@cases(80)
@given(
    layout=API_VALUES,
    dtype=st.sampled_from([None, "f16", "f32", "q"]),
    shape=st.sampled_from([None, (8, 64), (0,), (2, 4)]),
)
def test_api_layout_entry_points_on_any_value(layout, dtype, shape):
    for entry in (
        lambda: verify.offsets(layout, dtype=dtype, shape=shape),
        lambda: verify.parse_layout(layout, shape, dtype),
        lambda: verify.check_layout(
            layout,
            {"rd": "ldmatrix.x1 L(lane, 8 * q) for q in 0..8"},
            ["conflict_free rd"],
            dtype=dtype,
            shape=shape,
            timeout=2,
        ),
    ):
        COUNTED["inputs"] += 1
        with contextlib.suppress(SpecError, TypeError):
            entry()


@cases(60)
@given(
    instr=st.sampled_from(INSTRUCTIONS),
    addresses=st.lists(st.integers(-4, 1 << 33), max_size=33),
    sources=st.none() | st.lists(st.integers(-4, 4096), max_size=33),
)
def test_api_wavefronts_on_any_addresses(instr, addresses, sources):
    COUNTED["inputs"] += 1
    with contextlib.suppress(SpecError):
        verify.wavefronts(instr, addresses, sources)


@pytest.fixture(scope="module", autouse=True)
def report_count():
    yield
    if SCALE > 1:
        print(f"\nfuzz_commands: {COUNTED['inputs']} inputs")
