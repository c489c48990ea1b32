// What the wgmma probes share (probe.cu, tma_probe.cu, tma_wgmma_base.cu), written once:
// the error check and the one-CTA launch, the selector A, the m64n64k16 wgmma with A in
// registers and its D fragment, the matrix descriptor, and TMA's tensor map, mbarrier
// and 2-D bulk copy. Every function is inline and spelled as the probes spelled it, so
// that each probe's PTX is the same as before the header (tma_wgmma_base.cu's PTX is the
// one verify decides and the H200 ran: benchmarks/results/wgmma_tma_base_h200.md).
#pragma once

#include <cuda.h>
#include <cuda_fp16.h>
#include <cudaTypedefs.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>

#define CHECK(x)                                                                        \
  do {                                                                                  \
    cudaError_t e = (x);                                                                \
    if (e != cudaSuccess) {                                                             \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e)); \
      exit(1);                                                                          \
    }                                                                                   \
  } while (0)

constexpr unsigned short ONE = 0x3C00;  // f16 1.0: element e of a probe's tensor holds ONE + e

// --- wgmma.mma_async m64n64k16, f32 += f16 x f16 ------------------------------------

#define D_OUT                                                                               \
  "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),      \
      "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]),           \
      "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]),        \
      "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]),        \
      "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
#define D_REGS                                                                             \
  "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, " \
  "%19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}"

// The matrix descriptor: start address, LBO and SBO in bytes, base offset, swizzle mode by
// PTX encoding (0 none, 1 128B, 2 64B, 3 32B).
__device__ inline uint64_t matrix_descriptor(uint32_t start, int lbo, int sbo, int bo, int mode) {
  return uint64_t((start >> 4) & 0x3FFF) | uint64_t((lbo >> 4) & 0x3FFF) << 16 |
         uint64_t((sbo >> 4) & 0x3FFF) << 32 | uint64_t(bo & 7) << 49 | uint64_t(mode & 3) << 62;
}

// Where this thread's fragments sit: warp, lane group g and thread t in the group.
struct Fragment {
  int lane, warp, g, t;
  __device__ Fragment()
      : lane(threadIdx.x % 32), warp(threadIdx.x / 32), g(lane / 4), t(lane % 4) {}
  // A's register fragment (m64k16, per warp 16 rows): register r holds row g + 8*(r&1),
  // columns 2t + 8*(r>>1) and +1. The selector, 1 where k == m % 16, makes
  // D[m][n] = B(n, m % 16): the element wgmma read for B's (n, k = m % 16).
  __device__ void selector(uint32_t* a) const {
    for (int r = 0; r < 4; ++r) {
      int row = g + 8 * (r & 1), col = 2 * t + 8 * (r >> 1);
      uint32_t lo = __half_as_ushort(__float2half(col == row ? 1.f : 0.f));
      uint32_t hi = __half_as_ushort(__float2half(col + 1 == row ? 1.f : 0.f));
      a[r] = lo | hi << 16;
    }
  }
  // D fragment: d[i] at row 16*warp + g + 8*((i>>1)&1), column 8*(i>>2) + 2t + (i&1).
  __device__ int row(int i) const { return 16 * warp + g + 8 * ((i >> 1) & 1); }
  __device__ int col(int i) const { return 8 * (i >> 2) + 2 * t + (i & 1); }
};

__device__ inline void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }

__device__ inline void wgmma_commit_and_wait() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
  asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
}

// D (+)= A B, A from registers, B through `desc` (TRANS: its transpose immediate); D is
// added to where `scale_d` is not 0.
template <int TRANS>
__device__ inline void wgmma_rs(float* d, const uint32_t* a, uint64_t desc_b, int scale_d) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 " D_REGS
      ", {%32, %33, %34, %35}, %36, p, 1, 1, %38;\n}\n"
      : D_OUT
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(scale_d), "n"(TRANS));
}

// One wgmma of the selector A against B through `desc` into d, zeroed first (K-major B).
__device__ inline void read_through(float* d, const Fragment& f, uint64_t desc, int scale_d) {
  uint32_t a[4];
  f.selector(a);
  for (int i = 0; i < 32; ++i) d[i] = 0.f;
  wgmma_fence();
  wgmma_rs<0>(d, a, desc, scale_d);
  wgmma_commit_and_wait();
}

// --- TMA: a 2-D box into shared memory, completed on an mbarrier --------------------

__device__ inline void mbarrier_init(uint32_t bar) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" ::"r"(bar));
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}

// One thread: `bytes` expected on `bar`, and the copy of the box at (0, 0) to `dst`.
__device__ inline void tma_load_box(uint32_t dst, const CUtensorMap* map, uint32_t bar,
                                    int bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes)
               : "memory");
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%2, %3}], [%4];\n" ::"r"(dst),
      "l"(map), "r"(0), "r"(0), "r"(bar)
      : "memory");
}

__device__ inline void mbarrier_wait(uint32_t bar) {
  asm volatile(
      "{\n.reg .pred done;\nwait:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], 0;\n"
      "@!done bra wait;\n}\n" ::"r"(bar)
      : "memory");
}

// The tensor map of a 2-D tensor of `rows` rows of `inner` 16-bit elements, copied as one
// box, swizzled by `span` bytes (128, 64, 32; 0: none); nullptr, or why it failed.
inline const char* encode_box(CUtensorMap* map, CUtensorMapDataType type, void* global,
                              int inner, int rows, int span) {
  static char why[64];
  CUtensorMapSwizzle swizzle = span == 128  ? CU_TENSOR_MAP_SWIZZLE_128B
                               : span == 64 ? CU_TENSOR_MAP_SWIZZLE_64B
                               : span == 32 ? CU_TENSOR_MAP_SWIZZLE_32B
                                            : CU_TENSOR_MAP_SWIZZLE_NONE;
  cuuint64_t dims[2] = {cuuint64_t(inner), cuuint64_t(rows)}, strides[1] = {cuuint64_t(2 * inner)};
  cuuint32_t box[2] = {cuuint32_t(inner), cuuint32_t(rows)}, estrides[2] = {1, 1};
  // The driver's entry point, looked up at run time: no -lcuda.
  void* entry = nullptr;
  cudaDriverEntryPointQueryResult found;
  if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &entry, 12000, cudaEnableDefault,
                                       &found) != cudaSuccess ||
      found != cudaDriverEntryPointSuccess)
    return "no cuTensorMapEncodeTiled";
  auto encode = reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(entry);
  CUresult r = encode(map, type, 2, global, dims, strides, box, estrides,
                      CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle, CU_TENSOR_MAP_L2_PROMOTION_NONE,
                      CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r == CUDA_SUCCESS) return nullptr;
  snprintf(why, sizeof why, "cuTensorMapEncodeTiled %d", int(r));
  return why;
}

// --- launch and read back -----------------------------------------------------------

// `kernel` on one CTA of 128 threads with `smem` bytes of dynamic shared memory, waited
// for: its first error, or cudaSuccess.
template <typename... Params, typename... Args>
cudaError_t launch_one_cta(void (*kernel)(Params...), int smem, Args... args) {
  cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  if (e != cudaSuccess) return e;
  kernel<<<1, 128, smem>>>(args...);
  e = cudaDeviceSynchronize();
  return e == cudaSuccess ? cudaGetLastError() : e;
}

// `bytes` from the device to the host, or exit 1 saying why.
inline void read_back(void* host, const void* device, size_t bytes) {
  CHECK(cudaMemcpy(host, device, bytes, cudaMemcpyDeviceToHost));
}
