"""The PTX reader (verify/ptx): parsing every sample, addresses against a concrete
interpreter written apart, verdicts on known kernels, hostile input, the CLI."""

from __future__ import annotations

import glob
import os
import re
import shutil
import subprocess
import sys
from dataclasses import replace

import conftest
import pytest

from verify.errors import SpecError
from verify.model.expr import Expr, evaluate
from verify.ptx import memory, parse
from verify.ptx.check import Kernel, Options, check_ptx, check_ptx_text
from verify.ptx.ir import Instr
from verify.ptx.parse import parse_ptx, read_ptx
from verify.smt.solve import Status

DATA = os.path.join(conftest.DATA, "ptx")
SAMPLES = sorted(glob.glob(os.path.join(DATA, "*.ptx")))


def sample(name: str) -> str:
    return os.path.join(DATA, name)


@pytest.mark.parametrize("path", SAMPLES, ids=os.path.basename)
def test_every_sample_parses(path):
    module = read_ptx(path)
    assert module.entries(), "every sample has a kernel"
    assert module.target and module.target[0].startswith("sm_")
    instrs = [i for fn in module.entries() for i in fn.body]
    assert any(memory.is_memory(i) for i in instrs if isinstance(i, Instr))


# -- a concrete interpreter, apart from the reader -------------------------------------
# Straight-line PTX only, read with regular expressions, for one thread at a time:
# the shared address of every shared-memory instruction, relative to its variable.

_LINE = re.compile(r"^\s*(@!?%\w+\s+)?([a-z][\w.:]*)\s*(.*?);\s*$")


def _operands(text: str) -> list[str]:
    out, depth, cur = [], 0, ""
    for c in text:
        if c in "{[":
            depth += 1
        elif c in "}]":
            depth -= 1
        if c == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += c
    return out + ([cur.strip()] if cur.strip() else [])


def _execute(head: str, a: list[int], signed: bool) -> int | None:
    """One arithmetic instruction on concrete operands (None: not followed here)."""
    if head in ("mov", "cvta", "cvt"):
        return a[0]
    if head == "shr":
        x = a[0] - (1 << 32) if signed and a[0] >> 31 else a[0]
        return x >> a[1]
    binary = {
        "add": lambda x, y: x + y,
        "sub": lambda x, y: x - y,
        "mul": lambda x, y: x * y,
        "shl": lambda x, y: x << y,
        "and": lambda x, y: x & y,
        "or": lambda x, y: x | y,
        "xor": lambda x, y: x ^ y,
    }
    if head in binary:
        return binary[head](a[0], a[1])
    if head == "mad":
        return a[0] * a[1] + a[2]
    return None


def concrete_addresses(path: str, kernel: str, tid: tuple[int, int, int]) -> dict[int, int]:
    """PTX line -> byte offset of the shared address, for thread `tid`."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    start = next(i for i, line in enumerate(lines) if ".entry" in line and kernel in line)
    regs: dict[str, int] = {"%tid.x": tid[0], "%tid.y": tid[1], "%tid.z": tid[2]}
    shared = set()
    out: dict[int, int] = {}

    def val(x: str) -> int:
        x = x.strip()
        if x in regs:
            return regs[x]
        if x in shared or x.startswith("%"):
            return 0  # a shared variable's address counts from 0; %ctaid is 0
        return int(x, 0) & 0xFFFFFFFF if x.lstrip("-")[:1].isdigit() else 0

    def addr(x: str) -> int:
        base, _, off = x.strip()[1:-1].partition("+")
        return (val(base) + (int(off) if off else 0)) & 0xFFFFFFFF

    for n in range(start, len(lines)):
        text = lines[n]
        if text.strip() == "}":
            break
        m = re.search(r"\.shared .*?\.b8 (\w+)\[", text)
        if m:
            shared.add(m.group(1))
        m = _LINE.match(text)
        if not m or text.strip().startswith("."):
            continue
        op, ops = m.group(2), _operands(m.group(3))
        head = op.split(".")[0]
        if ".shared" in op or head in ("ldmatrix", "stmatrix"):
            out[n + 1] = addr(ops[1] if head in ("ld", "ldmatrix") else ops[0])
            continue
        if head in ("ld", "st", "bar", "ret") or ops[0].startswith("{"):
            continue
        result = _execute(head, [val(x) for x in ops[1:]], ".s32" in op)
        if result is not None:
            width = 64 if ("64" in op or "wide" in op) else 32
            regs[ops[0]] = result & ((1 << width) - 1)
    return out


def symbolic_offsets(path: str, kernel: str, block) -> dict[int, Expr]:
    module = read_ptx(path)
    fn = next(f for f in module.entries() if kernel in f.name)
    k = Kernel(module, fn, Options(block=block))
    found = {}
    for event in k.trace().events:
        access = memory.access_of(event, k.ctx, k.symbol)
        assert isinstance(access.offset, Expr), access.reason
        found[event.instr.line] = access.offset
    return found


@pytest.mark.parametrize(
    "name, kernel, block",
    [
        ("transpose_sm80.ptx", "transpose_padded", (32, 8, 1)),
        ("transpose_sm90a.ptx", "transpose_unpadded", (32, 8, 1)),
        ("ldmatrix_swizzle_sm80.ptx", "ldmatrix_sw333", (128, 1, 1)),
    ],
)
def test_addresses_match_a_concrete_interpreter(name, kernel, block):
    path = sample(name)
    offsets = symbolic_offsets(path, kernel, block)
    assert offsets
    for t in range(0, block[0] * block[1], 7):
        tid = (t % block[0], t // block[0], 0)
        concrete = concrete_addresses(path, kernel, tid)
        assert set(concrete) == set(offsets)
        for line, address in concrete.items():
            assert evaluate(offsets[line], {"lane": t % 32, "warp": t // 32}) == address, line


def _by_check(results, prefix):
    return [r for r in results if r.property.startswith(prefix)]


def test_padded_transpose_proved_unpadded_refuted_32_way():
    padded = check_ptx(
        sample("transpose_sm80.ptx"), Options(block=(32, 8), kernel="transpose_padded")
    )
    assert all(r.status == Status.PROVED for r in padded)
    assert len(_by_check(padded, "conflict_free")) == 8
    unpadded = check_ptx(
        sample("transpose_sm80.ptx"), Options(block=(32, 8), kernel="transpose_unpadded")
    )
    refuted = [r for r in unpadded if r.status == Status.REFUTED]
    assert len(refuted) == 4  # the four column reads
    for r in refuted:
        assert r.max_ways == 32 and r.wavefronts == 32
        assert r.facts["instruction"] == "ld.shared.f32"
        assert r.file.endswith("transpose.cu") and r.line == 29
        assert r.counterexample is not None
        assert sorted(row.lane or 0 for row in r.counterexample.rows) == list(range(32))


def test_swizzled_ldmatrix_tile_proved():
    results = check_ptx(sample("ldmatrix_swizzle_sm80.ptx"))
    loads = [
        r for r in _by_check(results, "conflict_free") if r.facts["instruction"].startswith("ldm")
    ]
    assert len(loads) == 4
    assert all(r.status == Status.PROVED and r.wavefronts == 4 for r in loads)
    assert all(r.status == Status.PROVED for r in results)


def test_stage_counter_and_trip_count():
    module = read_ptx(sample("pipeline_sm80.ptx"))
    fn = module.entries()[0]
    k = Kernel(module, fn, Options(assume=("param_2=8",)))
    trace = k.trace()
    first = trace.loops["it0"]
    assert first.trip == 2  # 8 tiles, unrolled by 4
    # the trip count is known: the mod-3 stage is a function of the iteration,
    # not a loose variable of its own
    assert first.counters == [] and not trace.loose
    results = check_ptx(sample("pipeline_sm80.ptx"), Options(kernel="pipeline3"))
    reads = [
        r for r in _by_check(results, "conflict_free") if r.facts["instruction"] == "ld.shared.f32"
    ]
    assert reads and all(r.status == Status.REFUTED and r.max_ways == 32 for r in reads[:4])


def test_unknown_is_never_a_guess():
    results = check_ptx(sample("pipeline_sm80.ptx"), Options(kernel="tail_dynamic"))
    in_bounds = [r for r in results if r.property.startswith("in_bounds")]
    assert in_bounds and all(r.status == Status.UNKNOWN for r in in_bounds)
    assert "dynamic shared" in in_bounds[0].reason
    sized = check_ptx(
        sample("pipeline_sm80.ptx"), Options(kernel="tail_dynamic", dynamic_shared=1024)
    )
    store = [r for r in sized if r.facts["instruction"] == "st.shared.f32"]
    assert store and all(r.status == Status.PROVED for r in store)
    # 800 bytes hold the 200 floats the guarded threads store; the threads past 200
    # would run past them, but their guard is off: not refuted, and not proved here
    tight = check_ptx(
        sample("pipeline_sm80.ptx"), Options(kernel="tail_dynamic", dynamic_shared=800)
    )
    bounds = [r for r in tight if r.property.startswith("in_bounds st.shared")]
    assert [r.status for r in bounds] == [Status.UNKNOWN]
    assert "guard" in bounds[0].reason


def test_wgmma_goes_to_the_hopper_reader():
    """wgmma is no longer listed as not modelled: verify.ptx.hopper checks it
    (tests/ptx/test_ptx_hopper.py)."""
    results = check_ptx(sample("triton_matmul_sm90.ptx"), Options(run=conftest.WORK))
    wgmma = [r for r in results if r.facts["instruction"].startswith("wgmma")]
    assert wgmma and not any(r.property.startswith("not modelled") for r in wgmma)
    assert {r.status for r in wgmma if r.property.startswith("placement")} == {Status.PROVED}


def test_missing_block_asks_for_it():
    with open(sample("transpose_sm80.ptx"), encoding="utf-8") as f:
        text = f.read().replace(".maxntid 256, 1, 1", "")
    with pytest.raises(SpecError, match="--block"):
        check_ptx_text(text, "t.ptx")


@pytest.mark.parametrize(
    "text, where",
    [
        (".version 8.0\n.target sm_80\n.entry k() { add.s32 %r1 %r2; }", "3:26"),
        ("\x00\x01garbage", "1:1"),
        (".version 8.0\n.target sm_80\n.entry k(", "3:"),
    ],
)
def test_malformed_input_is_located(text, where):
    with pytest.raises(SpecError) as e:
        parse_ptx(text, "bad.ptx")
    assert f"bad.ptx:{where}" in str(e.value) and "expected" in str(e.value)


def test_hostile_input_fails_fast(monkeypatch):
    with pytest.raises(SpecError, match="nested deeper"):
        parse_ptx(".entry k() " + "{" * 100_000, "deep.ptx")
    monkeypatch.setattr(parse, "MAX_PTX_BYTES", 1000)
    with pytest.raises(SpecError, match="at most 1000"):
        parse_ptx("// x\n" * 1000, "huge.ptx")


def _verify(*args):
    return subprocess.run(
        [sys.executable, "-m", "verify.cli", *args], capture_output=True, text=True, timeout=300
    )


def test_cli_exit_status():
    path = sample("transpose_sm80.ptx")
    assert _verify("ptx", path, "--block", "32,8").returncode == 1
    ok = _verify("ptx", path, "--block", "32,8", "--kernel", "transpose_padded", "--json")
    assert ok.returncode == 0 and '"instruction": "st.shared.f32"' in ok.stdout
    bad = _verify("ptx", path, "--assume", "nosuch=3")
    assert bad.returncode == 2 and "no parameter 'nosuch'" in bad.stderr


def _doc_sessions(text: str) -> list[tuple[str, list[str]]]:
    """The ``$ command`` lines of docs/ptx.md's text blocks and the lines under each."""
    out: list[tuple[str, list[str]]] = []
    inside = False
    for line in text.splitlines():
        if line.startswith("```"):
            inside = not inside
        elif inside and line.startswith("$ "):
            out.append((line[2:], []))
        elif inside and out:
            out[-1][1].append(line)
    return out


def _reads_as(shown: list[str], printed: list[str]) -> bool:
    """Every shown line appears in order; ``...`` stands for any lines; times and
    runs of spaces are free."""

    def normal(s: str) -> str:
        return " ".join(re.sub(r"\d+ ms", "<t>", s).split())

    lines = [normal(p) for p in printed]
    at = 0
    for s in shown:
        if s.strip() == "...":
            continue
        want = normal(s)
        while at < len(lines) and lines[at] != want:
            at += 1
        if at == len(lines):
            return False
        at += 1
    return True


def test_the_worked_example_in_the_docs_runs():
    root = conftest.ROOT
    with open(os.path.join(root, "docs", "ptx.md"), encoding="utf-8") as f:
        found = _doc_sessions(f.read())
    assert len(found) == 2
    for command, shown in found:
        args = command.split()[1:]
        done = subprocess.run(
            [sys.executable, "-m", "verify.cli", *args],
            capture_output=True,
            text=True,
            timeout=300,
            cwd=root,
        )
        assert _reads_as(shown, done.stdout.splitlines()), (command, done.stdout)


SOFTMAX_LAUNCH = (
    "param_2=1024",  # input row stride
    "param_3=1024",  # output row stride
    "param_4=4096",  # rows
    "param_5=1024",  # columns
)


def test_assumptions_decide_triton_copies():
    path = sample("triton_softmax_sm80.ptx")
    bare = check_ptx(path, Options(run=conftest.WORK))
    copies = [r for r in bare if r.facts["instruction"].startswith("cp.async")]
    assert copies and all(r.status == Status.UNKNOWN for r in copies)
    assert any("--assume" in r.reason for r in copies)
    launched = check_ptx(
        path,
        Options(
            assume=SOFTMAX_LAUNCH,
            grid=(64, 1, 1),
            global_align=256,
            dynamic_shared=16384,
            run=conftest.WORK,
        ),
    )
    first = [
        r
        for r in launched
        if r.facts["instruction"].startswith("cp.async") and r.facts["ptx_line"] < 200
    ]
    assert len(first) == 8 * 4  # in bounds, aligned, source aligned, conflict-free, per copy
    assert all(r.status == Status.PROVED for r in first)
    assert {r.wavefronts for r in first if r.property.startswith("conflict_free")} == {1}


def test_a_masked_copy_is_a_guard_not_a_zero_fill():
    """Triton's src-size ``selp.b32 %r, 4, 0, %p`` is a predicate to ptxas
    (``LDGSTS.E [..], [..], P5``): a lane at 0 copies nothing. The in-loop copies
    of the softmax are then decided under the launch's values, 1 wavefront each, as
    the H200 measured (benchmarks/results/triton_tutorials_h200.md); where the
    column mask splits a warp, the cost of the lanes left is not claimed."""

    def copies(columns: str) -> list:
        launch = (*SOFTMAX_LAUNCH[:3], columns)
        options = Options(assume=launch, grid=(64, 1, 1), global_align=256, run=conftest.WORK)
        found = check_ptx(sample("triton_softmax_sm80.ptx"), options)
        return [r for r in found if r.property.startswith("conflict_free cp.async")]

    in_loop = [r for r in copies("param_5=1024") if r.facts["ptx_line"] > 400]
    assert len(in_loop) == 8
    assert all(r.status == Status.PROVED and r.wavefronts == 1 for r in in_loop)
    split = [r for r in copies("param_5=1000") if r.status != Status.PROVED]
    assert split and all(r.status == Status.UNKNOWN for r in split)
    assert all("a guard masks lanes off" in r.reason for r in split)


def test_a_lane_guard_that_runs_the_warp_whole_keeps_the_figure():
    """The tutorial matmul's in-loop B copies run under ``offs_k < K - k*32``,
    which names the lane; at K = 512 it is one value across every warp at every
    iteration (enumerated), so the copy's rule-S figure stands: 4, as the H200
    measured (benchmarks/results/triton_matmul_h200.md)."""
    launch = tuple(f"param_{i}=512" for i in range(3, 9))
    options = Options(
        assume=launch, grid=(64,), global_align=256, shared_align=128, run=conftest.WORK
    )
    found = check_ptx("tests/data/ttgir_ptx/matmul_64x64x32.sm80.ptx", options)
    b_loop = [
        r
        for r in found
        if r.property.startswith("conflict_free cp.async") and r.facts["ptx_line"] in (479, 487)
    ]
    assert len(b_loop) == 2
    assert all(r.status == Status.PROVED and r.wavefronts == 4 for r in b_loop)


CUTE_LAUNCH = (
    "param_0=4096",  # the problem shape (M, N, K), a struct passed by value
    "param_0+4=4096",
    "param_0+8=4096",
    "param_3=4096",  # A's and B's leading strides
    "param_8=4096",
)


def test_cute_sgemm_sm80_decided_at_its_source_lines():
    path = sample("cute_sgemm_sm80.ptx")
    bare = check_ptx(path, Options(run=conftest.WORK))
    loads = [r for r in bare if r.facts["instruction"].startswith("ldmatrix")]
    assert loads and all(r.status != Status.REFUTED for r in loads)
    launched = check_ptx(
        path,
        Options(
            assume=CUTE_LAUNCH,
            grid=(32, 32, 1),
            global_align=256,
            dynamic_shared=98304,
            run=conftest.WORK,
        ),
    )
    assert all(r.status == Status.PROVED for r in launched)
    kinds = {r.facts["instruction"] for r in launched}
    assert kinds == {
        "cp.async.ca.shared.global.L2::128B",
        "ldmatrix.sync.aligned.x4.m8n8.shared.b16",
    }
    assert all(r.file.endswith("sgemm_sm80.cu") for r in launched)
    copies = [r for r in launched if r.property.startswith("conflict_free cp.async")]
    assert len(copies) == 48 and {r.wavefronts for r in copies} == {
        r.ideal_wavefronts for r in copies
    }


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not on PATH")
def test_verify_cuda_compiles_and_reads():
    done = _verify(
        "cuda", sample("transpose.cu"), "--arch", "sm_80", "--block", "32,8",
        "--kernel", "transpose_padded", "--", "-O3",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "transpose.cu:16: PROVED" in done.stdout


def test_verify_cuda_without_nvcc_says_so(tmp_path):
    env = dict(os.environ, PATH=str(tmp_path))
    done = subprocess.run(
        [sys.executable, "-m", "verify.cli", "cuda", sample("transpose.cu")],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 2 and "nvcc is not on PATH" in done.stderr


def _nested_loops(depth: int) -> str:
    """A kernel whose one store sits inside `depth` nested two-trip loops and whose
    address reads the innermost counter."""
    lines = [".version 8.0", ".target sm_80", ".address_size 64", ".visible .entry k()"]
    lines += [".reqntid 128", "{", ".reg .b32 %r<100>;", ".reg .pred %p<100>;"]
    lines += [".shared .align 4 .b8 s[4096];", "mov.u32 %r0, %tid.x;"]
    for i in range(depth):
        lines += [f"mov.u32 %r{i + 1}, 0;", f"L{i}:"]
    lines += ["shl.b32 %r90, %r0, 2;", "mov.u32 %r91, s;", "add.s32 %r92, %r91, %r90;"]
    lines += [f"shl.b32 %r94, %r{depth}, 9;", "add.s32 %r93, %r92, %r94;"]
    lines += ["st.shared.u32 [%r93], %r0;"]
    for i in reversed(range(depth)):
        lines += [f"add.s32 %r{i + 1}, %r{i + 1}, 1;", f"setp.lt.u32 %p{i}, %r{i + 1}, 2;"]
        lines += [f"@%p{i} bra L{i};"]
    return "\n".join(lines + ["ret;", "}"])


def test_nested_loops_are_followed_to_a_bounded_depth():
    shallow = check_ptx_text(_nested_loops(3), "nested.ptx")
    assert shallow and all(r.status == Status.PROVED for r in shallow)
    deep = check_ptx_text(_nested_loops(30), "nested.ptx")
    assert [r.status for r in deep] == [Status.UNKNOWN]
    assert "nested deeper than" in deep[0].reason


def test_cute_wgmma_sm90_copies_and_wgmma_decided():
    """CuTe's hopper/wgmma_sm90.cu (its first kernel, DWARF stripped): its cp.async
    loads are decided with the launch's values, and its 16 wgmma's 32 operands by
    verify.ptx.hopper (placement, writer = reader, wavefronts)."""
    launched = check_ptx(
        sample("cute_wgmma_sm90a.ptx"),
        Options(
            assume=("param_0=4096", "param_0+4=4096", "param_0+8=4096", "param_3=4096",
                    "param_7=4096"),
            grid=(32, 32, 1),
            global_align=256,
            dynamic_shared=98304,
            run=conftest.WORK,
        ),
    )  # fmt: skip
    copies = [r for r in launched if r.facts["instruction"].startswith("cp.async")]
    wgmma = [r for r in launched if r.facts["instruction"].startswith("wgmma")]
    assert len(copies) == 48 * 4 and all(r.status == Status.PROVED for r in copies)
    # 3 checks per operand and one per accumulator (4 of 4 k-blocks each)
    assert len(wgmma) == 32 * 3 + 4 and all(r.status == Status.PROVED for r in wgmma)
    assert all(r.file.endswith("wgmma_sm90.cu") for r in copies)


def test_a_register_src_size_copy_reports_the_zfill_forms_doubled_cost():
    """benchmarks/results/ptx_h200.md: zfill.cu's .cg copies with a src-size loaded
    from memory are LDGSTS...ZFILL, 8 wavefronts (ideal 8) where the plain copy
    costs 4; an immediate src-size and .ca copies are unchanged."""
    results = check_ptx(
        "benchmarks/hardware/ptx/ptx/zfill_sm90.ptx", Options(block=(32,), global_align=128)
    )
    cost = {}
    for r in results:
        if r.property.startswith("conflict_free cp.async"):
            cost[r.line] = (r.wavefronts, r.ideal_wavefronts, bool(r.facts.get("zfill")))
    measured = {29: 4, 30: 8, 31: 4, 32: 8, 33: 8, 34: 8, 35: 8, 36: 4, 37: 8, 38: 4}
    for line, wavefronts in measured.items():
        assert cost[line][:2] == (wavefronts, wavefronts), (line, cost[line])
        assert cost[line][2] == (wavefronts == 8)


def test_a_mask_src_size_of_zero_or_the_copy_size_is_not_the_zfill_form():
    """Triton's ``selp.b32 %r, 16, 0, %p``: ptxas predicates the copy (measured at
    rule S's 4 on the H200, benchmarks/results/triton_matmul_h200.md)."""
    results = check_ptx(
        "tests/data/ttgir_ptx/matmul_64x64x32.sm80.ptx",
        Options(
            assume=tuple(f"param_{i}=512" for i in range(3, 9)),
            grid=(64,),
            global_align=256,
            shared_align=128,
            dynamic_shared=16384,
            run=conftest.WORK,
        ),
    )
    copies = [r for r in results if r.property.startswith("conflict_free cp.async")]
    assert copies and not any(r.facts.get("zfill") for r in copies)


def test_the_one_parameter_left_unassumed_is_named():
    """The tutorial matmul with every value but M assumed: its copies' sources go
    through ``cdiv(M, 64)`` and ``% M``, and the reason names M's parameter."""
    launch = tuple(f"param_{i}=512" for i in range(4, 9))
    results = check_ptx(
        "tests/data/ttgir_ptx/matmul_64x64x32.sm80.ptx",
        Options(assume=launch, grid=(64,), run=conftest.WORK),
    )
    reasons = " ".join(r.reason for r in results if "cp.async" in r.property)
    assert "param_3" in reasons and "--assume" in reasons


def _pipeline3(**options):
    return check_ptx(sample("pipeline_sm80.ptx"), Options(kernel="pipeline3", **options))


def test_a_refutation_names_the_least_alignment_that_proves_it(monkeypatch):
    """pipeline3's cp.async.cg copies are 16 wavefronts at a global base 48 mod 128
    and ideal when the global pointer is 128-byte aligned (docs/ptx.md, "On the
    samples"): `proved_under` says so, each copy decided again at most 5 times, and
    the 32-way column reads, which no alignment fixes, get none."""
    from verify.ptx import assume

    runs = []
    real = assume.run_spec

    def counted(*args, **kwargs):
        runs.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(assume, "run_spec", counted)
    results = _pipeline3()
    copies = [r for r in _by_check(results, "conflict_free cp.async") if r.counterexample]
    reads = [r for r in _by_check(results, "conflict_free ld.shared") if r.counterexample]
    assert copies and reads and len(runs) <= assume.MAX_REDECISIONS
    for r in copies:
        assert r.status == Status.REFUTED and r.facts["proved_under"] == {"global_align": 128}
        assert r.counterexample.notes[-1] == (
            "ideal when every global pointer is 128-byte aligned (--global-align 128); "
            "16 wavefronts at the default (16 bytes)"
        )
    assert not any("proved_under" in r.facts for r in reads)
    # the claim, decided directly: proved at 128 bytes, refuted at 64
    at = {a: {r.property: r.status for r in _pipeline3(global_align=a)} for a in (64, 128)}
    assert all(at[128][r.property] == Status.PROVED for r in copies)
    assert all(at[64][r.property] == Status.REFUTED for r in copies)


def test_an_alignment_the_user_gave_is_not_second_guessed():
    results = _pipeline3(global_align=64)
    assert not any("proved_under" in r.facts for r in results)


def test_the_alignment_ladder_is_bounded():
    from verify.ptx import assume

    ladder = assume.alignment_ladder({"global_align": 16, "shared_align": 4})
    assert ladder == [
        {"global_align": 16, "shared_align": 16},
        {"global_align": 32, "shared_align": 32},
        {"global_align": 64, "shared_align": 64},
        {"global_align": 128, "shared_align": 128},
        {"global_align": 256, "shared_align": 256},
    ]
    assert assume.alignment_ladder({"global_align": 256}) == []


def test_a_copy_proved_under_a_dynamic_shared_alignment():
    """The tutorial matmul's B-tile copies at its launch, dynamic base left at its
    declared 16 bytes: ideal at --shared-align 128 (docs/ptx.md, launch (E))."""
    launch = tuple(f"param_{i}=512" for i in range(3, 9))
    options = Options(
        assume=launch, grid=(64,), global_align=256, dynamic_shared=16384, run=conftest.WORK
    )
    results = check_ptx("tests/data/ttgir_ptx/matmul_64x64x32.sm80.ptx", options)
    under = [r for r in results if "proved_under" in r.facts]
    assert under and all(r.facts["proved_under"] == {"shared_align": 128} for r in under)
    given = check_ptx(
        "tests/data/ttgir_ptx/matmul_64x64x32.sm80.ptx", replace(options, shared_align=128)
    )
    status = {(r.property, r.line): r.status for r in given}
    assert all(status[(r.property, r.line)] == Status.PROVED for r in under)


def test_a_pipeline_stage_is_tied_to_the_iteration():
    """The tutorial matmul's in-loop A copies read the stage (a selp counter) for
    their shared address and the iteration for their global source: with the
    trip count known (16 at K = 512) the stage is a function of the iteration,
    so the refutation names an iteration that runs, at rule S's 8 of ideal 4,
    and the two prefetches predicated off (src-size 0) are stated. The H200
    averages 7.5 per execution there: (14 * 8 + 2 * 4) / 16
    (benchmarks/results/triton_matmul_h200.md)."""
    launch = tuple(f"param_{i}=512" for i in range(3, 9))
    options = Options(
        assume=launch,
        grid=(64,),
        global_align=256,
        shared_align=128,
        dynamic_shared=16384,
        run=conftest.WORK,
    )
    found = check_ptx("tests/data/ttgir_ptx/matmul_64x64x32.sm80.ptx", options)
    a_loop = [
        r
        for r in found
        if r.property.startswith("conflict_free cp.async") and r.facts["ptx_line"] in (459, 465)
    ]
    assert len(a_loop) == 2
    for r in a_loop:
        assert r.status == Status.REFUTED and r.wavefronts == 8
        assert r.counterexample is not None
        assert r.counterexample.instance["it0"] in range(14)
        assert r.facts["condition"].endswith("off for every lane at it0 = 14, 15 of 16")
    assert all(r.status != Status.UNKNOWN for r in found)


def test_a_stage_picked_by_the_iteration_stays_small():
    """Triton attention's K/V stage, picked by the iteration (32 at N_CTX = 1024),
    repeats every 2: tabulated as ``it0 % 2``, its shifted address stays below
    2^32 and keeps the shared base a bare term, so launch (B) of docs/ptx.md
    decides every check."""
    options = Options(
        assume=("param_5=1024",),
        grid=(16, 8),
        global_align=256,
        shared_align=128,
        dynamic_shared=65536,
        run=conftest.WORK,
    )
    results = check_ptx(sample("triton_attention_sm80.ptx"), options)
    assert len(results) == 144 and all(r.status == Status.PROVED for r in results)


BIG_TILE = """.version 8.0
.target {target}
.address_size 64

.visible .entry big()
.reqntid 32, 1, 1
{{
	.reg .b32 %r<4>;
	.shared .align 16 .b32 tile[{words}];
	mov.u32 %r1, %tid.x;
	shl.b32 %r2, %r1, 2;
	mov.u32 %r3, tile;
	add.s32 %r3, %r3, %r2;
	st.shared.u32 [%r3], %r1;
	ret;
}}
"""


@pytest.mark.parametrize(
    "target, words, dynamic, warned",
    [
        ("sm_80", 50_000, None, True),  # 200,000 bytes > 163 KB
        ("sm_90a", 50_000, None, False),  # <= 227 KB
        ("sm_90a", 50_000, 40_000, True),  # 240,000 bytes with the dynamic part
        ("sm_80", 1_000, None, False),
    ],
)
def test_a_footprint_over_the_targets_block_limit_warns(target, words, dynamic, warned):
    """Issue 27: static arrays plus --dynamic-shared against the CUDA guide's
    per-block limit of the PTX's own .target; verdicts are unchanged."""
    text = BIG_TILE.format(target=target, words=words)
    found = check_ptx_text(text, "big.ptx", Options(dynamic_shared=dynamic))
    warnings = [w for r in found for w in r.facts.get("warnings", [])]
    assert bool(warnings) == warned, warnings
    assert {r.status for r in found} == {Status.PROVED}
    if warned:
        footprint = 4 * words + (dynamic or 0)
        assert warnings == [next(w for w in warnings if f"({footprint} bytes)" in w)]
        assert "cannot launch" in warnings[0]
