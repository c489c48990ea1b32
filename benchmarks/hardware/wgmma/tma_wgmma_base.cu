// A TMA copy read by wgmma, as a kernel author writes it (issue 25, item 5): the box
// lands at the start of the dynamic shared memory, whose base the static shared memory
// moves (tile-ai/tilelang#2379: 1024 with none, 1152 with 128 static bytes, measured in
// benchmarks/results/smem_base_h200.txt), and wgmma reads it as B through a descriptor.
// Compile-time choices (-D), one binary and one PTX per case, so that verify decides the
// very PTX the H200 runs:
//   SPAN       the tensor map's swizzle: 128, 64, 32 bytes, or 0 (none)
//   DESC_SPAN  the descriptor's swizzle mode (the same as SPAN, or not: a mismatch)
//   BO_ADDR    1: the descriptor's base offset is PTX's (start >> 7) & 7, as if the
//              pattern started at the box; 0: base offset 0 (CUTLASS, Triton)
//   PAD        bytes of static shared memory before the dynamic memory (0 or 128)
// The box is 64 rows x SPAN bytes of f16 (none: 128 rows x 16 bytes, rows 64.. holding
// k 8..15, i.e. the canonical no-swizzle core matrices, LBO 1024, SBO 128). A is the
// selector A[m][k] = (k == m % 16), so D[m][n] = B(n, m % 16): each wgmma names the
// element it read for every B element. Prints one line:
//   "case NAME base=B kblocks=K wrong_elements=W of E wrong_bytes=WB of EB"
// Build: nvcc -gencode arch=compute_90a,code=sm_90a -O2 -DSPAN=128 ... tma_wgmma_base.cu
#include <cuda.h>
#include <cuda_fp16.h>
#include <cudaTypedefs.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>

#ifndef SPAN
#define SPAN 128
#endif
#ifndef DESC_SPAN
#define DESC_SPAN SPAN
#endif
#ifndef BO_ADDR
#define BO_ADDR 0
#endif
#ifndef PAD
#define PAD 0
#endif
#ifndef NAME
#define NAME "case"
#endif

constexpr int INNER = SPAN ? SPAN / 2 : 8;        // elements in a box row
constexpr int BOX_ROWS = SPAN ? 64 : 128;         // rows of the box
constexpr int COUNT = INNER * BOX_ROWS;           // elements in the box
constexpr int BYTES = 2 * COUNT;
constexpr int KBLOCKS = SPAN ? SPAN / 32 : 1;     // k16 blocks along a row
constexpr unsigned short ONE = 0x3C00;            // f16 1.0: element e holds ONE + e

// The global element of B(n, k): a row-major box, or the no-swizzle stacking.
__host__ __device__ constexpr int global_element(int n, int k) {
  return SPAN ? n * INNER + k : (n + 64 * (k / 8)) * 8 + k % 8;
}

__host__ __device__ constexpr uint64_t mode_bits(int span) {
  return span == 128 ? 1 : span == 64 ? 2 : span == 32 ? 3 : 0;
}

#define D_OUT                                                                               \
  "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),      \
      "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]),           \
      "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]),        \
      "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]),        \
      "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])

// The descriptor of k-block kb: CUTLASS's canonical K-major layout of the box (start
// +32 bytes a k-block, LBO 16 and SBO 8 rows when swizzled), in the DESC_SPAN mode.
__device__ uint64_t descriptor(uint32_t box, int kb) {
  uint32_t start = box + 32u * kb;
  uint64_t lbo = SPAN ? 16 : 1024, sbo = SPAN ? 8 * SPAN : 128;
  uint64_t base_offset = BO_ADDR ? (start >> 7) & 7 : 0;
  return uint64_t((start >> 4) & 0x3FFF) | (lbo >> 4) << 16 | (sbo >> 4) << 32 |
         base_offset << 49 | mode_bits(DESC_SPAN) << 62;
}

__device__ void read_kblock(uint32_t box, int kb, int* bad) {
  int lane = threadIdx.x % 32, warp = threadIdx.x / 32, g = lane / 4, t = lane % 4;
  uint64_t desc = descriptor(box, kb);
  uint32_t a[4];
  for (int r = 0; r < 4; ++r) {
    int row = g + 8 * (r & 1), col = 2 * t + 8 * (r >> 1);
    uint32_t lo = __half_as_ushort(__float2half(col == row ? 1.f : 0.f));
    uint32_t hi = __half_as_ushort(__float2half(col + 1 == row ? 1.f : 0.f));
    a[r] = lo | hi << 16;
  }
  float d[32];
  for (int i = 0; i < 32; ++i) d[i] = 0.f;
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, "
      "%19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}"
      ", {%32, %33, %34, %35}, %36, p, 1, 1, 0;\n}\n"
      : D_OUT
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc), "r"(0));
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
  asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
  for (int i = 0; i < 32; ++i) {
    int m = 16 * warp + g + 8 * ((i >> 1) & 1), n = 8 * (i >> 2) + 2 * t + (i & 1);
    int k = 16 * kb + m % 16;
    float want = __half2float(__ushort_as_half(ONE + global_element(n, k)));
    if (d[i] != want) atomicOr(&bad[n * 64 + k], 1);
  }
}

__global__ void tma_wgmma(const __grid_constant__ CUtensorMap map, int* bad, int* where) {
  extern __shared__ __align__(128) unsigned char smem[];
#if PAD
  __shared__ __align__(128) int pad[PAD / 4];  // moves the dynamic base by PAD bytes
  if (threadIdx.x < PAD / 4) pad[threadIdx.x] = threadIdx.x;
#endif
  uint32_t box = static_cast<uint32_t>(__cvta_generic_to_shared(smem));
  uint32_t bar = box + BYTES;  // the mbarrier after the box
  if (threadIdx.x == 0) {
    where[0] = box;
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" ::"r"(bar));
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar),
                 "r"(BYTES)
                 : "memory");
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
        " [%0], [%1, {%2, %3}], [%4];\n" ::"r"(box),
        "l"(&map), "r"(0), "r"(0), "r"(bar)
        : "memory");
  }
  asm volatile(
      "{\n.reg .pred done;\nwait:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], 0;\n"
      "@!done bra wait;\n}\n" ::"r"(bar)
      : "memory");
#pragma unroll
  for (int kb = 0; kb < KBLOCKS; ++kb) read_kblock(box, kb, bad);
#if PAD
  __syncthreads();
  if (threadIdx.x == 0) where[1] = pad[PAD / 4 - 1];
#endif
}

int main() {
  static unsigned short host[COUNT];
  for (int e = 0; e < COUNT; ++e) host[e] = static_cast<unsigned short>(ONE + e);
  unsigned short* global;
  int *bad, *where;
  cudaMalloc(&global, BYTES);
  cudaMalloc(&bad, 64 * 64 * sizeof(int));
  cudaMalloc(&where, 2 * sizeof(int));
  cudaMemset(bad, 0, 64 * 64 * sizeof(int));
  cudaMemcpy(global, host, BYTES, cudaMemcpyHostToDevice);
  CUtensorMapSwizzle swizzle = SPAN == 128  ? CU_TENSOR_MAP_SWIZZLE_128B
                               : SPAN == 64 ? CU_TENSOR_MAP_SWIZZLE_64B
                               : SPAN == 32 ? CU_TENSOR_MAP_SWIZZLE_32B
                                            : CU_TENSOR_MAP_SWIZZLE_NONE;
  cuuint64_t dims[2] = {INNER, BOX_ROWS}, strides[1] = {2 * INNER};
  cuuint32_t boxdim[2] = {INNER, BOX_ROWS}, estrides[2] = {1, 1};
  void* entry = nullptr;
  cudaDriverEntryPointQueryResult found;
  if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &entry, 12000, cudaEnableDefault,
                                       &found) != cudaSuccess ||
      found != cudaDriverEntryPointSuccess) {
    printf("case %s fault: no cuTensorMapEncodeTiled\n", NAME);
    return 1;
  }
  auto encode = reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(entry);
  CUtensorMap map;
  CUresult r = encode(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, global, dims, strides, boxdim,
                      estrides, CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle,
                      CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) {
    printf("case %s fault: cuTensorMapEncodeTiled %d\n", NAME, int(r));
    return 1;
  }
  int smem = BYTES + 8;
  tma_wgmma<<<1, 128, smem>>>(map, bad, where);
  cudaError_t e = cudaDeviceSynchronize();
  if (e == cudaSuccess) e = cudaGetLastError();
  if (e != cudaSuccess) {
    printf("case %s fault: %s\n", NAME, cudaGetErrorString(e));
    return 1;
  }
  static int flags[64 * 64];
  int base[2];
  cudaMemcpy(flags, bad, sizeof flags, cudaMemcpyDeviceToHost);
  cudaMemcpy(base, where, sizeof base, cudaMemcpyDeviceToHost);
  int wrong = 0, read = 64 * 16 * KBLOCKS;
  for (int n = 0; n < 64; ++n)
    for (int k = 0; k < 16 * KBLOCKS; ++k) wrong += flags[n * 64 + k];
  printf("case %s base=%d kblocks=%d wrong_elements=%d of %d wrong_bytes=%d of %d\n", NAME,
         base[0], KBLOCKS, wrong, read, 2 * wrong, 2 * read);
  return 0;
}
