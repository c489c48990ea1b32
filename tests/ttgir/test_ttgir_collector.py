"""`verify.ttgir.from_ptx.collector_paused`: the cyclic collector is off while a
kernel is checked and as it was after, whether the check returns or raises."""

import contextlib
import gc

import pytest

from verify.ttgir.from_ptx import collector_paused


@pytest.mark.parametrize("enabled", [True, False])
@pytest.mark.parametrize("raises", [False, True])
def test_the_collector_is_paused_during_and_as_it_was_after(enabled, raises):
    before = gc.isenabled()
    (gc.enable if enabled else gc.disable)()
    expected = pytest.raises(ValueError) if raises else contextlib.nullcontext()
    try:
        with expected, collector_paused():
            assert not gc.isenabled()
            if raises:
                raise ValueError("a check that fails")
        assert gc.isenabled() is enabled
    finally:
        (gc.enable if before else gc.disable)()
