"""Hostile input: whatever the text, verify answers with a located SpecError or a
result -- never another exception."""

import re

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from verify.cli import main
from verify.engines.runner import run_spec
from verify.errors import SpecError
from verify.spec.parser import parse_text

TOKENS = [
    "dtype",
    "f16",
    "f32",
    "buffer",
    "align",
    "stages",
    "stage_bytes",
    "layout",
    "access",
    "check",
    "for",
    "in",
    "expect",
    "proved",
    "bijective",
    "aligned",
    "conflict_free",
    "max_ways",
    "wavefronts",
    "equivalent",
    "A",
    "B",
    "q",
    "lane",
    "Sw",
    "<",
    ">",
    "(",
    ")",
    ",",
    ":",
    "_8",
    "8",
    "0",
    "64",
    "-3",
    "0x10000000000",
    "o",
    "=",
    "==",
    "<=",
    "..",
    "+",
    "-",
    "*",
    "/",
    "%",
    "^",
    "&",
    "|",
    "<<",
    ">>",
    "\n",
    "ldmatrix.x4",
    "ld.shared.v4",
    "SM75_U32x4_LDSM_N",
    "smem_ptr[16b](unset)",
    "#",
    "\x00",
    "é",
    "tile_to_shape",
    "composition",
    "tma",
    "SWIZZLE_128B",
    "shape",
    "base_aligned",
    "GMMA::Layout_K_SW128_Atom",
    "half_t",
    "[1, 0]",
    "{",
    "}",
    "#ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>",
    "#ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>",
    "#ttg.swizzled_shared<{vec = 3, order = [0]}>",
    "#triton_gpu.shared<{}>",
]

VALID_START = (
    "dtype f16\nbuffer align 16\nlayout A = Sw<3,3,3> o (_8,_64):(_64,_1)\n"
    "access rd = ldmatrix.x1 A(lane, 8 * q) for q in 0..8\n"
)


def assert_clean(text: str):
    try:
        spec = parse_text(text, "fuzz.spec")
        run_spec(spec, timeout=2)
    except SpecError as e:
        assert str(e).startswith("fuzz.spec"), str(e)


@settings(
    max_examples=300, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
@given(st.lists(st.sampled_from(TOKENS), max_size=40).map(" ".join))
def test_token_soup_never_raises_anything_but_spec_errors(text):
    assert_clean(text)


@settings(
    max_examples=200, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
@given(st.lists(st.sampled_from(TOKENS), max_size=25).map(" ".join))
def test_checks_after_a_valid_prefix_never_raise_anything_but_spec_errors(tail):
    assert_clean(VALID_START + "check " + tail + "\n")


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.text(max_size=200))
def test_arbitrary_text_never_raises_anything_but_spec_errors(text):
    assert_clean(text)


HOSTILE = {
    "empty": b"",
    "binary": bytes(range(256)) * 4,
    "nul": b"dtype f16\x00\n",
    "nesting_64": b"layout A = " + b"(" * 64 + b"8" + b")" * 64 + b":1\n",
    "zero_extent": b"dtype f16\nlayout A = (0,8):(1,8)\ncheck bijective A\n",
    "negative_extent": b"dtype f16\nlayout A = (-8,8):(1,8)\n",
    "stride_2_40": b"dtype f16\nlayout A = (8,8):(1099511627776,1)\ncheck bijective A\n",
    "unknown_instruction": b"dtype f16\nlayout A = (8,8):(8,1)\n"
    b"access a = ld.global.b32 A(lane % 8, 0)\n",
    "python_in_a_spec": b"dtype f16\nlayout A = __import__('os').system('true')\n",
    "huge": b"# padding\n" * 120_000,
    "bad_triton_field": b"dtype f16\nlayout A = #ttg.swizzled_shared<{vec = 8, perPhase = 1, "
    b"maxPhase = 8, order = [1, 0], bogus = 3}> shape (8, 64)\ncheck bijective A\n",
    "triton_not_power_of_two": b"dtype f16\nlayout A = #ttg.swizzled_shared<{vec = 8, "
    b"perPhase = 1, maxPhase = 8, order = [1, 0]}> shape (8, 60)\ncheck bijective A\n",
    "gmma_fp64": b"dtype f64\nlayout A = GMMA::Layout_K_SW128_Atom<double>\ncheck bijective A\n",
    "tile_not_multiple": b"dtype f16\nlayout A = tile_to_shape((8,64):(64,1), (12, 64))\n"
    b"check bijective A\n",
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_spec_is_a_located_error_with_exit_2(name, tmp_path):
    """file:line:col: error: ..., exit 2, no traceback, promptly."""
    path = tmp_path / f"{name}.spec"
    path.write_bytes(HOSTILE[name])
    result = CliRunner().invoke(main, [str(path)], catch_exceptions=False)
    assert result.exit_code == 2, result.output
    assert re.search(rf"{re.escape(str(path))}:\d+:\d+: error: ", result.output), result.output
    assert "Traceback" not in result.output
