// verify corpus sample (tests/ttgir/test_triton_corpus.py): a module with no ttg.target and an MMA v2 dot operand: sm_80 inferred, ldmatrix
// Reduced from Triton's lit module test/Conversion/tritongpu_to_llvm.mlir #40 (triton-lang/triton bceeb9ed7c0a,
// split on "// -----"); written for verify, not copied.
#shared = #ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>
#mma = #ttg.nvidia_mma<{versionMajor = 2, warpsPerCTA = [2, 2], instrShape = [16, 8]}>
#dot_a = #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 2}>
#smem = #ttg.shared_memory
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32} {
  tt.func @load_dot_operand() -> tensor<64x64xf16, #dot_a> {
    %buf = ttg.local_alloc : () -> !ttg.memdesc<64x64xf16, #shared, #smem, mutable>
    %a = ttg.local_load %buf : !ttg.memdesc<64x64xf16, #shared, #smem, mutable> -> tensor<64x64xf16, #dot_a>
    tt.return %a : tensor<64x64xf16, #dot_a>
  }
}
