// Where the dynamic shared memory (extern __shared__) starts in a CTA's shared
// window, with no static shared memory and with 16 and 200 bytes of it: the base
// verify.ptx.hopper checks wgmma placement at (docs/hopper.md). Prints one line
// per kernel: static bytes, the dynamic base's shared address, and that mod 1024.
#include <cstdio>

__device__ unsigned int where[3];
__device__ unsigned int sink[3];  // keeps the static arrays alive

__global__ void no_static() {
  extern __shared__ __align__(16) unsigned char smem[];
  if (threadIdx.x == 0) where[0] = static_cast<unsigned>(__cvta_generic_to_shared(smem));
}

__global__ void static_16() {
  extern __shared__ __align__(16) unsigned char smem[];
  __shared__ __align__(16) unsigned char pad[16];
  pad[threadIdx.x % 16] = threadIdx.x;
  __syncthreads();
  if (threadIdx.x == 0) {
    where[1] = static_cast<unsigned>(__cvta_generic_to_shared(smem));
    sink[1] = pad[5] + static_cast<unsigned>(__cvta_generic_to_shared(pad));
  }
}

__global__ void static_200() {
  extern __shared__ __align__(16) unsigned char smem[];
  __shared__ __align__(8) unsigned char pad[200];
  for (int i = threadIdx.x; i < 200; i += blockDim.x) pad[i] = i;
  __syncthreads();
  if (threadIdx.x == 0) {
    where[2] = static_cast<unsigned>(__cvta_generic_to_shared(smem));
    sink[2] = pad[199] + static_cast<unsigned>(__cvta_generic_to_shared(pad));
  }
}

int main() {
  no_static<<<1, 32, 4096>>>();
  static_16<<<1, 32, 4096>>>();
  static_200<<<1, 32, 4096>>>();
  unsigned int got[3], kept[3];
  if (cudaMemcpyFromSymbol(got, where, sizeof got) != cudaSuccess) return 1;
  if (cudaMemcpyFromSymbol(kept, sink, sizeof kept) != cudaSuccess) return 1;
  const int bytes[3] = {0, 16, 200};
  for (int i = 0; i < 3; ++i) printf("static %d: dynamic base %u, mod 1024 = %u (static at %u)\n", bytes[i], got[i],
                                 got[i] % 1024, i ? kept[i] - (i == 1 ? 5 : 199) : 0);
  return 0;
}
