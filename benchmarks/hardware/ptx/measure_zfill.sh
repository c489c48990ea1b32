#!/bin/bash
# On the H200: the source page of zfill.cu's copies (build/zfill from build.sh's step).
set -uo pipefail
cd "$(dirname "$0")"
R=/tmp/zf; mkdir -p $R
nvdisasm -g -c build/zfill.sm_90.cubin > $R/zfill.sass 2>&1
chmod +x build/zfill
ncu --section SourceCounters --page source --print-source sass --csv -k regex:zfill --launch-count 1 ./build/zfill > $R/zfill.csv 2> $R/zfill.err
tar -czf $OUT/ptx_h200_zfill_raw.tar.gz -C $R .
python3 - $R/zfill.csv <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
k = next(i for i, r in enumerate(rows) if r and r[0] == "Address")
h = {n: i for i, n in enumerate(rows[k])}
for r in rows[k + 1:]:
    if len(r) == len(rows[k]) and "LDGSTS" in r[1]:
        print(r[0][-4:], r[1].strip(), r[h["Instructions Executed"]], r[h["L1 Wavefronts Shared"]], r[h["L1 Wavefronts Shared Ideal"]])
PY
