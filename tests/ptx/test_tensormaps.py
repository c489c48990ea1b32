"""TMA maps read from the kernel (verify.ptx.tensormaps): Triton's tensordesc_meta for
host descriptors, tensormap.replace for maps built on the device, and the checks of
verify.ptx.hopper deciding the copies and the wgmma reads of their boxes with them.

The samples are Triton 3.9's tutorial 09 TMA kernels and a matmul building two
different maps on the device, compiled for sm_90 by
tests/data/hopper/tensormaps/make.py. The oracle for the maps is what Triton's
launcher passes to cuTensorMapEncodeTiled, written here from its code
(triton/backends/nvidia/driver.c: the box is block_size reversed) and the fields
the PTX writes, read here by regular expressions sharing nothing with the reader.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from verify.ptx import tensormaps
from verify.ptx.check import Options, check_module
from verify.ptx.parse import parse_ptx
from verify.smt.solve import Status

ROOT = Path(__file__).parents[2]
DATA = ROOT / "tests/data/hopper/tensormaps"
F16_128B = "dataType=FLOAT16,boxDim={64,128},swizzle=128B"


def sample(stem: str):
    """(parsed PTX, PTX text, tensordesc_meta) of a compiled sample."""
    path = DATA / f"{stem}.sm90.ptx"
    text = path.read_text()
    meta = json.loads((DATA / f"{stem}.sm90.json").read_text())["tensordesc_meta"]
    return parse_ptx(text, str(path)), text, meta


def checked(module, found):
    results = check_module(module, Options(tma_maps=tensormaps.tma_maps(module, found)))
    tensormaps.annotate(results, module, found)
    return results


def tma(results, check: str) -> list[Status]:
    """The statuses of `check` on TMA copies and wgmma operands."""
    return [
        r.status
        for r in results
        if r.property.startswith(check)
        and r.facts.get("instruction", "").startswith(("cp.async.bulk.tensor", "wgmma"))
    ]


# -- Triton's metadata ------------------------------------------------------------------


def test_metadata_maps_are_the_launchers():
    """Each tensordesc_meta entry is the map of the i-th 128-byte .param: boxDim is
    block_size reversed (driver.c), the element type and swizzle as the enums say."""
    module, text, meta = sample("t09_tma")
    found = tensormaps.read(module, meta)
    params = re.findall(r"\.param \.align 64 \.b8 (\w+)\[128\]", text)
    assert [f.key for f in found] == params == [f"matmul_kernel_tma_param_{i}" for i in (0, 5, 10)]
    for f, entry in zip(found, meta):
        inner, outer = entry["block_size"][::-1]
        assert f.option == f"dataType=FLOAT16,boxDim={{{inner},{outer}}},swizzle=128B,param={f.key}"
        assert f.source.startswith("Triton's tensordesc_meta[")


def test_metadata_agrees_with_the_maps_stated_by_hand():
    """specs/hopper/tma_matmul.py's maps, which tests/ptx/test_ptx_hopper.py states
    with --tma-map from its tensordesc_meta, are what the reader derives."""
    path = ROOT / "tests/data/hopper/tma_matmul.sm90.ptx"
    module = parse_ptx(path.read_text(), str(path))
    meta = [
        {"swizzle": 3, "elem_size": 2, "elem_type": 6, "block_size": [128, 64]},
        {"swizzle": 3, "elem_size": 2, "elem_type": 6, "block_size": [64, 64]},
    ]
    assert [f.option for f in tensormaps.read(module, meta)] == [
        "dataType=FLOAT16,boxDim={64,128},swizzle=128B,param=tma_matmul_param_0",
        "dataType=FLOAT16,boxDim={64,64},swizzle=128B,param=tma_matmul_param_5",
    ]


@pytest.mark.parametrize(
    "entry, why",
    [
        ({"is_im2col": True}, "im2col"),
        ({"fp4_padded": True}, "fp4-padded"),
        ({"elem_type": 13}, "sub-byte"),
        ({"swizzle": 4}, "swizzle mode 4"),
        ({"block_size": [128, 128]}, "at most the 128-byte swizzle span"),
    ],
)
def test_metadata_not_modelled_says_why(entry, why):
    module, _, meta = sample("t09_tma")
    meta = [{**meta[0], **entry}, *meta[1:]]
    first = tensormaps.read(module, meta)[0]
    assert first.option is None and why in first.why


def test_metadata_of_the_wrong_length_gives_no_map():
    module, _, meta = sample("t09_tma")
    found = tensormaps.read(module, meta[:2])
    assert all(f.option is None and "has 2 entries" in f.why for f in found)


def test_metadata_is_asked_for_only_where_a_copy_reads_a_map_parameter():
    asked = []

    def metadata() -> list:
        asked.append(1)
        return []

    module, _, meta = sample("t09_descriptor_persistent")
    tensormaps.read(module, metadata)
    assert asked == []
    module, _, meta = sample("t09_tma")
    assert [f.option for f in tensormaps.read(module, lambda: meta)] == [
        f.option for f in tensormaps.read(module, meta)
    ]


def test_metadata_entries_triton_does_not_write_are_refused_not_raised():
    module, _, meta = sample("t09_tma")
    found = tensormaps.read(module, [{"block_size": "x"}, {}, None])
    assert all(f.option is None and "not one Triton writes" in f.why for f in found)


# -- maps built on the device ------------------------------------------------------------


def replaced(text: str) -> list[dict]:
    """The oracle: per tensormap.cp_fenceproxy, its destination register and the
    fields the tensormap.replace lines before it set (registers through mov)."""
    movs = dict(re.findall(r"mov\.b32\s+(%r\d+), (\d+);", text))
    builds, fields = [], {}
    for line in text.splitlines():
        m = re.search(r"tensormap\.replace\.tile\.(\w+)\.\S+ \[ %rd\d+ \+ 0 \], (.*);", line)
        if m:
            *ords, value = [v.strip() for v in m[2].split(",")]
            value = movs.get(value, value)
            value = None if value.startswith("%") else int(value, 0)
            fields[(m[1], int(ords[0], 0)) if ords else m[1]] = value
        m = re.search(r"tensormap\.cp_fenceproxy\S+ \[ (%rd\d+) \+ 0 \]", line)
        if m:
            builds.append({"key": m[1], **fields})
            fields = {}
    return builds


@pytest.mark.parametrize("stem", ["t09_descriptor_persistent", "device_matmul"])
def test_device_maps_are_the_fields_replaced(stem):
    module, text, _ = sample(stem)
    found = tensormaps.read(module, [])
    expected = replaced(text)
    assert [f.key for f in found] == [b["key"] for b in expected]
    for f, b in zip(found, expected):
        box = [b[("box_dim", i)] for i in range(b["rank"] + 1)]
        mode = {0: "NONE", 1: "32B", 2: "64B", 3: "128B"}[b["swizzle_mode"]]
        assert b["elemtype"] == 6
        assert (
            f.option
            == f"dataType=FLOAT16,boxDim={{{box[0]},{box[1]}}},swizzle={mode},param={f.key}"
        )
        assert "tensormap.replace at PTX lines" in f.source and "zero-filled" in f.source


def test_device_maps_differ_in_device_matmul():
    module, _, _ = sample("device_matmul")
    found = tensormaps.read(module, [])
    assert [f.tmap.box for f in found if f.tmap] == [(64, 128), (64, 64)]
    # two different maps: no map without a key (it would be wrong for one of them)
    assert tensormaps.tma_maps(module, found) == tuple(f.option for f in found)


def test_one_device_map_for_every_copy_is_given_without_a_key():
    module, _, _ = sample("t09_descriptor_persistent")
    found = tensormaps.read(module, [])
    assert tensormaps.tma_maps(module, found)[-1] == F16_128B


def test_no_map_without_a_key_where_a_copy_reads_an_unknown_map():
    """A copy whose map is not known (here: one marked unreadable) must not get
    the device-built maps' one by default."""
    module, _, _ = sample("t09_descriptor_persistent")
    found = tensormaps.read(module, [])
    unknown = [tensormaps.Found(f.kernel, f.key, f.source, None, "x") for f in found[:1]]
    assert tensormaps.tma_maps(module, unknown + found[1:])[-1] != F16_128B


def test_a_field_in_a_register_is_not_guessed():
    """A swizzle mode the kernel computes (here: a parameter) cannot be read: no map."""
    module, text, _ = sample("device_matmul")
    text = text.replace(
        "swizzle_mode.shared::cta.b1024.b32 [ %rd9 + 0 ], 0x3;",
        "swizzle_mode.shared::cta.b1024.b32 [ %rd9 + 0 ], %r22;",
    )
    found = tensormaps.read(parse_ptx(text, "edited.ptx"), [])
    assert found[0].option is None and "swizzle_mode" in found[0].why
    assert found[1].option is not None


def test_odd_tensormap_instructions_are_read_without_failing():
    module, text, _ = sample("device_matmul")
    text = text.replace(
        "tensormap.replace.tile.rank.shared::cta.b1024.b32 [ %rd9 + 0 ], 0x1;",
        "tensormap.replace.tile.rank.shared::cta.b1024.b32 [ %rd9 + 0 ];",
    )
    copy = "cp_fenceproxy.global.shared::cta.tensormap::generic.release.gpu.sync.aligned"
    text = text.replace(f"{copy} [ %rd12 + 0 ], [ %rd13 + 0 ], 0x80;", f"{copy} [ %rd12 + 0 ];")
    found = tensormaps.read(parse_ptx(text, "edited.ptx"), [])
    assert [f.key for f in found] == ["%rd16"]


def test_a_field_written_twice_or_an_address_set_twice_is_not_guessed():
    module, text, _ = sample("device_matmul")
    swizzle = "tensormap.replace.tile.swizzle_mode.shared::cta.b1024.b32 [ %rd9 + 0 ], "
    twice = text.replace(f"{swizzle}0x3;", f"{swizzle}0x3;\n\t{swizzle}0x2;")
    found = tensormaps.read(parse_ptx(twice, "edited.ptx"), [])
    assert found[0].option is None and "swizzle_mode" in found[0].why
    copy = "tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.gpu"
    moved = text.replace(f"\t@%p2 {copy}", "\tadd.s64 \t%rd12, %rd12, 0;\n\t@%p2 " + copy, 1)
    found = tensormaps.read(parse_ptx(moved, "edited.ptx"), [])
    assert found[0].option is None and "set more than once" in found[0].why


def test_a_template_not_zero_filled_leaves_unwritten_fields_unknown():
    """CUTLASS copies a host map into the template and replaces its address only:
    the box is the host map's, not known here."""
    module, text, _ = sample("device_matmul")
    text = re.sub(r"\n\s*@%p\d+ st\.shared::cta\.b32 \[ %r\d+ \+ 0 \], %r\d+;", "\n", text)
    text = re.sub(r"\n\s*tensormap\.replace\.tile\.box_dim[^\n]*", "\n", text)
    found = tensormaps.read(parse_ptx(text, "edited.ptx"), [])
    assert all(f.option is None and "box_dim 0" in f.why for f in found)


# -- the checks, given the maps ------------------------------------------------------------


def test_host_maps_decide_the_tutorial_copies_and_wgmma_reads():
    module, _, meta = sample("t09_tma")
    results = checked(module, tensormaps.read(module, meta))
    assert tma(results, "writer_reader") == [Status.PROVED] * 16
    assert set(tma(results, "aligned 128") + tma(results, "placement")) == {Status.PROVED}
    sources = {r.facts.get("tensor_map_source") for r in results if "cp.async.bulk" in r.property}
    assert sources == {
        f"Triton's tensordesc_meta[{i}]: block_size [128, 64], elem_type 6, swizzle 3"
        for i in range(3)
    }
    # reported at the Python line of the descriptor load
    source = (DATA / "tutorial09.py").read_text().splitlines()
    lines = {r.line for r in results if r.property.startswith("aligned 128")}
    assert [source[n - 1].strip()[:16] for n in sorted(lines)] == [
        "a = a_desc.load(",
        "b = b_desc.load(",
        "c_desc.store([of",
    ]


def test_gluon_tutorial_maps_decide_its_wgmma_reads():
    """Gluon's tutorial 05 pipelined matmul: B's 64x128 block is two 64x64 boxes in
    tensordesc_meta; every TMA-fed operand and copy decided."""
    module, _, meta = sample("gluon05_matmul_pipelined")
    found = tensormaps.read(module, meta)
    assert [f.tmap.box for f in found if f.tmap] == [(64, 128), (64, 64), (64, 128)]
    results = checked(module, found)
    assert tma(results, "writer_reader") == [Status.PROVED] * 16
    assert set(tma(results, "aligned 128") + tma(results, "placement cp")) == {Status.PROVED}


def test_a_map_in_another_swizzle_than_the_descriptors_is_refuted():
    """B's map said unswizzled while wgmma's descriptors read 128B: REFUTED, naming
    the element."""
    module, _, meta = sample("t09_tma")
    meta = [meta[0], {**meta[1], "swizzle": 0}, meta[2]]
    results = checked(module, tensormaps.read(module, meta))
    b = [r for r in results if r.property.startswith("writer_reader operand B")]
    assert {r.status for r in b} == {Status.REFUTED}
    assert "element (row" in b[0].counterexample.summary
    a = [r for r in results if r.property.startswith("writer_reader operand A")]
    assert {r.status for r in a} == {Status.PROVED}


def test_without_metadata_a_host_map_is_unknown_and_says_so():
    module, _, _ = sample("t09_tma")
    results = checked(module, tensormaps.read(module, []))
    assert set(tma(results, "writer_reader")) == {Status.UNKNOWN}
    why = {r.reason for r in results if r.property.startswith("placement cp.async")}
    assert len(why) == 1 and "host object the PTX does not hold" in why.pop()


def test_unreadable_metadata_says_why():
    module, _, _ = sample("t09_tma")
    results = checked(module, tensormaps.read(module, "Triton's get_tensordesc_metadata failed"))
    placement = [r for r in results if r.property.startswith("placement cp.async")]
    assert placement[0].status is Status.UNKNOWN
    assert "cannot be read: Triton's get_tensordesc_metadata failed" in placement[0].reason


def test_device_maps_decide_the_persistent_tutorial():
    module, _, _ = sample("t09_descriptor_persistent")
    results = checked(module, tensormaps.read(module, []))
    assert set(tma(results, "aligned 128") + tma(results, "placement cp")) == {Status.PROVED}
    # the TMA-written operands; the others share the buffer with the template's
    # zero-fill (a st.shared writer verify.ptx.hopper does not follow)
    assert tma(results, "writer_reader").count(Status.PROVED) == 16


def test_different_device_maps_are_paired_by_register():
    """Copies pair with maps by the register they read (`map_root`): each of
    device_matmul's two device-built maps decides its own copies."""
    module, _, _ = sample("device_matmul")
    paired = checked(module, tensormaps.read(module, []))
    assert set(tma(paired, "placement cp") + tma(paired, "aligned 128")) == {Status.PROVED}
    assert tma(paired, "writer_reader") == [Status.PROVED] * 16


def test_the_template_zero_fill_is_overwritten_by_the_tma_copies():
    """The map template's zero-fill (st.shared.b32 at PTX lines 57 and 149, bytes
    0..128 of global_smem, where A's first box lands) runs once, and a
    fence.proxy.async then a bar.sync order it before every TMA copy: it writes
    nothing wgmma reads, and the boxes alone decide the operands."""
    module, _, _ = sample("device_matmul")
    results = checked(module, tensormaps.read(module, []))
    wr = [r for r in results if r.property.startswith("writer_reader")]
    assert [r.status for r in wr] == [Status.PROVED] * 16
    assert {r.facts.get("overwritten_by_tma") for r in wr} == {"PTX line 57, PTX line 149"}
    assert not [r for r in results if r.property.startswith("placement operand")]


@pytest.mark.parametrize(
    "edit",
    [
        ("\tfence.proxy.async.shared::cta;\n", "\n"),  # no fence: the copy may not see it
        ("\tfence.proxy.async.shared::cta;\n", "\tfence.proxy.async.global;\n"),
        ("\tfence.proxy.async.shared::cta;\n\tbar.sync \t0;", "\tfence.proxy.async.shared::cta;"),
    ],
)
def test_a_zero_fill_not_ordered_before_the_copies_still_counts(edit):
    """Without the shared fence or the CTA barrier between the zero-fill and the
    copies, the store stays a writer of the operand's buffer: UNKNOWN, never PROVED."""
    _, text, _ = sample("device_matmul")
    assert edit[0] in text
    module = parse_ptx(text.replace(edit[0], edit[1], 1), "edited.ptx")
    results = checked(module, tensormaps.read(module, []))
    wr = [r for r in results if r.property.startswith("writer_reader")]
    thread = [r for r in wr if r.status is Status.UNKNOWN]
    assert thread and all("PTX line 57 writes 4 bytes" in r.reason for r in thread)
    assert not [r for r in wr if "overwritten_by_tma" in r.facts]


# -- TTGIR and Triton's own metadata ---------------------------------------------------------


def test_verify_ttgir_asks_triton_for_the_metadata():
    """A bare TTGIR file: Triton's get_tensordesc_metadata (in a child) gives the maps."""
    pytest.importorskip("triton")
    from verify.ttgir import from_ptx, tensordesc

    ttgir = DATA / "t09_tma.sm90.ttgir"
    meta = json.loads((DATA / "t09_tma.sm90.json").read_text())["tensordesc_meta"]
    assert tensordesc.metadata(ttgir.read_text()) == meta
    assert tensordesc.metadata("module { }") == []
    results = from_ptx.check(
        str(ttgir), options=from_ptx.PtxOptions(ptx=str(DATA / "t09_tma.sm90.ptx"))
    )
    assert tma(results, "writer_reader") == [Status.PROVED] * 16
    # TTGIR's "not modelled" for the TMA ops gives way to their copies' checks
    assert not [r for r in results if r.property.startswith("not modelled: async_tma")]
    assert all(
        "tensordesc_meta" in r.facts["tensor_map_source"]
        for r in results
        if r.property.startswith("aligned 128")
    )


def test_verify_run_takes_the_maps_from_tritons_listener(tmp_path, monkeypatch):
    """The compilation listener's metadata carries tensordesc_meta: no child asks
    Triton for it, and the TMA-fed wgmma reads are decided."""
    pytest.importorskip("triton")
    import sys

    from verify.integrations.triton_hook import checking
    from verify.ttgir import tensordesc

    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "triton"))
    monkeypatch.setenv("TRITON_DEFAULT_FP_FUSION", "1")
    monkeypatch.syspath_prepend(str(DATA))  # make.py inserts it too: restored after
    import importlib.util

    spec = importlib.util.spec_from_file_location("tensormaps_make", DATA / "make.py")
    assert spec is not None and spec.loader is not None
    make = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(make)  # imports the kernels' modules from DATA
    monkeypatch.setattr(make, "HERE", str(tmp_path))

    def no_child(text):
        raise AssertionError("the listener's metadata was not used")

    monkeypatch.setattr(tensordesc, "metadata", no_child)
    try:
        with checking(cache_dir="", report=None) as session:
            make.compile_one("gluon05_matmul_pipelined")
    finally:
        for name in ("device_matmul", "gluon_tutorials", "tutorial09"):
            sys.modules.pop(name, None)
    assert tma(session.results, "writer_reader") == [Status.PROVED] * 16


def test_verify_triton_takes_the_maps_from_the_compiled_kernel(monkeypatch):
    """`verify triton` (check_kernel) reads tensordesc_meta from the kernel it compiled:
    no child process asks Triton again, and the tutorial's copies are decided."""
    pytest.importorskip("triton")
    import sys

    from verify.ttgir import kernel, tensordesc

    def no_child(text):
        raise AssertionError("the compiled kernel's own metadata should serve")

    monkeypatch.setattr(tensordesc, "metadata", no_child)
    monkeypatch.syspath_prepend(str(DATA))
    sys.modules.pop("tutorial09", None)
    import tutorial09

    desc = "tensordesc<fp16[128,64]>"
    results = kernel.check_kernel(
        tutorial09.matmul_kernel_tma,
        target="sm_90",
        signature={"a_desc": desc, "b_desc": desc, "c_desc": "tensordesc<fp16[128,128]>"}
        | {size: "i32" for size in "MNK"},
        constexprs={"BLOCK_SIZE_M": 128, "BLOCK_SIZE_N": 128, "BLOCK_SIZE_K": 64}
        | {"GROUP_SIZE_M": 8, "FP8_OUTPUT": False, "WARP_SPECIALIZE": False},
    )
    assert tma(results, "writer_reader") == [Status.PROVED] * 16
    assert set(tma(results, "placement")) == {Status.PROVED}


def test_a_constant_global_stride_is_passed_and_a_register_one_is_not():
    """tensormap.replace.tile.global_stride: a constant gives the map its globalStrides
    (which the TMA check needs where a box's rows cross an outer dimension); a stride
    in a register (device_matmul's K * 2, a runtime shape) is left out, said so."""
    module, text, _ = sample("device_matmul")
    found = tensormaps.read(module, [])
    assert all("globalStrides" not in f.option for f in found if f.option)
    assert all("global_stride not a constant" in f.source for f in found)
    stride = "global_stride.shared::cta.b1024.b64 [ %rd9 + 0 ], 0x0, "
    assert text.count(f"{stride}%rd11;") == 1
    edited = parse_ptx(text.replace(f"{stride}%rd11;", f"{stride}0x200;"), "edited.ptx")
    found = tensormaps.read(edited, [])
    assert found[0].option == f"{F16_128B},globalStrides={{512}},param=%rd12"
    assert "global_stride [512]" in found[0].source
    second = found[1].option
    assert second is not None and "globalStrides" not in second
    results = checked(edited, found)
    assert tma(results, "writer_reader") == [Status.PROVED] * 16


def test_the_ordering_is_refused_where_a_copy_may_run_first():
    """overwritten_by_tma on device_matmul's graph: the zero-fill at line 57 is
    ordered before every copy by the fence at line 272; a store after the copies (the
    epilogue's stmatrix at line 1259) is not, whatever barriers follow."""
    from verify.ptx import cfg
    from verify.ptx.hopper_copies import overwritten_by_tma

    module, _, _ = sample("device_matmul")
    fn = module.functions[0]
    at = {i.line: i for i in fn.body if hasattr(i, "parts")}
    copies = [i for i in at.values() if i.parts[:4] == ["cp", "async", "bulk", "tensor"]]
    loads = [c for c in copies if c.parts[5].startswith("shared")]
    graph = cfg.build(fn)
    fence = overwritten_by_tma(graph, at[57], loads)
    assert fence is not None and fence.line == 272
    fence = overwritten_by_tma(graph, at[149], loads)
    assert fence is not None and fence.line == 272
    assert overwritten_by_tma(graph, at[1259], loads) is None
    assert overwritten_by_tma(graph, at[57], []) is None
