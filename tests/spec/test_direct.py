"""verify.spec.direct: a generated spec read without the parser is the parser's
reading of its text, object for object and position for position; whatever the
readers cannot read goes to the parser, errors included."""

import dataclasses
import os

import pytest
from conftest import DATA

from verify.errors import SpecError
from verify.model.expr import BinOp, Const, Expr, Range, Var
from verify.ptx import check, specgen
from verify.spec import direct
from verify.spec.grammar import MAX_NESTING
from verify.spec.parser import parse_text


def deep(x):
    """Every field, those left out of == (an expression's position) too."""
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        fields = dataclasses.fields(x)
        return (type(x).__name__, *((f.name, deep(getattr(x, f.name))) for f in fields))
    if isinstance(x, dict):
        return tuple((k, deep(v)) for k, v in x.items())
    if isinstance(x, list | tuple):
        return tuple(deep(v) for v in x)
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
    assert deep(got) == deep(parsed)
    assert got.accesses["a0"].coords[0].a.pos == parsed.accesses["a0"].coords[0].a.pos


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
    assert got.buffer.align == 128 and not got.checks and deep(got) == deep(parsed)
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
        seen.append((deep(got), deep(parse_text(self.text, file)), len(self.readers)))
        return got

    monkeypatch.setattr(specgen.SharedSpec, "read", compared)
    check.check_ptx(os.path.join(DATA, sample), check.Options(**options))
    assert seen
    for got, parsed, readers in seen:
        assert got == parsed and readers > 3
