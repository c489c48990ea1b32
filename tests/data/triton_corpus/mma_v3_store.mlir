// verify corpus sample (tests/ttgir/test_triton_corpus.py): an MMA v3 accumulator stored to a swizzled buffer on sm_90: stmatrix
// Reduced from Triton's lit module test/Conversion/tritongpu_to_llvm_hopper.mlir #20 (triton-lang/triton bceeb9ed7c0a,
// split on "// -----"); written for verify, not copied.
#shared = #ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>
#mma = #ttg.nvidia_mma<{versionMajor = 3, versionMinor = 0, warpsPerCTA = [4, 1], instrShape = [16, 64, 16]}>
#smem = #ttg.shared_memory
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, "ttg.threads-per-warp" = 32 : i32} {
  tt.func @store_accumulator(%acc: tensor<64x64xf16, #mma>) {
    %buf = ttg.local_alloc : () -> !ttg.memdesc<64x64xf16, #shared, #smem, mutable>
    ttg.local_store %acc, %buf : tensor<64x64xf16, #mma> -> !ttg.memdesc<64x64xf16, #shared, #smem, mutable>
    tt.return
  }
}
