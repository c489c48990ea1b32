#!/bin/bash
# On the H200 (the device tool sets OUT): where TMA puts a box for each swizzle mode
# and destination offset, and what wgmma then reads (tma_probe.cu); one process per
# case, since a refused copy ends its context. analyze_tma.py scores $OUT/tma.txt.
set -u
cd "$(dirname "$0")"
nvcc -gencode arch=compute_90a,code=sm_90a -O2 -o /tmp/tma_probe tma_probe.cu 2>/dev/null || exit 1
for span_offsets in "128 0 128 256 384 512 640 768 896 1024 16" "64 0 128 256 384 16" \
  "32 0 128 16" "0 0 128 16"; do
  set -- $span_offsets
  span=$1
  shift
  for offset in "$@"; do
    timeout 30 /tmp/tma_probe "$span" "$offset" >> "$OUT/tma.txt" 2>&1 ||
      echo "exit $? $span $offset" >> "$OUT/tma.txt"
  done
done
grep -v '^place' "$OUT/tma.txt"
