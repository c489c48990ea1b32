// verify corpus sample (tests/ttgir/test_triton_corpus.py): a buffer reached only through barrier bookkeeping: nothing to check, a located error
// Reduced from Triton's lit module test/Conversion/tritonnvidiagpu_to_llvm.mlir #13 (triton-lang/triton bceeb9ed7c0a,
// split on "// -----"); written for verify, not copied.
#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0]}>
#smem = #ttg.shared_memory
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  tt.func @expect(%bar: !ttg.memdesc<1xi64, #shared, #smem, mutable>, %pred: i1) {
    ttng.barrier_expect %bar, 16384, %pred : !ttg.memdesc<1xi64, #shared, #smem, mutable>
    tt.return
  }
}
