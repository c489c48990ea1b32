// verify corpus sample (tests/ttgir/test_triton_corpus.py): an AMD target: a located refusal, not a traceback
// Reduced from Triton's lit module test/TritonGPU/loop-pipeline-hip.mlir #0 (triton-lang/triton bceeb9ed7c0a,
// split on "// -----"); written for verify, not copied.
#blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
#shared = #ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>
#smem = #ttg.shared_memory
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "hip:gfx942", "ttg.threads-per-warp" = 64 : i32} {
  tt.func @amd(%x: tensor<64x64xf16, #blocked>) {
    %buf = ttg.local_alloc %x : (tensor<64x64xf16, #blocked>) -> !ttg.memdesc<64x64xf16, #shared, #smem>
    tt.return
  }
}
