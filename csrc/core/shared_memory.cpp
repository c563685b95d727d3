// Note [Shared CPU memory] in shared_memory.h.
#include "core/shared_memory.h"

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <utility>

#include "core/error.h"

namespace cl {

namespace {

struct SharedMapping {
  void* ptr = nullptr;
  size_t nbytes = 0;
  int fd = -1;
};

void release_mapping(void* ctx) {
  auto* m = static_cast<SharedMapping*>(ctx);
  if (m->ptr) munmap(m->ptr, m->nbytes);
  if (m->fd >= 0) close(m->fd);
  delete m;
}

DataPtr map_fd(int fd, size_t nbytes) {
  struct stat st {};
  if (fstat(fd, &st) != 0) {
    int err = errno;
    close(fd);
    throw Error(detail::str("shared memory: fstat failed: ", std::strerror(err)));
  }
  if (size_t(st.st_size) < nbytes) {
    close(fd);
    throw Error(detail::str("shared memory: the file holds ", st.st_size, " bytes, ", nbytes,
                            " were expected"));
  }
  void* p = mmap(nullptr, nbytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) {
    int err = errno;
    close(fd);
    throw Error(
        detail::str("shared memory: mmap of ", nbytes, " bytes failed: ", std::strerror(err)));
  }
  auto* m = new SharedMapping{p, nbytes, fd};
  return DataPtr(p, m, &release_mapping, Device(DeviceType::CPU));
}

}  // namespace

bool is_shared_memory(const StorageImpl& s) { return s.data.deleter() == &release_mapping; }

int shared_memory_fd(const StorageImpl& s) {
  return is_shared_memory(s) ? static_cast<SharedMapping*>(s.data.context())->fd : -1;
}

void share_memory(StorageImpl& s, int fd) {
  if (is_shared_memory(s)) {
    close(fd);
    return;
  }
  if (!s.device().is_cpu() || s.nbytes == 0) {
    close(fd);
    CL_CHECK(s.device().is_cpu(), "share_memory: the storage is not in CPU memory");
    CL_CHECK(s.nbytes > 0, "share_memory: the storage is empty");
  }
  DataPtr shared = map_fd(fd, s.nbytes);
  if (s.data.get()) std::memcpy(shared.get(), s.data.get(), s.nbytes);
  s.data = std::move(shared);  // frees the private memory
  s.pinned = false;
  s.resizable = false;
}

Storage map_shared_memory(int fd, size_t nbytes) {
  if (nbytes == 0) {
    close(fd);
    throw ValueError("map_shared_memory: the storage is empty");
  }
  auto storage = std::make_shared<StorageImpl>(map_fd(fd, nbytes), nbytes);
  storage->resizable = false;
  return storage;
}

}  // namespace cl
