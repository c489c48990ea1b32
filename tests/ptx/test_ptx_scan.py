"""The hand-written body reader (verify/ptx/scan.py) against lark's parse of the
same text (`parse.parse_ptx_by_lark`, which shares no reading code with it):
every PTX file under tests/data, field for field, and edited texts where the
two must agree on the module or on the error."""

from __future__ import annotations

import glob
import os
import random

import conftest
import pytest

from verify.errors import SpecError
from verify.ptx import ir, parse

SAMPLES = sorted(glob.glob(os.path.join(conftest.DATA, "**", "*.ptx"), recursive=True))


def fields(module: ir.Module) -> list:
    """Everything the module holds, an instruction's source (no part of its
    equality) included."""
    out: list = [module.file, module.version, module.target, module.address_size]
    out += [module.files, module.variables]
    for fn in module.functions:
        body = [(s, s.source) if isinstance(s, ir.Instr) else s for s in fn.body]
        out.append((fn.name, fn.entry, fn.params, fn.line, fn.variables, fn.perf, body))
    return out


def outcome(read, text: str):
    try:
        return fields(read(text, "edited.ptx"))
    except SpecError as e:
        return str(e)


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: os.path.relpath(p, conftest.DATA))
def test_the_reader_agrees_with_lark_on_every_sample(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    assert parse._scanned(text) is not None, "the fast path reads every sample"
    assert fields(parse.parse_ptx(text, path)) == fields(parse.parse_ptx_by_lark(text, path))


SMALL = os.path.join(conftest.DATA, "ptx", "ldmatrix_swizzle_sm80.ptx")
EDITS = [
    ("ld.shared", "ld.shared /* c */"),  # a comment inside an instruction: lark's
    (";\n", "\n"),  # a statement not closed
    (".reg .b32", ".regx .b32"),
    ("%r", "% r"),
    ("[%r", "[ %r"),
    ("{", "{{"),
    ("}", "}}"),
    (",", ",,"),
    (".loc\t1", ".loc\t1,"),
    ("ret;", "ret }"),
]


@pytest.mark.parametrize("edit", EDITS, ids=lambda e: repr(e[1]))
def test_an_edited_text_reads_as_lark_reads_it(edit):
    with open(SMALL, encoding="utf-8") as f:
        text = f.read().replace(edit[0], edit[1], 1)
    assert outcome(parse.parse_ptx, text) == outcome(parse.parse_ptx_by_lark, text)


def test_a_statement_after_the_last_body_is_a_located_error():
    text = ".version 8.0\n.target sm_80\n.entry k()\n.reqntid 32\n{\n\tret;\n}\n\tret;\n}\n"
    with pytest.raises(SpecError) as e:
        parse.parse_ptx(text, "early.ptx")
    assert "early.ptx:8:2" in str(e.value) and "found 'ret'" in str(e.value)


@pytest.mark.parametrize(
    "path",
    [SMALL, os.path.join(conftest.DATA, "ttgir_ptx", "permuted_store.sm80.ptx")],
    ids=os.path.basename,
)
def test_random_edits_read_as_lark_reads_them(path):
    """Characters deleted, doubled or put in at random places (fixed seed): where
    lark refuses the text the error is lark's, where it reads it the module is
    (about two thirds of these edits are read by the fast path)."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    rng = random.Random(23)
    alphabet = ' \t\n;,:{}[]()<>%@!_|+-.$/*"0123456789abcfrx'
    for _ in range(150):
        at = rng.randrange(len(text))
        kind = rng.randrange(3)
        if kind == 0:
            edited = text[:at] + text[at + 1 :]
        elif kind == 1:
            edited = text[:at] + text[at] + text[at:]
        else:
            edited = text[:at] + rng.choice(alphabet) + text[at:]
        assert outcome(parse.parse_ptx, edited) == outcome(parse.parse_ptx_by_lark, edited), at
