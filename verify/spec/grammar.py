"""The spec grammar (grammar.lark) as lark parsers: the whole language from
``start`` and one expression from ``expr``, each built once per process from an
analysis cached on disk, and the post-lexer that bounds a statement's tokens and
nesting so hostile input fails fast.
"""

from __future__ import annotations

import hashlib
import os
import sys
from importlib import resources

import lark

from verify.errors import Pos, SpecError

MAX_TOKENS_PER_STATEMENT = 512
MAX_NESTING = 32


class LineAwareLexer:
    """Post-lexer: newlines inside parentheses do not end a statement, and
    statements and nesting are bounded."""

    always_accept = ("_NL",)

    def process(self, stream):
        nesting, count = 0, 0
        for tok in stream:
            if tok.type in ("LPAR", "LSQB"):
                nesting += 1
                if nesting > MAX_NESTING:
                    raise SpecError(
                        f"expected at most {MAX_NESTING} nested parentheses, found more",
                        token_pos(tok),
                    )
            elif tok.type in ("RPAR", "RSQB"):
                nesting = max(0, nesting - 1)
            if tok.type == "_NL":
                if nesting:
                    continue
                count = 0
            else:
                count += 1
                if count > MAX_TOKENS_PER_STATEMENT:
                    raise SpecError(
                        f"statement too long: expected at most {MAX_TOKENS_PER_STATEMENT} tokens",
                        token_pos(tok),
                    )
            yield tok


def token_pos(tok) -> Pos:
    return Pos(getattr(tok, "line", 0) or 0, getattr(tok, "column", 0) or 0)


def _lark(start: str, **options) -> lark.Lark:
    """The grammar's LALR parser from `start`. Analysing the grammar costs about
    0.1 s of CPU on every start and loading lark's saved analysis 0.01 s
    (benchmarks/results/startup.md), so the analysis is kept in the user's cache,
    one file per grammar, lark and Python version; lark checks that key again on
    reading and analyses afresh when a file is stale, torn or unreadable."""
    grammar = resources.files("verify.spec").joinpath("grammar.lark").read_text()
    options.update(parser="lalr", start=start, propagate_positions=True, maybe_placeholders=False)
    return lark.Lark(grammar, cache=cache_file(grammar, start) or False, **options)


def cache_file(grammar: str, start: str) -> str | None:
    """Where the analysis of `grammar` from `start` is kept; None when the cache
    directory cannot be made (a read-only home): then it is analysed every time."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    directory = os.path.join(base, "verify", "grammar")
    key = f"{grammar}{start}{lark.__version__}{sys.version_info[:2]}"
    try:
        os.makedirs(directory, exist_ok=True)
    except OSError:
        return None
    return os.path.join(directory, hashlib.sha256(key.encode()).hexdigest()[:20] + ".lark")


_PARSERS: dict[str, lark.Lark] = {}


def spec_parser() -> lark.Lark:
    """The parser of a whole spec (one statement at a time, as `verify.spec.parser` feeds it)."""
    if "start" not in _PARSERS:
        _PARSERS["start"] = _lark("start", lexer="contextual", postlex=LineAwareLexer())
    return _PARSERS["start"]


def expr_parser() -> lark.Lark:
    """The parser of one expression of the spec language."""
    if "expr" not in _PARSERS:
        _PARSERS["expr"] = _lark("expr")
    return _PARSERS["expr"]
