#!/bin/bash
# On the H200 (the device tool sets OUT): build the probe, print the read maps of
# every configuration, and count each launch's gmma shared-memory wavefronts with
# Nsight Compute (clocks left alone). benchmarks/hardware/wgmma/analyze.py reads
# what lands in $OUT and writes benchmarks/results/wgmma_h200.{csv,md}.
set -u
cd "$(dirname "$0")"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$OUT/gpu.txt"
ncu --version | tail -1 >> "$OUT/gpu.txt"
nvcc -gencode arch=compute_90a,code=sm_90a -O2 -o /tmp/probe probe.cu || exit 1
/tmp/probe map > "$OUT/maps.txt" || exit 1
ncu --query-metrics 2>&1 | grep -i 'shared.*gmma\|gmma.*shared' > "$OUT/gmma_metrics.txt"
metrics=$(grep -o '^l1tex__[a-z_]*gmma[a-z_]*' "$OUT/gmma_metrics.txt" | sort -u | head -6 |
  sed 's/$/.sum/' | paste -sd, -)
echo "metrics: ${metrics:=l1tex__data_pipe_lsu_wavefronts_mem_shared_op_gmma.sum}"
ncu --clock-control none --metrics "$metrics" --csv --log-file "$OUT/ncu.csv" \
  /tmp/probe count "$OUT/launches.txt" || exit 1
grep -c '' "$OUT/maps.txt" "$OUT/launches.txt" "$OUT/ncu.csv"
