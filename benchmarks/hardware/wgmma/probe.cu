// What wgmma reads through a matrix descriptor, and what the reads cost, on sm_90a.
//
// One warpgroup runs wgmma.mma_async.m64n64k16.f32.f16.f16 with A in registers
// and B (64 n x 16 k) read from shared memory through a descriptor built at run
// time from a configuration (swizzle mode, start offset from a 4096-aligned
// base, LBO, SBO, base offset, transpose immediate).
//
// map mode: shared memory holds, at half-word h (from the aligned base), h % 1024
// in one launch and h / 1024 in another; A is the selector A[m][k] = (k == m % 16),
// so D[m][n] = B[m % 16][n] is the half-word wgmma read for B element (n, k = m % 16):
// the read map, printed as byte offsets, row n major, k minor, checked to agree over
// the four m that select each k.
// count mode: the same kernels, launched for Nsight Compute, whose counter
// l1tex__data_pipe_lsu_wavefronts_mem_shared_op_gmma counts the wavefronts of the
// operand reads; each launch is listed (config, A in registers or shared, repeats).
//
// Build: nvcc -arch=sm_90a -O2 -o probe probe.cu
// Run:   ./probe map > maps.txt; ./probe count launches.txt (under ncu, run.sh)
#include <cstring>

#include "wgmma_probe.cuh"

constexpr int N = 64;
constexpr int REGION = 64 * 1024;          // bytes filled, from the aligned base
constexpr int SMEM_BYTES = REGION + 4096;  // room to align the base to 4096

struct Config {
  const char* name;
  int trans, mode, start, lbo, sbo, base_offset;
  int extra;  // also counted with A from shared memory and with 4 repeats
};

// Swizzle mode by PTX encoding: 0 none, 1 128B, 2 64B, 3 32B.
static const Config CONFIGS[] = {
    // CUTLASS's canonical descriptors (tests/data/hopper/gmma_desc_oracle.txt.gz), B 64x16.
    {"K_SW128", 0, 1, 0, 16, 1024, 0, 1},
    {"K_SW128_kb1", 0, 1, 32, 16, 1024, 0, 0},
    {"K_SW128_kb3", 0, 1, 96, 16, 1024, 0, 0},
    {"K_SW64", 0, 2, 0, 16, 512, 0, 1},
    {"K_SW64_kb1", 0, 2, 32, 16, 512, 0, 0},
    {"K_SW32", 0, 3, 0, 16, 256, 0, 1},
    {"K_INTER", 0, 0, 0, 1024, 128, 0, 1},
    {"MN_SW128", 1, 1, 0, 0, 1024, 0, 1},
    {"MN_SW64", 1, 2, 0, 512, 1024, 0, 1},
    {"MN_SW32", 1, 3, 0, 256, 1024, 0, 1},
    {"MN_INTER", 1, 0, 0, 1024, 128, 0, 1},
    // Legal, not canonical: strides and starts CUTLASS never emits.
    {"K_INTER_lbo128_sbo256", 0, 0, 0, 128, 256, 0, 0},
    {"K_INTER_lbo2048_sbo128", 0, 0, 0, 2048, 128, 0, 0},
    {"K_INTER_lbo128_sbo1024", 0, 0, 0, 128, 1024, 0, 0},
    {"K_INTER_sbo144", 0, 0, 0, 2048, 144, 0, 0},
    {"K_INTER_start16", 0, 0, 16, 1024, 128, 0, 0},
    {"K_INTER_start64", 0, 0, 64, 1024, 128, 0, 0},
    {"K_INTER_lbo64_sbo256", 0, 0, 0, 64, 256, 0, 0},
    {"K_SW128_sbo2048", 0, 1, 0, 16, 2048, 0, 0},
    {"K_SW128_start16", 0, 1, 16, 16, 1024, 0, 0},
    {"K_SW128_sbo1040", 0, 1, 0, 16, 1040, 0, 0},
    {"K_SW64_sbo1024", 0, 2, 0, 16, 1024, 0, 0},
    {"K_SW32_sbo1024", 0, 3, 0, 16, 1024, 0, 0},
    {"K_SW32_sbo128", 0, 3, 0, 16, 128, 0, 0},
    {"MN_INTER_sbo256_lbo128", 1, 0, 0, 128, 256, 0, 0},
    {"MN_INTER_sbo144", 1, 0, 0, 2048, 144, 0, 0},
    {"MN_SW64_lbo2048", 1, 2, 0, 2048, 1024, 0, 0},
    {"MN_SW128_sbo2048", 1, 1, 0, 0, 2048, 0, 0},
    // A layout written for one mode, read with another (the data is irrelevant to cost).
    {"K_SW128_tile_read_SW32", 0, 3, 0, 16, 1024, 0, 0},
    {"K_SW128_tile_read_none", 0, 0, 0, 16, 1024, 0, 0},
    // Start off the pattern boundary, with and without the base offset.
    {"K_SW128_start128_bo0", 0, 1, 128, 16, 1024, 0, 0},
    {"K_SW128_start128_bo1", 0, 1, 128, 16, 1024, 1, 0},
    {"K_SW128_start128_bo3", 0, 1, 128, 16, 1024, 3, 0},
    {"K_SW128_start512_bo0", 0, 1, 512, 16, 1024, 0, 0},
    {"K_SW128_start512_bo4", 0, 1, 512, 16, 1024, 4, 0},
    {"K_SW128_start0_bo2", 0, 1, 0, 16, 1024, 2, 0},
    {"K_SW64_start128_bo0", 0, 2, 128, 16, 512, 0, 0},
    {"K_SW64_start128_bo1", 0, 2, 128, 16, 512, 1, 0},
    {"K_SW32_start128_bo0", 0, 3, 128, 16, 256, 0, 0},
    {"K_SW32_start128_bo1", 0, 3, 128, 16, 256, 1, 0},
    {"MN_SW128_start128_bo1", 1, 1, 128, 0, 1024, 1, 0},
    {"K_INTER_start128_bo1", 0, 0, 128, 1024, 128, 1, 0},
};
constexpr int NCONFIGS = sizeof(CONFIGS) / sizeof(CONFIGS[0]);

template <int TRANS>
__device__ void wgmma_ss(float* d, uint64_t desc_a, uint64_t desc_b) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 " D_REGS
      ", %32, %33, p, 1, 1, %35, %35;\n}\n"
      : D_OUT
      : "l"(desc_a), "l"(desc_b), "r"(1), "n"(TRANS));
}

template <int TRANS, bool A_SMEM>
__global__ void __launch_bounds__(128)
    probe(int mode, int start_off, int lbo, int sbo, int bo, int fill, int reps, float* out,
          uint32_t* base_out) {
  extern __shared__ __align__(16) unsigned char smem[];
  uint32_t raw = static_cast<uint32_t>(__cvta_generic_to_shared(smem));
  uint32_t base = (raw + 4095u) & ~4095u;
  __half* h = reinterpret_cast<__half*>(smem + (base - raw));
  for (int i = threadIdx.x; i < REGION / 2; i += 128)
    h[i] = __int2half_rn(fill == 0 ? i % 1024 : i / 1024);
  // The generic proxy wrote what the async proxy (wgmma) reads.
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
  __syncthreads();

  uint64_t desc = matrix_descriptor(base + start_off, lbo, sbo, bo, mode);
  Fragment f;
  uint32_t a[4];
  f.selector(a);
  float d[32];
  for (int i = 0; i < 32; ++i) d[i] = 0.f;
  wgmma_fence();
  for (int r = 0; r < reps; ++r) {
    if (A_SMEM)
      wgmma_ss<TRANS>(d, desc, desc);
    else
      wgmma_rs<TRANS>(d, a, desc, 1);
  }
  wgmma_commit_and_wait();
  for (int i = 0; i < 32; ++i) out[f.row(i) * N + f.col(i)] = d[i];
  if (threadIdx.x == 0) *base_out = base;
}

template <int TRANS, bool A_SMEM>
void launch(const Config& c, int fill, int reps, float* out, uint32_t* base) {
  CHECK(launch_one_cta(probe<TRANS, A_SMEM>, SMEM_BYTES, c.mode, c.start, c.lbo, c.sbo,
                       c.base_offset, fill, reps, out, base));
}

void run(const Config& c, bool a_smem, int fill, int reps, float* out, uint32_t* base) {
  if (c.trans)
    a_smem ? launch<1, true>(c, fill, reps, out, base) : launch<1, false>(c, fill, reps, out, base);
  else
    a_smem ? launch<0, true>(c, fill, reps, out, base) : launch<0, false>(c, fill, reps, out, base);
}

// Read map of one configuration: "map NAME base=B addr..." (n major, k minor), or
// "bad NAME ..." where the four selecting rows disagree or a value is not an integer.
void print_map(const Config& c, float* out, uint32_t* base) {
  static float lo[64 * N], hi[64 * N];
  uint32_t b = 0;
  run(c, false, 0, 1, out, base);
  read_back(lo, out, sizeof lo);
  run(c, false, 1, 1, out, base);
  read_back(hi, out, sizeof hi);
  read_back(&b, base, sizeof b);
  printf("map %s base=%u", c.name, b);
  for (int n = 0; n < N; ++n)
    for (int k = 0; k < 16; ++k) {
      long half = -1;
      for (int m = k; m < 64; m += 16) {
        float l = lo[m * N + n], u = hi[m * N + n];
        long v = long(u) * 1024 + long(l);
        if (l != float(long(l)) || u != float(long(u)) || (half >= 0 && v != half)) half = -2;
        if (half != -2) half = v;
      }
      printf(" %ld", half < 0 ? half : 2 * half);
    }
  printf("\n");
}

int main(int argc, char** argv) {
  if (argc < 2 || (strcmp(argv[1], "map") && strcmp(argv[1], "count"))) {
    fprintf(stderr, "usage: probe map | probe count LAUNCHES_FILE\n");
    return 2;
  }
  float* out;
  uint32_t* base;
  CHECK(cudaMalloc(&out, 64 * N * sizeof(float)));
  CHECK(cudaMalloc(&base, sizeof(uint32_t)));
  if (!strcmp(argv[1], "map")) {
    for (int i = 0; i < NCONFIGS; ++i) print_map(CONFIGS[i], out, base);
    return 0;
  }
  FILE* list = fopen(argc > 2 ? argv[2] : "launches.txt", "w");
  for (int i = 0; i < NCONFIGS; ++i) {
    const Config& c = CONFIGS[i];
    run(c, false, 0, 1, out, base);
    fprintf(list, "%s rs 1\n", c.name);
    if (c.extra) {
      run(c, false, 0, 4, out, base);
      fprintf(list, "%s rs 4\n", c.name);
      run(c, true, 0, 1, out, base);
      fprintf(list, "%s ss 1\n", c.name);
    }
  }
  fclose(list);
  return 0;
}
