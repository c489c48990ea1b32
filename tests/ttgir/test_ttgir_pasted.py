"""TTGIR as pasted into a spec: '#name = #ttg.<...>' alias lines, '!ttg.memdesc<...>'
buffer types, and the linear shared encodings (#ttg.shared_linear,
#ttg.padded_shared), each read from the text Triton itself prints and compared
with Triton's own definition on whole tiles."""

import itertools
import random

import pytest
from test_oracles import colex, gluon_builder, linear_offsets

import verify
from oracle.spec_generator import linear_bases
from verify import offsets
from verify.errors import SpecError

SWIZZLED = "#ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>"


@pytest.fixture(scope="module")
def triton_ir():
    """Gluon's builder, which prints and linearises encodings."""
    return gluon_builder()


def printed_memdesc(builder, layout, shape) -> str:
    """The memdesc type Triton prints for a buffer of `shape` f16 in `layout`."""
    attribute = layout._to_ir(builder)
    return str(
        builder.get_shared_mem_desc_ty(builder.get_half_ty(), list(shape), attribute, list(shape))
    )


def triton_offsets(builder, layout, shape) -> list[int]:
    """Each coordinate's element offset (colexicographic order) by Triton's linear layout."""
    return linear_offsets(builder, layout, shape)[0]


def memdesc_offsets(memdesc: str) -> list[int]:
    spec = verify.layout_spec(memdesc, dtype="f16")
    from verify.spec.parser import parse_text

    return verify.offsets(parse_text(spec).layouts["L"])


SHAPES = [(4, 4), (8, 16), (16, 64), (64, 64), (4, 8, 16)]


@pytest.mark.parametrize("seed,shape", list(itertools.product(range(4), SHAPES)))
def test_shared_linear_as_triton_prints_it_places_every_element_where_triton_does(
    triton_ir, seed, shape
):
    from triton.experimental.gluon.language import SharedLinearLayout

    layout = SharedLinearLayout(linear_bases(random.Random(seed), shape), [], 16)
    memdesc = printed_memdesc(triton_ir, layout, shape)
    assert "#ttg.shared_linear<{offset = " in memdesc
    assert memdesc_offsets(memdesc) == triton_offsets(triton_ir, layout, shape)


@pytest.mark.parametrize(
    "pairs,shape,order",
    [
        ([[32, 8]], (64, 64), [1, 0]),
        ([[64, 4]], (32, 64), [0, 1]),
        ([[16, 1], [64, 2]], (16, 32), [1, 0]),
        ([[8, 2]], (4, 8, 16), [2, 0, 1]),
    ],
)
def test_padded_identity_as_triton_prints_it_is_the_linear_order_plus_padding(
    triton_ir, pairs, shape, order
):
    """Triton's to_linear_layout aborts on padded encodings ('use paddedLinearLayout'),
    so the linear part is compared with the same bases as a shared_linear, and the
    padding is the documented rule (tested on Triton's own examples below)."""
    from triton.experimental.gluon.language import PaddedSharedLayout, SharedLinearLayout

    padded = PaddedSharedLayout.with_identity_for(pairs, list(shape), order)
    memdesc = printed_memdesc(triton_ir, padded, shape)
    assert "#ttg.padded_shared<[" in memdesc and "order = " in memdesc
    linear = triton_offsets(triton_ir, SharedLinearLayout(padded.offset_bases, [], 16), shape)
    expected = [o + sum((o // i) * p for i, p in pairs) for o in linear]
    assert memdesc_offsets(memdesc) == expected


def test_padded_with_bases_as_triton_prints_it_is_its_docstring_example(triton_ir):
    """Gluon's PaddedSharedLayout docstring: shape [8, 4], pairs [[8, 1]], bases
    [[0, 1], [0, 2], [2, 0], [4, 0], [1, 0]] stores x0y0..x0y3, x2y0..x2y3, p0, x4.., x6..,
    p1, x1.., x3.., p2, x5.., x7..."""
    from triton.experimental.gluon.language import PaddedSharedLayout

    layout = PaddedSharedLayout([[8, 1]], [[0, 1], [0, 2], [2, 0], [4, 0], [1, 0]], [], [8, 4])
    memdesc = printed_memdesc(triton_ir, layout, (8, 4))
    assert "{offset = [[0, 1], [0, 2], [2, 0], [4, 0], [1, 0]], block = []}" in memdesc
    stored = {o: c for o, c in zip(memdesc_offsets(memdesc), colex((8, 4)))}
    rows = [x for group in ((0, 2), (4, 6), (1, 3), (5, 7)) for x in group]
    expected: list[tuple[int, int] | None] = []
    for i, x in enumerate(rows):
        expected += [(x, y) for y in range(4)]
        if i % 2:
            expected.append(None)
    assert [stored.get(o) for o in range(36)] == expected


def test_padding_sums_over_pairs_as_triton_documents():
    """The docstring's 1-D rule on 2-D: pairs [[2, 1], [4, 2]] give e0 e1 p | e2 e3 p p p | e4."""
    text = "#ttg.padded_shared<[2:+1, 4:+2] {order = [1, 0], shape = [1, 8]}>"
    assert offsets(text, shape=(1, 8))[:5] == [0, 1, 3, 4, 8]


ALIASED = f"""dtype f16
#shared = {SWIZZLED}
#smem = #ttg.shared_memory
layout A = !ttg.memdesc<64x64xf16, #shared, #smem, mutable>
layout B = #shared shape (64, 64)
layout C = {SWIZZLED} shape (64, 64)
access rd = ldmatrix.x4 A(lane % 16, 8 * (lane / 16) + 16 * k) for k in 0..4
check conflict_free rd
"""


def test_aliases_and_memdescs_name_the_same_layout_as_the_encoding_itself():
    from verify.spec.parser import parse_text

    spec = parse_text(ALIASED)
    tables = {name: verify.offsets(spec.layouts[name]) for name in "ABC"}
    assert tables["A"] == tables["B"] == tables["C"]
    assert verify.check_text(ALIASED).ok


def test_a_memdesc_gives_the_dtype_when_the_spec_has_none():
    from verify.spec.parser import parse_text

    spec = parse_text(ALIASED.replace("dtype f16\n", "").replace("xf16", "xbf16"))
    assert spec.dtype == "bf16"


def test_a_comment_is_still_a_comment():
    text = ALIASED.replace("#smem =", "# a comment: #smem is an alias\n#smem =")
    assert verify.check_text(text).ok


@pytest.mark.parametrize(
    "line,message",
    [
        (
            "layout X = !ttg.memdesc<64x64xbf16, #shared, #smem, mutable>",
            "memdesc stores bf16 elements: expected the dtype, f16, found bf16",
        ),
        (
            "layout X = #shard shape (64, 64)",
            "unknown encoding alias '#shard'.*did you mean '#shared'",
        ),
        ("layout X = !ttg.memdesc<64x64xf16, #shared, #tmem>", "memory space '#tmem'"),
        (
            "layout X = !ttg.memdesc<64x64xf16, #shared, #ttg.tensor_memory>",
            "expected #ttg.shared_memory",
        ),
        (
            "layout X = !ttg.memdesc<32x64xf16, #shared, #smem, mutable, 128x64>",
            r"view \(32x64\) into a larger allocation \(128x64\)",
        ),
        ("layout X = !ttg.memdesc<64x64xf7, #shared, #smem>", "element type 'f7'"),
        (
            "#shared = #ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>",
            "encoding alias '#shared' is defined twice",
        ),
        (
            "layout X = #ttg.shared_linear<{offset = [[0, 1], [1, 0], [1, 0]]}, alignment = 16> "
            "shape (2, 4)",
            "not invertible",
        ),
        (
            "layout X = #ttg.shared_linear<{offset = [[0, 1], [1, 0]], block = [[1, 0]]}>"
            " shape (2, 2)",
            "splits the tensor over CTAs",
        ),
        (
            "layout X = #ttg.shared_linear<{offset = [[0, 1], [4, 0]]}> shape (2, 2)",
            "outside the tensor's shape",
        ),
        (
            "layout X = #ttg.padded_shared<[32:+3] {order = [1, 0], shape = [64, 64]}>"
            " shape (64, 64)",
            "padding: expected a power of two, found 3",
        ),
        (
            "layout X = #ttg.padded_shared<[32:+8, 32:+4] {order = [1, 0], shape = [64, 64]}> "
            "shape (64, 64)",
            "expected distinct intervals",
        ),
        (
            "layout X = #ttg.padded_shared<[32] {order = [1, 0], shape = [64, 64]}> shape (64, 64)",
            "expected 'interval:\\+padding' pairs",
        ),
        (
            "layout X = #ttg.padded_shared<[32:+8] {order = [1, 0], shape = [64, 32]}>"
            " shape (64, 64)",
            r"the encoding's shape \[64, 32\] is not the tensor's \[64, 64\]",
        ),
        (
            "layout X = #ttg.padded_shared<[32:+8] {order = [0, 0], shape = [64, 64]}>"
            " shape (64, 64)",
            "not a permutation",
        ),
    ],
)
def test_malformed_ttgir_is_a_located_error_before_triton_sees_it(line, message):
    text = ALIASED.replace("check conflict_free rd\n", line + "\ncheck conflict_free rd\n")
    with pytest.raises(SpecError, match=message) as err:
        verify.check_text(text, name="t.spec")
    lines = text.splitlines()
    assert f"t.spec:{len(lines) - lines[::-1].index(line)}:" in str(err.value)


def test_an_alias_names_a_thread_map_too():
    blocked = (
        "#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], "
        "warpsPerCTA = [4, 1], order = [1, 0]}>"
    )
    inline = (
        f"dtype f16\nlayout A = {SWIZZLED} shape (64, 64)\n"
        f"access st = st.shared.v4.b32 A by {blocked} shape (64, 64)\ncheck conflict_free st\n"
    )
    aliased = inline.replace(f"by {blocked}", "by #blocked").replace(
        "dtype f16\n", f"dtype f16\n#blocked = {blocked}\n"
    )
    assert [r.status for r in verify.check_text(inline)] == [
        r.status for r in verify.check_text(aliased)
    ]


def test_the_oracle_reads_ttgir_as_pasted_and_agrees():
    """The independent oracle reads alias lines and memdesc types too (48b1fd5):
    each of its answers on the pasted spec is verify's verdict."""
    from oracle import answers

    theirs = answers(ALIASED)
    mine = {r.property: r for r in verify.check_text(ALIASED, name="t.spec")}
    assert "conflict_free rd" in theirs
    for prop, answer in theirs.items():
        assert answer.holds == (mine[prop].status.value == "proved"), prop
