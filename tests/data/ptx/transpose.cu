// Tile transposes through shared memory: padded (conflict-free) and unpadded
// (32-way on the column read). Block 32x8, each thread moves 4 elements.
#define TILE 32
#define ROWS 8

__global__ void __launch_bounds__(256) transpose_padded(float *out, const float *in, int n) {
  __shared__ float tile[TILE][TILE + 1];
  int x = blockIdx.x * TILE + threadIdx.x;
  int y = blockIdx.y * TILE + threadIdx.y;
  for (int j = 0; j < TILE; j += ROWS)
    tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * n + x];
  __syncthreads();
  x = blockIdx.y * TILE + threadIdx.x;
  y = blockIdx.x * TILE + threadIdx.y;
  for (int j = 0; j < TILE; j += ROWS)
    out[(y + j) * n + x] = tile[threadIdx.x][threadIdx.y + j];
}

__global__ void __launch_bounds__(256) transpose_unpadded(float *out, const float *in, int n) {
  __shared__ float tile[TILE][TILE];
  int x = blockIdx.x * TILE + threadIdx.x;
  int y = blockIdx.y * TILE + threadIdx.y;
  for (int j = 0; j < TILE; j += ROWS)
    tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * n + x];
  __syncthreads();
  x = blockIdx.y * TILE + threadIdx.x;
  y = blockIdx.x * TILE + threadIdx.y;
  for (int j = 0; j < TILE; j += ROWS)
    out[(y + j) * n + x] = tile[threadIdx.x][threadIdx.y + j];
}
