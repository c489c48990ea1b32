// verify corpus sample (tests/ttgir/test_triton_corpus.py): tensor-memory ops on sm_100 (inferred from #ttng.tensor_memory): said to be tensor memory
// Reduced from Triton's lit module test/TritonNvidiaGPU/tmem_layouts.mlir #0 (triton-lang/triton bceeb9ed7c0a,
// split on "// -----"); written for verify, not copied.
#linear = #ttg.blocked<{sizePerThread = [1, 128], threadsPerWarp = [32, 1], warpsPerCTA = [4, 1], order = [0, 1]}>
#tmem = #ttng.tensor_memory_encoding<blockM = 128, blockN = 128, colStride = 1>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, "ttg.threads-per-warp" = 32 : i32} {
  tt.func public @tmem_round_trip(%x: tensor<128x128xf32, #linear>) -> tensor<128x128xf32, #linear> {
    %true = arith.constant true
    %acc = ttng.tmem_alloc : () -> !ttg.memdesc<128x128xf32, #tmem, #ttng.tensor_memory, mutable>
    ttng.tmem_store %x, %acc, %true : tensor<128x128xf32, #linear> -> !ttg.memdesc<128x128xf32, #tmem, #ttng.tensor_memory, mutable>
    %y = ttng.tmem_load %acc : !ttg.memdesc<128x128xf32, #tmem, #ttng.tensor_memory, mutable> -> tensor<128x128xf32, #linear>
    tt.return %y : tensor<128x128xf32, #linear>
  }
}
