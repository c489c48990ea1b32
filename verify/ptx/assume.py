"""What is assumed about a kernel's parameters: each ``.param`` is a variable
over every value its type allows, unless ``--assume NAME=VALUE`` fixes it or
``--assume 'NAME%M==R'`` puts it in a residue class (then it is ``M * q + R``).
A parameter is named ``param_N`` (the N-th ``.param`` of the entry, from 0) or
by its full PTX name."""

from __future__ import annotations

import re

from verify.errors import SpecError
from verify.model.expr import Const, Expr, Range, Var
from verify.ptx import ir
from verify.ptx.values import Context

# A 64-bit parameter is taken to be below 2^48: every pointer is (the GPU's virtual
# addresses have 49 bits), and so is every size a kernel can be given.
POINTER_BITS = 48
_ASSUME = re.compile(
    r"^\s*(?P<name>[A-Za-z_$][\w$]*)\s*(?:=\s*(?P<value>\d+)|%\s*(?P<m>\d+)\s*==\s*(?P<r>\d+))\s*$"
)


class Assumptions:
    def __init__(self, fn: ir.Function, texts: tuple[str, ...], ctx: Context):
        self.fn, self.ctx = fn, ctx
        self.index = {p.name: i for i, p in enumerate(fn.params)}
        self.index.update({f"param_{i}": i for i in range(len(fn.params))})
        self.fixed: dict[int, int] = {}
        self.classes: dict[int, tuple[int, int]] = {}
        for text in texts:
            self._read(text)

    def _read(self, text: str) -> None:
        m = _ASSUME.match(text)
        if not m:
            raise SpecError(f"--assume {text!r}: expected NAME=VALUE or 'NAME%M==R'")
        name = m["name"]
        if name not in self.index:
            known = ", ".join(f"param_{i} ({p.name})" for i, p in enumerate(self.fn.params))
            raise SpecError(
                f"--assume {text!r}: {self.fn.name} has no parameter {name!r}; "
                f"its parameters: {known or 'none'}"
            )
        i = self.index[name]
        if m["value"] is not None:
            self.fixed[i] = int(m["value"])
        else:
            mod, rem = int(m["m"]), int(m["r"])
            if mod < 1 or rem >= mod:
                raise SpecError(f"--assume {text!r}: expected 0 <= R < M")
            self.classes[i] = (mod, rem)

    def bits(self, i: int) -> int:
        return self.fn.params[i].element_bytes * 8

    def is_pointer_sized(self, var: str) -> bool:
        i = int(var.removeprefix("param_").split("_")[0])
        return self.bits(i) == 64

    def value(self, name: str) -> Expr | None:
        """The value ``ld.param`` reads from parameter `name`, or None if it is none."""
        i = self.index.get(name)
        if i is None:
            return None
        limit = 1 << min(self.bits(i), POINTER_BITS)
        if i in self.fixed:
            return Const(self.fixed[i])
        if i in self.classes:
            mod, rem = self.classes[i]
            q = f"param_{i}_q"
            self.ctx.ranges[q] = Range(0, max(1, (limit - rem) // mod))
            return self.ctx.op("+", self.ctx.op("*", Var(q), Const(mod)), Const(rem))
        self.ctx.ranges[f"param_{i}"] = Range(0, limit)
        return Var(f"param_{i}")

    def pointer_align(self, var: str) -> int:
        i = int(var.removeprefix("param_").split("_")[0])
        return self.fn.params[i].align or 1
