"""Spec templates: a spec whose text names parameters as ``${NAME}``, and the
``--param NAME=V1,V2,...`` values that fill them.

Substitution is textual, so a parameter can stand anywhere: a dtype, an extent,
a swizzle's bits, an instruction, a whole layout. The spec language has no `$`,
so ``${`` never means anything else. Every parameter the template names must be
given and every one given must be used: either mistake is reported at its place
(the template's line and column, or the command line) before anything runs.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass

from verify.errors import Pos, SpecError, SpecErrors
from verify.spec.names import did_you_mean

NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
PLACEHOLDER = re.compile(r"\$\{([^}\n]*)\}")
ARGS = "<args>"
CLOSING = {"(": ")", "[": "]", "<": ">", "{": "}"}


@dataclass(frozen=True)
class Param:
    name: str
    values: tuple[str, ...]


def parse_param(text: str) -> Param:
    """``NAME=V1,V2,...``; a comma inside brackets belongs to its value, so a layout
    such as ``Sw<3,3,3> o (8,64):(64,1)`` is one value."""
    name, eq, values_text = text.partition("=")
    name = name.strip()
    if not eq or not NAME.fullmatch(name):
        raise _arg_error(
            f"--param {text}: expected NAME=V1,V2,... with NAME a letter or '_' "
            "followed by letters, digits or '_'"
        )
    values = tuple(v.strip() for v in _split_top_level(values_text))
    if any(not v for v in values):
        raise _arg_error(f"--param {text}: expected a value between every two commas")
    if any("\n" in v for v in values):
        # Keeps every combination's lines where the template has them.
        raise _arg_error(f"--param {name}: expected values on one line")
    repeated = sorted({v for v in values if values.count(v) > 1})
    if repeated:
        raise _arg_error(f"--param {name}: value {repeated[0]!r} is given twice")
    return Param(name, values)


def _split_top_level(text: str) -> list[str]:
    parts, depth, start = [], [], 0
    for i, c in enumerate(text):
        if c in CLOSING:
            depth.append(CLOSING[c])
        elif depth and c == depth[-1]:
            depth.pop()
        elif c == "," and not depth:
            parts.append(text[start:i])
            start = i + 1
    return parts + [text[start:]]


def _arg_error(message: str) -> SpecError:
    return SpecError(message, file=ARGS)


@dataclass(frozen=True)
class Template:
    path: str
    text: str

    def placeholders(self) -> list[tuple[str, Pos]]:
        """Every ``${...}`` with its position, in order; names not yet validated."""
        found = []
        for number, line in enumerate(self.text.splitlines(), 1):
            found += [(m.group(1), Pos(number, m.start() + 1)) for m in PLACEHOLDER.finditer(line)]
        return found

    def check(self, params: list[Param]):
        """Raises every mistake at once: a malformed placeholder or an unknown
        parameter (at its first place in the template), a parameter given twice or
        never used (<args>)."""
        given = [p.name for p in params]
        errors = [
            self._error("expected ${NAME}, found '$' without '{'", pos)
            for pos in self._dangling_dollars()
        ]
        unknown = set()
        for name, pos in self.placeholders():
            if not NAME.fullmatch(name):
                errors.append(
                    self._error(
                        f"expected ${{NAME}} with NAME a letter or '_' followed "
                        f"by letters, digits or '_', found '${{{name}}}'",
                        pos,
                    )
                )
            elif name not in given and name not in unknown:
                unknown.add(name)  # once, at its first place, as gcc does
                errors.append(
                    self._error(
                        f"unknown parameter '${{{name}}}': expected one given by --param "
                        f"({', '.join(given)}){did_you_mean(name, given)}",
                        pos,
                    )
                )
        used = {name for name, _ in self.placeholders()}
        errors += [
            _arg_error(f"--param {name} is given twice")
            for name in sorted({n for n in given if given.count(n) > 1})
        ]
        errors += [
            _arg_error(f"--param {name}: {self.path} never uses ${{{name}}}")
            for name in dict.fromkeys(given)
            if name not in used
        ]
        if errors:
            raise SpecErrors(errors)

    def _dangling_dollars(self) -> list[Pos]:
        """'$' that does not start a complete ``${...}`` on its line."""
        out = []
        for number, line in enumerate(self.text.splitlines(), 1):
            starts = {m.start() for m in PLACEHOLDER.finditer(line)}
            out += [Pos(number, i + 1) for i, c in enumerate(line) if c == "$" and i not in starts]
        return out

    def _error(self, message: str, pos: Pos) -> SpecError:
        return SpecError(message, pos, self.path).with_source(self.text)

    def fill(self, values: dict[str, str]) -> str:
        return PLACEHOLDER.sub(lambda m: values[m.group(1)], self.text)


def combinations(params: list[Param]) -> list[dict[str, str]]:
    """Every choice of one value per parameter; the last parameter varies fastest."""
    return [
        dict(zip((p.name for p in params), choice))
        for choice in itertools.product(*(p.values for p in params))
    ]
