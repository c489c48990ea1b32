// A 64x64 fp16 tile in shared memory under CuTe's Sw<3,3,3> (16-byte chunks XOR the
// row mod 8), stored with 128-bit stores and read with ldmatrix.x4. Block 128.
#include <cstdint>

__device__ __forceinline__ uint32_t swizzle(uint32_t row, uint32_t col) {
  // element offset of (row, col) in a 64-wide row, chunk index XOR (row % 8)
  uint32_t chunk = (col >> 3) ^ (row & 7);
  return row * 64 + chunk * 8 + (col & 7);
}

__global__ void __launch_bounds__(128) ldmatrix_sw333(const uint4 *in, uint32_t *out) {
  __shared__ __align__(128) uint16_t tile[64 * 64];
  int t = threadIdx.x;
  // each thread stores 4 chunks of 8 halves: rows t/8 + 16*k, chunk t%8
  for (int k = 0; k < 4; ++k) {
    uint32_t row = t / 8 + 16 * k, col = (t % 8) * 8;
    *reinterpret_cast<uint4 *>(&tile[swizzle(row, col)]) = in[t + 128 * k];
  }
  __syncthreads();
  int lane = t % 32, warp = t / 32;
  uint32_t acc = 0;
  for (int kk = 0; kk < 4; ++kk) {
    uint32_t row = warp * 16 + (lane % 16), col = kk * 16 + (lane / 16) * 8;
    uint32_t addr = static_cast<uint32_t>(__cvta_generic_to_shared(&tile[swizzle(row, col)]));
    uint32_t r0, r1, r2, r3;
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3) : "r"(addr));
    acc ^= r0 ^ r1 ^ r2 ^ r3;
  }
  out[t] = acc;
}
