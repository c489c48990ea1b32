// verify corpus sample (tests/ttgir/test_triton_corpus.py): a padded_shared buffer (Gluon's to_linear_layout aborted the process)
// Reduced from Triton's lit module test/TritonGPU/memdesc-subview-split.mlir #0 (triton-lang/triton bceeb9ed7c0a,
// split on "// -----"); written for verify, not copied.
#blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
#shared = #ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>
#padded = #ttg.padded_shared<[32:+4] {order = [1, 0], shape = [64, 64]}>
#smem = #ttg.shared_memory
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  tt.func public @padded_beside_swizzled(%x: tensor<64x64xf16, #blocked>) {
    %plain = ttg.local_alloc %x : (tensor<64x64xf16, #blocked>) -> !ttg.memdesc<64x64xf16, #shared, #smem>
    %padded = ttg.local_alloc %x : (tensor<64x64xf16, #blocked>) -> !ttg.memdesc<64x64xf16, #padded, #smem>
    tt.return
  }
}
