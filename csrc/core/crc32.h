// CRC-32 (the zip and zlib checksum: polynomial 0xEDB88320, reflected) of a byte range.
//
// cudalite.load checks each record of a checkpoint against the CRC-32 its zip directory
// holds, so that a damaged file is refused rather than loaded with wrong weights. The
// checksum has to run at memory speed to keep loading fast: on x86-64 CPUs with PCLMULQDQ
// it folds 64 bytes per step with carry-less multiplications (256 bytes with AVX-512
// VPCLMULQDQ); elsewhere it falls back to a slicing-by-8 table.
#pragma once

#include <cstddef>
#include <cstdint>

namespace cl {

// zlib's crc32(crc, data, n): `crc` is the checksum of the bytes before `data` (0 to start),
// the result that of all of them.
uint32_t crc32(uint32_t crc, const void* data, size_t n);

// The portable table version (what crc32 uses without PCLMULQDQ); exposed for tests.
uint32_t crc32_table(uint32_t crc, const void* data, size_t n);

}  // namespace cl
