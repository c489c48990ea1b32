#!/bin/bash
# Issue 25 item 5: tma_wgmma_base.cu in each case below, built here and run on the H200.
#   tma_wgmma_base.sh build   (here) binaries and PTX into build/tma_wgmma/
#   tma_wgmma_base.sh run     (on the H200, OUT set by the device tool) each binary
#                             once, then each under Nsight Compute for its gmma wavefronts
# tma_wgmma_analyze.py then puts verify's verdicts on the PTX next to the H200's counts.
set -u
cd "$(dirname "$0")"
DIR=build/tma_wgmma
# name SPAN DESC_SPAN BO_ADDR PAD
CASES="sw128_base1024 128 128 0 0
sw128_base1152 128 128 0 128
sw128_bo_base1024 128 128 1 0
sw128_bo_base1152 128 128 1 128
sw64_base1024 64 64 0 0
sw32_base1024 32 32 0 0
none_base1024 0 0 0 0
sw128_read_as_sw64 128 64 0 0"
case "${1:-}" in
build)
  mkdir -p "$DIR"
  echo "$CASES" > "$DIR/cases.txt"
  while read -r name span desc bo pad; do
    flags="-O2 -DSPAN=$span -DDESC_SPAN=$desc -DBO_ADDR=$bo -DPAD=$pad -DNAME=\"$name\""
    nvcc -gencode arch=compute_90a,code=sm_90a $flags -o "$DIR/$name" tma_wgmma_base.cu &&
      nvcc -arch=sm_90a $flags -ptx -o "$DIR/$name.ptx" tma_wgmma_base.cu || exit 1
  done <<< "$CASES"
  ;;
run)
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$OUT/gpu.txt"
  ncu --version | tail -1 >> "$OUT/gpu.txt"
  while read -r name _; do
    timeout 30 "$DIR/$name" >> "$OUT/results.txt" 2>&1 || echo "case $name exit $?" >> "$OUT/results.txt"
  done <<< "$CASES"
  cat "$OUT/results.txt"
  metrics=l1tex__data_pipe_lsu_wavefronts_mem_shared_op_gmma.sum
  metrics=$metrics,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_gmma.sum
  while read -r name _; do
    echo "== $name" >> "$OUT/ncu.txt"
    timeout 60 ncu --clock-control none --csv --metrics "$metrics" "$DIR/$name" \
      >> "$OUT/ncu.txt" 2>&1 || echo "ncu $name exit $?" >> "$OUT/ncu.txt"
  done <<< "$CASES"
  grep -h 'gmma\|==' "$OUT/ncu.txt"
  ;;
*)
  echo "usage: tma_wgmma_base.sh build|run" >&2
  exit 2
  ;;
esac
