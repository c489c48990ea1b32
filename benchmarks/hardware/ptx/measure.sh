#!/bin/bash
# On the H200 (device tool): per-SASS-instruction shared wavefronts and executions from
# Nsight Compute's source page, the per-opcode totals, the SASS with line info, and the
# addresses the kernels record. Writes $OUT/ptx_h200_raw.tar.gz.
#   bash benchmarks/hardware/ptx/measure.sh      (build/ carried from build.sh)
set -uo pipefail
cd "$(dirname "$0")"
R=/tmp/ptxraw; mkdir -p $R/ncu $R/rec $R/sass
{ nvidia-smi -L; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; ncu --version; } > $R/machine.txt 2>&1
nvdisasm -g -c build/runner.sm_90.cubin > $R/sass/kernels.sass 2>&1
nvdisasm -g -c build/sgemm_sm80.sm_90.cubin > $R/sass/sgemm.sass 2>&1
nvdisasm -gi -c build/sgemm_sm80.sm_90.cubin > $R/sass/sgemm_inline.sass 2>&1
chmod +x build/runner build/sgemm_sm80
./build/runner $R/rec > $R/rec/runner.log 2>&1
KERNELS="transpose_unpadded transpose_padded transpose_xor ldmatrix_plain ldmatrix_sw333 vector_ldst pipeline_double pipeline_triple_mod pipeline_shift tail_dynamic broadcast_loads"
SRC="--section SourceCounters --page source --print-source sass --csv"
for k in $KERNELS; do
  timeout 120 ncu $SRC --kernel-name-base mangled -k regex:"_Z[0-9]+${k}P" --launch-count 1 ./build/runner /tmp $k > $R/ncu/$k.csv 2> $R/ncu/$k.err
done
timeout 120 ncu --section SourceCounters --page source --print-source cuda,sass --csv -k regex:transpose_padded --launch-count 1 ./build/runner /tmp transpose_padded > $R/ncu/cuda_sass_transpose_padded.csv 2>&1
M=smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_st.sum,smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldsm.sum,smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldgsts.sum,smsp__sass_inst_executed_op_shared_ld.sum,smsp__sass_inst_executed_op_shared_st.sum,smsp__sass_inst_executed_op_ldsm.sum,smsp__sass_inst_executed_op_ldgsts.sum
timeout 200 ncu --metrics $M --csv ./build/runner /tmp > $R/ncu/opcode_totals.csv 2>&1
timeout 200 ncu $SRC -k regex:gemm_device --launch-count 1 ./build/sgemm_sm80 512 512 256 T N > $R/ncu/sgemm_sm80.csv 2> $R/ncu/sgemm_sm80.err
timeout 120 ncu --metrics $M --csv -k regex:gemm_device --launch-count 1 ./build/sgemm_sm80 512 512 256 T N > $R/ncu/sgemm_totals.csv 2>&1
tar -czf $OUT/ptx_h200_raw.tar.gz -C $R .
ls -la $R/ncu $R/rec; head -c 1500 $R/ncu/transpose_padded.csv; head -c 600 $R/ncu/cuda_sass_transpose_padded.csv; cat $R/machine.txt
