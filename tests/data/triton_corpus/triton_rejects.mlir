// verify corpus sample (tests/ttgir/test_triton_corpus.py): a module Triton's verifier rejects: its diagnostic at its line and column
// Reduced from Triton's lit module test/TritonGPU/invalid.mlir #12 (triton-lang/triton bceeb9ed7c0a,
// split on "// -----"); written for verify, not copied.
#shared = #ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>
#smem = #ttg.shared_memory
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  tt.func @bad_index(%i: i32) {
    %buf = ttg.local_alloc : () -> !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>
    %one = ttg.memdesc_index %buf[%i] : !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable> -> !ttg.memdesc<64x32xf16, #shared, #smem, mutable>
    tt.return
  }
}
