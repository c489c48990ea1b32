// verify corpus sample (tests/ttgir/test_triton_corpus.py): cp.async whose pointer tensor is a function argument (pointers.py raised IndexError)
// Reduced from Triton's lit module test/TritonGPU/consan.mlir #11 (triton-lang/triton bceeb9ed7c0a,
// split on "// -----"); written for verify, not copied.
#blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
#shared = #ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>
#smem = #ttg.shared_memory
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  tt.func public @copy_from_argument(%ptr: tensor<64x64x!tt.ptr<f16>, #blocked>) {
    %buf = ttg.local_alloc : () -> !ttg.memdesc<64x64xf16, #shared, #smem, mutable>
    %token = ttg.async_copy_global_to_local %ptr, %buf : tensor<64x64x!tt.ptr<f16>, #blocked> -> <64x64xf16, #shared, #smem, mutable>
    tt.return
  }
}
