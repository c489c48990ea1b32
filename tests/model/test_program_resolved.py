"""`Program.access` takes the Access that `verify.spec.resolve` found for the
same definition (`Program._resolved`): the kept Access must be the one a fresh
resolution gives, and anything the resolution reads, changed, resolves anew."""

from dataclasses import replace
from pathlib import Path

import pytest

from verify.errors import SpecError
from verify.model.program import Program
from verify.spec.parser import parse_file

SPECS = sorted(str(p) for p in Path("specs").rglob("*.spec"))


def _parsed(path: str):
    try:
        return parse_file(path)
    except SpecError:
        pytest.skip("a spec that does not parse resolves nothing")


@pytest.mark.parametrize("path", SPECS)
def test_kept_access_is_a_fresh_resolution(path):
    spec = _parsed(path)
    program = Program(spec)
    for name, adef in spec.accesses.items():
        try:
            fresh = Program(spec)._resolve_access(adef)
        except SpecError:
            with pytest.raises(SpecError):
                program.access(name)
            continue
        assert program.access(name) == fresh


# A thread-mapped access, and cp.async copies with their global sources.
CHANGED = ["specs/examples/cute_tv_ldsm.spec", "specs/flash_attention2/fwd_hdim64.spec"]


@pytest.mark.parametrize("path", CHANGED)
def test_parsing_keeps_what_the_runner_reads(path):
    spec = _parsed(path)
    first, second = Program(spec), Program(spec)
    for name in spec.accesses:
        assert first.access(name) is second.access(name)


@pytest.mark.parametrize(
    "change",
    [
        lambda s: setattr(s, "buffer", replace(s.buffer, align=2 * s.buffer.align)),
        lambda s: setattr(s, "dtype", "bf16"),
        lambda s: setattr(s, "global_align", 2 * s.global_align),
        lambda s: s.layouts.update({n: replace(ldef) for n, ldef in s.layouts.items()}),
        lambda s: s.accesses.update({n: replace(adef) for n, adef in s.accesses.items()}),
    ],
)
@pytest.mark.parametrize("path", CHANGED)
def test_a_changed_read_resolves_anew(path, change):
    spec = _parsed(path)
    kept = {name: Program(spec).access(name) for name in spec.accesses}
    change(spec)
    program = Program(spec)
    for name, adef in spec.accesses.items():
        again = program.access(name)
        assert again is not kept[name]
        assert again == Program(spec)._resolve_access(adef)
