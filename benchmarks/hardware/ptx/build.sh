#!/bin/bash
# Build the ground-truth kernels (here, where nvcc is; the device has the same CUDA 13.0).
# Keeps the .ptx and .cubin that are measured; the committed copies are in ptx/ and cubin/.
#   CUTLASS=/path/to/cutlass ./build.sh     (NVIDIA/cutlass checkout: header-only)
set -euo pipefail
cd "$(dirname "$0")"
mkdir -p build ptx cubin
python gen_broadcast.py
nvcc -arch=sm_90 -lineinfo -O3 -keep -keep-dir build -o build/runner runner.cu
cp build/runner.ptx ptx/kernels_sm90.ptx
cp build/runner.sm_90.cubin cubin/kernels_sm90.cubin
nvcc -arch=sm_90 -lineinfo -O3 -keep -keep-dir build -o build/zfill zfill.cu
cp build/zfill.ptx ptx/zfill_sm90.ptx
cp build/zfill.sm_90.cubin cubin/zfill_sm90.cubin
if [ -n "${CUTLASS:-}" ]; then
  nvcc -arch=sm_90 -lineinfo -std=c++17 -O3 -I"$CUTLASS/include" -I"$CUTLASS/tools/util/include" \
    -keep -keep-dir build -o build/sgemm_sm80 "$CUTLASS/examples/cute/tutorial/sgemm_sm80.cu"
  cp build/sgemm_sm80.ptx ptx/sgemm_sm80_sm90.ptx
  cp build/sgemm_sm80.sm_90.cubin cubin/sgemm_sm80_sm90.cubin
fi
