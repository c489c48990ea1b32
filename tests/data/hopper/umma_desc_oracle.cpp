// Oracle for verify/model/wgmma.py's SM100_TCGEN05 format: CUTLASS's own bitfields.
//
// Sets the fields of UMMA::SmemDescriptor (cute/arch/mma_sm100_desc.hpp) for a set
// of descriptors, as make_umma_desc does (version_ = 1, lbo_mode_ = 0), and prints
// "layout_type start lbo sbo base_offset desc" per line: the field values (start,
// LBO and SBO in bytes) and the 64-bit value the bitfields pack. Host code only; no
// sm_100 machine is involved, so this checks the bit layout, not the hardware.
//
// Build and run (regenerates umma_desc_oracle.txt; see tests/model/test_wgmma.py):
//   nvcc -x c++ -std=c++17 -O1 -I CUTLASS/include umma_desc_oracle.cpp -o oracle
//   ./oracle > umma_desc_oracle.txt
#include <cstdint>
#include <cstdio>

#include <cute/tensor.hpp>  // the configuration the header expects on the host
#include <cute/arch/mma_sm100_desc.hpp>

int main() {
  using cute::UMMA::LayoutType;
  const LayoutType layouts[] = {LayoutType::SWIZZLE_NONE, LayoutType::SWIZZLE_128B,
                                LayoutType::SWIZZLE_64B, LayoutType::SWIZZLE_32B};
  const uint32_t starts[] = {0, 16, 1024, 4096 + 128, 262128};
  const uint32_t offsets[][2] = {{16, 1024}, {1024, 128}, {128, 256}, {262128, 16}};
  for (LayoutType layout : layouts)
    for (uint32_t start : starts)
      for (auto const& lbo_sbo : offsets)
        for (int base_offset : {0, 1, 7}) {
          cute::UMMA::SmemDescriptor desc;
          desc.desc_ = 0;
          desc.version_ = 1;
          desc.lbo_mode_ = 0;
          desc.layout_type_ = uint8_t(layout);
          desc.start_address_ = start >> 4;
          desc.leading_byte_offset_ = lbo_sbo[0] >> 4;
          desc.stride_byte_offset_ = lbo_sbo[1] >> 4;
          desc.base_offset_ = base_offset;
          printf("%d %u %u %u %d %llu\n", int(layout), start, lbo_sbo[0], lbo_sbo[1], base_offset,
                 static_cast<unsigned long long>(desc.desc_));
        }
  return 0;
}
