// CPU storages in shared memory, for sending tensors to other processes without copying them
// (torch's "file_descriptor" sharing strategy; python/cudalite/multiprocessing/reductions.py).
//
// Note [Shared CPU memory]
// share_memory moves a storage's bytes, in place, into a MAP_SHARED mapping of a file
// descriptor (a memfd the caller created), as torch's share_memory_() does: every tensor
// viewing the storage now sees the shared mapping. The storage keeps the descriptor open, so
// that it can be sent again (its duplicate travels over a Unix socket), and closes it when the
// memory is freed. A receiving process maps the descriptor it received with
// map_shared_memory. Shared storages can't be resized (the mapping has a fixed size).
#pragma once

#include <cstddef>

#include "core/storage.h"

namespace cl {

// Moves `s` (CPU, nbytes > 0) into a shared mapping of `fd`, which must be a file of at least
// s.nbytes bytes; `s` takes ownership of fd. No-op (fd closed) when already shared.
void share_memory(StorageImpl& s, int fd);
// Whether `s`'s memory is a shared mapping made here; its descriptor, -1 when not.
bool is_shared_memory(const StorageImpl& s);
int shared_memory_fd(const StorageImpl& s);
// A CPU storage over the first nbytes of the shared file `fd`, which it takes ownership of.
Storage map_shared_memory(int fd, size_t nbytes);

}  // namespace cl
