"""Thread writers of a wgmma operand's buffer that cannot change what it reads
(verify.ptx.hopper_writers): on no path to the wgmma, or writing no byte it reads.

The oracle for the byte sets is oracle/ptx_interpreter.py (sharing no code with
verify) for the writers' addresses, every thread of the block, and for the bytes
wgmma reads CuTe's Swizzle<3,4,3> on the canonical K-major layout written here on
integers: element (n, k) of a 64x16 f16 B operand at start s, 8-row groups 1024
bytes apart (the descriptor's SBO), rows 128 bytes apart, XORed.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from oracle import ptx_interpreter as oracle
from verify.ptx import tensormaps
from verify.ptx.check import Options, check_module, check_ptx_text
from verify.ptx.parse import parse_ptx
from verify.smt.solve import Status

ROOT = Path(__file__).parents[2]
DATA = ROOT / "tests/data/hopper/tensormaps"
MAP_128B = "dataType=FLOAT16,boxDim={64,64},swizzle=128B"
F = ", ".join(f"%f{i}" for i in range(32))
DESC = 4611686293305360384  # 128B swizzle, SBO 1024, LBO 16, start 0 (OR-ed with the address)
ZEROS = "{%r10, %r10, %r10, %r10}"
TMA_COPY = "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"


def sample_results(stem: str, edit: tuple[str, str] | None = None):
    text = (DATA / f"{stem}.sm90.ptx").read_text()
    if edit is not None:
        assert edit[0] in text
        text = text.replace(edit[0], edit[1], 1)
    meta = json.loads((DATA / f"{stem}.sm90.json").read_text())["tensordesc_meta"]
    module = parse_ptx(text, f"{stem}.ptx")
    found = tensormaps.read(module, meta)
    return check_module(module, Options(tma_maps=tensormaps.tma_maps(module, found)))


def writer_reader(results):
    return [r for r in results if r.property.startswith("writer_reader")]


def lines(first: int, last: int) -> str:
    return "PTX lines " + ", ".join(str(n) for n in range(first, last + 1))


# -- tutorial 09's persistent kernels ---------------------------------------------------


def test_persistent_tma_zero_fill_cannot_reach_the_wgmma():
    """The zero-fill (lines 131-146) runs on the path taken when K has no tiles, which
    exits without a wgmma; the stmatrix epilogue (956-971) writes the C tile above the
    A and B stages: every writer = reader check decided, PROVED."""
    wr = writer_reader(sample_results("t09_tma_persistent"))
    assert [r.status for r in wr] == [Status.PROVED] * 16
    assert {r.facts["unreachable_writers"] for r in wr} == {lines(131, 146)}
    assert {r.facts["disjoint_writers"] for r in wr} == {lines(956, 971)}


def test_descriptor_persistent_epilogue_writes_elsewhere():
    wr = writer_reader(sample_results("t09_descriptor_persistent"))
    assert [r.status for r in wr] == [Status.PROVED] * 16
    assert {r.facts["disjoint_writers"] for r in wr} == {lines(520, 535)}


def test_a_zero_fill_that_reaches_the_wgmma_still_counts():
    """The same zero-fill with its path falling into the tiles' loop instead of
    exiting: each of the 8 A operands meets half of its stores (a 16-wide k-slice of
    a 64-wide row), so their checks stay UNKNOWN, naming the first of them; the B
    stages lie above the stores, disjoint."""
    wr = writer_reader(sample_results("t09_tma_persistent", ("\tbra.uni \t$L__BB0_15;\n", "")))
    unknown = [r for r in wr if r.status is Status.UNKNOWN]
    assert len(unknown) == 8 and all(" operand A " in r.property for r in unknown)
    assert {r.reason.split(" stores constants")[0] for r in unknown if r.reason} == {
        "st.shared.v4.b32 at PTX line 131",
        "st.shared.v4.b32 at PTX line 139",
    }
    assert not any("unreachable_writers" in r.facts for r in wr)
    assert {r.status for r in wr if " operand B " in r.property} == {Status.PROVED}


# -- hand-written kernels: a TMA box of 8192 bytes at the tile's start, read as B --------


def kernel(writer: str, unwaited: str = "", waited: str = "") -> str:
    """A TMA copy fills tile[0, 8192) of 16384 bytes with a 64x64 f16 box; `writer`
    runs after it, then two wgmma read two k-blocks of it as B (starts 0 and 32
    bytes); `unwaited` runs after them, before their wgmma.wait_group 0, `waited`
    after it. %r6 is the tile's address plus 16 * tid, %r7 the parameter."""
    wgmma = []
    for kb in range(2):
        wgmma += [
            f"\tadd.s32 \t%r{32 + kb}, %r31, {2 * kb};",
            f"\tcvt.u64.u32 \t%rd{4 + kb}, %r{32 + kb};",
            f"\tor.b64 \t%rd{8 + kb}, %rd{4 + kb}, {DESC};",
            f"\twgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {{{F}}}, "
            f"{{%r10, %r10, %r10, %r10}}, %rd{8 + kb}, 1, 1, 1, 0;",
        ]
    body = "\n".join(wgmma)
    return f""".version 8.0
.target sm_90a
.address_size 64

.visible .entry w(
\t.param .u64 .ptr .align 64 w_param_0,
\t.param .u32 w_param_1
)
.reqntid 128
{{
\t.reg .pred \t%p<4>;
\t.reg .b32 \t%r<64>;
\t.reg .b64 \t%rd<20>;
\t.reg .f32 \t%f<40>;
\t.shared .align 1024 .b8 tile[16384];
\t.shared .align 8 .b64 bar;
\tmov.u32 \t%r1, tile;
\tmov.u64 \t%rd1, w_param_0;
\tmov.u32 \t%r2, bar;
\tmov.u32 \t%r3, 0;
\tmov.b32 \t%r10, 0;
\tmov.u32 \t%r4, %tid.x;
\tshl.b32 \t%r5, %r4, 4;
\tadd.s32 \t%r6, %r1, %r5;
\tld.param.u32 \t%r7, [w_param_1];
\t{TMA_COPY} [%r1], [%rd1, {{%r3, %r3}}], [%r2];
{writer}
\tbar.sync \t0;
\tshr.u32 \t%r30, %r1, 4;
\tand.b32 \t%r31, %r30, 16383;
\twgmma.fence.sync.aligned;
{body}
\twgmma.commit_group.sync.aligned;
{unwaited}
\twgmma.wait_group.sync.aligned 0;
{waited}
\tret;
}}
"""


def checked(text: str):
    results = check_ptx_text(text, "w.ptx", Options(tma_maps=(MAP_128B,)))
    return writer_reader(results)


def store(address: str) -> str:
    return f"\tst.shared.v4.b32 \t[{address}], {ZEROS};"


def loop(start: int, trips: int) -> str:
    """A store 2048 bytes further each turn: the 128 threads' 16 bytes from `start`."""
    return "\n".join(
        [
            f"\tadd.s32 \t%r20, %r6, {start};",
            "\tmov.u32 \t%r21, 0;",
            "$LOOP:",
            store("%r20"),
            "\tadd.s32 \t%r20, %r20, 2048;",
            "\tadd.s32 \t%r21, %r21, 1;",
            f"\tsetp.lt.u32 \t%p2, %r21, {trips};",
            "\t@%p2 bra \t$LOOP;",
        ]
    )


def skipped_by(predicate: str) -> str:
    """The store on a path that exits before the wgmma, taken where `predicate`."""
    return "\n".join(
        [
            predicate,
            "\t@%p1 bra \t$MAIN;",
            store("%r6"),
            "\tret;",
            "$MAIN:",
        ]
    )


UNIFORM = "\tsetp.eq.s32 \t%p1, %r7, 0;"  # on the parameter: one way for the whole CTA
PER_THREAD = "\tsetp.eq.s32 \t%p1, %r4, 0;"  # on tid: thread 0 one way, the rest the other


CASES = {
    # name: (writer, its PTX lines' verdict, fact naming the writer or None)
    "overlapping": (store("%r6"), Status.UNKNOWN, None),
    "disjoint": (store("%r6+8192"), Status.PROVED, "disjoint_writers"),
    "unreachable": (skipped_by(UNIFORM), Status.PROVED, "unreachable_writers"),
    "diverged": (skipped_by(PER_THREAD), Status.UNKNOWN, None),
    "loop_disjoint": (loop(8192, 4), Status.PROVED, "disjoint_writers"),
    "loop_meets_once": (loop(6144, 5), Status.UNKNOWN, None),
}


@pytest.mark.parametrize("name", CASES)
def test_writers_dropped_only_where_they_cannot_change_the_read(name):
    """(a) on a branch of the whole CTA that exits before the wgmma: dropped; the same
    branch on tid (thread 0 stores, the others go on to read): kept; (b) reachable
    and meeting the read: kept, UNKNOWN as before; (c) reachable and disjoint:
    dropped; (d) a loop disjoint for four turns and meeting the read on one: kept."""
    writer, status, fact = CASES[name]
    wr = checked(kernel(writer))
    # the TMA box's check for each wgmma, and the thread writers' where one is kept
    assert len(wr) == (2 if status is Status.PROVED else 4)
    line = next(i for i, t in enumerate(kernel(writer).splitlines(), 1) if "st.shared" in t)
    thread = [r for r in wr if "disjoint_writers" not in r.facts and r.reason]
    if status is Status.PROVED:
        assert [r.status for r in wr] == [Status.PROVED] * 2, [r.reason for r in wr]
        assert {r.facts[fact] for r in wr} == {f"PTX line {line}"}
    else:
        assert thread and all(f"PTX line {line}" in (r.reason or "") for r in thread)
        assert all(r.status is Status.UNKNOWN for r in thread)


def test_a_store_after_the_wgmma_counts_until_its_wait():
    """wgmma reads its operands asynchronously: a store after it in program order,
    before wgmma.wait_group 0, may land before the read (kept, saying why); after
    the wait it cannot (dropped)."""
    unwaited = checked(kernel("", unwaited=store("%r6")))
    assert [r.status for r in unwaited if r.reason] == [Status.UNKNOWN] * 2
    assert all("wgmma.wait_group 0" in (r.reason or "") for r in unwaited if r.reason)
    waited = checked(kernel("", waited=store("%r6")))
    assert [r.status for r in waited] == [Status.PROVED] * 2
    assert all("unreachable_writers" in r.facts for r in waited)


def unplaced(skip: bool) -> str:
    """A store at the tile plus 16 * the parameter (wrapping 32 bits: not an offset
    the reader places), on the reading path or on a path of the whole CTA that exits."""
    lines = ["\tshl.b32 \t%r20, %r7, 4;", "\tadd.s32 \t%r21, %r6, %r20;"]
    if not skip:
        return "\n".join([*lines, store("%r21")])
    return "\n".join([*lines, skipped_by(UNIFORM).replace("[%r6]", "[%r21]")])


def test_a_store_the_reader_cannot_place_may_write_the_operand():
    """The box's check alone would be PROVED: the store may write the box's bytes,
    so writer = reader is UNKNOWN too, naming it; on a path that never reaches the
    wgmma it is not a writer."""
    text = kernel(unplaced(skip=False))
    line = next(i for i, t in enumerate(text.splitlines(), 1) if "st.shared" in t)
    wr = checked(text)
    unknown = [r for r in wr if r.status is Status.UNKNOWN]
    assert len(unknown) == 2
    assert all(f"st.shared.v4.b32 at PTX line {line} may write" in r.reason for r in unknown)
    assert [r.status for r in checked(kernel(unplaced(skip=True)))] == [Status.PROVED] * 2


def test_a_writer_whose_offset_reads_the_cta_index_is_kept():
    """Its offset (above the box for either CTA parity) is not enumerated over an
    unbounded variable: kept, the fact saying why."""
    writer = "\n".join(
        [
            "\tmov.u32 \t%r25, %ctaid.x;",
            "\tand.b32 \t%r26, %r25, 1;",
            "\tshl.b32 \t%r27, %r26, 11;",
            "\tadd.s32 \t%r20, %r6, %r27;",
            store("%r20+8192"),
        ]
    )
    text = kernel(writer)
    line = next(i for i, t in enumerate(text.splitlines(), 1) if "st.shared" in t)
    wr = checked(text)
    unknown = [r for r in wr if r.status is Status.UNKNOWN]
    assert len(unknown) == 2
    assert {r.facts.get("writers_kept") for r in unknown} == {
        f"PTX line {line}: its offset depends on ctaid_x"
    }


def stmatrix(count: int, above: int) -> str:
    """stmatrix .x{count} whose lanes below `above` give rows at 8192 + 16 * tid
    (above the box), the others at 16 * tid (inside it)."""
    return "\n".join(
        [
            "\tand.b32 \t%r22, %r4, 31;",
            f"\tsetp.lt.u32 \t%p3, %r22, {above};",
            "\tselp.b32 \t%r23, 8192, 0, %p3;",
            "\tadd.s32 \t%r24, %r6, %r23;",
            f"\tstmatrix.sync.aligned.m8n8.x{count}.shared.b16 \t[%r24], "
            f"{{{', '.join(['%r10'] * count)}}};",
        ]
    )


@pytest.mark.parametrize(
    "count, above, dropped", [(1, 8, True), (2, 16, True), (2, 8, False), (4, 8, False)]
)
def test_stmatrix_rows_are_those_of_the_lanes_that_give_addresses(count, above, dropped):
    """.x1, .x2 and .x4 take row addresses from lanes 0-7, 0-15 and 0-31: a writer
    whose lanes past those point into the box is still disjoint; one whose used
    lanes point there is kept."""
    wr = checked(kernel(stmatrix(count, above)))
    assert all(("disjoint_writers" in r.facts) == dropped for r in wr)
    want = [Status.PROVED] * 2 if dropped else [Status.UNKNOWN, Status.PROVED] * 2
    assert sorted(r.status.value for r in wr) == sorted(s.value for s in want)


# -- the byte sets against the interpreter -----------------------------------------------


def swizzle(address: int) -> int:
    """CuTe's Swizzle<3,4,3> on a byte address."""
    return address ^ (((address >> 7) & 7) << 4)


def oracle_read_bytes() -> set[int]:
    """Bytes of the B operand (64 rows n, 16 k, f16) both wgmma read, at base 0."""
    out = set()
    for start in (0, 32):
        for n in range(64):
            for k in range(16):
                at = swizzle(start + (n // 8) * 1024 + (n % 8) * 128 + 2 * k)
                out |= {at, at + 1}
    return out


def oracle_written_bytes(text: str) -> dict[int, set[int]]:
    """Per store line, the bytes every thread of the block writes (stmatrix: the
    16-byte rows of the lanes whose addresses it uses), the tile at byte 0."""
    run = oracle.run_block(text, "w", (128, 1, 1), {1: 1}, shared_layout={"tile": 0, "bar": 65536})
    out: dict[int, set[int]] = {}
    for access in run.accesses:
        if access.opcode.startswith(("st.shared", "stmatrix")):
            width = 16
            for t in access.threads:
                if t.used:
                    out.setdefault(access.line, set()).update(range(t.address, t.address + width))
    return out


@pytest.mark.parametrize(
    "writer",
    [
        store("%r6"),
        store("%r6+8192"),
        loop(8192, 4),
        loop(6144, 5),
        stmatrix(1, 8),
        stmatrix(4, 8),
    ],
)
def test_byte_sets_are_the_interpreters(writer, monkeypatch):
    """The bytes verify enumerates for the writer and for the operand are the
    interpreter's and the oracle's, and the writer is dropped exactly where they do
    not meet."""
    from verify.ptx import hopper_writers

    reads: set[int] = set()
    seen: dict[int, set[int]] = {}  # per writer's PTX line
    keep = hopper_writers.WriterFilter.keep

    def spy(self, event, read, cases, writers):
        chunks = hopper_writers._read_bytes(read, cases).tolist()
        reads.update(b + i for b in chunks for i in range(16))
        for a in writers:
            starts = self._written_bytes(a)
            assert not isinstance(starts, str), starts
            width = hopper_writers._width(a)
            seen[a.event.instr.line] = {b + i for b in starts.tolist() for i in range(width)}
        return keep(self, event, read, cases, writers)

    monkeypatch.setattr(hopper_writers.WriterFilter, "keep", spy)
    text = kernel(writer)
    wr = checked(text)
    written = oracle_written_bytes(text)
    assert reads == oracle_read_bytes()
    assert seen == written
    meets = any(b & oracle_read_bytes() for b in written.values())
    dropped = all("disjoint_writers" in r.facts for r in wr)
    assert dropped == (not meets)


# -- where diverged threads meet again -----------------------------------------------------


def test_post_dominators_and_divergent_regions():
    """A branch on tid around a store meets again at the block after it; a wait loop
    on mbarrier.try_wait is its own region; the branch on the parameter is none."""
    from verify.ptx import cfg, hopper_writers
    from verify.ptx.parse import parse_ptx

    text = kernel(
        "\n".join(
            [
                UNIFORM,
                "\t@%p1 bra \t$AFTER;",
                "\tsetp.eq.s32 \t%p2, %r4, 0;",
                "\t@%p2 bra \t$JOIN;",
                store("%r6"),
                "$JOIN:",
                "\tmov.u32 \t%r40, 1;",
                "$WAIT:",
                "\tmbarrier.try_wait.parity.shared::cta.b64 \t%p3, [%r2], 0;",
                "\t@!%p3 bra \t$WAIT;",
                "$AFTER:",
            ]
        )
    )
    fn = parse_ptx(text, "w.ptx").entries()[0]
    graph = cfg.build(fn)
    label = {b.label: b.index for b in graph.blocks if b.label}
    ends = {b.instrs[-1].line: b.index for b in graph.blocks if b.instrs}
    line = {t.strip(): i for i, t in enumerate(text.splitlines(), 1)}
    tid_branch = ends[line["@%p2 bra \t$JOIN;"]]
    wait = label["$WAIT"]
    meet = cfg.immediate_post_dominators(graph)
    assert meet[tid_branch] == label["$JOIN"]
    assert meet[wait] == label["$AFTER"]
    assert meet[ends[line["@%p1 bra \t$AFTER;"]]] == label["$AFTER"]
    regions = hopper_writers.divergent_regions(graph, fn)
    assert regions == {tid_branch: {tid_branch + 1}, wait: {wait}}


def test_a_guarded_ret_falls_through():
    """`@%p ret` ends its block for the threads where %p holds; the others go on, so
    the wgmma after it are traced and the store before it still reaches them (it
    meets the read: kept)."""
    writer = "\n".join([store("%r6"), "\tsetp.gt.u32 \t%p1, %r4, 200;", "\t@%p1 ret;"])
    wr = checked(kernel(writer))
    assert len(wr) == 4
    assert [r.status for r in wr if r.reason] == [Status.UNKNOWN] * 2
    assert not any("unreachable_writers" in r.facts for r in wr)
