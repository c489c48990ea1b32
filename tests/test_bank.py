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
    with pytest.raises(SpecError, match="expected 32 lane addresses, found 8"):
        verify.wavefronts("ld.shared.b32", [0] * 8)
