"""What a TMA copy (``cp.async.bulk.tensor``) leaves in shared memory, from its tensor map.

A host-built tensor map is what ``cuTensorMapEncodeTiled`` (CUDA driver API,
"Tensor Map Object Management") was given: the element type (``dataType``), the
box (``boxDim``, the innermost, contiguous dimension first), ``elementStrides``,
``interleave`` and ``swizzle``. `TensorMap.encode_tiled` takes those arguments as
CUTLASS passes them and checks them as the driver does:

* every box extent in 1..256, the inner one a multiple of 16 bytes;
* with ``CU_TENSOR_MAP_SWIZZLE_{32B,64B,128B}`` (and no interleave) the inner box
  extent at most the swizzle span: 32, 64 or 128 bytes;
* interleaved layouts and element strides other than 1 are not modelled (refused).

The box lands in shared memory row after row (rows of inner-extent bytes, the
outer dimensions flattened in order), each 16-byte chunk of a row XORed with the
row's place in the 256/512/1024-byte pattern: CuTe's ``Swizzle<B,4,3>`` (B = 1, 2,
3) on the absolute shared address. That is verify's ``tma(MODE, TYPE, (inner,
outer))`` layout term (`verify.notation.cute.tma_box`), which `layout_text` writes
for the map; ``CU_TENSOR_MAP_SWIZZLE_NONE`` is the plain ``(inner, outer):(1,
inner)``. The destination address of ``cp.async.bulk.tensor`` must be 128-byte
aligned (PTX ISA, "cp.async.bulk.tensor"); `PATTERN_BYTES` gives where each mode's
pattern repeats.

`wgmma_reads_box` proves, with verify's own checks, that a wgmma operand read
through a descriptor is exactly the box a TMA copy wrote (verify.model.wgmma's
`check_writer_reader`): the box's inner extent is K for a K-major operand and the
rows (M or N) for an MN-major one.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod

from verify.errors import SpecError
from verify.model.wgmma import MatrixDescriptor, Operand, check_writer_reader

# CUtensorMapDataType, to verify's element names (the ones wgmma and specs read).
DATA_TYPES = {
    "CU_TENSOR_MAP_DATA_TYPE_UINT8": "u8",
    "CU_TENSOR_MAP_DATA_TYPE_UINT16": "u16",
    "CU_TENSOR_MAP_DATA_TYPE_UINT32": "u32",
    "CU_TENSOR_MAP_DATA_TYPE_INT32": "s32",
    "CU_TENSOR_MAP_DATA_TYPE_UINT64": "u64",
    "CU_TENSOR_MAP_DATA_TYPE_INT64": "s64",
    "CU_TENSOR_MAP_DATA_TYPE_FLOAT16": "f16",
    "CU_TENSOR_MAP_DATA_TYPE_FLOAT32": "f32",
    "CU_TENSOR_MAP_DATA_TYPE_FLOAT64": "f64",
    "CU_TENSOR_MAP_DATA_TYPE_BFLOAT16": "bf16",
    "CU_TENSOR_MAP_DATA_TYPE_FLOAT32_FTZ": "f32",
    "CU_TENSOR_MAP_DATA_TYPE_TFLOAT32": "tf32",
    "CU_TENSOR_MAP_DATA_TYPE_TFLOAT32_FTZ": "tf32",
}
_BYTES = {"u8": 1, "u16": 2, "bf16": 2, "f16": 2, "u32": 4, "s32": 4, "f32": 4, "tf32": 4}
_BYTES.update({"u64": 8, "s64": 8, "f64": 8})
# CUtensorMapSwizzle: the swizzle span in bytes.
SWIZZLES = {
    "CU_TENSOR_MAP_SWIZZLE_NONE": 0,
    "CU_TENSOR_MAP_SWIZZLE_32B": 32,
    "CU_TENSOR_MAP_SWIZZLE_64B": 64,
    "CU_TENSOR_MAP_SWIZZLE_128B": 128,
}
PATTERN_BYTES = {0: 16, 32: 256, 64: 512, 128: 1024}
DESTINATION_ALIGN = 128  # cp.async.bulk.tensor's shared destination
MAX_BOX = 256


@dataclass(frozen=True)
class TensorMap:
    """The shared-memory side of a tiled tensor map: element type (verify's name),
    box extents (innermost first) and swizzle span in bytes (0: none)."""

    dtype: str
    box: tuple[int, ...]
    swizzle: int
    # globalStrides: bytes from one index of each outer dimension to the next in the
    # global tensor (dimensions 1.., as cuTensorMapEncodeTiled takes them), where stated
    strides: tuple[int, ...] | None = None

    def __post_init__(self):
        if not 1 <= len(self.box) <= 5 or any(not 1 <= b <= MAX_BOX for b in self.box):
            raise SpecError(f"TMA box {self.box}: expected 1 to 5 extents, each in 1..{MAX_BOX}")
        if self.strides is not None and (
            len(self.strides) != len(self.box) - 1
            or any(s <= 0 or s % 16 or s >= 1 << 40 for s in self.strides)
        ):
            raise SpecError(
                f"TMA globalStrides {self.strides}: expected {len(self.box) - 1} strides in "
                "bytes, each a multiple of 16 below 2^40"
            )
        inner = self.box[0] * _BYTES[self.dtype]
        if inner % 16:
            raise SpecError(
                f"TMA box inner extent {self.box[0]} is {inner} bytes: "
                "expected a multiple of 16 bytes"
            )
        if self.swizzle and inner > self.swizzle:
            raise SpecError(
                f"TMA box inner extent {self.box[0]} is {inner} bytes: expected at most "
                f"the {self.swizzle}-byte swizzle span"
            )

    @classmethod
    def encode_tiled(
        cls,
        dataType: str,
        boxDim: tuple[int, ...],
        elementStrides: tuple[int, ...] | None = None,
        interleave: str = "CU_TENSOR_MAP_INTERLEAVE_NONE",
        swizzle: str = "CU_TENSOR_MAP_SWIZZLE_NONE",
        globalStrides: tuple[int, ...] | None = None,
    ) -> TensorMap:
        """The map ``cuTensorMapEncodeTiled`` builds from these of its arguments
        (named as the driver API names them; the global strides do not change the
        shared layout, they say which global element each box element is)."""
        if dataType not in DATA_TYPES:
            raise SpecError(
                f"TMA dataType: expected one of {', '.join(DATA_TYPES)}, found {dataType}"
            )
        if swizzle not in SWIZZLES:
            raise SpecError(f"TMA swizzle: expected one of {', '.join(SWIZZLES)}, found {swizzle}")
        if interleave != "CU_TENSOR_MAP_INTERLEAVE_NONE":
            raise SpecError(
                f"TMA interleave {interleave}: not modelled, expected CU_TENSOR_MAP_INTERLEAVE_NONE"
            )
        if elementStrides is not None and any(s != 1 for s in elementStrides):
            raise SpecError(
                f"TMA elementStrides {tuple(elementStrides)}: not modelled, expected all 1"
            )
        strides = None if globalStrides is None else tuple(globalStrides)
        return cls(DATA_TYPES[dataType], tuple(boxDim), SWIZZLES[swizzle], strides)

    @property
    def rows(self) -> int:
        """Rows of the box in shared memory: the outer extents flattened."""
        return prod(self.box[1:])

    @property
    def bytes(self) -> int:
        return prod(self.box) * _BYTES[self.dtype]

    @property
    def elem_bytes(self) -> int:
        return _BYTES[self.dtype]

    @property
    def inner_bytes(self) -> int:
        """Bytes of one row of the box in shared memory (its inner extent)."""
        return self.box[0] * _BYTES[self.dtype]

    def global_offset(self, index: int) -> int:
        """Bytes from the box's first element to its element `index` (in the order
        the box lands in shared memory, inner dimension fastest) in the global
        tensor; needs `strides`."""
        assert self.strides is not None, "global_offset needs the map's globalStrides"
        inner, offset = index % self.box[0], 0
        index //= self.box[0]
        for extent, stride in zip(self.box[1:], self.strides):
            index, at = divmod(index, extent)
            offset += at * stride
        return inner * self.elem_bytes + offset

    def coordinates(self, index: int) -> tuple[int, ...]:
        """The box coordinates (inner first) of its element `index`."""
        coords = []
        for extent in self.box:
            index, at = divmod(index, extent)
            coords.append(at)
        return tuple(coords)

    def layout_text(self) -> str:
        """The box's shared layout as spec text, coordinates (inner, row)."""
        inner = self.box[0]
        if not self.swizzle:
            return f"({inner},{self.rows}):(1,{inner})"
        return f"tma(CU_TENSOR_MAP_SWIZZLE_{self.swizzle}B, {self.dtype}, ({inner}, {self.rows}))"


def wgmma_reads_box(
    tmap: TensorMap,
    desc: MatrixDescriptor,
    op: Operand,
    *,
    align: int = DESTINATION_ALIGN,
    row_offset: int = 0,
    k_offset: int = 0,
    base_offset_from_base: bool = False,
    coords: tuple[str, str] | None = None,
    at_base: int | None = None,
):
    """Prove that wgmma's operand `op`, read through `desc` (start counted from the
    box's shared destination), is the box TMA wrote there, element for element, at
    every destination base that is a multiple of `align`. The operand's element
    (row, k) is the box's (k + k_offset, row + row_offset) for a K-major operand and
    (row + row_offset, k + k_offset) for an MN-major one, or `coords` (spec
    expressions of row and k: the box's (inner, row)) where given. With `at_base`
    only that destination base is decided (a descriptor that changes with it). Returns
    `check_writer_reader`'s (Report, Mismatch or None)."""
    if align % DESTINATION_ALIGN:
        raise SpecError(
            f"TMA destination alignment {align}: expected a multiple of {DESTINATION_ALIGN}"
        )
    row, k = f"row + {row_offset}", f"k + {k_offset}"
    if coords is None:
        coords = (k, row) if op.major == "K" else (row, k)
    return check_writer_reader(
        tmap.layout_text(),
        tmap.dtype,
        desc,
        op,
        align=align,
        coords=coords,
        base_offset_from_base=base_offset_from_base,
        at_base=at_base,
    )
