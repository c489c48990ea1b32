// verify corpus sample (tests/ttgir/test_triton_corpus.py): CGALayout that splits the tensor over two CTAs: that buffer not modelled, not the module
// Reduced from Triton's lit module test/TritonNvidiaGPU/membar-cluster.mlir #1 (triton-lang/triton bceeb9ed7c0a,
// split on "// -----"); written for verify, not copied.
#blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0], CGALayout = [[1, 0]]}>
#shared = #ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0], CGALayout = [[1, 0]]}>
#smem = #ttg.shared_memory
module attributes {"ttg.num-ctas" = 2 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  tt.func public @cga_split(%x: tensor<128x64xf16, #blocked>) -> tensor<128x64xf16, #blocked> {
    %buf = ttg.local_alloc %x : (tensor<128x64xf16, #blocked>) -> !ttg.memdesc<128x64xf16, #shared, #smem>
    %y = ttg.local_load %buf : !ttg.memdesc<128x64xf16, #shared, #smem> -> tensor<128x64xf16, #blocked>
    tt.return %y : tensor<128x64xf16, #blocked>
  }
}
