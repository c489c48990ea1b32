"""`verify triton` compiles the kernel Triton's launcher would run: integer
arguments specialised from ``--assume`` as the launcher specialises them (its own
`specialize_impl` is the oracle), and ``--signature`` types with commas inside."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from verify.errors import SpecError

pytest.importorskip("triton._C.libtriton")

MATMUL = "specs/triton_kernels/matmul.py:matmul_kernel"
KERNEL = (
    "import triton\nimport triton.language as tl\n\n"
    "@triton.jit(do_not_specialize=['quiet'], do_not_specialize_on_alignment=['unaligned'])\n"
    "def k(p, n, quiet, unaligned, typed: tl.int32, B: tl.constexpr = 8):\n    pass\n"
)
# Types of the parameters the tests assume no value of.
TYPED = {"p": "*fp16", "quiet": "i32", "unaligned": "i32"}


@pytest.fixture
def kernel(tmp_path):
    from verify.ttgir.kernel import load_kernel

    path = tmp_path / "k.py"
    path.write_text(KERNEL)
    return load_kernel(f"{path}:k")


def run_triton(*args):
    return subprocess.run(
        [sys.executable, "-m", "verify.cli", "triton", *args], capture_output=True, text=True
    )


@pytest.mark.parametrize("value", [0, 1, 2, 15, 16, 17, 48, -16, 2**31 - 16, 2**31, 2**33, 2**63])
def test_an_assumed_integer_is_specialised_as_tritons_own_specialize_impl_does(kernel, value):
    from triton._C.libtriton import native_specialize_impl
    from triton.backends.compiler import BaseBackend

    from verify.ttgir.kernel import build_signature

    sig, values, attrs = build_signature(kernel, TYPED, {}, (f"n={value}",))
    ty, hint = native_specialize_impl(BaseBackend, value, False, True, True)
    assert sig["n"] == ty
    if ty == "constexpr":
        assert values["n"] == hint == 1 and (1,) not in attrs
    else:
        assert ((1,) in attrs) == (hint == "D")


def test_do_not_specialize_annotations_and_residues_are_the_launchers(kernel):
    from verify.ttgir.kernel import build_signature, describe_specialisation

    assume = ("n%32==16", "quiet=1", "unaligned=64", "typed=1", "B=1")
    sig, values, attrs = build_signature(kernel, {**TYPED, "n": "i32"}, {}, assume)
    # quiet: do_not_specialize (neither 1 nor D); unaligned: 1 is still made a
    # constant, 64 gets no D; typed: annotated, so 1 stays an i32 argument.
    assert sig == {
        "p": "*fp16",
        "n": "i32",
        "quiet": "i32",
        "unaligned": "i32",
        "typed": "i32",
        "B": "constexpr",
    }
    assert attrs == {(0,): [["tt.divisibility", 16]], (1,): [["tt.divisibility", 16]]}
    assert values == {"B": 8}
    assert describe_specialisation(sig, attrs, []) == (
        "pointers tt.divisibility=16; n tt.divisibility=16"
    )
    sig, values, _ = build_signature(kernel, TYPED, {}, ("unaligned=1", "n=3"))
    assert sig["unaligned"] == "constexpr" and values["unaligned"] == 1


def test_the_report_names_only_the_launchers_constants(kernel):
    from verify.ttgir.kernel import assumed_integers, build_signature, launcher_constants

    # B is a tl.constexpr and quiet is do_not_specialize: neither 1 is the launcher's.
    assume = ("n=1", "B=1", "quiet=1")
    sig, _, _ = build_signature(kernel, TYPED, {}, assume)
    assert launcher_constants(kernel, sig, {}, assumed_integers(assume)[0]) == ["n"]


def test_without_assumed_values_integers_get_no_hint(kernel):
    from verify.ttgir.kernel import build_signature

    sig, _, attrs = build_signature(kernel, {**TYPED, "n": "i32"}, {})
    assert attrs == {(0,): [["tt.divisibility", 16]]} and sig["n"] == "i32"


def test_the_tutorial_matmul_at_its_sizes_is_the_pipelined_kernel_that_runs():
    sizes = [f"--assume={n}=4096" for n in ("M", "N", "K", "stride_am", "stride_bk", "stride_cm")]
    ones = [f"--assume={n}=1" for n in ("stride_ak", "stride_bn", "stride_cn")]
    blocks = ["-D", "BLOCK_SIZE_M=128", "-D", "BLOCK_SIZE_N=128", "-D", "BLOCK_SIZE_K=64"]
    out = run_triton(
        MATMUL, "--target", "sm_80", *blocks, "-D", "GROUP_SIZE_M=8",
        "--signature", "a_ptr:*fp16,b_ptr:*fp16,c_ptr:*fp16", *sizes, *ones, "--json",
    )  # fmt: skip
    assert out.returncode in (0, 1, 3), out.stderr
    checks = json.loads(out.stdout)["checks"]
    assert {c["facts"]["specialisation"] for c in checks} == {
        "pointers tt.divisibility=16; M, N, K, stride_am, stride_bk, stride_cm "
        "tt.divisibility=16; stride_ak, stride_bn, stride_cn constexpr 1"
    }
    instructions = {c["facts"].get("instruction", "") for c in checks}
    assert any(i.startswith("cp.async") for i in instructions)
    # The same kernel with the strides made constants but no sizes assumed is
    # Triton's unpipelined one: its A and B tiles are stored a halfword at a time.
    out = run_triton(
        MATMUL, "--target", "sm_80", *blocks, "-D", "GROUP_SIZE_M=8", *ones,
        "--signature", "a_ptr:*fp16,b_ptr:*fp16,c_ptr:*fp16,M:i32,N:i32,K:i32,"
        "stride_am:i32,stride_bk:i32,stride_cm:i32",
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[1] == (
        "specialised as Triton's launcher would: pointers tt.divisibility=16; no integer "
        "hints; stride_ak, stride_bn, stride_cn constexpr 1"
    )
    assert "cp.async" not in out.stdout and "st.shared.b16" in out.stdout


def test_signature_commas_inside_brackets_do_not_split_a_type():
    from verify.ttgir.kernel import parse_signature

    assert parse_signature("d:tensordesc<fp16[128,64]>, M:i32") == {
        "d": "tensordesc<fp16[128,64]>",
        "M": "i32",
    }


@pytest.mark.parametrize(
    "text,col,words",
    [
        ("d:tensordesc<fp16[128,64>", 25, "unmatched '>'"),
        ("a:*fp16]", 8, "unmatched ']'"),
        ("d:tensordesc<fp16[128,64]", 13, "closing bracket for '<'"),
    ],
)
def test_an_unbalanced_signature_bracket_is_a_located_error(text, col, words):
    from verify.ttgir.kernel import parse_signature

    with pytest.raises(SpecError, match=words) as e:
        parse_signature(text)
    assert (e.value.pos.line, e.value.pos.col) == (1, col)
    out = run_triton(f"{MATMUL}", "--signature", text)
    assert out.returncode == 2 and out.stderr.startswith(f"--signature:1:{col}: error: ")
    assert "Traceback" not in out.stderr
