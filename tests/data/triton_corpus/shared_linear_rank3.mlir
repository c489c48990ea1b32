// verify corpus sample (tests/ttgir/test_triton_corpus.py): a shared_linear encoding of rank 3 on a 3-D buffer (a wrong-rank stage shape hit a native assertion)
// Reduced from Triton's lit module test/TritonNvidiaGPU/optimize_descriptor_encoding.mlir #6 (triton-lang/triton bceeb9ed7c0a,
// split on "// -----"); written for verify, not copied.
#shared = #ttg.shared_linear<{offset = [[0, 0, 1], [0, 0, 2], [0, 1, 0], [0, 2, 0], [1, 0, 0]]}, alignment = 16>
#smem = #ttg.shared_memory
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  tt.func public @shared_linear_rank_3() {
    %buf = ttg.local_alloc : () -> !ttg.memdesc<2x4x4xf16, #shared, #smem, mutable>
    tt.return
  }
}
