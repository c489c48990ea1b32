// verify corpus sample (tests/ttgir/test_triton_corpus.py): a plain (unswizzled) f32 tile read by columns: a real 32-way conflict, REFUTED
// Reduced from Triton's lit module test/TritonGPU/prefetch.mlir #1 (triton-lang/triton bceeb9ed7c0a,
// split on "// -----"); written for verify, not copied.
#rows = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [1, 0]}>
#cols = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [32, 1], warpsPerCTA = [1, 4], order = [0, 1]}>
#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
#smem = #ttg.shared_memory
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:80", "ttg.threads-per-warp" = 32 : i32} {
  tt.func @transpose(%x: tensor<32x32xf32, #rows>) -> tensor<32x32xf32, #cols> {
    %buf = ttg.local_alloc %x : (tensor<32x32xf32, #rows>) -> !ttg.memdesc<32x32xf32, #shared, #smem>
    %y = ttg.local_load %buf : !ttg.memdesc<32x32xf32, #shared, #smem> -> tensor<32x32xf32, #cols>
    tt.return %y : tensor<32x32xf32, #cols>
  }
}
