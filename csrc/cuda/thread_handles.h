// Note [Library handles per thread]
// cuBLAS and cuDNN handles must not be used by two host threads at once (a handle holds the
// math mode, the stream and a workspace; cuBLAS fails with CUBLAS_STATUS_INTERNAL_ERROR when
// eight threads multiply through one). As torch's handle pools do, each thread gets its own
// handle per (device, stream), made on first use; when the thread exits, its handles go to a
// pool that the next thread asking for the same (device, stream) takes from, so threads that
// come and go don't make handles without end. Handles are never destroyed (destroying them
// at exit races with the driver's teardown), and the pool is never freed, so a thread that
// exits during the process's teardown still finds it.
#pragma once

#include <map>
#include <mutex>
#include <utility>

#include "core/cuda_api.h"

namespace cl::cuda {

template <class H, class Tag>
class ThreadHandles {
 public:
  using Key = std::pair<int, StreamHandle>;

  // The calling thread's handle for (device, stream); create() makes one where neither this
  // thread nor the pool has one.
  template <class Create>
  static H get(int device, StreamHandle stream, Create&& create) {
    Local& local = local_handles();
    const Key key{device, stream};
    auto it = local.map.find(key);
    if (it != local.map.end()) return it->second;
    H h{};
    bool found = false;
    {
      Pool& p = pool();
      std::lock_guard<std::mutex> lock(p.mu);
      auto f = p.free.find(key);
      if (f != p.free.end()) {
        h = f->second;
        p.free.erase(f);
        found = true;
      }
    }
    if (!found) h = create();
    local.map.emplace(key, h);
    return h;
  }

 private:
  struct Pool {
    std::mutex mu;
    std::multimap<Key, H> free;
  };
  static Pool& pool() {
    static Pool* p = new Pool;
    return *p;
  }
  struct Local {
    std::map<Key, H> map;
    ~Local() {
      Pool& p = pool();
      std::lock_guard<std::mutex> lock(p.mu);
      for (auto& kv : map) p.free.emplace(kv.first, kv.second);
    }
  };
  static Local& local_handles() {
    thread_local Local local;
    return local;
  }
};

}  // namespace cl::cuda
