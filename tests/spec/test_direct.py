"""verify.spec.direct: a generated spec read without the parser is the parser's
reading of its text, object for object and position for position; whatever the
readers cannot read goes to the parser, errors included."""

import dataclasses
import os
import random

import pytest
from conftest import DATA

from verify.errors import SpecError
from verify.model.expr import BinOp, Const, Expr, Range, Var
from verify.ptx import check, specgen
from verify.spec import direct
from verify.spec.grammar import MAX_NESTING
from verify.spec.parser import parse_text


def deep(x, expression_positions=True):
    """Every field, those left out of == (an expression's position) too; without
    `expression_positions`, an expression's as == compares it (`direct.access`'s
    expressions are the writer's nodes, at the writer's positions)."""
    if isinstance(x, Expr) and not expression_positions:
        return ("expression", x)
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        fields = dataclasses.fields(x)
        return (
            type(x).__name__,
            *((f.name, deep(getattr(x, f.name), expression_positions)) for f in fields),
        )
    if isinstance(x, dict):
        return tuple((k, deep(v, expression_positions)) for k, v in x.items())
    if isinstance(x, list | tuple):
        return tuple(deep(v, expression_positions) for v in x)
    return x


def written(*statements):
    """(lines, readers) of `direct`'s (text, reader) pairs, a comment first."""
    lines, readers = ["# generated"], {}
    for text, reader in statements:
        lines.append(text)
        if reader is not None:
            readers[len(lines)] = (text, reader)
    return lines, readers


def both(lines, readers):
    text = "\n".join(lines) + "\n"
    return direct.read(lines, readers, "g.spec"), parse_text(text, "g.spec")


X, W, LANE = Var("x"), Var("warp"), Var("lane")
NESTED = BinOp("^", BinOp("*", BinOp("+", BinOp("*", W, Const(32)), LANE), Const(4)), X)


def test_every_statement_form_reads_as_the_parser_reads_it():
    lines, readers = written(
        direct.dtype("u8"),
        direct.buffer_align(128),
        direct.global_align(256),
        direct.identity_layout("M16", "a", Range(0, 4081)),
        direct.identity_layout("G0", "a", Range(0, 8192)),
        direct.access(
            "a0",
            "cp.async.cg.shared.global.16",
            "M16",
            [NESTED],
            ("G0", [BinOp("+", BinOp("*", LANE, Const(16)), Var("g_x"))]),
            [("g_x", Range(0, 128)), ("warp", Range(0, 4)), ("x", Range(3, 9))],
        ),
        direct.check_conflict_free("a0"),
        direct.access("a1", "ld.shared.v4.b32", "M16", [BinOp("<<", LANE, Const(4))], None, []),
        direct.check_conflict_free("a1"),
    )
    assert len(readers) == len(lines) - 1  # every statement has its reader
    got, parsed = both(lines, readers)
    assert deep(got, expression_positions=False) == deep(parsed, expression_positions=False)
    assert got.accesses["a0"].coords[0] is NESTED  # the writer's node, not a copy
    assert got.accesses["a0"].source.pos == parsed.accesses["a0"].source.pos


@pytest.mark.parametrize(
    "statement",
    [
        direct.access("a0", "st.shared.b32", "M4", [BinOp("-", X, Const(-3))], None, []),
        direct.access("a0", "st.shared.b32", "M4", [Var("in")], None, [("in", Range(0, 4))]),
        direct.access("a0", "st.shared.b32", "M4", [Var("_x")], None, []),
        direct.access("a0", "st.shared.b32", "M4", [LANE], None, [("x", Range(-1, 4))]),
    ],
)
def test_what_the_grammar_may_read_otherwise_has_no_reader_and_is_parsed(statement):
    assert statement[1] is None
    lines, readers = written(
        direct.dtype("u8"), direct.identity_layout("M4", "a", Range(0, 64)), statement
    )

    def outcome(read):
        try:
            return deep(read())
        except SpecError as e:
            return str(e)

    parsed = outcome(lambda: parse_text("\n".join(lines) + "\n", "g.spec"))
    assert outcome(lambda: direct.read(lines, readers, "g.spec")) == parsed


def test_nesting_beyond_the_parsers_bound_is_left_to_the_parser():
    deep_expr: Expr = LANE
    for _ in range(MAX_NESTING):
        deep_expr = BinOp("+", deep_expr, Const(1))
    assert direct.access("a0", "st.shared.b32", "M4", [deep_expr], None, [])[1] is None
    shallower = BinOp("+", LANE, Const(1))
    for _ in range(MAX_NESTING - 2):
        shallower = BinOp("+", shallower, Const(1))
    assert direct.access("a0", "st.shared.b32", "M4", [shallower], None, [])[1] is not None


def test_an_edited_line_an_align_line_and_an_unresolved_name():
    lines, readers = written(
        direct.dtype("u8"),
        direct.buffer_align(16),
        direct.identity_layout("M4", "a", Range(0, 64)),
        direct.access("a0", "st.shared.b32", "M4", [BinOp("*", LANE, Const(4))], None, []),
        direct.check_conflict_free("a0"),
    )
    edited = [line.replace("align 16", "align 128") for line in lines]
    edited[-1] = "#"  # a blanked line keeps the numbering
    got, parsed = both(edited, readers)
    assert got.buffer.align == 128 and not got.checks
    assert deep(got, False) == deep(parsed, False)
    edited[4] = edited[4].replace("lane * 4", "lane * 8")  # no reader: the parser reads it
    got, parsed = both(edited, readers)
    assert deep(got) == deep(parsed) and "8" in str(got.accesses["a0"].coords[0])
    broken = lines[:-1] + ["check conflict_free a9"]
    with pytest.raises(SpecError) as expected:
        parse_text("\n".join(broken) + "\n", "g.spec")
    with pytest.raises(SpecError) as got_error:
        direct.read(broken, readers, "g.spec")
    assert str(got_error.value) == str(expected.value)


def test_keywords_are_the_grammars():
    assert {"for", "in", "o", "from", "access", "check", "proved", "by"} <= direct.keywords()
    assert not direct.plain_name("o") and direct.plain_name("warp")


@pytest.mark.parametrize(
    "sample, options",
    [
        ("ptx/cute_sgemm_sm80.ptx", {}),  # cp.async sources: G layouts, own variables
        ("ptx/triton_softmax_sm80.ptx", {}),
        ("ttgir_ptx/matmul_64x64x32.sm80.ptx", {}),
    ],
)
def test_ptx_specs_read_as_their_text_parses(monkeypatch, sample, options):
    seen = []
    read = specgen.SharedSpec.read

    def compared(self, file, lines=None):
        got = read(self, file, lines)
        parsed = parse_text(self.text, file)
        seen.append((deep(got, False), deep(parsed, False), len(self.readers)))
        return got

    monkeypatch.setattr(specgen.SharedSpec, "read", compared)
    check.check_ptx(os.path.join(DATA, sample), check.Options(**options))
    assert seen
    for got, parsed, readers in seen:
        assert got == parsed and readers > 3


# -- statements written as text (verify.ttgir.specgen) ----------------------------------

SWIZZLED = "#ttg.swizzled_shared<{vec = 8, perPhase = 2, maxPhase = 4, order = [1, 0]}>"
NVMMA = "#ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>"
ROW = "((lane >> 2) & 7) ^ (r & 1) * 32 ^ (warp & 3) * 8"


def outcome(read):
    try:
        return deep(read())
    except SpecError as e:
        return str(e)


def same_outcome(lines, readers, parsed_too=None):
    """parse_text's reading of the lines (or its error), which direct.read gives;
    `parsed_too` counts the readings left to the parser."""
    parsed = outcome(lambda: parse_text("\n".join(lines) + "\n", "g.spec"))
    before = parsed_too.call_count if parsed_too else 0
    assert outcome(lambda: direct.read(lines, readers, "g.spec")) == parsed
    if parsed_too is not None and parsed_too.call_count > before:
        parsed_too.fallbacks += 1
    return parsed


def test_every_written_statement_form_reads_as_the_parser_reads_it():
    lines, readers = written(
        direct.dtype("b16"),
        direct.buffer_align(16, 2, 4096),
        direct.encoded_layout("B", SWIZZLED, [64, 32]),
        direct.check_bijective("B"),
        direct.cute_layout("Gop0", 3056, 1),
        direct.written_access(
            "op0",
            "cp.async.cg.16",
            "B",
            [ROW, "(lane & 3) * 8"],
            ("Gop0", [f"({ROW}) * 16 * s_div16 + ((lane & 3) * 8) * 1"]),
            [("r", Range(0, 2)), ("warp", Range(0, 4)), ("s_div16", Range(0, 4))],
        ),
        direct.check_conflict_free("op0"),
        direct.written_access(
            "op1", "ldmatrix.x4", "B", ["((lane & 15)) + 16 * s1", "0"], None, [("s1", Range(0, 2))]
        ),
        direct.encoded_layout("V0", NVMMA, [32, 64]),
        direct.check_equivalent("B", "V0"),
        direct.cute_layout("R", 64, 1),
    )
    assert len(readers) == len(lines) - 1
    got, parsed = both(lines, readers)
    assert deep(got) == deep(parsed)
    assert (got.buffer.stages, got.buffer.stage_bytes) == (2, 4096)
    assert got.layouts["V0"].required_align == 1024


@pytest.mark.parametrize("stages", [0, 1, 2])
def test_a_buffer_of_one_stage_is_written_and_read_as_the_parser_reads_it(stages):
    statement = direct.buffer_align(128, stages, 512)
    assert ("stages" in statement[0]) == (stages > 1)
    same_outcome(*written(direct.dtype("u8"), statement))


@pytest.mark.parametrize(
    "dtype, encoding, shape",
    [
        ("b32", NVMMA, [64, 32]),  # elementBitWidth other than the dtype's: the parser's error
        ("b16", SWIZZLED, [64, 30]),  # not a power of two
        ("b16", "#ttg.blocked<{sizePerThread = [1, 1]}>", [64, 32]),
        ("b16", SWIZZLED.replace("vec = 8", "vec = 8 ,, "), [64, 32]),
    ],
)
def test_an_encoding_the_reader_cannot_read_is_the_parsers_to_report(dtype, encoding, shape):
    statement = direct.encoded_layout("B", encoding, shape)
    assert statement[1] is not None
    assert isinstance(same_outcome(*written(direct.dtype(dtype), statement)), str)


def _expression_text(rng: random.Random, depth: int) -> str:
    """A random expression of the grammar's operators, parenthesised and spaced at
    random, that a spec may hold: divisors, shifts and subtrahends are constants
    that keep it defined and non-negative (every operand is at least 0)."""
    leaves = ["lane", "x", "warp", str(rng.randrange(0, 40))]
    if depth == 0 or rng.random() < 0.3:
        return rng.choice(leaves + ["18446744073709551615"] * (rng.random() < 0.1))
    op = rng.choice(["|", "^", "&", "<<", ">>", "+", "-", "*", "/", "%"])
    a, b = _expression_text(rng, depth - 1), _expression_text(rng, depth - 1)
    if op in ("<<", ">>", "/", "%"):
        b = str(rng.randrange(1, 5))
    if op == "-":
        a, b = f"({a}) + 40", rng.choice(leaves[:3])
    text = f"{a}{rng.choice([' ', ''])}{op}{rng.choice([' ', ''])}{b}"
    return f"({text})" if rng.random() < 0.4 else text


EDGE_EXPRESSIONS = [
    "x - -3",
    "0x10",
    "_8",
    "in",
    "o",
    "Sw",
    "f(x)",
    "x  +  1",
    "(x",
    "x)",
    "x +",
    "",
    "18446744073709551616",
    "007",
    "x\t+ 1",
    "x.y",
    "((x))",
    "lane ^ (x)",
    "(lane) * 4",
    "((lane) + (x)) * ((4))",
    "1x",
    "x # 1",
    "y",
    "(" * 31 + "x" + ")" * 31,
    "(" * 32 + "x" + ")" * 32,
    " + ".join(["x"] * 250),
    " + ".join(["x"] * 252),
]


class _Counted:
    """parse_text, counting its calls."""

    def __init__(self):
        self.call_count, self.fallbacks = 0, 0

    def __call__(self, text, file="<input>"):
        self.call_count += 1
        return parse_text(text, file)


@pytest.mark.parametrize("seed", range(4))
def test_written_expressions_read_as_the_parser_reads_them(monkeypatch, seed):
    """Over fixed random expressions, as text both ways (positions, errors, the
    parser's bounds): whatever the reader does not read goes to the parser."""
    counted = _Counted()
    monkeypatch.setattr("verify.spec.parser.parse_text", counted)
    rng = random.Random(seed)
    texts = [_expression_text(rng, rng.randrange(0, 6)) for _ in range(60)]
    for text in texts + (EDGE_EXPRESSIONS if seed == 0 else []):
        loops = [("x", Range(0, 4)), ("warp", Range(0, 2))]
        lines, readers = written(
            direct.dtype("u8"),
            direct.identity_layout("M4", "a", Range(0, 1 << 20)),
            direct.written_access("a0", "st.shared.b32", "M4", [f"({text}) & 4095"], None, loops),
            direct.written_access("a1", "cp.async.ca.4", "M4", ["0"], ("M4", [text]), loops),
        )
        same_outcome(lines, readers, counted)
    assert counted.fallbacks < len(texts) // 2  # the reader reads most of them


@pytest.mark.parametrize(
    "sample, forms",
    [
        ("tests/data/ttgir_ptx/matmul_64x64x32.sm80.ttgir", ["stages 2", "from Gop0("]),
        ("specs/triton_kernels/gluon_transpose_disagree.sm80.ttgir", ["check equivalent"]),
        ("specs/triton_kernels/attention.sm90.ttgir", ["#ttg.nvmma_shared"]),
        ("tests/data/triton_corpus/nvmma_other_width.mlir", ["#ttg.shared_linear"]),
    ],
)
def test_ttgir_specs_read_as_their_text_parses(monkeypatch, sample, forms):
    """Each form verify.ttgir.specgen writes, read by its reader, in its kernels."""
    pytest.importorskip("triton")
    from verify.ttgir import module
    from verify.ttgir import specgen as ttgir_specgen

    seen = []
    read = ttgir_specgen.BufferSpec.read

    def compared(self, file):
        got = read(self, file)
        seen.append((deep(got), deep(parse_text(self.text, file)), self))
        return got

    monkeypatch.setattr(ttgir_specgen.BufferSpec, "read", compared)
    module.check_module(sample)
    assert seen
    for got, parsed, spec in seen:
        assert got == parsed
        assert len(spec.readers) == len(spec.lines) - 1  # all but the comment line
    texts = "".join(spec.text for _, _, spec in seen)
    assert all(form in texts for form in forms)
