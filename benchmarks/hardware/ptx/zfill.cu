// cp.async with and without a src-size operand (zero-fill), one warp, one copy per
// source line: does the src-size form cost more shared wavefronts (tail_dynamic:264
// measured 16 over 2 warp instructions where the plain form costs 4 per warp)?
// Every copy moves lane l's 16 (or 4) bytes from in + 16 l to dst + 16 l unless said.
//   zfill OUT_UNUSED      (measure_zfill.sh runs it under ncu)
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>

#define CG(dst, src) asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(dst), "l"(src))
#define CGZ(dst, src, n) \
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(dst), "l"(src), "r"(n))
#define CGZI(dst, src) asm volatile("cp.async.cg.shared.global [%0], [%1], 16, 16;" ::"r"(dst), "l"(src))
#define CAZ(dst, src, n) \
  asm volatile("cp.async.ca.shared.global [%0], [%1], 16, %2;" ::"r"(dst), "l"(src), "r"(n))
#define CA4(dst, src) asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" ::"r"(dst), "l"(src))
#define CA4Z(dst, src, n) \
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;" ::"r"(dst), "l"(src), "r"(n))
#define WAIT() asm volatile("cp.async.commit_group;\ncp.async.wait_group 0;" ::: "memory")

// sizes[k * 32 + lane]: the src-size of copy k for each lane (runtime, so never folded)
__global__ void zfill_copies(const float *in, const int *sizes, float *out) {
  __shared__ __align__(128) float buf[2048];
  int lane = threadIdx.x;
  uint32_t d = static_cast<uint32_t>(__cvta_generic_to_shared(buf)) + 16 * lane;
  uint32_t dx = static_cast<uint32_t>(__cvta_generic_to_shared(buf)) + 16 * (lane ^ 1);
  const float *s = in + 4 * lane;
  CG(d, s); WAIT();                         // plain
  CGZ(d, s, sizes[0 * 32 + lane]); WAIT();  // src-size 16 in every lane
  CGZI(d, s); WAIT();                       // src-size the immediate 16
  CGZ(d, s, sizes[1 * 32 + lane]); WAIT();  // src-size 0 in every lane
  CGZ(d, s, sizes[2 * 32 + lane]); WAIT();  // src-size 8 in every lane
  CGZ(d, s, sizes[3 * 32 + lane]); WAIT();  // 16 in lanes 0-17, 0 in 18-31 (the tail)
  CGZ(d, s, sizes[4 * 32 + lane]); WAIT();  // 16 in lanes 0-15, 0 in 16-31
  CAZ(d, s, sizes[0 * 32 + lane]); WAIT();  // .ca with src-size 16
  CGZ(dx, s, sizes[0 * 32 + lane]); WAIT(); // src-size 16, neighbours swapped
  CG(dx, s); WAIT();                        // plain, neighbours swapped
  uint32_t d4 = static_cast<uint32_t>(__cvta_generic_to_shared(buf)) + 4 * lane;
  CA4(d4, in + lane); WAIT();               // 4 bytes plain
  CA4Z(d4, in + lane, sizes[5 * 32 + lane]); WAIT();  // 4 bytes, src-size 4
  CG(d, s); WAIT();                         // plain again (control)
  __syncthreads();
  out[lane] = buf[lane * 4];
}

int main() {
  float *in, *out;
  int *sizes;
  int h[6 * 32];
  for (int l = 0; l < 32; ++l) {
    h[0 * 32 + l] = 16;
    h[1 * 32 + l] = 0;
    h[2 * 32 + l] = 8;
    h[3 * 32 + l] = l < 18 ? 16 : 0;
    h[4 * 32 + l] = l < 16 ? 16 : 0;
    h[5 * 32 + l] = 4;
  }
  cudaMalloc(&in, 1 << 16);
  cudaMalloc(&out, 1 << 12);
  cudaMalloc(&sizes, sizeof h);
  cudaMemcpy(sizes, h, sizeof h, cudaMemcpyHostToDevice);
  zfill_copies<<<1, 32>>>(in, sizes, out);
  cudaError_t err = cudaDeviceSynchronize();
  printf("zfill: %s\n", cudaGetErrorString(err));
  return err != cudaSuccess;
}
