from math import gcd

import pytest

import verify
from verify.errors import SpecError


@pytest.mark.parametrize("stride", [0, 1, 2, 4, 8, 16, 32, 33, 3, 6])
def test_word_stride_costs_gcd_ways(stride):
    expected = 1 if stride == 0 else gcd(stride, 32)
    assert verify.wavefronts("ld.shared.b32", [4 * stride * lane for lane in range(32)]) == expected


def test_bytes_of_one_word_are_not_a_conflict():
    assert verify.wavefronts("ld.shared.b8", list(range(32))) == 1
    assert verify.wavefronts("ld.shared.b16", [2 * lane for lane in range(32)]) == 1


def test_128_bit_accesses_are_served_per_quarter_warp():
    assert verify.wavefronts("st.shared.v4.b32", [16 * lane for lane in range(32)]) == 4
    assert verify.wavefronts("st.shared.v4.b32", [0] * 32) == 4


def test_ldmatrix_rows_of_one_bank_group_are_8_way():
    assert verify.wavefronts("ldmatrix.x1", [128 * r for r in range(8)]) == 8
    assert verify.wavefronts("ldmatrix.x1", [144 * r for r in range(8)]) == 1


def test_misaligned_or_short_address_lists_are_rejected():
    with pytest.raises(SpecError, match="not 16-byte aligned"):
        verify.wavefronts("ldmatrix.x1", [8] * 8)
    with pytest.raises(SpecError, match="takes 32 lane addresses .*: expected 32, found 8"):
        verify.wavefronts("ld.shared.b32", [0] * 8)


@pytest.mark.parametrize(
    "instr,addresses,message",
    [
        (
            "ld.shared.b32",
            [1 << 32] + [4 * lane for lane in range(1, 32)],
            r"lane 0 address 4294967296 is past the 32-bit shared window: expected less than 2\^32",
        ),
        (
            "ldmatrix.x1",
            [128 * r for r in range(8)] + [3, 5],
            r"ldmatrix.x1 takes 8 lane addresses \(lanes 0-7\): expected 8, found 10",
        ),
        (
            "ldmatrix.x4",
            [16 * r for r in range(16)],
            "ldmatrix.x4 takes 32 lane addresses .*found 16",
        ),
        (
            "ld.shared.b32",
            [4 * lane for lane in range(33)],
            "ld.shared.b32 takes 32 lane addresses",
        ),
        (
            "ldmatrix.x2",
            [16 * r for r in range(15)] + [8],
            "lane 15 address 8 is not 16-byte aligned",
        ),
        (
            "ld.shared.b16",
            [-2] + [2 * lane for lane in range(1, 32)],
            "lane 0 address -2 is negative",
        ),
    ],
)
def test_address_lists_the_instruction_cannot_issue_are_refused(instr, addresses, message):
    with pytest.raises(SpecError, match=message):
        verify.wavefronts(instr, addresses)
