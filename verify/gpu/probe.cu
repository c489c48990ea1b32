// verify's GPU probe: runs ONE shared-memory instruction per kernel launch, at the
// per-lane byte offsets the host gives, so that Nsight Compute can count its
// wavefronts and the host can check which bytes reached which register.
//
//   probe info                      prints "smem_base <window address> sm <major>.<minor>"
//   probe run CASES OUT             runs every case of CASES, writes OUT (binary)
//
// CASES (text): first the number of cases, then one case per line:
//   OP MODE DUMP_BYTES FILL OFF0 .. OFF31 [SRC0 .. SRC31] [NFILL BYTE TAG16 ...]
// OP is a name from OP_NAMES; MODE is a bit set: 1 = launch measure_kernel (one
// instruction and nothing else, what ncu should count), 2 = launch data_kernel
// (fill shared memory, run the instruction, return registers and shared memory),
// 4 = launch timing_kernel (the instruction TIMING_REPS times between two clock64
// reads: the fallback when ncu is not available), 8 = the 32 global source byte
// offsets SRC0..SRC31 of cp.async follow (without it lane l copies from 16*l).
// FILL 0 writes halfword i = i + 1 over the buffer; FILL 1 writes 0xFFFF then the
// NFILL (byte offset, 16-bit tag) pairs that follow.
// OUT: for each case with MODE & 2: 32 lanes x 4 registers (uint32), then
// DUMP_BYTES bytes of shared memory from the start of the dynamic buffer; then for
// each case with MODE & 4: the elapsed cycles (int64).
//
// Registers are pre-loaded with tags before the instruction: register r of lane l
// holds halfwords (8l + 2r + 1, 8l + 2r + 2), so stores write recognisable data.
// cp.async copies 4/8/16 bytes from global byte SRC[lane] of a buffer whose byte j
// holds (j * 7 + 3) & 0xff: its shared-side cost depends on the source addresses too
// (benchmarks/results/hw_rules.md), so they are the test's to choose.
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CHECK(call)                                                             \
  do {                                                                          \
    cudaError_t err_ = (call);                                                  \
    if (err_ != cudaSuccess) {                                                  \
      fprintf(stderr, "probe: %s failed: %s\n", #call, cudaGetErrorString(err_)); \
      exit(3);                                                                  \
    }                                                                           \
  } while (0)

enum Op {
  LD8, LD16, LD32, LD64, LD128, ST8, ST16, ST32, ST64, ST128,
  LDSM1, LDSM2, LDSM4, LDSM1T, LDSM2T, LDSM4T,
  STSM1, STSM2, STSM4, STSM1T, STSM2T, STSM4T,
  CPA4, CPA8, CPA16, CPA16CA, NUM_OPS
};
static const char* OP_NAMES[NUM_OPS] = {
  "ld8", "ld16", "ld32", "ld64", "ld128", "st8", "st16", "st32", "st64", "st128",
  "ldsm1", "ldsm2", "ldsm4", "ldsm1t", "ldsm2t", "ldsm4t",
  "stsm1", "stsm2", "stsm4", "stsm1t", "stsm2t", "stsm4t",
  "cpa4", "cpa8", "cpa16", "cpa16ca"};

constexpr int SMEM_BYTES = 48 * 1024;  // the default dynamic limit: no opt-in needed
constexpr int SRC_BYTES = 64 * 1024;  // room for sources a line or more apart
constexpr int TIMING_REPS = 256;

__device__ __forceinline__ uint32_t reg_tag(int lane, int r) {
  uint32_t t = 8u * lane + 2u * r;
  return (t + 1u) | ((t + 2u) << 16);
}

template <int OP>
__device__ __forceinline__ void run_op(uint32_t a, const void* src, uint32_t (&r)[4]) {
  if constexpr (OP == LD8) asm volatile("ld.shared.u8 %0, [%1];" : "=r"(r[0]) : "r"(a) : "memory");
  if constexpr (OP == LD16) asm volatile("ld.shared.u16 %0, [%1];" : "=r"(r[0]) : "r"(a) : "memory");
  if constexpr (OP == LD32) asm volatile("ld.shared.u32 %0, [%1];" : "=r"(r[0]) : "r"(a) : "memory");
  if constexpr (OP == LD64)
    asm volatile("ld.shared.v2.u32 {%0, %1}, [%2];" : "=r"(r[0]), "=r"(r[1]) : "r"(a) : "memory");
  if constexpr (OP == LD128)
    asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(a) : "memory");
  if constexpr (OP == ST8) asm volatile("st.shared.u8 [%0], %1;" :: "r"(a), "r"(r[0]) : "memory");
  if constexpr (OP == ST16) asm volatile("st.shared.u16 [%0], %1;" :: "r"(a), "r"(r[0]) : "memory");
  if constexpr (OP == ST32) asm volatile("st.shared.u32 [%0], %1;" :: "r"(a), "r"(r[0]) : "memory");
  if constexpr (OP == ST64)
    asm volatile("st.shared.v2.u32 [%0], {%1, %2};" :: "r"(a), "r"(r[0]), "r"(r[1]) : "memory");
  if constexpr (OP == ST128)
    asm volatile("st.shared.v4.u32 [%0], {%1, %2, %3, %4};"
                 :: "r"(a), "r"(r[0]), "r"(r[1]), "r"(r[2]), "r"(r[3]) : "memory");
  if constexpr (OP == LDSM1)
    asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];" : "=r"(r[0]) : "r"(a) : "memory");
  if constexpr (OP == LDSM2)
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];"
                 : "=r"(r[0]), "=r"(r[1]) : "r"(a) : "memory");
  if constexpr (OP == LDSM4)
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(a) : "memory");
  if constexpr (OP == LDSM1T)
    asm volatile("ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16 {%0}, [%1];" : "=r"(r[0]) : "r"(a) : "memory");
  if constexpr (OP == LDSM2T)
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];"
                 : "=r"(r[0]), "=r"(r[1]) : "r"(a) : "memory");
  if constexpr (OP == LDSM4T)
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(a) : "memory");
#if __CUDA_ARCH__ >= 900
  if constexpr (OP == STSM1)
    asm volatile("stmatrix.sync.aligned.m8n8.x1.shared.b16 [%0], {%1};" :: "r"(a), "r"(r[0]) : "memory");
  if constexpr (OP == STSM2)
    asm volatile("stmatrix.sync.aligned.m8n8.x2.shared.b16 [%0], {%1, %2};"
                 :: "r"(a), "r"(r[0]), "r"(r[1]) : "memory");
  if constexpr (OP == STSM4)
    asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};"
                 :: "r"(a), "r"(r[0]), "r"(r[1]), "r"(r[2]), "r"(r[3]) : "memory");
  if constexpr (OP == STSM1T)
    asm volatile("stmatrix.sync.aligned.m8n8.x1.trans.shared.b16 [%0], {%1};" :: "r"(a), "r"(r[0]) : "memory");
  if constexpr (OP == STSM2T)
    asm volatile("stmatrix.sync.aligned.m8n8.x2.trans.shared.b16 [%0], {%1, %2};"
                 :: "r"(a), "r"(r[0]), "r"(r[1]) : "memory");
  if constexpr (OP == STSM4T)
    asm volatile("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1, %2, %3, %4};"
                 :: "r"(a), "r"(r[0]), "r"(r[1]), "r"(r[2]), "r"(r[3]) : "memory");
#endif
  if constexpr (OP == CPA4)
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n cp.async.wait_all;" :: "r"(a), "l"(src) : "memory");
  if constexpr (OP == CPA8)
    asm volatile("cp.async.ca.shared.global [%0], [%1], 8;\n cp.async.wait_all;" :: "r"(a), "l"(src) : "memory");
  if constexpr (OP == CPA16)
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n cp.async.wait_all;" :: "r"(a), "l"(src) : "memory");
  if constexpr (OP == CPA16CA)
    asm volatile("cp.async.ca.shared.global [%0], [%1], 16;\n cp.async.wait_all;" :: "r"(a), "l"(src) : "memory");
}

// Exactly one shared-memory instruction: the only shared traffic ncu should see.
template <int OP>
__global__ void measure_kernel(const uint32_t* offs, const uint8_t* src, uint32_t* regs_out) {
  extern __shared__ __align__(1024) uint8_t smem[];
  const int lane = threadIdx.x;
  uint32_t r[4] = {reg_tag(lane, 0), reg_tag(lane, 1), reg_tag(lane, 2), reg_tag(lane, 3)};
  const uint32_t a = static_cast<uint32_t>(__cvta_generic_to_shared(smem)) + offs[lane];
  run_op<OP>(a, src + offs[32 + lane], r);
  for (int k = 0; k < 4; ++k) regs_out[4 * lane + k] = r[k];
}

template <int OP>
__global__ void data_kernel(const uint32_t* offs, const uint8_t* init, const uint8_t* src,
                            uint32_t* regs_out, uint8_t* smem_out, int dump_bytes) {
  extern __shared__ __align__(1024) uint8_t smem[];
  const int lane = threadIdx.x;
  for (int i = lane; i < SMEM_BYTES; i += 32) smem[i] = init[i];
  __syncthreads();
  uint32_t r[4] = {reg_tag(lane, 0), reg_tag(lane, 1), reg_tag(lane, 2), reg_tag(lane, 3)};
  const uint32_t a = static_cast<uint32_t>(__cvta_generic_to_shared(smem)) + offs[lane];
  run_op<OP>(a, src + offs[32 + lane], r);
  __syncthreads();
  for (int k = 0; k < 4; ++k) regs_out[4 * lane + k] = r[k];
  for (int i = lane; i < dump_bytes; i += 32) smem_out[i] = smem[i];
}

// The instruction back to back, timed by the SM's cycle counter (lane 0 reports).
// Each address depends on the previous result through `zero` (0 at run time, unknown
// to the compiler), so ptxas cannot merge or drop repeated identical loads.
template <int OP>
__global__ void timing_kernel(const uint32_t* offs, const uint8_t* src, uint32_t* regs_out,
                              long long* cycles, uint32_t zero) {
  extern __shared__ __align__(1024) uint8_t smem[];
  const int lane = threadIdx.x;
  uint32_t r[4] = {reg_tag(lane, 0), reg_tag(lane, 1), reg_tag(lane, 2), reg_tag(lane, 3)};
  const uint32_t a = static_cast<uint32_t>(__cvta_generic_to_shared(smem)) + offs[lane];
  run_op<OP>(a, src + offs[32 + lane], r);  // warm-up
  __syncwarp();
  const long long start = clock64();
#pragma unroll 1
  for (int i = 0; i < TIMING_REPS; ++i) run_op<OP>(a + (r[0] & zero), src + offs[32 + lane], r);
  __syncwarp();
  const long long stop = clock64();
  if (lane == 0) cycles[0] = stop - start;
  for (int k = 0; k < 4; ++k) regs_out[4 * lane + k] = r[k];
}

__global__ void base_kernel(uint32_t* out) {
  extern __shared__ __align__(1024) uint8_t smem[];
  out[0] = static_cast<uint32_t>(__cvta_generic_to_shared(smem));
}

using MeasureFn = void (*)(const uint32_t*, const uint8_t*, uint32_t*);
using DataFn = void (*)(const uint32_t*, const uint8_t*, const uint8_t*, uint32_t*, uint8_t*, int);
using TimingFn = void (*)(const uint32_t*, const uint8_t*, uint32_t*, long long*, uint32_t);

template <int... OPS>
struct Table {
  static constexpr MeasureFn measure[] = {measure_kernel<OPS>...};
  static constexpr DataFn data[] = {data_kernel<OPS>...};
  static constexpr TimingFn timing[] = {timing_kernel<OPS>...};
};
using Ops = Table<LD8, LD16, LD32, LD64, LD128, ST8, ST16, ST32, ST64, ST128, LDSM1, LDSM2,
                  LDSM4, LDSM1T, LDSM2T, LDSM4T, STSM1, STSM2, STSM4, STSM1T, STSM2T, STSM4T,
                  CPA4, CPA8, CPA16, CPA16CA>;

static int op_index(const char* name) {
  for (int i = 0; i < NUM_OPS; ++i)
    if (strcmp(name, OP_NAMES[i]) == 0) return i;
  fprintf(stderr, "probe: unknown op '%s'\n", name);
  exit(2);
}

struct Case {
  int op = 0, mode = 0, dump = 0, fill = 0;
  uint32_t offs[64] = {};   // shared offsets, then cp.async's global source offsets
  std::vector<uint8_t> init;
};

static bool read_case(FILE* f, Case& c) {
  char name[32];
  if (fscanf(f, "%31s %d %d %d", name, &c.mode, &c.dump, &c.fill) != 4) return false;
  c.op = op_index(name);
  for (int l = 0; l < 32; ++l)
    if (fscanf(f, "%u", &c.offs[l]) != 1 || c.offs[l] + 16 > SMEM_BYTES) return false;
  for (int l = 0; l < 32; ++l) {
    c.offs[32 + l] = 16u * l;
    if ((c.mode & 8) && (fscanf(f, "%u", &c.offs[32 + l]) != 1 || c.offs[32 + l] + 16 > SRC_BYTES))
      return false;
  }
  if (c.dump < 0 || c.dump > SMEM_BYTES) return false;
  c.init.assign(SMEM_BYTES, 0xff);
  if (c.fill == 0) {
    for (int i = 0; i < SMEM_BYTES / 2; ++i) {
      c.init[2 * i] = (i + 1) & 0xff;
      c.init[2 * i + 1] = ((i + 1) >> 8) & 0xff;
    }
    return true;
  }
  int n = 0;
  if (fscanf(f, "%d", &n) != 1 || n < 0) return false;
  for (int k = 0; k < n; ++k) {
    unsigned byte = 0, tag = 0;
    if (fscanf(f, "%u %u", &byte, &tag) != 2 || byte + 2 > SMEM_BYTES) return false;
    c.init[byte] = tag & 0xff;
    c.init[byte + 1] = (tag >> 8) & 0xff;
  }
  return true;
}

static int info() {
  uint32_t* d_out;
  CHECK(cudaMalloc(&d_out, 4));
  base_kernel<<<1, 1, SMEM_BYTES>>>(d_out);
  CHECK(cudaGetLastError());
  uint32_t base = 0;
  CHECK(cudaMemcpy(&base, d_out, 4, cudaMemcpyDeviceToHost));
  int dev = 0, major = 0, minor = 0;
  CHECK(cudaGetDevice(&dev));
  CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
  CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev));
  printf("smem_base %u sm %d.%d\n", base, major, minor);
  return 0;
}

static int run(const char* cases_path, const char* out_path) {
  FILE* f = fopen(cases_path, "r");
  FILE* out = fopen(out_path, "wb");
  if (!f || !out) { fprintf(stderr, "probe: cannot open %s or %s\n", cases_path, out_path); return 2; }
  int n = 0;
  if (fscanf(f, "%d", &n) != 1 || n < 0) { fprintf(stderr, "probe: bad case count\n"); return 2; }
  uint32_t *d_offs, *d_regs;
  uint8_t *d_init, *d_src, *d_dump;
  long long* d_cycles;
  CHECK(cudaMalloc(&d_cycles, sizeof(long long)));
  CHECK(cudaMalloc(&d_offs, 64 * 4));
  CHECK(cudaMalloc(&d_regs, 128 * 4));
  CHECK(cudaMalloc(&d_init, SMEM_BYTES));
  CHECK(cudaMalloc(&d_dump, SMEM_BYTES));
  CHECK(cudaMalloc(&d_src, SRC_BYTES));
  std::vector<uint8_t> src(SRC_BYTES), dump(SMEM_BYTES);
  for (int j = 0; j < SRC_BYTES; ++j) src[j] = (j * 7 + 3) & 0xff;
  CHECK(cudaMemcpy(d_src, src.data(), SRC_BYTES, cudaMemcpyHostToDevice));
  uint32_t regs[128];
  Case c;
  for (int i = 0; i < n; ++i) {
    if (!read_case(f, c)) { fprintf(stderr, "probe: malformed case %d\n", i); return 2; }
    CHECK(cudaMemcpy(d_offs, c.offs, sizeof c.offs, cudaMemcpyHostToDevice));
    if (c.mode & 1) {
      Ops::measure[c.op]<<<1, 32, SMEM_BYTES>>>(d_offs, d_src, d_regs);
      CHECK(cudaGetLastError());
      CHECK(cudaDeviceSynchronize());
    }
    if (c.mode & 2) {
      CHECK(cudaMemcpy(d_init, c.init.data(), SMEM_BYTES, cudaMemcpyHostToDevice));
      Ops::data[c.op]<<<1, 32, SMEM_BYTES>>>(d_offs, d_init, d_src, d_regs, d_dump, c.dump);
      CHECK(cudaGetLastError());
      CHECK(cudaMemcpy(regs, d_regs, sizeof regs, cudaMemcpyDeviceToHost));
      CHECK(cudaMemcpy(dump.data(), d_dump, c.dump, cudaMemcpyDeviceToHost));
      fwrite(regs, 4, 128, out);
      fwrite(dump.data(), 1, c.dump, out);
    }
    if (c.mode & 4) {
      Ops::timing[c.op]<<<1, 32, SMEM_BYTES>>>(d_offs, d_src, d_regs, d_cycles, 0u);
      CHECK(cudaGetLastError());
      long long cycles = 0;
      CHECK(cudaMemcpy(&cycles, d_cycles, sizeof cycles, cudaMemcpyDeviceToHost));
      fwrite(&cycles, sizeof cycles, 1, out);
    }
  }
  fclose(f);
  fclose(out);
  return 0;
}

int main(int argc, char** argv) {
  if (argc == 2 && strcmp(argv[1], "info") == 0) return info();
  if (argc == 4 && strcmp(argv[1], "run") == 0) return run(argv[2], argv[3]);
  fprintf(stderr, "usage: probe info | probe run CASES OUT\n");
  return 2;
}
