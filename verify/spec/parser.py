"""Spec text -> `Spec` (see README, "The spec language").

Parsing is LALR(1) with lark; every error becomes a `SpecError` that names the
line and column, what was expected and what was found. Input is bounded before
it reaches the parser (file size, statement length, nesting), so hostile input
fails fast instead of exhausting time, memory or the Python stack.

Every error of a file is reported, not only the first, as compilers do: the text
is cut into statements (a newline outside parentheses ends one), each statement
is parsed on its own and its first error kept, then names are resolved
(`verify.spec.resolve`). An error that only follows from an earlier one (a use
of a layout whose definition failed) is not repeated.

Here: cutting the text into statements, the error messages, `parse_text` and
`parse_file`. The grammar's parsers and the post-lexer that bounds a statement
are `verify.spec.grammar`'s; a statement's tree becomes part of the `Spec` in
`verify.spec.transform`.
"""

from __future__ import annotations

import re

import lark
from lark import Token

from verify.errors import Pos, SpecError, SpecErrors
from verify.notation import ttgir_types
from verify.spec.ast import Spec
from verify.spec.grammar import MAX_TOKENS_PER_STATEMENT, spec_parser
from verify.spec.names import did_you_mean
from verify.spec.resolve import resolution_errors
from verify.spec.transform import FollowOn, ToSpec, element_width_errors

# MAX_TOKENS_PER_STATEMENT is the grammar's; named here too for the front ends that
# write spec text and keep within it (verify.ptx.specgen).
__all__ = ["MAX_TOKENS_PER_STATEMENT", "parse_file", "parse_text", "statement_texts"]

MAX_SPEC_BYTES = 1 << 20

_FRIENDLY = {
    "NAME": "a name",
    "INT": "an integer",
    "DOTTED": "an instruction name",
    "_NL": "end of line",
    "$END": "end of file",
    "SMEM_PTR": "smem_ptr[Nb]",
    "SWIZZLE": "Sw<B,M,S>",
    "CMP": "'<=' or '=='",
    "VERDICT": "'proved' or 'refuted'",
    "_COMPOSE": "'o'",
    "MINUS": "'-'",
    "GMMA_ATOM": "Layout_K_SW128_Atom",
    "TRITON_ENCODING": "#ttg.<encoding><{...}>",
}


# TTGIR as pasted ('#shared = ...', '#shared', '!ttg.memdesc<...>') is accepted where
# it fits but not offered in "expected ..." lists: they name the spec language's own forms.
_UNLISTED = {"ENCODING_ALIAS", "ENCODING_REF", "MEMDESC", "SHARED_MEMORY"}


def _describe_expected(expected) -> str:
    names = []
    for term in sorted(set(expected) - _UNLISTED):
        if term in _FRIENDLY:
            names.append(_FRIENDLY[term])
            continue
        try:
            pattern = spec_parser().get_terminal(term).pattern
            names.append(f"'{pattern.value}'" if pattern.type == "str" else term)
        except KeyError:
            names.append(term)
    names = sorted(set(names))
    return names[0] if len(names) == 1 else "one of " + ", ".join(names)


def _syntax_error(err: lark.exceptions.UnexpectedInput) -> SpecError:
    pos = Pos(getattr(err, "line", 0) or 0, getattr(err, "column", 0) or 0)
    if isinstance(err, lark.exceptions.UnexpectedCharacters):
        return SpecError(f"unexpected character {err.char!r}", pos)
    if isinstance(err, lark.exceptions.UnexpectedToken):
        tok = err.token
        found = (
            "end of line"
            if tok.type == "_NL"
            else ("end of file" if tok.type == "$END" else repr(str(tok)))
        )
        return SpecError(
            f"expected {_describe_expected(err.expected)}, found {found}"
            f"{_keyword_hint(tok, err.expected)}",
            pos,
        )
    assert isinstance(err, lark.exceptions.UnexpectedEOF), f"lark raised {type(err).__name__}"
    return SpecError(f"unexpected end of file; expected {_describe_expected(err.expected)}", pos)


def _keyword_hint(tok: Token, expected) -> str:
    """'did you mean' for a misspelt keyword: a statement, property or verdict."""
    if tok.type not in ("NAME", "DOTTED"):
        return ""
    words = []
    for term in expected:
        try:
            pattern = spec_parser().get_terminal(term).pattern
        except KeyError:
            continue
        if pattern.type == "str" and pattern.value.isidentifier():
            words.append(pattern.value)
        alternatives = re.fullmatch(r"\(\?:([\w|]+)\)", pattern.value)
        if pattern.type == "re" and alternatives:
            words += alternatives.group(1).split("|")
    return did_you_mean(str(tok), words)


# Comments, and what starts with '#' but is not one: Triton encodings, and the head
# of a TTGIR alias line ('#shared =', at the start of a line).
_ALIAS_HEAD = r"(?m:^[\t ]*#[A-Za-z_][A-Za-z0-9_]*[\t ]*=)"
_COMMENT_OR_ENCODING = (
    _ALIAS_HEAD + r"|#(?:ttg|triton_gpu)\.[A-Za-z_]+<(?:[^<>\n]|"
    r"<(?:[^<>\n]|<[^<>\n]*>)*>)*>|#ttg\.shared_memory|#[^\n]*"
)
_STATEMENT_BREAKS = re.compile(_COMMENT_OR_ENCODING + r"|[()\[\]\n]")
_DEFINES = re.compile(
    r"[\t ]*(?:(?:layout|access)[\t ]+(?P<name>[A-Za-z][A-Za-z0-9_]*)|"
    r"(?P<alias>#[A-Za-z_][A-Za-z0-9_]*)[\t ]*=)"
)


def _statements(text: str):
    """(first line, offset, text) of each statement: a newline outside
    parentheses and brackets ends one, as the post-lexer reads it. Each starts at
    the beginning of its line, so columns need no shifting."""
    depth, line, start, start_line = 0, 1, 0, 1
    for m in _STATEMENT_BREAKS.finditer(text):
        c = m.group()
        if c in "([":
            depth += 1
        elif c in ")]":
            depth = max(0, depth - 1)
        elif c == "\n":
            line += 1
            if depth == 0:
                yield start_line, start, text[start : m.end()]
                start, start_line = m.end(), line
    yield start_line, start, text[start:]


def statement_texts(text: str) -> list[tuple[int, str]]:
    """(first line, text) of each statement that is not blank, as the parser cuts
    them (for tools that rewrite a spec statement by statement)."""
    return [(line, chunk) for line, _, chunk in _statements(text) if not _is_blank(chunk)]


def _is_blank(chunk: str) -> bool:
    """Only whitespace and comments (a Triton encoding is not a comment)."""
    kept = ("#ttg", "#triton_gpu")
    return not re.sub(
        _COMMENT_OR_ENCODING,
        lambda m: (
            m.group()
            if m.group().lstrip().startswith(kept) or re.fullmatch(_ALIAS_HEAD, m.group())
            else ""
        ),
        chunk,
    ).strip()


def _shift(tree: lark.Tree, lines: int, chars: int):
    """Positions of a statement parsed alone, moved to where it sits in the file."""
    for sub in tree.iter_subtrees():
        if not sub.meta.empty:
            sub.meta.line += lines
            sub.meta.end_line += lines
            sub.meta.start_pos += chars
            sub.meta.end_pos += chars
        for tok in sub.children:
            if isinstance(tok, Token) and tok.line is not None:
                assert tok.end_line is not None and tok.start_pos is not None, "lark places it"
                assert tok.end_pos is not None, "a placed token has its end"
                tok.line += lines
                tok.end_line += lines
                tok.start_pos += chars
                tok.end_pos += chars


def _shifted(error: SpecError, first_line: int, chunk: str) -> SpecError:
    """A parse error of a statement parsed alone, at its place in the file; one
    without a position (the statement ended early) points past its last character."""
    if error.pos.line:
        return SpecError(error.message, Pos(error.pos.line + first_line - 1, error.pos.col))
    lines = chunk.rstrip().split("\n")
    return SpecError(error.message, Pos(first_line + len(lines) - 1, len(lines[-1]) + 1))


def _statement_error(
    transformer: ToSpec, first_line: int, offset: int, chunk: str
) -> SpecError | None:
    """Parse and apply one statement; its first error, if any."""
    widths = len(transformer.element_widths)
    try:
        tree = spec_parser().parse(chunk if chunk.endswith("\n") else chunk + "\n")
        _shift(tree, first_line - 1, offset)
        transformer.transform(tree)
        return None
    except lark.exceptions.VisitError as e:
        if not isinstance(e.orig_exc, SpecError):
            raise
        error = e.orig_exc
    except lark.exceptions.UnexpectedInput as e:
        error = _shifted(_syntax_error(e), first_line, chunk)
    except SpecError as e:  # from the post-lexer, inside the statement
        error = _shifted(e, first_line, chunk)
    del transformer.element_widths[widths:]  # a failed layout names no width
    defined = _DEFINES.match(chunk)
    if defined:
        transformer.failed.add(defined["name"] or defined["alias"])
    return error


def _check_input(text: str):
    if len(text) > MAX_SPEC_BYTES:
        raise SpecError(
            f"spec is {len(text)} characters long: expected at most {MAX_SPEC_BYTES}", Pos(1, 1)
        )
    if "\x00" in text:
        line = text.count("\n", 0, text.index("\x00")) + 1
        raise SpecError("expected text, found a NUL byte", Pos(line, 1))


def parse_text(text: str, file: str = "<input>") -> Spec:
    """Parse spec text and resolve its names. Raises a SpecError with file, line,
    column and the source line; a `SpecErrors` when there are several."""
    try:
        _check_input(text)
    except SpecError as e:
        raise e.located(file) from None
    transformer = ToSpec(file, text)
    errors = []
    for first_line, offset, chunk in _statements(text):
        if _is_blank(chunk):
            continue
        error = _statement_error(transformer, first_line, offset, chunk)
        if error is not None and not isinstance(error, FollowOn):
            errors.append(error)
    spec = transformer.spec
    errors += ttgir_types.element_type_errors(spec, transformer.memdesc_types)
    errors += element_width_errors(spec, transformer.element_widths)
    errors += resolution_errors(spec, text, transformer.failed, transformer.dtype_failed)
    if errors:
        errors = sorted(
            (e.located(file).with_source(text) for e in errors),
            key=lambda e: (e.pos.line, e.pos.col),
        )
        raise (errors[0] if len(errors) == 1 else SpecErrors(errors)) from None
    return spec


def parse_file(path: str) -> Spec:
    try:
        with open(path, "rb") as f:
            raw = f.read(MAX_SPEC_BYTES + 1)
    except OSError as e:
        raise SpecError(f"cannot read spec: {e.strerror}", file=path) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        line = raw.count(b"\n", 0, e.start) + 1
        raise SpecError(
            f"expected UTF-8 text, found byte 0x{raw[e.start]:02x}",
            Pos(line, e.start - raw.rfind(b"\n", 0, e.start)),
            path,
        ) from None
    return parse_text(text, path)
