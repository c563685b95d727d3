// Reading a byte range of a file into memory that was just allocated, checksummed as it
// arrives: what cudalite.load does with each storage record of a checkpoint.
//
// Note [Reading records into fresh memory]
// A storage is read straight into its tensor's memory, which is fresh: each page faults in
// (and is zeroed by the kernel) on first write. Three things decide the speed:
// - Huge pages. The CPU allocator advises huge pages for large tensors (Note [Huge pages for
//   large host tensors]); where the kernel's THP defrag setting is "madvise", each 2 MiB
//   fault may compact memory synchronously, and reading 1 GiB took 4x the CPU time of 4 KiB
//   pages. The range is read with ordinary pages, and advised again afterwards (khugepaged
//   may then collapse it in the background, as for any other large tensor).
// - Faults. Each chunk is populated with MADV_POPULATE_WRITE (Linux 5.14) before pread
//   fills it: the kernel faults its pages in one call instead of one trap per 4 KiB page
//   inside the copy. Older kernels refuse the advice, and pread faults them as before.
// - One pass. The CRC-32 of each chunk is computed right after pread wrote it, while it is
//   in the cache, so checking the record costs no second pass over cold memory.
#pragma once

#include <cstddef>
#include <cstdint>

namespace cl {

// Reads bytes [offset, offset + n) of file `fd` into dst (with pread: the file position is
// unchanged), then the `skip` bytes after them into a scratch buffer; returns the CRC-32 of
// all n + skip bytes continued from `crc`. `fresh`: dst is memory just allocated, which is
// populated and advised as the Note says; otherwise (a pinned staging buffer, say) dst is
// only written. Throws Error when the file ends first or a read fails. Thread-safe; it takes
// no lock.
uint32_t read_file_crc32(int fd, uint64_t offset, void* dst, size_t n, size_t skip, uint32_t crc,
                         bool fresh = true);

}  // namespace cl
