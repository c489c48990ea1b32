"""Benchmark and campaign scripts, run from the repository root as
`python -m benchmarks.KIND.NAME`, one folder per kind:

- speed/      what verify costs: per check, per engine, start-up, sweeps, synthesis
- campaigns/  verify against what shares no code with it: the independent oracle,
              Triton's own compiler and Gluon's bank_conflicts
- hardware/   the H200's measurements the bank model rests on (ptx/, wgmma/ hold
              the CUDA probes), and the fidelity campaigns on a lent GPU
- triton_compile.py  the one way the scripts (and tests/data's sample generators)
              compile Triton kernels on the CPU

Results are written under benchmarks/results/. A package so that the scripts import
each other (`benchmarks.speed.catalog`, `oracle.spec_generator`) and the tests import
them, without sys.path edits.
"""
