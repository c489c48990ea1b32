"""k_blocks of a K tile split over two TMA boxes (issue 25): A (64 x 128 f16, K-major)
and B (64 x 128, K-major) each copied as two 64 x 64 boxes with the 128B swizzle, the
second box's inner coordinate 64 past the first's, and 8 wgmma m64n64k16 adding
A[:, 16j..] x B[16j.., :] into one accumulator. The blocks of the two boxes are
compared where their copies' coordinates pair them (verify.ptx.hopper_tma._frame);
before, always UNKNOWN ("k-blocks read from different TMA boxes").

The oracle is written here from the kernel's construction, sharing nothing with
verify: wgmma j reads its first K column at the inner coordinate of the box it reads
(j // 4) plus 16 (j % 4) (its descriptor is 32 bytes further along the box's
128-byte rows); the product is right when A's and B's are equal for every j and no
column is read twice.
"""

from __future__ import annotations

import pytest

from verify.ptx.check import Options, check_ptx_text
from verify.smt.solve import Status

DESC = 4611686293305360384  # 128B swizzle, stride 1024 bytes, leading 16 bytes
MAPS = tuple(
    f"dataType=FLOAT16,boxDim={{64,64}},swizzle=128B,param=ksplit_param_{i}" for i in (0, 1)
)
COPY = "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
WGMMA = "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16"
ACC = "{" + ", ".join(f"%f{i}" for i in range(32)) + "}"


def ksplit(a: tuple[str, str], b: tuple[str, str]) -> str:
    """The kernel, A's two boxes at the inner coordinates `a`, B's at `b` (each an
    immediate or a register), the boxes at bytes 0, 8192 (A) and 16384, 24576 (B)."""
    head = f"""
.version 8.0
.target sm_90a
.address_size 64

.visible .entry ksplit(
    .param .u64 .ptr .align 64 ksplit_param_0,
    .param .u64 .ptr .align 64 ksplit_param_1
)
.reqntid 128
{{
    .reg .pred %p<4>;
    .reg .b32 %r<80>;
    .reg .b64 %rd<40>;
    .reg .f32 %f<40>;
    .shared .align 1024 .b8 tile[32768];
    .shared .align 8 .b64 bar;
    mov.u32 %r1, tile;
    mov.u64 %rd1, ksplit_param_0;
    mov.u64 %rd2, ksplit_param_1;
    mov.u32 %r2, bar;
    mov.u32 %r3, 0;
    mov.u32 %r60, {a[0]};
    mov.u32 %r61, {a[1]};
    mov.u32 %r62, {b[0]};
    mov.u32 %r63, {b[1]};
    add.s32 %r6, %r1, 8192;
    add.s32 %r7, %r1, 16384;
    add.s32 %r8, %r1, 24576;
    {COPY} [%r1], [%rd1, {{%r60, %r3}}], [%r2];
    {COPY} [%r6], [%rd1, {{%r61, %r3}}], [%r2];
    {COPY} [%r7], [%rd2, {{%r62, %r3}}], [%r2];
    {COPY} [%r8], [%rd2, {{%r63, %r3}}], [%r2];
    shr.u32 %r30, %r1, 4;
    and.b32 %r31, %r30, 16383;
    wgmma.fence.sync.aligned;
"""
    body = []
    for j in range(8):
        start = (j // 4) * 512 + (j % 4) * 2  # 16-byte units: box j // 4, 32 bytes a k-block
        body += [
            f"    add.s32 %r{40 + j}, %r31, {start};",
            f"    cvt.u64.u32 %rd{10 + j}, %r{40 + j};",
            f"    or.b64 %rd{20 + j}, %rd{10 + j}, {DESC};",
            f"    add.s32 %r{50 + j}, %r31, {1024 + start};",
            f"    cvt.u64.u32 %rd{30 + j}, %r{50 + j};",
            f"    or.b64 %rd{10 + j}, %rd{30 + j}, {DESC};",
            f"    {WGMMA} {ACC}, %rd{20 + j}, %rd{10 + j}, 1, 1, 1, 0, 0;",
        ]
    tail = ["    wgmma.commit_group.sync.aligned;", "    wgmma.wait_group.sync.aligned 0;"]
    return head + "\n".join(body + tail + ["    ret;", "}", ""])


def first_k(boxes: tuple[str, str], j: int) -> int:
    """The oracle: the global K column wgmma j reads first from boxes at `boxes`."""
    return int(boxes[j // 4]) + 16 * (j % 4)


def oracle(a: tuple[str, str], b: tuple[str, str]) -> tuple[int, int, int] | str:
    """(j, A's first K, B's first K) of the first wgmma whose two differ, "twice"
    where a column is read twice, "" where the product is right."""
    for j in range(8):
        if first_k(a, j) != first_k(b, j):
            return j, first_k(a, j), first_k(b, j)
    ks = [first_k(a, j) for j in range(8)]
    return "twice" if len(set(ks)) < len(ks) else ""


def wgmma_line(text: str, j: int) -> int:
    lines = [n for n, line in enumerate(text.split("\n"), 1) if WGMMA in line]
    return lines[j]


def checked(text: str):
    return check_ptx_text(text, "ksplit.ptx", Options(tma_maps=MAPS))


CASES = [
    (("0", "64"), ("0", "64")),  # as a K tile of 128 is split
    (("0", "128"), ("0", "128")),  # a gap, the same in both: a product of matching slices
    (("64", "0"), ("64", "0")),  # the second box first: the lower coordinates are the root
    (("0", "32"), ("0", "64")),
    (("64", "0"), ("0", "64")),
    (("0", "64"), ("0", "0")),
    (("0", "0"), ("0", "0")),  # each box twice
]


@pytest.mark.parametrize(("a", "b"), CASES)
def test_k_blocks_over_two_boxes_are_the_oracles(a, b):
    text = ksplit(a, b)
    found = checked(text)
    readers = [r for r in found if r.property.startswith("writer_reader")]
    assert len(readers) == 16 and {r.status for r in readers} == {Status.PROVED}
    (k_blocks,) = [r for r in found if r.property.startswith("k_blocks")]
    want = oracle(a, b)
    if want == "":
        assert k_blocks.status is Status.PROVED
        return
    assert k_blocks.status is Status.REFUTED and k_blocks.counterexample is not None
    summary = k_blocks.counterexample.summary
    if want == "twice":
        ks = [first_k(a, j) for j in range(8)]
        assert summary == f"a K slice is added twice: the group's K offsets are {ks}"
        return
    assert not isinstance(want, str)
    j, a_k, b_k = want
    # offsets from each operand's first column in the kernel, as k_blocks counts them
    a_k -= min(first_k(a, i) for i in range(8))
    b_k -= min(first_k(b, i) for i in range(8))
    assert summary == (
        f"the wgmma at PTX line {wgmma_line(text, j)} multiplies A's K columns from "
        f"{a_k} by B's K rows from {b_k}"
    )


def test_boxes_whose_coordinates_do_not_pair_stay_unknown():
    """A's second box at the block's index: its move from the first is not a constant."""
    (k_blocks,) = [
        r for r in checked(ksplit(("0", "%ctaid.x"), ("0", "64"))) if r.property.startswith("k_")
    ]
    assert k_blocks.status is Status.UNKNOWN
    assert "k-blocks read from different TMA boxes" in k_blocks.reason
    assert "coordinates do not pair them" in k_blocks.reason
