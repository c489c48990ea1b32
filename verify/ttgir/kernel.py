"""From a user's @triton.jit / @gluon.jit kernel to verify's TTGIR checks, without
a GPU: Triton compiles for a named target on a CPU
(``triton.compile(ASTSource(fn, signature, constexprs, attrs), target=GPUTarget(
"cuda", 90, 32), options={"num_warps": ..., "num_stages": ...})``) and
``compiled.asm["ttgir"]`` goes through `verify.ttgir.module`.

The signature: each parameter's type is the one given (``a_ptr:*fp16``), else
``constexpr`` where a value is given (``-D NAME=VALUE``, or a default of a
``tl.constexpr`` parameter), else its annotation's type (``x: tl.int32``,
``p: tl.pointer_type(tl.float16)``), else the type of its default (int -> i32,
float -> fp32, bool -> i1); a parameter none of these decides is an error naming
it. Pointers get ``tt.divisibility = 16``, as Triton's launcher gives 16-byte
aligned pointers (every torch allocation), so loads vectorise as they do at run
time. An integer parameter is specialised as the launcher specialises it
(`launcher_specialisation`) only where ``--assume`` gives its value or residue:
otherwise its value is not known here and it gets no hint.
"""

from __future__ import annotations

import ast
import importlib.util
import os
import re
import sys
import textwrap
import traceback
from dataclasses import replace

from verify.engines.decide import AUTO
from verify.engines.options import RunOptions
from verify.errors import Pos, SpecError
from verify.results import CheckResult
from verify.ttgir import from_ptx
from verify.ttgir.from_ptx import PtxOptions
from verify.ttgir.module import require_triton

_TARGET = re.compile(r"^sm_?(?P<cap>\d{2,3})a?$")
_DEFAULT_TYPES = {bool: "i1", int: "i32", float: "fp32"}


def parse_target(target: str) -> int:
    """``sm_80`` / ``sm_90`` / ``sm_90a`` / ``sm90`` -> compute capability."""
    m = _TARGET.match(target.strip())
    if not m:
        raise SpecError(f"target {target!r}: expected sm_NN, e.g. sm_80 or sm_90")
    return int(m["cap"])


def parse_value(text: str):
    """A ``-D`` value: a Python literal (int, float, bool, string), else the text."""
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def parse_defines(pairs) -> dict:
    """``NAME=VALUE`` pairs -> {NAME: value}."""
    out = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name.strip().isidentifier():
            raise SpecError(f"-D {pair!r}: expected NAME=VALUE")
        out[name.strip()] = parse_value(value.strip())
    return out


def split_top_level(text: str, what: str = "--signature") -> list[str]:
    """`text` split on the commas outside ``<>`` and ``[]`` (``d:tensordesc<fp16[128,
    64]>,M:i32`` is two items); an unbalanced bracket is an error at its column."""
    closing = {">": "<", "]": "["}
    items, start, open_at = [], 0, []
    for col, ch in enumerate(text):
        if ch in "<[":
            open_at.append((ch, col))
        elif ch in closing:
            if not open_at or open_at[-1][0] != closing[ch]:
                raise SpecError(
                    f"expected a type, found an unmatched {ch!r}", Pos(1, col + 1), what
                )
            open_at.pop()
        elif ch == "," and not open_at:
            items.append(text[start:col])
            start = col + 1
    if open_at:
        ch, col = open_at[-1]
        raise SpecError(
            f"expected a closing bracket for {ch!r}, found the end", Pos(1, col + 1), what
        )
    return [*items, text[start:]]


def parse_signature(text: str | None) -> dict[str, str]:
    """``a_ptr:*fp16,M:i32`` -> {"a_ptr": "*fp16", "M": "i32"}; commas inside a
    type's brackets (``tensordesc<fp16[128,64]>``) do not split it."""
    out = {}
    for item in filter(None, (s.strip() for s in split_top_level(text or ""))):
        name, sep, ty = item.partition(":")
        if not sep or not name.strip().isidentifier() or not ty.strip():
            raise SpecError(f"--signature item {item!r}: expected NAME:TYPE, e.g. a_ptr:*fp16")
        out[name.strip()] = ty.strip()
    return out


def _param_type(
    param, given: dict[str, str], constexprs: dict, assumed: dict[str, int] | None = None
) -> str | None:
    """One parameter's signature entry (the rules of the module doc; an assumed
    integer value types a parameter as the launcher types it), or None."""
    if param.name in given:
        return given[param.name]
    if param.name in constexprs or param.is_constexpr:
        return "constexpr"
    if param.annotation_type:
        return param.annotation_type
    if param.name in (assumed or {}):
        return _launcher_int_type((assumed or {})[param.name])
    default = param._param.default
    return _DEFAULT_TYPES.get(type(default))


# -- Triton's launcher specialisation of integer arguments --------------------------
#
# triton/runtime/jit.py `create_function_from_signature` calls the native
# `specialize_impl` on each argument; for an int it gives ("constexpr", 1) when the
# value is 1 and the parameter has no annotation, else (i32 | i64 | u64, "D") when
# `BaseBackend.get_int_specialization` (triton/backends/compiler.py) finds it a
# multiple of 16, and `BaseBackend.parse_attr` turns "D" into tt.divisibility = 16.
# `do_not_specialize` turns both off, `do_not_specialize_on_alignment` the "D".
_INT_TYPES = {f"{s}{w}" for s in "iu" for w in (8, 16, 32, 64)}
_ASSUME_VALUE = re.compile(r"^\s*([A-Za-z_]\w*)\s*=\s*(-?(?:0[xX][0-9a-fA-F]+|\d+))\s*$")
_ASSUME_RESIDUE = re.compile(r"^\s*([A-Za-z_]\w*)\s*%\s*(\d+)\s*==\s*(\d+)\s*$")


def _launcher_int_type(value: int) -> str:
    """The type `specialize_impl` gives a Python int argument."""
    if -(2**31) <= value < 2**31:
        return "i32"
    return "u64" if value >= 2**63 else "i64"


def assumed_integers(assume) -> tuple[dict[str, int], set[str]]:
    """From ``--assume`` texts: {name: value} of ``NAME=V``, and the names a
    ``NAME%M==R`` puts in a class of multiples of 16 (M and R multiples of 16)."""
    values, multiples = {}, set()
    for text in assume:
        if m := _ASSUME_VALUE.match(text):
            values[m[1]] = int(m[2], 0)
        elif (m := _ASSUME_RESIDUE.match(text)) and int(m[2]) % 16 == 0 and int(m[3]) % 16 == 0:
            multiples.add(m[1])
    return values, multiples


def launcher_specialisation(
    param, ty: str, values: dict[str, int], multiples: set[str]
) -> str | None:
    """How the launcher specialises integer parameter `param` of type `ty` at the
    assumed value: ``"1"`` (a constexpr), ``"D"`` (tt.divisibility = 16) or None."""
    if ty not in _INT_TYPES or param.do_not_specialize:
        return None
    value = values.get(param.name)
    if value == 1 and not param.annotation_type:
        return "1"
    divisible = param.name in multiples or (value is not None and value % 16 == 0)
    return "D" if divisible and not param.do_not_specialize_on_alignment else None


def describe_specialisation(signature: dict[str, str], attrs: dict, ones: list[str]) -> str:
    """The specialisation compiled, in words: which parameters are multiples of 16
    and which were made the constant 1."""
    names = list(signature)
    divisible = [names[i] for (i,) in attrs if not signature[names[i]].startswith("*")]
    parts = ["pointers tt.divisibility=16"]
    parts.append(f"{', '.join(divisible)} tt.divisibility=16" if divisible else "no integer hints")
    if ones:
        parts.append(f"{', '.join(ones)} constexpr 1")
    return "; ".join(parts)


# Calls that take an address, and which argument it is: a parameter that is a
# term of it is a pointer.
_ADDRESS_USES = {
    "load": 0,
    "store": 0,
    "make_block_ptr": 0,
    "make_tensor_descriptor": 0,
    "buffer_load": 0,
    "buffer_store": 0,
    "async_load": 1,
    "async_copy_global_to_shared": 1,
    **{f"atomic_{op}": 0 for op in ("add", "max", "min", "and", "or", "xor", "xchg", "cas")},
}
# How deep `implied_type` follows a parameter into the @jit helpers it is passed to.
_HELPER_DEPTH = 4


def implied_type(fn, name: str, depth: int = _HELPER_DEPTH) -> str:
    """The type a parameter's use implies: ``*fp16`` when it reaches the address
    of a load, store, atomic or block pointer in `fn` or a @jit helper it is
    passed to (the element type is the user's to give: fp16 stands for it),
    ``fp32`` when it is multiplied, divided, added to or compared with a float
    literal (a scale), else ``i32`` (an extent, a stride or an offset)."""
    if _reaches_an_address(fn, name, depth):
        return "*fp16"
    return "fp32" if _meets_a_float(fn, name) else "i32"


def _meets_a_float(fn, name: str) -> bool:
    try:
        tree = ast.parse(textwrap.dedent(fn.src))
    except (SyntaxError, AttributeError, TypeError):
        return False
    for node in ast.walk(tree):
        sides = (
            [node.left, node.right]
            if isinstance(node, ast.BinOp)
            else [node.left, *node.comparators]
            if isinstance(node, ast.Compare)
            else []
        )
        if any(isinstance(s, ast.Name) and s.id == name for s in sides) and any(
            isinstance(s, ast.Constant) and isinstance(s.value, float) for s in sides
        ):
            return True
    return False


def _reaches_an_address(fn, name: str, depth: int) -> bool:
    try:
        tree = ast.parse(textwrap.dedent(fn.src))
    except (SyntaxError, AttributeError, TypeError):
        return False
    aliases = _aliases(tree, name)
    for call in (n for n in ast.walk(tree) if isinstance(n, ast.Call)):
        callee = call.func.attr if isinstance(call.func, ast.Attribute) else None
        at = _ADDRESS_USES.get(callee or "")
        if at is not None and len(call.args) > at and _base_terms(call.args[at]) & aliases:
            return True
        helper = _helper(fn, call)
        if helper is None or depth <= 0:
            continue
        params = [p.name for p in helper.params]
        for i, arg in enumerate(call.args[: len(params)]):
            if _base_terms(arg) & aliases and _reaches_an_address(helper, params[i], depth - 1):
                return True
    return False


def _aliases(tree: ast.AST, name: str) -> set[str]:
    """`name` and the local names assigned an address built on it (``ptrs = name
    + offs``), to a fixed point."""
    aliases = {name}
    assigns = [n for n in ast.walk(tree) if isinstance(n, (ast.Assign, ast.AugAssign))]
    grown = True
    while grown:
        grown = False
        for node in assigns:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            named = {t.id for t in targets if isinstance(t, ast.Name)} - aliases
            if named and _base_terms(node.value) & aliases:
                aliases |= named
                grown = True
    return aliases


def _base_terms(node: ast.AST) -> set[str]:
    """The names an address expression adds up (``p + offs[:, None] * s`` -> {p,
    offs}): a pointer is a term of a sum, never a factor or an index."""
    if isinstance(node, ast.Name):
        return {node.id}
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
        return _base_terms(node.left) | _base_terms(node.right)
    if isinstance(node, ast.Subscript):
        return _base_terms(node.value)
    return set()


def _helper(fn, call: ast.Call):
    """The @jit function a call names in `fn`'s module, or None."""
    if not isinstance(call.func, ast.Name):
        return None
    target = getattr(getattr(fn, "fn", None), "__globals__", {}).get(call.func.id)
    return target if hasattr(target, "params") and hasattr(target, "src") else None


def _untyped_error(fn, untyped: list[str], at: Pos) -> SpecError:
    """One error naming every parameter whose type cannot be decided, each with
    the type its use implies."""
    example = ",".join(f"{name}:{implied_type(fn, name)}" for name in untyped)
    if len(untyped) == 1:
        what, them = f"the type of parameter {untyped[0]!r}", "it"
    else:
        names = ", ".join(repr(n) for n in untyped[:-1]) + f" and {untyped[-1]!r}"
        what, them = f"the types of parameters {names}", "them"
    pointers = [n for n in untyped if implied_type(fn, n).startswith("*")]
    element = (
        f" ({', '.join(pointers)} reach{'es' if len(pointers) == 1 else ''} a load or "
        "store address: give the element type, fp16 stands for it)"
        if pointers
        else ""
    )
    return SpecError(
        f"cannot infer {what} of {fn.__name__}: give {them}, e.g. --signature "
        f"'{example}'{element}, or -D NAME=VALUE for a constant",
        at,
    )


def build_signature(
    fn, given: dict[str, str], constexprs: dict, assume=()
) -> tuple[dict, dict, dict]:
    """(signature, constexpr values, attrs) for ``ASTSource``, integer parameters
    specialised as the launcher would at the `assume`d values
    (`launcher_specialisation`); a located error naming every parameter whose
    type cannot be decided, or the first constexpr without a value."""
    assumed, multiples = assumed_integers(assume)
    at = Pos(fn.def_file_line_number, 1)
    unknown = set(given) - {p.name for p in fn.params}
    if unknown:
        raise SpecError(
            f"--signature names {sorted(unknown)[0]!r}, which {fn.__name__} does not take", at
        )
    untyped = [p.name for p in fn.params if _param_type(p, given, constexprs, assumed) is None]
    if untyped:
        raise _untyped_error(fn, untyped, at)
    signature, values, attrs = {}, dict(constexprs), {}
    for param in fn.params:
        ty = _param_type(param, given, constexprs, assumed)
        assert ty is not None, "every parameter's type was decided above"
        special = launcher_specialisation(param, ty, assumed, multiples)
        if special == "1":
            ty, values[param.name] = "constexpr", 1
        if ty == "constexpr" and param.name not in values:
            default = param._param.default
            if default is param._param.empty:
                raise SpecError(
                    f"constexpr parameter {param.name!r} of {fn.__name__} has "
                    f"no value: give -D {param.name}=VALUE",
                    at,
                )
            values[param.name] = default
        signature[param.name] = ty
        if ty.startswith("*") or special == "D":
            attrs[(param.num,)] = [["tt.divisibility", 16]]
    return signature, values, attrs


def _is_gluon(fn) -> bool:
    from triton.experimental.gluon._runtime import GluonJITFunction

    return isinstance(fn, GluonJITFunction)


def compile_kernel(
    fn,
    target: str = "sm_90",
    constexprs: dict | None = None,
    signature: dict[str, str] | None = None,
    num_warps: int = 4,
    num_stages: int = 3,
    assume=(),
):
    """Triton's compiled kernel for `target`, on this machine's CPU, its integer
    arguments specialised as the launcher would at the `assume`d values."""
    require_triton()
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.experimental.gluon._runtime import GluonASTSource

    capability = parse_target(target)
    # Triton 3.9 warns unless this is set; "1" is its default (fused multiply-adds).
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    sig, values, attrs = build_signature(fn, signature or {}, constexprs or {}, assume)
    source = (GluonASTSource if _is_gluon(fn) else triton.compiler.ASTSource)(
        fn, sig, values, attrs
    )
    return triton.compile(
        source,
        target=GPUTarget("cuda", capability, 32),
        options={"num_warps": num_warps, "num_stages": num_stages},
    )


def check_compiled(
    compiled,
    timeout: float = 60.0,
    engine: str = AUTO,
    ptx: PtxOptions | None = None,
    options: RunOptions | None = None,
) -> list[CheckResult]:
    """The checks of an already compiled kernel (``triton.compile``'s result, or a
    launched kernel's ``CompiledKernel``): its ``asm["ttgir"]``, each op's
    instructions from its own ``asm["ptx"]`` (`verify.ttgir.from_ptx`). Source
    paths under the working directory are reported relative to it. `options`, when
    given, stands for (`engine`, `timeout`)."""
    text = compiled.asm["ttgir"].replace(f'"{os.getcwd()}/', '"')
    run = options or RunOptions(engine, timeout)
    given = replace(ptx or PtxOptions())
    if given.ptx is None and "ptx" in compiled.asm:
        given.ptx_text = compiled.asm["ptx"].replace(f'"{os.getcwd()}/', '"')
        given.shared_bytes = getattr(compiled.metadata, "shared", None)
        given.ptx_name = f"{getattr(compiled.metadata, 'name', 'kernel')}.ptx"
    if given.tensordesc_meta is None:  # the compiled kernel's own: no child asks Triton
        given.tensordesc_meta = getattr(compiled.metadata, "tensordesc_meta", None)
    return from_ptx.check(text, run, given)


def check_kernel(
    fn,
    target: str = "sm_90",
    constexprs: dict | None = None,
    signature: dict[str, str] | None = None,
    num_warps: int = 4,
    num_stages: int = 3,
    timeout: float = 60.0,
    engine: str = AUTO,
    ptx: PtxOptions | None = None,
    options: RunOptions | None = None,
) -> list[CheckResult]:
    """Compile `fn` (a @triton.jit or @gluon.jit function) for `target` and check
    every shared-memory op of the result; ``ptx.assume``'s integer values and
    residues specialise it as Triton's launcher would (`launcher_specialisation`),
    and every result's ``specialisation`` fact says how. `options`, when given,
    stands for (`engine`, `timeout`)."""
    ptx = ptx or PtxOptions()
    run = options or RunOptions(engine, timeout)
    compiled = compile_kernel(fn, target, constexprs, signature, num_warps, num_stages, ptx.assume)
    return check_specialised(fn, compiled, signature or {}, constexprs or {}, run, ptx)


def check_specialised(
    fn, compiled, given: dict, constexprs: dict, run: RunOptions, ptx: PtxOptions
) -> list[CheckResult]:
    """`check_compiled` of `fn` compiled with `ptx.assume`'s specialisation; the
    assumptions about parameters compiled as the constant 1 are dropped (the PTX
    has no such parameter), and every result's ``specialisation`` fact says
    which specialisation was checked."""
    sig, _, attrs = build_signature(fn, given, constexprs, ptx.assume)
    assumed = assumed_integers(ptx.assume)[0]
    ones = launcher_constants(fn, sig, constexprs, assumed)
    kept = tuple(a for a in ptx.assume if not _names_one_of(a, ones))
    results = check_compiled(compiled, ptx=replace(ptx, assume=kept), options=run)
    what = describe_specialisation(sig, attrs, ones)
    for r in results:
        r.facts["specialisation"] = what
    return results


def launcher_constants(fn, sig: dict, constexprs: dict, assumed: dict) -> list[str]:
    """The arguments (not tl.constexpr, nor given by -D) compiled as constexprs
    because their assumed value is 1."""
    return [
        p.name
        for p in fn.params
        if sig[p.name] == "constexpr"
        and not p.is_constexpr
        and p.name not in constexprs
        and p.name in assumed
    ]


def _names_one_of(assumption: str, names: list[str]) -> bool:
    m = _ASSUME_VALUE.match(assumption)
    return m is not None and m[1] in names


# -- the CLI's kernel reference: path/kernel.py:name ------------------------------------


def load_kernel(reference: str):
    """The jit function ``name`` of ``path.py:name``; import and lookup failures are
    SpecErrors located in the kernel file."""
    path, sep, name = reference.rpartition(":")
    if not sep or not path.endswith(".py") or not name.isidentifier():
        raise SpecError(f"kernel {reference!r}: expected path/kernel.py:kernel_name")
    if not os.path.isfile(path):
        raise SpecError("cannot read the kernel file: no such file", None, path)
    module_name = f"_verify_kernel_{abs(hash(os.path.abspath(path)))}"
    spec = importlib.util.spec_from_file_location(module_name, path)
    assert spec is not None and spec.loader is not None, f"{path}: a .py file has a loader"
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    try:
        spec.loader.exec_module(module)
    except (Exception, SystemExit) as e:  # noqa: BLE001 -- the user's module, reported
        raise located(e, path, f"importing {path} failed") from None
    finally:
        sys.path.pop(0)
    fn = getattr(module, name, None)
    if fn is None or not hasattr(fn, "params"):
        raise SpecError(
            f"{name!r} is not a @triton.jit or @gluon.jit function of this file", Pos(1, 1), path
        )
    return fn


def located(error: BaseException, path: str, what: str, fn=None) -> SpecError:
    """An exception from the user's kernel as a SpecError at the kernel file's line:
    a SyntaxError's own line, a Triton CompilationError's AST line (counted from the
    failing function's ``def``), else the deepest traceback frame in the file."""
    message = f"{what}: {type(error).__name__}: {_first_line(error)}"
    if isinstance(error, SyntaxError) and error.lineno:
        return SpecError(message, Pos(error.lineno, error.offset or 1), path)
    line = _compilation_line(error, fn)
    if line is None:
        frames = [
            f
            for f in traceback.extract_tb(error.__traceback__)
            if os.path.abspath(f.filename) == os.path.abspath(path)
        ]
        line = frames[-1].lineno if frames else None
    if line is None and fn is not None:
        line = fn.def_file_line_number
    return SpecError(message, Pos(line, 1) if line else None, path)


def _first_line(error: BaseException) -> str:
    text = getattr(error, "error_message", None) or str(error) or type(error).__name__
    lines = [line for line in str(text).splitlines() if line.strip()]
    return lines[-1][:300] if lines else type(error).__name__


def _compilation_line(error: BaseException, fn) -> int | None:
    """A CompilationError's line in the file: its AST node counts lines from the
    source it was raised for, which is `fn`'s or a @jit helper's in its globals."""
    lineno, src = getattr(getattr(error, "node", None), "lineno", None), getattr(error, "src", None)
    if fn is None or src is None or lineno is None:
        return None
    candidates = [fn] + [
        v for v in getattr(fn.fn, "__globals__", {}).values() if hasattr(v, "def_file_line_number")
    ]
    for jit in candidates:
        if getattr(jit, "src", None) == src:
            return jit.def_file_line_number + lineno - 1
    return None


def check_reference(
    reference: str,
    target: str,
    defines,
    signature: str | None,
    num_warps: int,
    num_stages: int,
    run: RunOptions,
    ptx: PtxOptions | None = None,
) -> list[CheckResult]:
    """``verify triton path/kernel.py:name ...``: load, compile, check; any failure
    of the user's code is a SpecError located in the kernel file."""
    constexprs, given = parse_defines(defines), parse_signature(signature)
    fn = load_kernel(reference)
    path = reference.rpartition(":")[0]
    ptx = ptx or PtxOptions()
    try:
        compiled = compile_kernel(fn, target, constexprs, given, num_warps, num_stages, ptx.assume)
    except SpecError:
        raise
    except (Exception, SystemExit) as e:  # noqa: BLE001 -- Triton's or the user's, located
        raise located(e, path, f"compiling {fn.__name__} for {target} failed", fn) from None
    return check_specialised(fn, compiled, given, constexprs, run, ptx)
