"""Spec text -> raw lark parse tree, with the shared grammar and our own post-lexer.

The grammar file (``verify/spec/grammar.lark``) is syntax only and is the one
thing the oracle shares with verify. Everything after the parse -- what a term
means -- is read from the raw tree by this package.

The post-lexer reproduces the language rule "a statement may continue over
several lines inside parentheses": a newline token is dropped while any ``(`` or
``[`` is open. It also bounds nesting and statement length so that the recursive
tree walks of this package stay far from Python's recursion limit.
"""

from __future__ import annotations

from importlib import resources

import lark

from oracle.errors import OracleRefusal

MAX_NESTING = 32
MAX_TOKENS_PER_STATEMENT = 512
MAX_TEXT = 1 << 20

_OPEN, _CLOSE = ("LPAR", "LSQB"), ("RPAR", "RSQB")


class _ParenthesesJoinLines:
    """Drops newline tokens inside open parentheses; bounds depth and length."""

    always_accept = ("_NL",)

    def process(self, stream):
        depth, tokens = 0, 0
        for tok in stream:
            depth += (tok.type in _OPEN) - (tok.type in _CLOSE and depth > 0)
            if depth > MAX_NESTING:
                raise OracleRefusal(f"line {tok.line}: more than {MAX_NESTING} nested parentheses")
            if tok.type == "_NL":
                if depth:
                    continue
                tokens = 0
            else:
                tokens += 1
                if tokens > MAX_TOKENS_PER_STATEMENT:
                    raise OracleRefusal(
                        f"line {tok.line}: statement longer than {MAX_TOKENS_PER_STATEMENT} tokens"
                    )
            yield tok


_PARSER: lark.Lark | None = None


def _parser() -> lark.Lark:
    global _PARSER
    if _PARSER is None:
        grammar = resources.files("verify.spec").joinpath("grammar.lark").read_text()
        _PARSER = lark.Lark(
            grammar,
            parser="lalr",
            lexer="contextual",
            postlex=_ParenthesesJoinLines(),
            propagate_positions=True,
            maybe_placeholders=False,
        )
    return _PARSER


def parse(text: str) -> lark.Tree:
    """The raw parse tree of a spec; a syntax error is a refusal naming line and column."""
    if len(text) > MAX_TEXT or "\x00" in text:
        raise OracleRefusal("spec text too long or not text")
    try:
        return _parser().parse(text + "\n")
    except lark.exceptions.UnexpectedInput as e:
        raise OracleRefusal(
            f"syntax error at line {getattr(e, 'line', '?')}, column {getattr(e, 'column', '?')}"
        ) from None
