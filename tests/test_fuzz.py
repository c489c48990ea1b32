"""Hostile input: whatever the text, verify answers with a located SpecError or a
result -- never another exception."""
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from verify.errors import SpecError
from verify.runner import run_spec
from verify.spec.parser import parse_text

TOKENS = ["dtype", "f16", "f32", "buffer", "align", "stages", "stage_bytes", "layout", "access",
          "check", "for", "in", "expect", "proved", "bijective", "aligned", "conflict_free",
          "max_ways", "wavefronts", "equivalent", "A", "B", "q", "lane", "Sw", "<", ">", "(",
          ")", ",", ":", "_8", "8", "0", "64", "-3", "0x10000000000", "o", "=", "==", "<=",
          "..", "+", "-", "*", "/", "%", "^", "&", "|", "<<", ">>", "\n", "ldmatrix.x4",
          "ld.shared.v4", "SM75_U32x4_LDSM_N", "smem_ptr[16b](unset)", "#", "\x00", "é"]

VALID_START = ("dtype f16\nbuffer align 16\nlayout A = Sw<3,3,3> o (_8,_64):(_64,_1)\n"
               "access rd = ldmatrix.x1 A(lane, 8 * q) for q in 0..8\n")


def assert_clean(text: str):
    try:
        spec = parse_text(text, "fuzz.spec")
        run_spec(spec, timeout=2)
    except SpecError as e:
        assert str(e).startswith("fuzz.spec"), str(e)


@settings(max_examples=300, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(TOKENS), max_size=40).map(" ".join))
def test_token_soup_never_raises_anything_but_spec_errors(text):
    assert_clean(text)


@settings(max_examples=200, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(TOKENS), max_size=25).map(" ".join))
def test_checks_after_a_valid_prefix_never_raise_anything_but_spec_errors(tail):
    assert_clean(VALID_START + "check " + tail + "\n")


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.text(max_size=200))
def test_arbitrary_text_never_raises_anything_but_spec_errors(text):
    assert_clean(text)
