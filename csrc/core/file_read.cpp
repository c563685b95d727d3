// Note [Reading records into fresh memory] is in file_read.h.
#include "core/file_read.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include "core/crc32.h"
#include "core/error.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

namespace cl {

namespace {

constexpr size_t kChunk = size_t(1) << 20;  // fits the L2 cache: the CRC reads it from there
constexpr uintptr_t kPage = 4096;
constexpr size_t kHugeMin = size_t(4) << 20;  // the CPU allocator's huge-page threshold

// The whole pages inside [p, p + n).
bool inner_pages(void* p, size_t n, void** begin, size_t* len) {
  const uintptr_t b = (reinterpret_cast<uintptr_t>(p) + kPage - 1) & ~(kPage - 1);
  const uintptr_t e = (reinterpret_cast<uintptr_t>(p) + n) & ~(kPage - 1);
  if (e <= b) return false;
  *begin = reinterpret_cast<void*>(b);
  *len = e - b;
  return true;
}

// pread until `n` bytes came; false at the end of the file.
bool pread_full(int fd, char* dst, size_t n, uint64_t offset) {
  while (n > 0) {
    ssize_t got = ::pread(fd, dst, n, off_t(offset));
    if (got < 0) {
      if (errno == EINTR) continue;
      throw Error(detail::str("read failed: ", std::strerror(errno)));
    }
    if (got == 0) return false;
    dst += got;
    n -= size_t(got);
    offset += uint64_t(got);
  }
  return true;
}

[[noreturn]] void end_of_file() { throw Error("unexpected end of file"); }

}  // namespace

uint32_t read_file_crc32(int fd, uint64_t offset, void* dst, size_t n, size_t skip, uint32_t crc,
                         bool fresh) {
  char* const out = static_cast<char*>(dst);
  void* pages = nullptr;
  size_t pages_len = 0;
  const bool advise = fresh && n >= kHugeMin && inner_pages(dst, n, &pages, &pages_len);
  if (advise) (void)madvise(pages, pages_len, MADV_NOHUGEPAGE);
  bool populate = fresh;  // until the kernel refuses MADV_POPULATE_WRITE
  for (size_t pos = 0; pos < n;) {
    const size_t len = n - pos < kChunk ? n - pos : kChunk;
    void* b;
    size_t blen;
    if (populate && inner_pages(out + pos, len, &b, &blen)) {
      populate = madvise(b, blen, MADV_POPULATE_WRITE) == 0;
    }
    if (!pread_full(fd, out + pos, len, offset + pos)) end_of_file();
    crc = crc32(crc, out + pos, len);
    pos += len;
  }
  if (advise) (void)madvise(pages, pages_len, MADV_HUGEPAGE);
  if (skip > 0) {
    const size_t scratch_len = skip < kChunk ? skip : kChunk;
    std::unique_ptr<char[]> scratch(new char[scratch_len]);
    for (size_t pos = 0; pos < skip;) {
      const size_t len = skip - pos < scratch_len ? skip - pos : scratch_len;
      if (!pread_full(fd, scratch.get(), len, offset + n + pos)) end_of_file();
      crc = crc32(crc, scratch.get(), len);
      pos += len;
    }
  }
  return crc;
}

}  // namespace cl
