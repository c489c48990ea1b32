// A triple-buffered cp.async loop with a mod-3 stage counter, a predicated tail
// and dynamic shared memory. Block 128; each stage is a 32x32 float tile.
#include <cstdint>

__device__ __forceinline__ void cp_async16(uint32_t dst, const void *src) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(src));
}

__global__ void __launch_bounds__(128) pipeline3(const float *in, float *out, int ktiles) {
  __shared__ __align__(128) float stages[3][32 * 32];
  int t = threadIdx.x;
  int stage = 0;
  float acc = 0.f;
  for (int k = 0; k < ktiles; ++k) {
    // 32x32 floats = 256 chunks of 16 bytes: two per thread
    for (int c = 0; c < 2; ++c) {
      int chunk = t + 128 * c;
      uint32_t dst = static_cast<uint32_t>(__cvta_generic_to_shared(&stages[stage][chunk * 4]));
      cp_async16(dst, in + (size_t)k * 1024 + chunk * 4);
    }
    asm volatile("cp.async.commit_group;\n" ::);
    asm volatile("cp.async.wait_group 0;\n" ::);
    __syncthreads();
    acc += stages[stage][(t % 32) * 32 + t / 32];
    __syncthreads();
    stage = stage + 1 == 3 ? 0 : stage + 1;
  }
  out[blockIdx.x * 128 + t] = acc;
}

__global__ void __launch_bounds__(256) tail_dynamic(const float *in, float *out, int n) {
  extern __shared__ __align__(16) float buf[];
  int i = blockIdx.x * 256 + threadIdx.x;
  if (threadIdx.x < 200)
    buf[threadIdx.x] = in[i];
  __syncthreads();
  if (threadIdx.x < 200)
    out[i] = buf[199 - threadIdx.x];
}
