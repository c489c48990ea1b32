// Hand-written kernels for checking a PTX reader against the H200 (issue 24, item 5).
//
// Every kernel runs as ONE block (grid 1) and records, for each shared-memory access
// it makes, the shared address it uses: rec[(site * MAX_INST + instance) * nthreads +
// thread] = address (threads that do not execute the access leave 0xffffffff). A
// cp.async also records its global source as a byte offset from `in`. The host
// (runner.cu) writes these records as text; the PTX interpreter
// (oracle/ptx_interpreter.py) must produce the same addresses from the PTX alone. Each
// REC sits on the line of the access it records (its statement may start a line or
// two above), so .loc lines pair recorded sites with PTX instructions.
//
// Build (build.sh): nvcc -arch=sm_90 -lineinfo -keep; measured under Nsight Compute's
// source page (measure.sh).
#include <cstdint>

#define MAX_INST 16
#define REC(site, inst, value) \
  rec[((site) * MAX_INST + (inst)) * nthreads + tid] = (uint32_t)(value)
#define SETUP                                                          \
  const int tid = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z); \
  const int nthreads = blockDim.x * blockDim.y * blockDim.z;           \
  (void)nthreads

__device__ __forceinline__ uint32_t smem_addr(const void *p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// ---- transposes: block (32, 8), a 32x32 float tile, each thread 4 rows ----------
__global__ void transpose_unpadded(const float *in, float *out, uint32_t *rec) {
  SETUP;
  __shared__ float tile[32][32];
  int x = threadIdx.x, y = threadIdx.y;
  for (int j = 0; j < 32; j += 8) {
    tile[y + j][x] = in[(y + j) * 32 + x]; REC(0, j / 8, smem_addr(&tile[y + j][x]));
  }
  __syncthreads();
  for (int j = 0; j < 32; j += 8) {
    out[(y + j) * 32 + x] = tile[x][y + j]; REC(1, j / 8, smem_addr(&tile[x][y + j]));
  }
}

__global__ void transpose_padded(const float *in, float *out, uint32_t *rec) {
  SETUP;
  __shared__ float tile[32][33];
  int x = threadIdx.x, y = threadIdx.y;
  for (int j = 0; j < 32; j += 8) {
    tile[y + j][x] = in[(y + j) * 32 + x]; REC(0, j / 8, smem_addr(&tile[y + j][x]));
  }
  __syncthreads();
  for (int j = 0; j < 32; j += 8) {
    out[(y + j) * 32 + x] = tile[x][y + j]; REC(1, j / 8, smem_addr(&tile[x][y + j]));
  }
}

// Column c of row r lives at column c ^ r: both the row writes and the column reads
// touch 32 distinct banks.
__global__ void transpose_xor(const float *in, float *out, uint32_t *rec) {
  SETUP;
  __shared__ float tile[32][32];
  int x = threadIdx.x, y = threadIdx.y;
  for (int j = 0; j < 32; j += 8) {
    int r = y + j;
    tile[r][x ^ r] = in[r * 32 + x]; REC(0, j / 8, smem_addr(&tile[r][x ^ r]));
  }
  __syncthreads();
  for (int j = 0; j < 32; j += 8) {
    int r = y + j;
    out[r * 32 + x] = tile[x][r ^ x]; REC(1, j / 8, smem_addr(&tile[x][r ^ x]));
  }
}

// ---- ldmatrix: block 32, a 64x64 half tile (128-byte rows) ----------------------
// Lane l gives the row address of row l % 8 of matrix l / 8; matrix i of x4 is the
// 8x8 block at (rows 8*(i%2).., columns 8*(i/2)..), as mma's A fragments use them.
__device__ __forceinline__ uint32_t half_offset(int row, int col) { return row * 64 + col; }

// CuTe's Swizzle<3,3,3> on half-element offsets: bits 6..8 xor'ed into bits 3..5.
__device__ __forceinline__ uint32_t sw333(uint32_t x) { return x ^ ((x >> 3) & 0x38); }

template <bool SWIZZLE>
__device__ void ldmatrix_tiles(uint32_t *out, uint32_t *rec, int tid, int nthreads,
                               uint16_t *tile) {
  int lane = tid % 32;
  int row = (lane % 8) + 8 * ((lane / 8) % 2);
  int col = 8 * (lane / 16);
  uint32_t e = half_offset(row, col);
  uint32_t a = smem_addr(tile) + 2 * (SWIZZLE ? sw333(e) : e);
  uint32_t r0, r1, r2, r3;
  asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];\n" : "=r"(r0) : "r"(a)); REC(0, 0, a);
  out[tid * 16 + 0] = r0;
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];\n"
               : "=r"(r0), "=r"(r1) : "r"(a)); REC(1, 0, a);
  out[tid * 16 + 1] = r0 + r1;
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3) : "r"(a)); REC(2, 0, a);
  out[tid * 16 + 2] = r0 + r1 + r2 + r3;
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3) : "r"(a)); REC(3, 0, a);
  out[tid * 16 + 3] = r0 + r1 + r2 + r3;
  // the second k-step: columns 16.. (each lane's address moves 32 bytes, then swizzled)
  uint32_t e2 = half_offset(row, col + 16);
  uint32_t a2 = smem_addr(tile) + 2 * (SWIZZLE ? sw333(e2) : e2);
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];\n"
               : "=r"(r0), "=r"(r1) : "r"(a2)); REC(4, 0, a2);
  out[tid * 16 + 4] = r0 + r1;
}

__global__ void ldmatrix_plain(const uint16_t *in, uint32_t *out, uint32_t *rec) {
  SETUP;
  __shared__ __align__(128) uint16_t tile[64 * 64];
  for (int i = tid; i < 64 * 64; i += nthreads) tile[i] = in[i];
  __syncthreads();
  ldmatrix_tiles<false>(out, rec, tid, nthreads, tile);
}

__global__ void ldmatrix_sw333(const uint16_t *in, uint32_t *out, uint32_t *rec) {
  SETUP;
  __shared__ __align__(128) uint16_t tile[64 * 64];
  for (int i = tid; i < 64 * 64; i += nthreads) tile[i] = in[i];
  __syncthreads();
  ldmatrix_tiles<true>(out, rec, tid, nthreads, tile);
}

// ---- vector loads and stores: block 32 --------------------------------------------
// Each width at a contiguous address (ideal) and at twice its width apart (2-way).
__global__ void vector_ldst(const uint32_t *in, uint32_t *out, uint32_t *rec) {
  SETUP;
  __shared__ __align__(16) uint32_t buf[2048];
  int lane = tid;
  uint32_t a, v0 = in[lane], v1 = in[lane + 32], v2 = in[lane + 64], v3 = in[lane + 96];
  uint32_t base = smem_addr(buf);
  uint64_t d0 = v0, d1 = v1;
  // 64-bit: st.shared.v2.u32 contiguous, ld.shared.u64 strided
  a = base + 8 * lane;
  asm volatile("st.shared.v2.u32 [%0], {%1, %2};\n" ::"r"(a), "r"(v0), "r"(v1) : "memory"); REC(0, 0, a);
  a = base + 16 * lane;
  asm volatile("ld.shared.u64 %0, [%1];\n" : "=l"(d0) : "r"(a) : "memory"); REC(1, 0, a);
  // 128-bit: st.shared.v4.u32 contiguous, ld.shared.v4.u32 strided by 32 bytes
  a = base + 16 * lane;
  asm volatile("st.shared.v4.u32 [%0], {%1, %2, %3, %4};\n" ::"r"(a), "r"(v0), "r"(v1),
               "r"(v2), "r"(v3) : "memory"); REC(2, 0, a);
  a = base + 32 * lane;
  asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(v0), "=r"(v1), "=r"(v2), "=r"(v3) : "r"(a) : "memory"); REC(3, 0, a);
  // 128-bit as two 64-bit elements: v2.u64, contiguous and strided by 32 bytes
  a = base + 16 * lane;
  asm volatile("st.shared.v2.u64 [%0], {%1, %2};\n" ::"r"(a), "l"(d0), "l"(d1) : "memory"); REC(4, 0, a);
  a = base + 32 * lane;
  asm volatile("ld.shared.v2.u64 {%0, %1}, [%2];\n" : "=l"(d0), "=l"(d1) : "r"(a) : "memory"); REC(5, 0, a);
  // 64-bit as v2.u32 loads, strided by 16 bytes (2-way), and 32-bit at stride 8 bytes
  a = base + 16 * lane;
  asm volatile("ld.shared.v2.u32 {%0, %1}, [%2];\n" : "=r"(v2), "=r"(v3) : "r"(a) : "memory"); REC(6, 0, a);
  a = base + 8 * lane;
  asm volatile("ld.shared.u32 %0, [%1];\n" : "=r"(v1) : "r"(a) : "memory"); REC(7, 0, a);
  out[lane] = v0 + v1 + v2 + v3 + (uint32_t)d0 + (uint32_t)d1;
}

// ---- cp.async pipelines: block 128, stages of 32x32 floats (4 KB) ---------------
// Macros, not functions: a macro's PTX carries the caller's source line (.loc), so each
// copy is attributed to the line that records it.
#define CP_ASYNC_CG16(dst, src) \
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(src))
#define CP_ASYNC_CA8(dst, src) \
  asm volatile("cp.async.ca.shared.global [%0], [%1], 8;\n" ::"r"(dst), "l"(src))
#define CP_ASYNC_WAIT_ALL() \
  asm volatile("cp.async.commit_group;\ncp.async.wait_group 0;\n" ::: "memory")

// Double buffering: stage ^= 1; each thread copies two 16-byte chunks per tile and
// reads a transposed element (a 32-way conflict) after the copy lands.
__global__ void pipeline_double(const float *in, float *out, int ktiles, uint32_t *rec) {
  SETUP;
  __shared__ __align__(128) float stages[2][32 * 32];
  int stage = 0;
  float acc = 0.f;
  for (int k = 0; k < ktiles; ++k) {
    for (int c = 0; c < 2; ++c) {
      int chunk = tid + 128 * c;
      uint32_t dst = smem_addr(&stages[stage][chunk * 4]);
      const float *src = in + k * 1024 + chunk * 4;
      CP_ASYNC_CG16(dst, src); REC(2 * c, k, dst); REC(2 * c + 1, k, (const char *)src - (const char *)in);
    }
    CP_ASYNC_WAIT_ALL();
    __syncthreads();
    acc += stages[stage][(tid % 32) * 32 + tid / 32]; REC(4, k, smem_addr(&stages[stage][(tid % 32) * 32 + tid / 32]));
    __syncthreads();
    stage ^= 1;
  }
  out[tid] = acc;
}

// Triple buffering with the stage counter stage = (stage + 1) % 3 and 8-byte .ca
// copies of a row-major tile read back as a padded-free row (ideal).
__global__ void pipeline_triple_mod(const float *in, float *out, int ktiles, uint32_t *rec) {
  SETUP;
  __shared__ __align__(128) float stages[3][32 * 32];
  int stage = 0;
  float acc = 0.f;
  for (int k = 0; k < ktiles; ++k) {
    for (int c = 0; c < 4; ++c) {
      int pair = tid + 128 * c;  // 512 pairs of floats
      uint32_t dst = smem_addr(&stages[stage][pair * 2]);
      const float *src = in + k * 1024 + pair * 2;
      CP_ASYNC_CA8(dst, src); REC(2 * c, k, dst); REC(2 * c + 1, k, (const char *)src - (const char *)in);
    }
    CP_ASYNC_WAIT_ALL();
    __syncthreads();
    acc += stages[stage][tid * 8]; REC(8, k, smem_addr(&stages[stage][tid * 8]));
    __syncthreads();
    stage = (stage + 1) % 3;
  }
  out[tid] = acc;
}

// Two 8 KB stages addressed as (k << 13) & 8192 bytes, in dynamic shared memory;
// 64x32 floats per stage, stored XOR-swizzled by 16-byte chunk: chunk c of row r at
// c ^ (r % 8).
__global__ void pipeline_shift(const float *in, float *out, int ktiles, uint32_t *rec) {
  SETUP;
  extern __shared__ __align__(128) unsigned char dyn[];
  uint32_t base = smem_addr(dyn);
  float acc = 0.f;
  for (int k = 0; k < ktiles; ++k) {
    uint32_t stage_off = (k << 13) & 8192;
    for (int c = 0; c < 4; ++c) {
      int chunk = tid + 128 * c;  // 512 chunks: 64 rows x 8 chunks
      int r = chunk / 8, q = chunk % 8;
      uint32_t dst = base + stage_off + r * 128 + ((q ^ (r % 8)) * 16);
      const float *src = in + k * 2048 + chunk * 4;
      CP_ASYNC_CG16(dst, src); REC(2 * c, k, dst); REC(2 * c + 1, k, (const char *)src - (const char *)in);
    }
    CP_ASYNC_WAIT_ALL();
    __syncthreads();
    int r = tid / 2, q = tid % 2;
    uint32_t a = base + stage_off + r * 128 + ((q ^ (r % 8)) * 16);
    float4 v;
    asm volatile("ld.shared.v4.f32 {%0, %1, %2, %3}, [%4];\n"
                 : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "r"(a)); REC(8, k, a);
    acc += v.x + v.y + v.z + v.w;
    __syncthreads();
  }
  out[tid] = acc;
}

// ---- predicated tails and dynamic shared memory: block 256 ----------------------
// Threads >= n do nothing; the rest store then read back reversed. The copy of the
// tail goes through cp.async with a zero-fill source size (the chunk past n reads 0).
__global__ void tail_dynamic(const float *in, float *out, int n, uint32_t *rec) {
  SETUP;
  extern __shared__ __align__(16) float buf[];
  if (tid < n) {
    buf[tid] = in[tid]; REC(0, 0, smem_addr(&buf[tid]));
  }
  __syncthreads();
  if (tid < n) {
    out[tid] = buf[n - 1 - tid]; REC(1, 0, smem_addr(&buf[n - 1 - tid]));
  }
  // cp.async with src-size: chunk tid of 64 copies min(16, bytes left) and zero-fills
  if (tid < 64) {
    int left = 4 * n - 16 * tid;
    int bytes = left <= 0 ? 0 : (left >= 16 ? 16 : left);
    uint32_t dst = smem_addr(&buf[256 + tid * 4]);
    const float *src = in + tid * 4;
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src),
                 "r"(bytes)); REC(2, 0, dst); REC(3, 0, (const char *)src - (const char *)in);
    CP_ASYNC_WAIT_ALL();
  }
  __syncthreads();
  out[256 + tid] = buf[256 + tid]; REC(4, 0, smem_addr(&buf[256 + tid]));
}
