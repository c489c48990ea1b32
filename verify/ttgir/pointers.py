"""Where a ``ttg.async_copy_global_to_local`` reads: its pointer tensor traced back
to an affine function of the tensor's coordinates, in Triton's own parsed module.

Runs in the extractor's child process, on Triton's bindings (`verify.ttgir.extract`
builds the def-use maps). A value is one of:

* a scalar (no tensor type): the same for every thread, so *uniform*;
* a tensor `Form`: per dimension, the monomials ``k * p1 * p2 ...`` (an integer
  times the kernel's integer parameters) whose sum multiplies that coordinate;
  plus the *wraps* an ``arith.remsi`` leaves (x mod M = x - q*M with q varying
  from lane to lane), each recorded as an integer every such term is a multiple
  of; plus a uniform part, which is not kept: moving every source of a copy by
  the same number of words rotates the source banks and changes neither rule C
  nor bound G (README, "The spec language"); rule S reads it modulo 128 bytes,
  which the spec quantifies as its global base where `base_pointer`'s hint
  allows every multiple of 16 there (`verify.ttgir.specgen.base_residues_known`).

Operations followed: ``tt.make_range``, ``tt.splat``, ``tt.expand_dims``,
``tt.broadcast``, ``tt.addptr``, ``arith.addi``, ``arith.muli`` (one side
uniform), ``arith.remsi``/``remui`` by a uniform value, ``arith.constant`` (splat),
``arith.extsi``/``extui``, ``ttg.convert_layout`` (coordinates kept) and
``scf.for`` iter_args whose loop advances the pointer by a uniform amount. Any
other operation yields `Untraced` with the reason; nothing is guessed.

`mask_alignment_bound` bounds what Triton's AxisInfo can prove about a copy's
mask from above (for the vector width, `verify.notation.triton_lowering.copy_lowering`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from verify.notation.triton_lowering import element_bits

INFINITE = 1 << 30


class Untraced(Exception):
    """The pointer cannot be traced; the message says why."""


@dataclass(frozen=True)
class Mono:
    """``k * p1 * p2 ...``: an integer times named integer parameters of the kernel."""

    k: int
    params: tuple[str, ...] = ()

    def times(self, other: Mono) -> Mono:
        return Mono(self.k * other.k, tuple(sorted(self.params + other.params)))


@dataclass
class Form:
    """A tensor of integers or pointers (in elements): sum over dimensions d of
    (sum of ``coeffs[d]``) * coordinate d, plus wrap terms, plus something uniform."""

    rank: int
    coeffs: dict[int, list[Mono]] = field(default_factory=dict)
    wraps: list[int] = field(default_factory=list)
    carried: int = 0  # times the iter_arg being traced through its loop is added in

    @property
    def uniform(self) -> bool:
        return not any(self.coeffs.values()) and not self.wraps and not self.carried


def _is_tensor(value) -> bool:
    return str(value.get_type()).startswith("tensor<")


def _rank(value) -> int:
    return len(value.get_shape())


class Tracer:
    """Follows values through the module. `defs`: result id -> defining op;
    `args`: function-argument id -> (name, tt.divisibility or None); `loops`:
    iter_arg id -> (init value, yielded value)."""

    def __init__(self, defs: dict, args: dict, loops: dict):
        self.defs, self.args, self.loops = defs, args, loops
        self._self_ids: set[int] = set()  # iter_args being traced through their loop

    # -- tensors ------------------------------------------------------------------

    def form(self, value) -> Form:
        if not _is_tensor(value):
            raise AssertionError("form() of a scalar")
        vid = value.id()
        if vid in self._self_ids:
            return Form(_rank(value), carried=1)
        if vid in self.loops:
            return self._loop_carried(value)
        op = self.defs.get(vid)
        if op is None:
            raise Untraced("a tensor block argument that is not a loop's iter_arg")
        return self._op_form(op, value)

    def _op_form(self, op, value) -> Form:
        name = op.get_name()
        operand = op.get_operand
        if name == "tt.make_range":
            return Form(1, {0: [Mono(1)]})
        if name == "tt.splat":
            return Form(_rank(value))
        if name == "arith.constant":
            if op.get_constant_value() is None:
                raise Untraced("a constant tensor that is not one value splatted")
            return Form(_rank(value))
        if name in ("arith.extsi", "arith.extui", "ttg.convert_layout"):
            return self.form(operand(0))
        if name == "tt.expand_dims":
            return _expand(self.form(operand(0)), op.get_int_attr("axis"))
        if name == "tt.broadcast":
            return _broadcast(self.form(operand(0)), operand(0).get_shape())
        if name in ("tt.addptr", "arith.addi"):
            return _add(self.form(operand(0)), self.form(operand(1)))
        if name == "arith.muli":
            return self._multiply(operand(0), operand(1))
        if name in ("arith.remsi", "arith.remui"):
            return self._remainder(operand(0), operand(1))
        raise Untraced(f"{name} computes the pointer; verify traces {TRACED}")

    def _multiply(self, a, b) -> Form:
        fa, fb = self.form(a), self.form(b)
        if not fa.uniform and not fb.uniform:
            raise Untraced("arith.muli of two values that both vary over the tensor")
        varying, factor = (fa, b) if fb.uniform else (fb, a)
        if varying.uniform:
            return varying
        if varying.carried:
            raise Untraced("the loop multiplies the pointer's offsets it carries")
        mono = self.uniform_mono(factor)
        if mono is None:
            raise Untraced(
                "a coordinate multiplied by a uniform value that is neither a constant "
                "nor an integer parameter of the kernel (nor a product of them)"
            )
        return Form(
            varying.rank,
            {d: [m.times(mono) for m in ms] for d, ms in varying.coeffs.items()},
            [w * self.divisor(mono) for w in varying.wraps],
        )

    def _remainder(self, x, modulus) -> Form:
        fx, fm = self.form(x), self.form(modulus)
        if not fm.uniform:
            raise Untraced("arith.remsi by a value that varies over the tensor")
        if fx.uniform:
            return fx
        if fx.carried:
            raise Untraced("the loop takes a remainder of the offsets it carries")
        mono = self.uniform_mono(modulus)
        divisor = self.divisor(mono) if mono is not None else 1
        return Form(fx.rank, fx.coeffs, fx.wraps + [divisor])

    def _loop_carried(self, value) -> Form:
        """An iter_arg: its initial value, if the loop only adds a uniform amount."""
        init, yielded = self.loops[value.id()]
        self._self_ids.add(value.id())
        try:
            step = self.form(yielded)
        finally:
            self._self_ids.discard(value.id())
        if step.carried != 1 or any(step.coeffs.values()) or step.wraps:
            raise Untraced(
                "the loop does not advance the pointer it carries by a uniform amount "
                "(the next value is not this one plus the same offset for every element)"
            )
        return self.form(init)

    # -- uniform scalars ------------------------------------------------------------

    def _uniform_source(self, value):
        """(op, argument) behind a uniform value, looking through splats and
        extensions: the defining op, or the function argument's (name, hint)."""
        while True:
            if value.id() in self.args:
                return None, self.args[value.id()]
            op = self.defs.get(value.id())
            if op is None or op.get_name() not in ("tt.splat", "arith.extsi", "arith.extui"):
                return op, None
            value = op.get_operand(0)

    def uniform_mono(self, value) -> Mono | None:
        """A uniform integer as a `Mono`, or None when it is something else."""
        op, arg = self._uniform_source(value)
        if arg is not None:
            return Mono(1, (arg[0],))
        if op is None:
            return None
        if op.get_name() == "arith.constant":
            constant = op.get_constant_value()
            return Mono(constant) if isinstance(constant, int) else None
        if op.get_name() == "arith.muli":
            a, b = self.uniform_mono(op.get_operand(0)), self.uniform_mono(op.get_operand(1))
            return a.times(b) if a is not None and b is not None else None
        return None

    def divisibility(self, name: str) -> int:
        hint = next((d for n, d in self.args.values() if n == name), None)
        return hint or 1

    def divisor(self, mono: Mono) -> int:
        """An integer every value of `mono` is a multiple of (hints of its parameters)."""
        out = mono.k
        for p in mono.params:
            out *= self.divisibility(p)
        return out

    # -- the mask, for the vector width ---------------------------------------------

    def mask_alignment_bound(self, mask, dim: int) -> int:
        """An upper bound of Triton's AxisInfo mask alignment along `dim` (the
        copy's vector dimension): a mask constant along it (splat, or made from
        values that do not vary along it) is unbounded; ``x < s`` with x varying
        along `dim` changes where x crosses s, so AxisInfo proves at most s's
        divisibility (`divisibility_bound`); ``andi`` with a uniform side is the
        other side; anything else is unbounded (no claim)."""
        op = self.defs.get(mask.id())
        if op is None:
            return INFINITE
        name = op.get_name()
        if name in ("tt.splat", "arith.constant"):
            return INFINITE
        if name == "tt.broadcast":
            return self.mask_alignment_bound(op.get_operand(0), dim)
        if name == "tt.expand_dims":
            axis = op.get_int_attr("axis")
            if dim == axis:
                return INFINITE
            return self.mask_alignment_bound(op.get_operand(0), dim - (dim > axis))
        if name == "arith.andi":
            sides = [op.get_operand(0), op.get_operand(1)]
            uniform = [self._is_uniform_mask(s) for s in sides]
            if uniform[0] and not uniform[1]:
                return self.mask_alignment_bound(sides[1], dim)
            if uniform[1] and not uniform[0]:
                return self.mask_alignment_bound(sides[0], dim)
            return INFINITE
        if name == "arith.cmpi":
            return self._comparison_bound(op, dim)
        return INFINITE

    def _is_uniform_mask(self, value) -> bool:
        op = self.defs.get(value.id())
        return op is not None and op.get_name() in ("tt.splat", "arith.constant")

    def _comparison_bound(self, op, dim: int) -> int:
        try:
            left, right = self.form(op.get_operand(0)), self.form(op.get_operand(1))
        except Untraced:
            return INFINITE
        if left.uniform == right.uniform:
            return INFINITE
        varying, bound = (left, op.get_operand(1)) if right.uniform else (right, op.get_operand(0))
        if not varying.coeffs.get(dim):
            return INFINITE
        return self.divisibility_bound(bound)

    def divisibility_bound(self, value) -> int:
        """At least the power of two AxisInfo proves divides a uniform value: a
        constant's own, a parameter's hint (1 without one), the smaller of a sum's,
        the product of a product's; unbounded for anything else."""
        op, arg = self._uniform_source(value)
        if arg is not None:
            return arg[1] or 1
        if op is None:
            return INFINITE
        name = op.get_name()
        if name == "arith.constant":
            c = op.get_constant_value()
            return (abs(c) & -abs(c)) if isinstance(c, int) and c else INFINITE
        if name not in ("arith.addi", "arith.subi", "arith.muli"):
            return INFINITE
        a, b = (self.divisibility_bound(op.get_operand(i)) for i in (0, 1))
        return min(a, b) if name != "arith.muli" else min(INFINITE, a * b)


TRACED = (
    "tt.make_range, tt.splat, tt.expand_dims, tt.broadcast, tt.addptr, arith.addi, "
    "arith.muli, arith.remsi, arith.constant and loop-carried pointers advanced "
    "uniformly"
)


def _expand(form: Form, axis: int) -> Form:
    moved = {(d + 1 if d >= axis else d): ms for d, ms in form.coeffs.items()}
    return Form(form.rank + 1, moved, list(form.wraps), form.carried)


def _broadcast(form: Form, shape: list[int]) -> Form:
    """A dimension of extent 1 broadcast: its coordinate was 0, its term nothing."""
    kept = {d: ms for d, ms in form.coeffs.items() if shape[d] != 1}
    return Form(form.rank, kept, list(form.wraps), form.carried)


def _add(a: Form, b: Form) -> Form:
    coeffs = {d: list(ms) for d, ms in a.coeffs.items()}
    for d, ms in b.coeffs.items():
        coeffs.setdefault(d, []).extend(ms)
    return Form(max(a.rank, b.rank), coeffs, a.wraps + b.wraps, a.carried + b.carried)


def trace_copy(tracer: Tracer, op, vector_dim: int | None, per_thread: int) -> dict:
    """The JSON the extractor reports for one async copy's global side; with
    ``contiguity_lower`` for an unmasked copy (`contiguity_lower`)."""
    pointer = op.get_operand(0)
    out: dict = {"contiguity": op.get_int_attr("contiguity") or 1, "contiguity_lower": 1}
    if op.get_num_operands() == 2 and vector_dim is not None:
        out["contiguity_lower"] = contiguity_lower(
            AxisLower(tracer), pointer, vector_dim, per_thread
        )
    try:
        form = tracer.form(pointer)
    except Untraced as e:
        out["untraced"] = str(e)
        return out
    out["dims"] = {str(d): [[m.k, list(m.params)] for m in ms] for d, ms in form.coeffs.items()}
    out["wraps"] = form.wraps
    out["params"] = {
        p: tracer.divisibility(p) for ms in form.coeffs.values() for m in ms for p in m.params
    }
    mask = op.get_operand(2) if op.get_num_operands() > 2 else None
    out["masked"] = mask is not None
    bound = INFINITE
    if vector_dim is not None:
        bound = min(
            _contiguity_bound(form.coeffs.get(vector_dim, [])),
            _alignment_bound(tracer, form, vector_dim, _pointee_bytes(pointer)),
        )
        if mask is not None:
            bound = min(bound, tracer.mask_alignment_bound(mask, vector_dim))
    out["vector_bound"] = bound
    out["base"] = base_pointer(tracer, pointer)
    return out


_POINTER_STEPS = ("tt.splat", "tt.addptr", "tt.expand_dims", "tt.broadcast", "ttg.convert_layout")


def base_pointer(tracer: Tracer, pointer) -> list | None:
    """[name, tt.divisibility or None] of the kernel's pointer argument a copy's
    pointer tensor is built from (through splats, broadcasts and the pointer side
    of each addptr, and a loop-carried pointer's initial value), or None when it
    is not one argument. Its divisibility bounds how much of the copy's uniform
    base is known modulo 128 bytes (`verify.ttgir.specgen.exact_source_address`)."""
    value = pointer
    while True:
        vid = value.id()
        if vid in tracer.args:
            name, hint = tracer.args[vid]
            return [name, hint]
        if vid in tracer.loops:
            value = tracer.loops[vid][0]
            continue
        op = tracer.defs.get(vid)
        if op is None or op.get_name() not in _POINTER_STEPS:
            return None
        value = op.get_operand(0)


def _alignment_bound(tracer: Tracer, form: Form, vector_dim: int, elem_bytes: int) -> int:
    """An upper bound of AxisInfo's alignment (elements) along the vector
    dimension: coordinate 1 of another dimension moves the address by its
    coefficient k * p1 * ... elements from coordinate 0, and each parameter may
    be exactly its divisibility, so no proof of more than the gcd of those steps
    (in bytes) / element bytes exists. A dimension whose coefficient is a sum
    of several terms is left out (fewer steps, a larger bound); no claim
    (1 << 30) without steps."""
    steps = [
        elem_bytes * abs(tracer.divisor(monos[0]))
        for d, monos in form.coeffs.items()
        if d != vector_dim and len(monos) == 1 and monos[0].k
    ]
    divisor = _gcd(*steps)
    return max(1, divisor // elem_bytes) if divisor else INFINITE


def _contiguity_bound(monos: list[Mono]) -> int:
    """An upper bound of the pointer's contiguity along the vector dimension: 1
    where consecutive elements are not at consecutive addresses for any value of
    the parameters (a constant coefficient other than 1); else no claim."""
    if any(m.params for m in monos):
        return INFINITE
    return INFINITE if sum(m.k for m in monos) == 1 else 1


# -- a lower bound of Triton's AxisInfo, for the width of an unmasked copy ------------------

MAX_DIVISOR = 1 << 62  # AxisInfo's kMaxDivisor: highestPowOf2Divisor(0)


def _pow2_divisor(n: int) -> int:
    return (abs(n) & -abs(n)) if n else MAX_DIVISOR


def _gcd(*values: int) -> int:
    """AxisInfo's gcd: 0 stands for no constraint."""
    out = 0
    for v in values:
        a, b = out, v
        while b:
            a, b = b, a % b
        out = a
    return out


@dataclass(frozen=True)
class Axis:
    """AxisInfo of one value: per dimension contiguity, divisibility, constancy,
    and the constant value if known."""

    contiguity: tuple[int, ...]
    divisibility: tuple[int, ...]
    constancy: tuple[int, ...]
    value: int | None = None


def _ones(rank: int) -> Axis:
    """AxisInfo's pessimistic state: the least it ever claims."""
    return Axis((1,) * rank, (1,) * rank, (1,) * rank)


class AxisLower:
    """At most what Triton's AxisInfo (lib/Analysis/AxisInfo.cpp) proves about a
    value: the visitors of make_range, arith.constant, splat, expand_dims,
    broadcast, addi/subi/addptr, muli and the casts are repeated exactly; every
    other value, loop-carried ones included, takes AxisInfo's pessimistic state
    (1 everywhere). Less knowledge never yields more here: a pessimistic operand
    has divisibility 1, which every rule above carries into the result's
    divisibility, and the two places where a larger contiguity lowers a
    divisibility (expand_dims, muli) then see divisibility 1 either way.
    tests/ttgir/test_ttgir_copies.py compares the widths it gives with the PTX."""

    def __init__(self, tracer: Tracer):
        self.tracer = tracer
        self.memo: dict[int, Axis] = {}

    def info(self, value) -> Axis:
        vid = value.id()
        if vid not in self.memo:
            self.memo[vid] = self._compute(value)
        return self.memo[vid]

    def _compute(self, value) -> Axis:
        shape = value.get_shape() if _is_tensor(value) else [1]
        rank = len(shape)
        if value.id() in self.tracer.args:  # a scalar, or a tensor of pointers
            hint = self.tracer.args[value.id()][1] or 1
            return Axis((1,) * rank, (hint,) * rank, (1,) * rank)
        op = self.tracer.defs.get(value.id())
        if op is None:
            return _ones(rank)
        name = op.get_name()
        if name == "tt.make_range":
            start, end = op.get_int_attr("start"), op.get_int_attr("end")
            return Axis((end - start,), (_pow2_divisor(start),), (1,))
        if name == "arith.constant":
            c = op.get_constant_value()
            if not isinstance(c, int):
                return _ones(rank)
            constancy = tuple(shape) if _is_tensor(value) else (1,)
            return Axis((1,) * rank, (_pow2_divisor(c),) * rank, constancy, c)
        if name in ("arith.extsi", "arith.extui", "ttg.convert_layout"):
            return self.info(op.get_operand(0))
        if name == "tt.splat":
            inner = self.info(op.get_operand(0))
            return Axis((1,) * rank, (inner.divisibility[0],) * rank, tuple(shape), inner.value)
        if name == "tt.expand_dims":
            return _expand_axis(self.info(op.get_operand(0)), op.get_int_attr("axis"))
        if name == "tt.broadcast":
            return _broadcast_axis(
                self.info(op.get_operand(0)), op.get_operand(0).get_shape(), shape
            )
        if name in ("arith.addi", "arith.subi", "tt.addptr", "arith.muli"):
            lhs, rhs = self.info(op.get_operand(0)), self.info(op.get_operand(1))
            scale = _pointee_bytes(op.get_operand(0)) if name == "tt.addptr" else 1
            return _binary_axis(name, lhs, rhs, scale)
        return _ones(rank)


def _pointee_bytes(pointer) -> int:
    text = str(pointer.get_type())
    inner = text.split("!tt.ptr<", 1)[1] if "!tt.ptr<" in text else ""
    inner = inner.split(">", 1)[0].split(",", 1)[0].strip()  # !tt.ptr<f16, 1>: address space
    return max(1, (element_bits(inner) or 8) // 8)


def _expand_axis(inner: Axis, axis: int) -> Axis:
    """ExpandDimsOpAxisInfoVisitor: the new dimension's divisibility is the
    constant's own, else the gcd over dimensions of the divisibility, taking 1
    for a contiguous one."""
    if inner.value is not None:
        new = _pow2_divisor(inner.value)
    else:
        new = _gcd(*(1 if c > 1 else d for c, d in zip(inner.contiguity, inner.divisibility)))
    contiguity, divisibility, constancy = (
        list(inner.contiguity),
        list(inner.divisibility),
        list(inner.constancy),
    )
    contiguity.insert(axis, 1)
    divisibility.insert(axis, new)
    constancy.insert(axis, 1)
    return Axis(tuple(contiguity), tuple(divisibility), tuple(constancy), inner.value)


def _broadcast_axis(inner: Axis, before: list[int], after: list[int]) -> Axis:
    return Axis(
        tuple(1 if n == 1 else c for n, c in zip(before, inner.contiguity)),
        inner.divisibility,
        tuple(m if n == 1 else k for n, m, k in zip(before, after, inner.constancy)),
        inner.value,
    )


def _binary_axis(name: str, lhs: Axis, rhs: Axis, scale: int) -> Axis:
    """BinaryOpVisitorImpl with AddSubOpAxisInfoVisitor / MulIOpAxisInfoVisitor."""
    rank = len(lhs.contiguity)
    value = _binary_value(name, lhs.value, rhs.value, scale)
    if value is not None:
        widest = tuple(max(a, b) for a, b in zip(lhs.constancy, rhs.constancy))
        return Axis((1,) * rank, (_pow2_divisor(value),) * rank, widest, value)
    contiguity: list[int] = []
    divisibility: list[int] = []
    constancy: list[int] = []
    for d in range(rank):
        constancy.append(_gcd(lhs.constancy[d], rhs.constancy[d]))
        if name == "arith.muli":
            contiguity.append(_mul_contiguity(lhs, rhs, d))
            divisibility.append(_mul_divisibility(lhs, rhs, d))
            continue
        if name == "arith.subi":
            contiguity.append(_gcd(lhs.contiguity[d], rhs.constancy[d]))
        else:
            contiguity.append(
                max(
                    _gcd(lhs.constancy[d], rhs.contiguity[d]),
                    _gcd(lhs.contiguity[d], rhs.constancy[d]),
                )
            )
        divisibility.append(
            _gcd(lhs.divisibility[d], min(MAX_DIVISOR, rhs.divisibility[d] * scale))
        )
    return Axis(tuple(contiguity), tuple(divisibility), tuple(constancy))


def _binary_value(name: str, a: int | None, b: int | None, scale: int) -> int | None:
    if a is None or b is None:
        return None
    if name == "arith.muli":
        return a * b
    if name == "arith.subi":
        return a - b
    return a + b * scale


def _mul_contiguity(lhs: Axis, rhs: Axis, d: int) -> int:
    left = lhs.contiguity[d] if rhs.value == 1 else 1
    right = rhs.contiguity[d] if lhs.value == 1 else 1
    return max(left, right)


def _mul_divisibility(lhs: Axis, rhs: Axis, d: int) -> int:
    left = 1 if lhs.contiguity[d] > 1 and rhs.value != 1 else lhs.divisibility[d]
    right = 1 if rhs.contiguity[d] > 1 and lhs.value != 1 else rhs.divisibility[d]
    return min(MAX_DIVISOR, left * right)


def contiguity_lower(lower: AxisLower, pointer, dim: int, per_thread: int) -> int:
    """At most ``ModuleAxisInfoAnalysis::getContiguity`` of a pointer tensor: the
    unique contiguous elements per thread along ``order[0]`` (`dim`), capped by
    the alignment min(divisibility / element bytes, contiguity) there."""
    info = lower.info(pointer)
    multiple = max(info.divisibility[dim] // _pointee_bytes(pointer), 1)
    return max(1, min(per_thread, multiple, info.contiguity[dim]))
