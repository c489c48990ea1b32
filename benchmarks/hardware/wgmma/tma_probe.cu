// Where a TMA copy (cp.async.bulk.tensor.2d) puts each element of its box in shared
// memory, for each swizzle mode and destinations on and off the pattern boundary.
//
// A 2-D 16-bit tensor, element e holding the f16 bits 0x3C00 + e (normal, distinct), is
// copied as one box (inner = the swizzle span, 64 rows) to shared memory at OFFSET
// bytes past a 4096-aligned base; the region around it, poisoned first, is dumped,
// and the byte offset (from the destination) of every element is printed:
// "place MODE OFFSET off..." in element order, or "fault MODE OFFSET: error" if the
// copy was refused. With the 128B mode, wgmma then reads the box as B (64 n x 16 k,
// K-major, descriptor start = destination, SBO 1024) with base offset 0 and with
// (destination >> 7) & 7, A the selector of probe.cu, and counts the elements of D
// (4096: each of the 1024 B elements 4 times) that are not the box's (n, k):
// "wgmma 128 OFFSET base_offset=BO wrong=W of 4096" (the run of 2026-12-01 printed
// "of 1024" here: the count was of the 4096 entries all along).
//
// Build: nvcc -gencode arch=compute_90a,code=sm_90a -O2 -o tma_probe tma_probe.cu
// (the driver's cuTensorMapEncodeTiled is looked up at run time: no -lcuda;
// what the probes share is in wgmma_probe.cuh)
// Run:   ./tma_probe SWIZZLE_BYTES OFFSET   (one process per case: a fault ends its context)
#include "wgmma_probe.cuh"

constexpr int ROWS = 64;
constexpr int REGION = 16384;  // bytes dumped from the aligned base
constexpr int SMEM_BYTES = REGION + 4096;

// wgmma reads the box as B (n = box row, k = inner) with the given base offset; the
// count of D's elements that are not the box's lands in *wrong.
__device__ void read_by_wgmma(uint32_t start, int bo, int inner, int* wrong) {
  Fragment f;
  uint64_t desc = matrix_descriptor(start, 16, 1024, bo, 1);
  float d[32];
  read_through(d, f, desc, 1);
  for (int i = 0; i < 32; ++i) {
    int m = f.row(i), n = f.col(i);
    float want = __half2float(__ushort_as_half(ONE + n * inner + m % 16));
    if (d[i] != want) atomicAdd(wrong, 1);
  }
}

__global__ void tma_probe(const __grid_constant__ CUtensorMap map, int offset, int bytes,
                          int with_wgmma, unsigned short* out, int* wrong) {
  extern __shared__ __align__(16) unsigned char smem[];
  __shared__ __align__(8) uint64_t bar;
  uint32_t raw = static_cast<uint32_t>(__cvta_generic_to_shared(smem));
  uint32_t base = (raw + 4095u) & ~4095u;
  unsigned short* region = reinterpret_cast<unsigned short*>(smem + (base - raw));
  for (int i = threadIdx.x; i < REGION / 2; i += blockDim.x) region[i] = 0xFFFF;
  uint32_t b = static_cast<uint32_t>(__cvta_generic_to_shared(&bar));
  if (threadIdx.x == 0) mbarrier_init(b);
  // The poison (generic proxy) before the copy (async proxy).
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
  __syncthreads();
  if (threadIdx.x == 0) tma_load_box(base + offset, &map, b, bytes);
  mbarrier_wait(b);
  for (int i = threadIdx.x; i < REGION / 2; i += blockDim.x) out[i] = region[i];
  if (with_wgmma) {  // the 128B box: 64 elements a row
    read_by_wgmma(base + offset, 0, 64, &wrong[0]);
    read_by_wgmma(base + offset, ((base + offset) >> 7) & 7, 64, &wrong[1]);
  }
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: tma_probe SWIZZLE_BYTES(0|32|64|128) OFFSET\n");
    return 2;
  }
  int span = atoi(argv[1]), offset = atoi(argv[2]);
  int inner = (span ? span : 128) / 2, count = inner * ROWS, bytes = 2 * count;
  unsigned short* host = static_cast<unsigned short*>(malloc(REGION));
  for (int e = 0; e < count; ++e) host[e] = static_cast<unsigned short>(ONE + e);
  unsigned short *global, *out;
  int* wrong;
  cudaMalloc(&global, bytes);
  cudaMalloc(&out, REGION);
  cudaMalloc(&wrong, 2 * sizeof(int));
  cudaMemset(wrong, 0, 2 * sizeof(int));
  cudaMemcpy(global, host, bytes, cudaMemcpyHostToDevice);
  CUtensorMap map;
  const char* why = encode_box(&map, CU_TENSOR_MAP_DATA_TYPE_UINT16, global, inner, ROWS, span);
  if (why) {
    printf("fault %d %d: %s\n", span, offset, why);
    return 1;
  }
  cudaError_t e =
      launch_one_cta(tma_probe, SMEM_BYTES, map, offset, bytes, span == 128, out, wrong);
  if (e != cudaSuccess) {
    printf("fault %d %d: %s\n", span, offset, cudaGetErrorString(e));
    return 1;
  }
  read_back(host, out, REGION);
  static long where[65536];
  for (int i = 0; i < count; ++i) where[i] = -1;
  for (int h = 0; h < REGION / 2; ++h)
    if (host[h] >= ONE && host[h] < ONE + count) where[host[h] - ONE] = 2L * h - offset;
  printf("place %d %d", span, offset);
  for (int i = 0; i < count; ++i) printf(" %ld", where[i]);
  printf("\n");
  int counts[2];
  read_back(counts, wrong, sizeof counts);
  uint32_t dest_row = uint32_t(offset >> 7) & 7;  // the base is 4096-aligned
  if (span == 128)
    for (int i = 0; i < 2; ++i)
      printf("wgmma 128 %d base_offset=%u wrong=%d of 4096\n", offset, i ? dest_row : 0u,
             counts[i]);
  return 0;
}
