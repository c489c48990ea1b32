// verify corpus sample (tests/ttgir/test_triton_corpus.py): nvmma_shared with elementBitWidth 32 on an f16 buffer (Triton's verifier accepts it): checked as Triton's linear layout
// Reduced from Triton's lit module test/TritonGPU/consan.mlir #30 (triton-lang/triton bceeb9ed7c0a,
// split on "// -----"); written for verify, not copied.
#blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
#shared = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 32}>
#smem = #ttg.shared_memory
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  tt.func public @nvmma_other_width(%x: tensor<64x64xf16, #blocked>) {
    %buf = ttg.local_alloc %x : (tensor<64x64xf16, #blocked>) -> !ttg.memdesc<64x64xf16, #shared, #smem>
    tt.return
  }
}
