"""The kernels of Triton's Python unit tests, compiled on the CPU for sm_80 and sm_90
and checked (issue 26 item 5): the ``unit-kernel`` corpus of
benchmarks/campaigns/triton_corpus.py (``--only unit-kernel``).

Most of python/test/unit's tests need torch and a GPU to run, but their kernels
compile without either. From each file of UNIT_KERNEL_FILES (the tests whose
kernels touch shared memory: dots, pipelining, layout conversions, reductions,
descriptors, tensor-memory and warp specialization), every @triton.jit function
that no other jit function of the file calls is a kernel, top-level or defined
inside a test function, whose source names an op that can go through shared
memory (SHARED_HINTS); at most PER_FILE of them a file, spread evenly over the
file in source order (a sample that anyone can repeat: no randomness).

A kernel is loaded from its file's source without the host code, as the
tutorials are (`triton_corpus._load_tutorial_kernel`: imports, constants, classes
and functions; torch's imports may fail), and, for a kernel defined in a test
function, with what that function gives it: the first case of each
``pytest.mark.parametrize`` of the test (bound as globals of the kernel, plain
values as ``tl.constexpr`` as Triton requires of a global), then the test's own
assignments before the kernel that evaluate without torch or a GPU. Its
constexprs: the keywords of the test's first launch of it (``kernel[grid](...,
BLOCK=128, num_warps=8)``) where they evaluate, else `triton_corpus`'s rule
(64 for a BLOCK/SIZE/TILE name, else 1); parameters typed as ``verify triton``
types them, its pointers to fp16, else fp32, else i32 (ELEMENTS: the first that
compiles). A kernel that Triton will not compile so (a parameter only a torch
tensor's dtype types, a value only the test computes) is ``not compiled``,
Triton's refusal, not verify's.
"""

from __future__ import annotations

import ast
import contextlib
import os
import sys

UNIT_KERNEL_FILES = (
    "python/test/unit/language/test_core.py",
    "python/test/unit/language/test_matmul.py",
    "python/test/unit/language/test_pipeliner.py",
    "python/test/unit/language/test_conversions.py",
    "python/test/unit/language/test_block_pointer.py",
    "python/test/unit/language/test_tensor_descriptor.py",
    "python/test/unit/language/test_standard.py",
    "python/test/unit/language/test_warp_specialization.py",
    "python/test/unit/language/test_random.py",
    "python/test/unit/cuda/test_mixed_io.py",
    "python/test/unit/cuda/test_tma_store_gemm.py",
    "python/test/unit/cuda/test_tma_descriptor.py",
)
PER_FILE = 40
# What a kernel's source names when its ops can go through shared memory (a dot, a
# transpose or layout change, a reduction or scan, a descriptor or block pointer):
# the sample is drawn from such kernels only (elementwise ones hold no shared memory).
SHARED_HINTS = (
    "dot", "trans", "permute", "reshape", "join", "split", "sum(", "max(", "min(",
    "reduce", "cumsum", "cumprod", "associative_scan", "sort", "histogram", "gather",
    "convert_layout", "descriptor", "make_block_ptr", "flip", "topk", "argmax", "argmin",
)  # fmt: skip
FOLDERS = ("python/test/unit/language", "python/test/unit/cuda")
# The element types tried in turn for the pointers a kernel's use implies (`verify
# triton` takes fp16), the first that Triton compiles kept.
ELEMENTS = ("fp16", "fp32", "i32")


def _is_jit(decorator: ast.expr) -> bool:
    text = ast.unparse(decorator)
    return "jit" in text or "autotune" in text


def kernels_of(source: str) -> list[tuple[str, list[ast.FunctionDef]]]:
    """(name, enclosing functions then the kernel) of each kernel of `source`,
    in source order; a name repeated in one test gets ``#2``, ``#3``..."""
    tree = ast.parse(source)
    found: list[tuple[str, list[ast.FunctionDef]]] = []

    def walk(body: list[ast.stmt], chain: list[ast.FunctionDef]) -> None:
        for node in body:
            if isinstance(node, ast.FunctionDef):
                if any(_is_jit(d) for d in node.decorator_list):
                    found.append((node.name, [*chain, node]))
                else:
                    walk(node.body, [*chain, node])
            elif isinstance(node, (ast.If, ast.For, ast.With, ast.Try, ast.ClassDef)):
                for part in ("body", "orelse", "finalbody"):
                    walk(getattr(node, part, []) or [], chain)

    walk(tree.body, [])
    called = {
        call.func.id
        for _, chain in found
        for call in ast.walk(chain[-1])
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Name)
    }
    out = []
    seen: dict[str, int] = {}
    for name, chain in found:
        if name in called:
            continue  # a helper, compiled as part of its callers
        qual = ".".join(f.name for f in chain)
        seen[qual] = seen.get(qual, 0) + 1
        out.append((qual if seen[qual] == 1 else f"{qual}#{seen[qual]}", chain))
    return out


def spread(names: list[str], most: int) -> list[str]:
    """At most `most` of `names`, evenly spaced, the first included."""
    if len(names) <= most:
        return names
    return [names[i * len(names) // most] for i in range(most)]


def unit_kernels(root: str, targets: tuple[str, ...]) -> list[dict]:
    items = []
    for rel in UNIT_KERNEL_FILES:
        path = os.path.join(root, rel)
        if not os.path.isfile(path):
            continue
        with open(path, encoding="utf-8") as f:
            names = [
                name
                for name, chain in kernels_of(f.read())
                if any(hint in ast.unparse(chain[-1]) for hint in SHARED_HINTS)
            ]
        for name in spread(names, PER_FILE):
            for target in targets:
                items.append(
                    {
                        "kind": "unit-kernel",
                        "id": f"{rel}:{name}@{target}",
                        "file": path,
                        "kernel": name,
                        "target": target,
                    }
                )
    return items


# -- one kernel, in the worker ---------------------------------------------------------


def load_unit_kernel(path: str, qual: str):
    """The jit function `qual` of a unit-test file and the launch keywords its
    test gives it (the module doc)."""
    from benchmarks.campaigns import triton_corpus as corpus

    with open(path, encoding="utf-8") as f:
        source = f.read()
    chain = dict(kernels_of(source))[qual]
    tree = ast.parse(source)
    namespace: dict = {"__name__": "unit_test", "__file__": path}
    sys.path.insert(0, os.path.dirname(path))
    try:
        for node in tree.body:
            if isinstance(node, corpus._DEFINITIONS):
                corpus._try_exec(node, path, namespace)
        kernel = chain[-1]
        scope: ast.AST = tree
        if len(chain) > 1:
            scope = chain[-2]
            for test in chain[:-1]:
                namespace.update(_first_case(test, namespace))
                _assignments_before(test, kernel, path, namespace)
            _as_constexprs(namespace)
            kernel.decorator_list = [d for d in kernel.decorator_list if _is_jit(d)]
            corpus._try_exec(kernel, path, namespace)
        launch = _first_launch(scope, kernel.name, namespace)
    finally:
        sys.path.pop(0)
    fn = namespace[kernel.name]
    configs = getattr(fn, "configs", None)
    if configs:
        first = configs[0]
        launch = {**dict(first.kwargs), "num_warps": first.num_warps, **launch}
    while not hasattr(fn, "params"):  # autotune / heuristics wrap the jit function
        fn = fn.fn
    return fn, launch


def _first_case(test: ast.FunctionDef, namespace: dict) -> dict:
    """The first case of each ``pytest.mark.parametrize`` of `test`, by name."""
    bound: dict = {}
    for decorator in test.decorator_list:
        if not (isinstance(decorator, ast.Call) and "parametrize" in ast.unparse(decorator.func)):
            continue
        if len(decorator.args) < 2:
            continue
        try:
            names = _evaluate(decorator.args[0], namespace)
            cases = list(_evaluate(decorator.args[1], namespace))
        except Exception:  # noqa: BLE001 -- a case list only the host can build
            continue
        if not cases:
            continue
        names = [n.strip() for n in names.split(",")] if isinstance(names, str) else list(names)
        first = getattr(cases[0], "values", cases[0])  # pytest.param(...)
        values = first if len(names) > 1 else [first]
        bound.update(zip(names, values))
    return bound


def _assignments_before(test: ast.FunctionDef, kernel: ast.FunctionDef, path: str, namespace):
    for node in test.body:
        if node is kernel:
            return
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            code = compile(ast.Module(body=[node], type_ignores=[]), path, "exec")
            with contextlib.suppress(Exception):  # torch, a GPU: the host's
                exec(code, namespace)  # noqa: S102


def _as_constexprs(namespace: dict) -> None:
    """Plain values bound from the test as ``tl.constexpr``: Triton refuses a
    kernel's read of any other global."""
    import triton.language as tl

    for name, value in list(namespace.items()):
        if isinstance(value, (bool, int, float, str)) and not name.startswith("__"):
            namespace[name] = tl.constexpr(value)


def _first_launch(scope: ast.AST, name: str, namespace: dict) -> dict:
    """The keywords of the first ``name[grid](...)`` in `scope` that evaluate."""
    for call in ast.walk(scope):
        if (
            isinstance(call, ast.Call)
            and isinstance(call.func, ast.Subscript)
            and isinstance(call.func.value, ast.Name)
            and call.func.value.id == name
        ):
            out = {}
            for keyword in call.keywords:
                if keyword.arg is None:
                    continue
                try:
                    value = _evaluate(keyword.value, namespace)
                except Exception:  # noqa: BLE001 -- a value only the test computes
                    continue
                value = getattr(value, "value", value)  # a tl.constexpr bound above
                if isinstance(value, (bool, int, float, str)):
                    out[keyword.arg] = value
            return out
    return {}


def _evaluate(node: ast.expr, namespace: dict):
    return eval(compile(ast.Expression(node), "<unit test>", "eval"), namespace)  # noqa: S307


def check_unit_kernel(item: dict, timeout: float) -> dict:
    from benchmarks.campaigns import triton_corpus as corpus
    from verify.ttgir.kernel import check_compiled, compile_kernel

    try:
        fn, launch = load_unit_kernel(item["file"], item["kernel"])
    except Exception as e:  # noqa: BLE001 -- the test's host code, not verify
        return {"outcome": "not compiled", "error": f"not loaded: {type(e).__name__}: {e}"}
    num_warps = int(launch.pop("num_warps", 4))
    num_stages = int(launch.pop("num_stages", 3))
    params = {p.name for p in fn.params}
    given = {k: v for k, v in launch.items() if k in params}
    constexprs = {**corpus._constexpr_values(fn), **given}
    constexprs = {
        k: v
        for k, v in constexprs.items()
        if any(p.name == k and p.is_constexpr for p in fn.params)
    }
    signature = corpus._implied_signature(fn, constexprs)
    error: Exception | None = None
    for element in ELEMENTS:
        typed = {k: v.replace("*fp16", f"*{element}") for k, v in signature.items()}
        try:
            compiled = compile_kernel(fn, item["target"], constexprs, typed, num_warps, num_stages)
            break
        except Exception as e:  # noqa: BLE001 -- Triton's refusal at this configuration
            error = e
    else:
        assert error is not None
        why = f"{type(error).__name__}: {corpus._last_line(error)}"
        return {"outcome": "not compiled", "error": why}
    return {
        "outcome": "checked",
        "target": item["target"],
        "results": [corpus._result(r) for r in check_compiled(compiled, timeout)],
    }
