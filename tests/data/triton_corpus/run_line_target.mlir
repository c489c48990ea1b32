// verify corpus sample (tests/ttgir/test_triton_corpus.py): no target anywhere but the RUN line (compute-capability=90); no ttg.threads-per-warp (Triton takes 32)
// Reduced from Triton's lit module test/TritonGPU/canonicalize.mlir #5 (triton-lang/triton bceeb9ed7c0a,
// split on "// -----"); written for verify, not copied.
// RUN: triton-opt %s -split-input-file --convert-triton-gpu-to-llvm=compute-capability=90
#blocked = #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0]}>
#smem = #ttg.shared_memory
module attributes {"ttg.num-warps" = 4 : i32, "ttg.num-ctas" = 1 : i32} {
  tt.func @run_line_target() -> tensor<256xi32, #blocked> {
    %buf = ttg.local_alloc : () -> !ttg.memdesc<256xi32, #shared, #smem, mutable>
    %v = ttg.local_load %buf : !ttg.memdesc<256xi32, #shared, #smem, mutable> -> tensor<256xi32, #blocked>
    tt.return %v : tensor<256xi32, #blocked>
  }
}
