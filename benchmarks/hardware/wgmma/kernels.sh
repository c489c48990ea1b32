#!/bin/bash
# On the H200 (the device tool sets OUT): gmma shared-memory wavefronts of two real
# sm_90a kernels, one profiled launch each, to check verify's per-instruction count
# (verify/ptx/hopper.py: operand bytes / 128) where the operands are not the probe's:
#   * Triton 3.9's tutorial matmul (benchmarks/hardware/triton_h200/matmul.sm90.cubin, launched
#     by benchmarks/hardware/triton_h200.py: M = N = K = 512, 128x128x64 tiles, 16 CTAs);
#   * CuTe's examples/cute/tutorial/hopper/wgmma_sm90.cu, built here from the CUTLASS
#     headers carried in build/cutlass (nvcc -arch=sm_90a), at 512 x 512 x 512, NT and TN.
# python -m benchmarks.hardware.wgmma.kernels DIR scores what lands in $OUT.
set -u
cd "$(dirname "$0")/../../.."
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$OUT/gpu.txt"
ncu --version | tail -1 >> "$OUT/gpu.txt"
ncu --query-metrics --chip gh100 2>&1 | grep -i 'gmma' > "$OUT/gmma_metrics.txt"
metrics=$(grep -o '^[a-z0-9_]*gmma[a-z0-9_]*' "$OUT/gmma_metrics.txt" | sort -u | head -12 |
  sed 's/$/.sum/' | paste -sd, -)
echo "metrics: ${metrics:=l1tex__data_pipe_lsu_wavefronts_mem_shared_op_gmma.sum}"
ncu --clock-control none --metrics "$metrics" --csv --page raw -k regex:matmul_kernel \
  python3 -m benchmarks.hardware.triton_h200 launch > "$OUT/triton_matmul.csv" 2> "$OUT/triton_err.txt" || tail "$OUT/triton_err.txt"
cute=build/cutlass/examples/cute/tutorial/hopper/wgmma_sm90.cu
nvcc -arch=sm_90a -O2 -std=c++17 --expt-relaxed-constexpr -Ibuild/cutlass/include \
  -Ibuild/cutlass/tools/util/include "$cute" -o /tmp/wgmma_sm90 || exit 1
for t in "N T" "T N"; do
  ncu --clock-control none --metrics "$metrics" --csv --page raw -k regex:gemm_device \
    --launch-count 1 /tmp/wgmma_sm90 512 512 512 $t > "$OUT/cute_${t// /}.csv" 2>&1
done
wc -l "$OUT"/*.csv
