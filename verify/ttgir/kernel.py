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
time; integers get no hint (their values are not known here).
"""

from __future__ import annotations

import ast
import importlib.util
import os
import re
import sys
import traceback

from verify.engines.decide import AUTO
from verify.errors import Pos, SpecError
from verify.results import CheckResult
from verify.ttgir.module import check_module, require_triton

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


def parse_signature(text: str | None) -> dict[str, str]:
    """``a_ptr:*fp16,M:i32`` -> {"a_ptr": "*fp16", "M": "i32"}."""
    out = {}
    for item in filter(None, (s.strip() for s in (text or "").split(","))):
        name, sep, ty = item.partition(":")
        if not sep or not name.strip().isidentifier() or not ty.strip():
            raise SpecError(f"--signature item {item!r}: expected NAME:TYPE, e.g. a_ptr:*fp16")
        out[name.strip()] = ty.strip()
    return out


def _param_type(param, given: dict[str, str], constexprs: dict) -> str | None:
    """One parameter's signature entry (the rules of the module doc), or None."""
    if param.name in given:
        return given[param.name]
    if param.name in constexprs or param.is_constexpr:
        return "constexpr"
    if param.annotation_type:
        return param.annotation_type
    default = param._param.default
    return _DEFAULT_TYPES.get(type(default))


def build_signature(fn, given: dict[str, str], constexprs: dict) -> tuple[dict, dict, dict]:
    """(signature, constexpr values, attrs) for ``ASTSource``; a located error
    naming the first parameter whose type or value cannot be decided."""
    at = Pos(fn.def_file_line_number, 1)
    unknown = set(given) - {p.name for p in fn.params}
    if unknown:
        raise SpecError(
            f"--signature names {sorted(unknown)[0]!r}, which {fn.__name__} does not take", at
        )
    signature, values, attrs = {}, dict(constexprs), {}
    for param in fn.params:
        ty = _param_type(param, given, constexprs)
        if ty is None:
            raise SpecError(
                f"cannot infer the type of parameter {param.name!r} of "
                f"{fn.__name__}: give it, e.g. --signature '{param.name}:*fp16' "
                f"or -D {param.name}=VALUE",
                at,
            )
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
        if ty.startswith("*"):
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
):
    """Triton's compiled kernel for `target`, on this machine's CPU."""
    require_triton()
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.experimental.gluon._runtime import GluonASTSource

    capability = parse_target(target)
    # Triton 3.9 warns unless this is set; "1" is its default (fused multiply-adds).
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    sig, values, attrs = build_signature(fn, signature or {}, constexprs or {})
    source = (GluonASTSource if _is_gluon(fn) else triton.compiler.ASTSource)(
        fn, sig, values, attrs
    )
    return triton.compile(
        source,
        target=GPUTarget("cuda", capability, 32),
        options={"num_warps": num_warps, "num_stages": num_stages},
    )


def check_compiled(compiled, timeout: float = 60.0, engine: str = AUTO) -> list[CheckResult]:
    """The checks of an already compiled kernel (``triton.compile``'s result, or a
    launched kernel's ``CompiledKernel``), from its ``asm["ttgir"]``. Source paths
    under the working directory are reported relative to it."""
    text = compiled.asm["ttgir"].replace(f'"{os.getcwd()}/', '"')
    return check_module(text, timeout, engine)


def check_kernel(
    fn,
    target: str = "sm_90",
    constexprs: dict | None = None,
    signature: dict[str, str] | None = None,
    num_warps: int = 4,
    num_stages: int = 3,
    timeout: float = 60.0,
    engine: str = AUTO,
) -> list[CheckResult]:
    """Compile `fn` (a @triton.jit or @gluon.jit function) for `target` and check
    every shared-memory op of the result."""
    return check_compiled(
        compile_kernel(fn, target, constexprs, signature, num_warps, num_stages), timeout, engine
    )


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
    timeout: float,
    engine: str = AUTO,
) -> list[CheckResult]:
    """``verify triton path/kernel.py:name ...``: load, compile, check; any failure
    of the user's code is a SpecError located in the kernel file."""
    constexprs, given = parse_defines(defines), parse_signature(signature)
    fn = load_kernel(reference)
    path = reference.rpartition(":")[0]
    try:
        compiled = compile_kernel(fn, target, constexprs, given, num_warps, num_stages)
    except SpecError:
        raise
    except (Exception, SystemExit) as e:  # noqa: BLE001 -- Triton's or the user's, located
        raise located(e, path, f"compiling {fn.__name__} for {target} failed", fn) from None
    return check_compiled(compiled, timeout, engine)
