// verify corpus sample (tests/ttgir/test_triton_corpus.py): a file that is two top-level modules, neither with a target (module.py read ttg.target of None)
// Reduced from Triton's lit module test/TritonGPU/ops.mlir (triton-lang/triton bceeb9ed7c0a,
// split on "// -----"); written for verify, not copied.
// RUN: triton-opt %s --convert-triton-gpu-to-llvm=compute-capability=80
#blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
#shared = #ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>
#smem = #ttg.shared_memory
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, "ttg.threads-per-warp" = 32 : i32} {
  tt.func @first(%x: tensor<64x64xf16, #blocked>) {
    %buf = ttg.local_alloc %x : (tensor<64x64xf16, #blocked>) -> !ttg.memdesc<64x64xf16, #shared, #smem>
    tt.return
  }
}
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, "ttg.threads-per-warp" = 32 : i32} {
  tt.func @second(%x: tensor<64x64xf16, #blocked>) {
    %buf = ttg.local_alloc %x : (tensor<64x64xf16, #blocked>) -> !ttg.memdesc<64x64xf16, #shared, #smem>
    tt.return
  }
}
