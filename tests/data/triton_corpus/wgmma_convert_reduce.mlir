// verify corpus sample (tests/ttgir/test_triton_corpus.py): wgmma operands, a layout conversion and a cross-warp reduction: each listed not modelled
// Reduced from Triton's lit module test/TritonGPU/accumulator-init.mlir #0 (triton-lang/triton bceeb9ed7c0a,
// split on "// -----"); written for verify, not copied.
#blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
#blocked1 = #ttg.blocked<{sizePerThread = [8, 1], threadsPerWarp = [8, 4], warpsPerCTA = [1, 4], order = [0, 1]}>
#mma = #ttg.nvidia_mma<{versionMajor = 3, versionMinor = 0, warpsPerCTA = [4, 1], instrShape = [16, 64, 16]}>
#shared = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>
#shared1 = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = true, elementBitWidth = 16}>
#smem = #ttg.shared_memory
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  tt.func @wgmma_and_friends(%a: tensor<128x64xf16, #blocked>, %b: tensor<64x64xf16, #blocked1>) -> tensor<64xf32, #ttg.slice<{dim = 0, parent = #blocked}>> {
    %zero = arith.constant dense<0.000000e+00> : tensor<128x64xf32, #mma>
    %sa = ttg.local_alloc %a : (tensor<128x64xf16, #blocked>) -> !ttg.memdesc<128x64xf16, #shared, #smem>
    %sb = ttg.local_alloc %b : (tensor<64x64xf16, #blocked1>) -> !ttg.memdesc<64x64xf16, #shared1, #smem>
    %d = ttng.warp_group_dot %sa, %sb, %zero : !ttg.memdesc<128x64xf16, #shared, #smem> * !ttg.memdesc<64x64xf16, #shared1, #smem> -> tensor<128x64xf32, #mma>
    %c = ttg.convert_layout %d : tensor<128x64xf32, #mma> -> tensor<128x64xf32, #blocked>
    %s = "tt.reduce"(%c) <{axis = 0 : i32}> ({
    ^bb0(%l: f32, %r: f32):
      %sum = arith.addf %l, %r : f32
      tt.reduce.return %sum : f32
    }) : (tensor<128x64xf32, #blocked>) -> tensor<64xf32, #ttg.slice<{dim = 0, parent = #blocked}>>
    tt.return %s : tensor<64xf32, #ttg.slice<{dim = 0, parent = #blocked}>>
  }
}
