import pytest

from verify.errors import SpecError
from verify.model.layout import Composed, CuteLayout, Swizzle
from verify.spec.parser import parse_file, parse_text


def error_of(text: str) -> str:
    with pytest.raises(SpecError) as info:
        parse_text(text, "t.spec")
    return str(info.value)


def test_cute_print_forms_parse_to_the_same_layout():
    texts = [
        "Sw<3,3,3> o _0 o (_8,_64):(_64,_1)",
        "Swizzle<3,3,3> o (8,64):(64,1)",
        "Sw<3,3,3> o 0 o (_8, _64):(_64, _1)",
    ]
    layouts = [parse_text(f"layout A = {t}").layouts["A"].function for t in texts]
    assert all(layout == layouts[0] for layout in layouts)
    assert layouts[0] == Composed(Swizzle(3, 3, 3), 0, CuteLayout((8, 64), (64, 1)))


def test_nested_shapes_negative_shift_and_pointer_swizzle():
    spec = parse_text(
        "layout N = ((_8,_8),_64):((_64,_512),_1)\n"
        "layout S = Sw<2,4,-3> o (8,64):(64,1)\n"
        "layout G = Sw<3,4,3> o smem_ptr[16b](unset) o (_8,_64):(_64,_1)\n"
    )
    n, s = spec.layouts["N"].function, spec.layouts["S"].function
    assert isinstance(n, CuteLayout) and isinstance(s, Composed)
    assert n.shape == ((8, 8), 64)
    assert s.outer == Swizzle(2, 4, -3)
    assert spec.layouts["G"].pointer_swizzle == Swizzle(3, 4, 3)
    assert spec.layouts["G"].pointer_bits == 16


def test_statements_may_continue_inside_parentheses():
    spec = parse_text("layout A = (_8,\n   _64):(_64,\n _1)  # comment\n")
    assert spec.layouts["A"].function == CuteLayout((8, 64), (64, 1))


@pytest.mark.parametrize(
    "text,expected",
    [
        (
            "layout A = (8,64):(64)\n",
            "t.spec:1:12: error: shape (8,64) and stride (64) are not congruent",
        ),
        (
            "dtype f16\nlayout A = (8,64):(64,1) o\n",
            "t.spec:2:27: error: expected one of #ttg.<encoding><{...}>, '(', 'composition'",
        ),
        ("layout A = (0,4):(1,1)\n", "expected every extent to be at least 1"),
        ("layout = (8):(1)\n", "t.spec:1:8: error: expected one of a name"),
        ("layout F(r in 0..0) = r\n", "t.spec:1:10: error: range of 'r' is empty"),
        ("layout F(r in 0..4) = r + s\n", "formula uses 's'"),
        (
            "layout A = Sw<3,3,2> o (8):(1)\n",
            "t.spec:1:12: error: Swizzle<3,3,2>: expected |S| >= B",
        ),
        ("check maxways <= 2 r\n", "t.spec:1:7: error: expected one of"),
        (
            "layout A = (8):(1)\nlayout A = (8):(1)\n",
            "t.spec:2:8: error: layout 'A' is defined twice",
        ),
        (
            "layout A = (99999999999999999999999):(1)\n",
            "integer literal 99999999999999999999999 is too large",
        ),
        ("layout A = (8):(1) $\n", "t.spec:1:20: error: unexpected character '$'"),
    ],
)
def test_errors_name_file_line_column_expected_and_found(text, expected):
    assert expected in error_of(text)


def test_hostile_input_fails_fast_and_clearly(tmp_path):
    assert "nested parentheses" in error_of("layout A = " + "(" * 100 + "8" + ")" * 100 + ":(1)\n")
    assert "statement too long" in error_of("layout F(x in 0..2) = " + " + ".join(["x"] * 600))
    assert "expected at most" in error_of("#" * (2 << 20))
    assert "NUL byte" in error_of("dtype f16\n\x00")
    garbage = tmp_path / "g.spec"
    garbage.write_bytes(b"dtype f16\n\xff\xfe\x00")
    with pytest.raises(SpecError, match=r"g.spec:2:1: error: expected UTF-8 text, found byte 0xff"):
        parse_file(str(garbage))


def test_empty_spec_is_valid_and_has_no_checks():
    spec = parse_text("")
    assert spec.checks == [] and spec.layouts == {}


def test_property_text_is_kept_as_written():
    spec = parse_text("layout A = (8):(1)\ncheck   bijective   A   expect proved\n")
    assert spec.checks[0].text == "bijective A"
    assert spec.checks[0].expect == "proved"


def test_static_integers_are_accepted_wherever_an_integer_is():
    # Expressions, ranges, buffer options, check bounds and Sw<...>, as CuTe prints them.
    static = parse_text(
        "dtype f16\nbuffer align _128 stages _2 stage_bytes _1024\n"
        "layout A = Sw<_3,_3,_3> o (_8,_64):(_64,_1)\n"
        "layout F(r in _0.._8, c in 0.._64) = _64*r + (c ^ ((r & _7) << _3))\n"
        "access rd = ldmatrix.x1 A(lane, _8 * q) for q in _0.._8\n"
        "check aligned _16 rd\ncheck max_ways <= _1 rd\ncheck wavefronts == _1 rd\n"
        "check equivalent F(r, c) == A(r, c) for r in 0.._8, c in _0..64\n"
    )
    plain = parse_text(
        "dtype f16\nbuffer align 128 stages 2 stage_bytes 1024\n"
        "layout A = Sw<3,3,3> o (8,64):(64,1)\n"
        "layout F(r in 0..8, c in 0..64) = 64*r + (c ^ ((r & 7) << 3))\n"
        "access rd = ldmatrix.x1 A(lane, 8 * q) for q in 0..8\n"
        "check aligned 16 rd\ncheck max_ways <= 1 rd\ncheck wavefronts == 1 rd\n"
        "check equivalent F(r, c) == A(r, c) for r in 0..8, c in 0..64\n"
    )
    assert static.buffer == plain.buffer
    assert static.layouts == plain.layouts
    assert static.accesses["rd"].coords == plain.accesses["rd"].coords
    assert static.accesses["rd"].loops == plain.accesses["rd"].loops
    assert [(c.kind, c.bound, c.loops) for c in static.checks] == [
        (c.kind, c.bound, c.loops) for c in plain.checks
    ]


def test_triton_fields_take_plain_integers_as_ttgir_prints_them():
    with pytest.raises(SpecError, match="expected 'name = value' entries, found 'vec = _8"):
        parse_text(
            "layout T = #ttg.swizzled_shared<{vec = _8, perPhase = 1, maxPhase = 8, "
            "order = [1, 0]}> shape (8, 64)\n"
        )
