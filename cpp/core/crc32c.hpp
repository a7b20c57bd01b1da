// CRC-32C (Castagnoli), the checksum of every index file (iSCSI / ext4 / LevelDB use it too).
// The SSE4.2 crc32 instruction computes it at several GB/s, so verifying an index on open costs
// about as much as reading it once; the scalar slicing-by-8 table is the fallback and reference.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/cpu_features.hpp"

namespace mirkit::core {

// Continues a CRC: crc32c(b, crc32c(a)) == crc32c(a + b). Start with crc = 0.
uint32_t crc32c(const uint8_t* data, size_t n, uint32_t crc = 0);
uint32_t crc32c_scalar(const uint8_t* data, size_t n, uint32_t crc);
SimdLevel crc32c_level();

}  // namespace mirkit::core
