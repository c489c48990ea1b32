// Oracle for verify/model/wgmma.py: CUTLASS's own descriptors and element addresses.
//
// Builds each GMMA shared-memory atom (cute/atom/mma_traits_sm90_gmma.hpp,
// GMMA::Layout_{K,MN}_{INTER,SW32,SW64,SW128}_Atom<T>) tiled to a tile, cuts one
// wgmma k-block out of it (local_tile), and prints what CUTLASS derives from it:
// make_gmma_desc's 64-bit descriptor, and the byte offset of every element
// (row, k) of the k-block (the address CuTe's swizzled pointer dereferences).
// Host code only: cast_smem_ptr_to_uint reads __cvta_generic_to_shared, given
// here as the offset from a 1024-byte-aligned host array standing in for
// shared memory, so descriptors carry real start addresses.
//
// Build and run (regenerates gmma_desc_oracle.txt; see tests/model/test_wgmma.py):
//   nvcc -x c++ -std=c++17 -O1 -I CUTLASS/include gmma_desc_oracle.cpp -o oracle
//   ./oracle > gmma_desc_oracle.txt
#include <cstddef>
#include <cstdint>
#include <cstdio>

alignas(4096) static unsigned char g_smem[1 << 17];
static size_t __cvta_generic_to_shared(void const* p) {
  return static_cast<size_t>(static_cast<unsigned char const*>(p) - g_smem);
}
#define CUTE_CVTA_GENERIC_TO_SHARED_ACTIVATED 1

#include <cute/tensor.hpp>
#include <cute/atom/mma_traits_sm90_gmma.hpp>

using namespace cute;
namespace GMMA = cute::SM90::GMMA;

template <class T> constexpr char const* type_name();
template <> constexpr char const* type_name<half_t>() { return "f16"; }
template <> constexpr char const* type_name<tfloat32_t>() { return "tf32"; }
template <> constexpr char const* type_name<int8_t>() { return "s8"; }

// One k-block of a tile laid out by `Atom`, `Rows` x `TileK` elements, at byte
// `offset` of shared memory: its descriptor and its elements' byte addresses.
template <class T, GMMA::Major Major, int Rows, int TileK, class Atom>
void print_case(char const* atom_name, int offset) {
  constexpr int InstK = 32 / sizeof(T);
  auto layout = tile_to_shape(Atom{}, Shape<Int<Rows>, Int<TileK>>{});
  Tensor tile = make_tensor(make_smem_ptr(reinterpret_cast<T*>(g_smem + offset)), layout);
  for (int kb = 0; kb < TileK / InstK; ++kb) {
    Tensor block = local_tile(tile, Shape<Int<Rows>, Int<InstK>>{}, make_coord(0, kb));
    cute::GmmaDescriptor desc = GMMA::make_gmma_desc<Major>(block);
    printf("case type=%s major=%s atom=%s rows=%d tile_k=%d offset=%d kblock=%d desc=0x%016llx\n",
           type_name<T>(), Major == GMMA::Major::K ? "K" : "MN", atom_name, Rows, TileK, offset,
           kb, static_cast<unsigned long long>(desc.desc_));
    printf("map");
    for (int r = 0; r < Rows; ++r)
      for (int k = 0; k < InstK; ++k)
        printf(" %ld", static_cast<long>(reinterpret_cast<unsigned char*>(&block(r, k)) - g_smem));
    printf("\n");
  }
}

template <class T, int Rows, int TileK>
void k_major(int offset) {
  print_case<T, GMMA::Major::K, Rows, TileK, GMMA::Layout_K_INTER_Atom<T>>("INTER", offset);
  print_case<T, GMMA::Major::K, Rows, TileK, GMMA::Layout_K_SW32_Atom<T>>("SW32", offset);
  print_case<T, GMMA::Major::K, Rows, TileK, GMMA::Layout_K_SW64_Atom<T>>("SW64", offset);
  print_case<T, GMMA::Major::K, Rows, TileK, GMMA::Layout_K_SW128_Atom<T>>("SW128", offset);
}

template <class T, int Rows, int TileK>
void mn_major(int offset) {
  print_case<T, GMMA::Major::MN, Rows, TileK, GMMA::Layout_MN_INTER_Atom<T>>("INTER", offset);
  print_case<T, GMMA::Major::MN, Rows, TileK, GMMA::Layout_MN_SW32_Atom<T>>("SW32", offset);
  print_case<T, GMMA::Major::MN, Rows, TileK, GMMA::Layout_MN_SW64_Atom<T>>("SW64", offset);
  print_case<T, GMMA::Major::MN, Rows, TileK, GMMA::Layout_MN_SW128_Atom<T>>("SW128", offset);
}

int main() {
  // A tile 128 bytes of K wide (one SW128 row), 64 rows (wgmma's M), at a
  // 1024-aligned base and one 8 KiB further; B-like 128-row tiles too.
  k_major<half_t, 64, 64>(0);
  k_major<half_t, 128, 64>(8192);
  k_major<tfloat32_t, 64, 32>(0);
  k_major<int8_t, 64, 128>(0);
  mn_major<half_t, 64, 32>(0);
  mn_major<half_t, 128, 32>(16384);
  return 0;
}
