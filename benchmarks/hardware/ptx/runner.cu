// Host side of the PTX ground-truth kernels: launches each kernel of kernels.cu and
// broadcast.cu once (one block) and writes the shared addresses the kernels recorded.
//
//   runner OUTDIR [KERNEL]    writes OUTDIR/rec_<kernel>.txt: "site instance thread value"
//                             for every recorded access (value: shared address, or the
//                             global source offset in bytes for a cp.async's odd site)
//
// The launch of each kernel (block, parameters, dynamic shared bytes) is the one
// oracle/ptx_kernels.py gives the PTX interpreter.
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "broadcast.cu"
#include "kernels.cu"

#define CHECK(call)                                                                \
  do {                                                                             \
    cudaError_t err_ = (call);                                                     \
    if (err_ != cudaSuccess) {                                                     \
      fprintf(stderr, "runner: %s failed: %s\n", #call, cudaGetErrorString(err_)); \
      exit(3);                                                                     \
    }                                                                              \
  } while (0)

constexpr int REC_WORDS = 16 * MAX_INST * 256;
constexpr int BUF_WORDS = 1 << 16;

struct Buffers {
  float *in;
  float *out;
  uint32_t *rec;
};

static void write_records(const char *dir, const char *name, const uint32_t *dev, int nthreads) {
  std::vector<uint32_t> host(REC_WORDS);
  CHECK(cudaMemcpy(host.data(), dev, REC_WORDS * 4, cudaMemcpyDeviceToHost));
  std::string path = std::string(dir) + "/rec_" + name + ".txt";
  FILE *f = fopen(path.c_str(), "w");
  if (!f) {
    perror(path.c_str());
    exit(3);
  }
  for (int i = 0; i < REC_WORDS; ++i) {
    if (host[i] == 0xffffffffu) continue;
    int thread = i % nthreads, inst = (i / nthreads) % MAX_INST, site = i / nthreads / MAX_INST;
    fprintf(f, "%d %d %d %u\n", site, inst, thread, host[i]);
  }
  fclose(f);
}

static std::vector<uint32_t> read_broadcast_offsets(const char *path) {
  std::vector<uint32_t> offs;
  FILE *f = fopen(path, "r");
  if (!f) {
    perror(path);
    exit(3);
  }
  char name[128];
  int width;
  while (fscanf(f, "%127s %d", name, &width) == 2) {
    for (int lane = 0; lane < 32; ++lane) {
      uint32_t v;
      if (fscanf(f, "%u", &v) != 1) exit(4);
      offs.push_back(v);
    }
  }
  fclose(f);
  return offs;
}

static bool wanted(const char *only, const char *name) { return !only || !strcmp(only, name); }

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: runner OUTDIR [KERNEL]\n");
    return 2;
  }
  const char *dir = argv[1], *only = argc > 2 ? argv[2] : nullptr;
  Buffers b;
  CHECK(cudaMalloc(&b.in, BUF_WORDS * 4));
  CHECK(cudaMalloc(&b.out, BUF_WORDS * 4));
  CHECK(cudaMalloc(&b.rec, REC_WORDS * 4));
  std::vector<float> init(BUF_WORDS);
  for (int i = 0; i < BUF_WORDS; ++i) init[i] = (float)(i % 977);
  CHECK(cudaMemcpy(b.in, init.data(), BUF_WORDS * 4, cudaMemcpyHostToDevice));
  auto fresh = [&]() { CHECK(cudaMemset(b.rec, 0xff, REC_WORDS * 4)); };
  auto done = [&](const char *name, int nthreads) {
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    write_records(dir, name, b.rec, nthreads);
  };
  const uint16_t *in16 = reinterpret_cast<const uint16_t *>(b.in);
  const uint32_t *in32 = reinterpret_cast<const uint32_t *>(b.in);
  uint32_t *out32 = reinterpret_cast<uint32_t *>(b.out);
  dim3 tblock(32, 8);
#define LAUNCH_TRANSPOSE(k)                                \
  if (wanted(only, #k)) {                                  \
    fresh();                                               \
    k<<<1, tblock>>>(b.in, b.out, b.rec);                  \
    done(#k, 256);                                         \
  }
  LAUNCH_TRANSPOSE(transpose_unpadded)
  LAUNCH_TRANSPOSE(transpose_padded)
  LAUNCH_TRANSPOSE(transpose_xor)
  if (wanted(only, "ldmatrix_plain")) {
    fresh();
    ldmatrix_plain<<<1, 32>>>(in16, out32, b.rec);
    done("ldmatrix_plain", 32);
  }
  if (wanted(only, "ldmatrix_sw333")) {
    fresh();
    ldmatrix_sw333<<<1, 32>>>(in16, out32, b.rec);
    done("ldmatrix_sw333", 32);
  }
  if (wanted(only, "vector_ldst")) {
    fresh();
    vector_ldst<<<1, 32>>>(in32, out32, b.rec);
    done("vector_ldst", 32);
  }
  if (wanted(only, "pipeline_double")) {
    fresh();
    pipeline_double<<<1, 128>>>(b.in, b.out, 4, b.rec);
    done("pipeline_double", 128);
  }
  if (wanted(only, "pipeline_triple_mod")) {
    fresh();
    pipeline_triple_mod<<<1, 128>>>(b.in, b.out, 5, b.rec);
    done("pipeline_triple_mod", 128);
  }
  if (wanted(only, "pipeline_shift")) {
    fresh();
    pipeline_shift<<<1, 128, 16384>>>(b.in, b.out, 4, b.rec);
    done("pipeline_shift", 128);
  }
  if (wanted(only, "tail_dynamic")) {
    fresh();
    tail_dynamic<<<1, 256, 512 * 4>>>(b.in, b.out, 200, b.rec);
    done("tail_dynamic", 256);
  }
  if (wanted(only, "broadcast_loads")) {
    std::vector<uint32_t> offs = read_broadcast_offsets("broadcast_patterns.txt");
    uint32_t *d_offs;
    CHECK(cudaMalloc(&d_offs, offs.size() * 4));
    CHECK(cudaMemcpy(d_offs, offs.data(), offs.size() * 4, cudaMemcpyHostToDevice));
    broadcast_loads<<<1, 32>>>(d_offs, out32);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
  }
  printf("runner: done\n");
  return 0;
}
