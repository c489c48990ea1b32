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
#include "wgmma_probe.cuh"

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

// The global element of B(n, k): a row-major box, or the no-swizzle stacking.
__host__ __device__ constexpr int global_element(int n, int k) {
  return SPAN ? n * INNER + k : (n + 64 * (k / 8)) * 8 + k % 8;
}

__host__ __device__ constexpr uint64_t mode_bits(int span) {
  return span == 128 ? 1 : span == 64 ? 2 : span == 32 ? 3 : 0;
}

// The descriptor of k-block kb: CUTLASS's canonical K-major layout of the box (start
// +32 bytes a k-block, LBO 16 and SBO 8 rows when swizzled), in the DESC_SPAN mode.
__device__ uint64_t descriptor(uint32_t box, int kb) {
  uint32_t start = box + 32u * kb;
  int lbo = SPAN ? 16 : 1024, sbo = SPAN ? 8 * SPAN : 128;
  return matrix_descriptor(start, lbo, sbo, BO_ADDR ? (start >> 7) & 7 : 0, mode_bits(DESC_SPAN));
}

__device__ void read_kblock(uint32_t box, int kb, int* bad) {
  Fragment f;
  uint64_t desc = descriptor(box, kb);
  float d[32];
  read_through(d, f, desc, 0);
  for (int i = 0; i < 32; ++i) {
    int m = f.row(i), n = f.col(i);
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
    mbarrier_init(bar);
  }
  __syncthreads();
  if (threadIdx.x == 0) tma_load_box(box, &map, bar, BYTES);
  mbarrier_wait(bar);
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
  CUtensorMap map;
  const char* why =
      encode_box(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, global, INNER, BOX_ROWS, SPAN);
  if (why) {
    printf("case %s fault: %s\n", NAME, why);
    return 1;
  }
  cudaError_t e = launch_one_cta(tma_wgmma, BYTES + 8, map, bad, where);
  if (e != cudaSuccess) {
    printf("case %s fault: %s\n", NAME, cudaGetErrorString(e));
    return 1;
  }
  static int flags[64 * 64];
  int base[2];
  read_back(flags, bad, sizeof flags);
  read_back(base, where, sizeof base);
  int wrong = 0, read = 64 * 16 * KBLOCKS;
  for (int n = 0; n < 64; ++n)
    for (int k = 0; k < 16 * KBLOCKS; ++k) wrong += flags[n * 64 + k];
  printf("case %s base=%d kblocks=%d wrong_elements=%d of %d wrong_bytes=%d of %d\n", NAME,
         base[0], KBLOCKS, wrong, read, 2 * wrong, 2 * read);
  return 0;
}
