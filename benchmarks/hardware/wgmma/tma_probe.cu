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
// (the driver's cuTensorMapEncodeTiled is looked up at run time: no -lcuda)
// Run:   ./tma_probe SWIZZLE_BYTES OFFSET   (one process per case: a fault ends its context)
#include <cuda.h>
#include <cuda_fp16.h>
#include <cudaTypedefs.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>

constexpr int ROWS = 64;
constexpr int REGION = 16384;  // bytes dumped from the aligned base
constexpr int SMEM_BYTES = REGION + 4096;

constexpr unsigned short ONE = 0x3C00;  // f16 1.0: element e holds ONE + e

#define D_OUT                                                                               \
  "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),      \
      "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]),           \
      "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]),        \
      "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]),        \
      "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])

// wgmma reads the box as B (n = box row, k = inner) with the given base offset; the
// count of D's elements that are not the box's lands in *wrong.
__device__ void read_by_wgmma(uint32_t start, int bo, int inner, int* wrong) {
  int lane = threadIdx.x % 32, warp = threadIdx.x / 32, g = lane / 4, t = lane % 4;
  uint64_t desc = uint64_t((start >> 4) & 0x3FFF) | uint64_t(1) << 16 | uint64_t(64) << 32 |
                  uint64_t(bo & 7) << 49 | uint64_t(1) << 62;
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
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc), "r"(1));
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
  asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
  for (int i = 0; i < 32; ++i) {
    int m = 16 * warp + g + 8 * ((i >> 1) & 1), n = 8 * (i >> 2) + 2 * t + (i & 1);
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
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" ::"r"(b));
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  // The poison (generic proxy) before the copy (async proxy).
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
  __syncthreads();
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(b), "r"(bytes)
                 : "memory");
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
        " [%0], [%1, {%2, %3}], [%4];\n" ::"r"(base + offset),
        "l"(&map), "r"(0), "r"(0), "r"(b)
        : "memory");
  }
  asm volatile(
      "{\n.reg .pred done;\nwait:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], 0;\n"
      "@!done bra wait;\n}\n" ::"r"(b)
      : "memory");
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
  CUtensorMapSwizzle swizzle = span == 128  ? CU_TENSOR_MAP_SWIZZLE_128B
                               : span == 64 ? CU_TENSOR_MAP_SWIZZLE_64B
                               : span == 32 ? CU_TENSOR_MAP_SWIZZLE_32B
                                            : CU_TENSOR_MAP_SWIZZLE_NONE;
  cuuint64_t dims[2] = {cuuint64_t(inner), ROWS}, strides[1] = {cuuint64_t(2 * inner)};
  cuuint32_t box[2] = {cuuint32_t(inner), ROWS}, estrides[2] = {1, 1};
  void* entry = nullptr;
  cudaDriverEntryPointQueryResult found;
  if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &entry, 12000, cudaEnableDefault,
                                       &found) != cudaSuccess ||
      found != cudaDriverEntryPointSuccess) {
    printf("fault %d %d: no cuTensorMapEncodeTiled\n", span, offset);
    return 1;
  }
  auto encode = reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(entry);
  CUtensorMap map;
  CUresult r = encode(&map, CU_TENSOR_MAP_DATA_TYPE_UINT16, 2, global, dims,
                                      strides, box, estrides, CU_TENSOR_MAP_INTERLEAVE_NONE,
                                      swizzle, CU_TENSOR_MAP_L2_PROMOTION_NONE,
                                      CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) {
    printf("fault %d %d: cuTensorMapEncodeTiled %d\n", span, offset, int(r));
    return 1;
  }
  cudaFuncSetAttribute(tma_probe, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM_BYTES);
  tma_probe<<<1, 128, SMEM_BYTES>>>(map, offset, bytes, span == 128, out, wrong);
  cudaError_t e = cudaDeviceSynchronize();
  if (e == cudaSuccess) e = cudaGetLastError();
  if (e != cudaSuccess) {
    printf("fault %d %d: %s\n", span, offset, cudaGetErrorString(e));
    return 1;
  }
  cudaMemcpy(host, out, REGION, cudaMemcpyDeviceToHost);
  static long where[65536];
  for (int i = 0; i < count; ++i) where[i] = -1;
  for (int h = 0; h < REGION / 2; ++h)
    if (host[h] >= ONE && host[h] < ONE + count) where[host[h] - ONE] = 2L * h - offset;
  printf("place %d %d", span, offset);
  for (int i = 0; i < count; ++i) printf(" %ld", where[i]);
  printf("\n");
  int counts[2];
  cudaMemcpy(counts, wrong, sizeof counts, cudaMemcpyDeviceToHost);
  uint32_t dest_row = uint32_t(offset >> 7) & 7;  // the base is 4096-aligned
  if (span == 128)
    for (int i = 0; i < 2; ++i)
      printf("wgmma 128 %d base_offset=%u wrong=%d of 4096\n", offset, i ? dest_row : 0u,
             counts[i]);
  return 0;
}
