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
from verify.ptx.values import Context, Unknown

# A 64-bit parameter is taken to be below 2^48: every pointer is (the GPU's virtual
# addresses have 49 bits), and so is every size a kernel can be given.
POINTER_BITS = 48
_ASSUME = re.compile(
    r"^\s*(?P<name>[A-Za-z_$][\w$]*)(?:\+(?P<offset>\d+))?\s*(?:=\s*(?P<value>\d+)|%\s*(?P<m>\d+)\s*==\s*(?P<r>\d+))\s*$"
)


class Assumptions:
    """The values ``ld.param`` reads. A parameter (or, for a struct passed by value,
    a field at a byte offset: ``param_0+8``) is a variable ``param_0`` (``param_0_8``)
    over every value of the width it is read with, below 2^48 for 64 bits."""

    def __init__(self, fn: ir.Function, texts: tuple[str, ...], ctx: Context):
        self.fn, self.ctx = fn, ctx
        self.index = {p.name: i for i, p in enumerate(fn.params)}
        self.index.update({f"param_{i}": i for i in range(len(fn.params))})
        self.fixed: dict[tuple[int, int], int] = {}
        self.classes: dict[tuple[int, int], tuple[int, int]] = {}
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
        key = (self.index[name], int(m["offset"] or 0))
        if m["value"] is not None:
            self.fixed[key] = int(m["value"])
        else:
            mod, rem = int(m["m"]), int(m["r"])
            if mod < 1 or rem >= mod:
                raise SpecError(f"--assume {text!r}: expected 0 <= R < M")
            self.classes[key] = (mod, rem)

    def value(self, name: str, offset: int = 0, bits: int = 0) -> Expr | Unknown:
        """What ``ld.param`` of `bits` bits reads at `offset` bytes into `name`."""
        i = self.index.get(name)
        if i is None:
            return Unknown(f"a load from {name}, not a parameter of the kernel")
        key = (i, offset)
        var = f"param_{i}" + (f"_{offset}" if offset else "")
        limit = 1 << min(bits or self.fn.params[i].element_bytes * 8, POINTER_BITS)
        if key in self.fixed:
            return Const(self.fixed[key])
        if key in self.classes:
            mod, rem = self.classes[key]
            q = f"{var}_q"
            self.ctx.ranges[q] = Range(0, max(1, (limit - rem) // mod))
            return self.ctx.op("+", self.ctx.op("*", Var(q), Const(mod)), Const(rem))
        self.ctx.ranges[var] = Range(0, limit)
        return Var(var)

    def pointer_align(self, var: str) -> int:
        i = int(var.removeprefix("param_").split("_")[0])
        return self.fn.params[i].align or 1
