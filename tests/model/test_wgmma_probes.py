"""The H200's wgmma and TMA probes (benchmarks/hardware/wgmma/*.cu) compile with nvcc:
they share their launch, readback, wgmma and TMA code through one header
(benchmarks/hardware/wgmma/wgmma_probe.cuh), which a change can break for a probe that
no other test builds. PTX only (no GPU, no ptxas), the probes' own flags."""

import os
import shutil
import subprocess

import pytest
from conftest import ROOT

WGMMA = os.path.join(ROOT, "benchmarks", "hardware", "wgmma")
needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not on PATH")

# probe -> (extra -D flags, instructions its PTX must hold)
PROBES = {
    "probe.cu": ((), ("wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16",)),
    "tma_probe.cu": ((), ("cp.async.bulk.tensor.2d", "wgmma.mma_async")),
    "smem_base.cu": ((), ("static_200",)),
    # tma_wgmma_base.sh's two extremes: 128B at base 1152 (static pad), and no swizzle
    "tma_wgmma_base.cu": (("-DSPAN=128", "-DPAD=128", "-DBO_ADDR=1"), ("mbarrier.try_wait",)),
    "tma_wgmma_base.cu none": (("-DSPAN=0",), ("cp.async.bulk.tensor.2d", "wgmma.mma_async")),
}


def test_every_probe_is_listed():
    assert {name.split()[0] for name in PROBES} == {
        f for f in os.listdir(WGMMA) if f.endswith(".cu")
    }


@needs_nvcc
@pytest.mark.parametrize("case", sorted(PROBES))
def test_probe_compiles_to_ptx_with_its_instructions(case, tmp_path):
    flags, instructions = PROBES[case]
    out = tmp_path / "probe.ptx"
    done = subprocess.run(
        ["nvcc", "-arch=sm_90a", "-O2", *flags, "-ptx", "-o", str(out), case.split()[0]],
        cwd=WGMMA,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    ptx = out.read_text()
    assert all(i in ptx for i in instructions), instructions
