// verify corpus sample (tests/ttgir/test_triton_corpus.py): no ttg.target; a convert_layout whose scratch Triton lays out itself, 4-way in its ld.shared.b32 when lowered with --target sm_90
// Reduced from Triton's lit module test/Conversion/tritongpu_to_llvm.mlir #28 (triton-lang/triton bceeb9ed7c0a,
// split on "// -----"); written for verify, not copied.
#src = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [4, 8], warpsPerCTA = [1, 4], order = [1, 0]}>
#cols = #ttg.slice<{dim = 0, parent = #src}>
#dst = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
#shared = #ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 4, order = [1, 0]}>
#smem = #ttg.shared_memory
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32} {
  tt.func @column_offsets(%ptr: !tt.ptr<f32> {tt.divisibility = 32 : i32}) {
    %col = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32, #cols>
    %row = tt.expand_dims %col {axis = 0 : i32} : tensor<64xi32, #cols> -> tensor<1x64xi32, #src>
    %offs = tt.broadcast %row : tensor<1x64xi32, #src> -> tensor<16x64xi32, #src>
    %moved = ttg.convert_layout %offs : tensor<16x64xi32, #src> -> tensor<16x64xi32, #dst>
    %base = tt.splat %ptr : !tt.ptr<f32> -> tensor<16x64x!tt.ptr<f32>, #dst>
    %ptrs = tt.addptr %base, %moved : tensor<16x64x!tt.ptr<f32>, #dst>, tensor<16x64xi32, #dst>
    %buf = ttg.local_alloc : () -> !ttg.memdesc<16x64xf32, #shared, #smem, mutable>
    %copy = ttg.async_copy_global_to_local %ptrs, %buf : tensor<16x64x!tt.ptr<f32>, #dst> -> !ttg.memdesc<16x64xf32, #shared, #smem, mutable>
    ttg.async_commit_group
    tt.return
  }
}
