#include "core/parallel.h"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "core/error.h"

namespace cl {

namespace {

// One parallel_run call. Workers hold it by shared_ptr, so a worker that wakes late sees an
// exhausted job (next >= n) and never touches a `fn` that has gone out of scope.
struct Job {
  const std::function<void(int)>* fn = nullptr;
  int n = 0;
  std::atomic<int> next{0};
  std::atomic<int> slots{0};  // workers that may still join (the pool's size less the caller)
  std::mutex mu;
  std::condition_variable done_cv;
  int remaining = 0;
  std::exception_ptr error;

  void drain() {
    for (int i = next.fetch_add(1); i < n; i = next.fetch_add(1)) {
      std::exception_ptr err;
      try {
        (*fn)(i);
      } catch (...) {
        err = std::current_exception();
      }
      std::lock_guard<std::mutex> lock(mu);
      if (err && !error) error = err;
      if (--remaining == 0) done_cv.notify_all();
    }
  }
};

class Pool {
 public:
  explicit Pool(int threads) : pid_(getpid()) { resize(threads); }

  int threads() const { return threads_.load(); }
  pid_t pid() const { return pid_; }

  // Threads start as needed and are never stopped: a smaller size lets fewer of them join.
  void resize(int threads) {
    std::lock_guard<std::mutex> lock(mu_);
    for (; spawned_ + 1 < threads; ++spawned_) std::thread([this] { work(); }).detach();
    threads_ = threads;
  }

  void run(int n, const std::function<void(int)>& fn) {
    std::unique_lock<std::mutex> busy(run_mu_, std::try_to_lock);
    int threads = threads_.load();
    if (!busy.owns_lock() || threads == 1 || n == 1) {
      for (int i = 0; i < n; ++i) fn(i);
      return;
    }
    auto job = std::make_shared<Job>();
    job->fn = &fn;
    job->n = n;
    job->remaining = n;
    job->slots = threads - 1;
    {
      std::lock_guard<std::mutex> lock(mu_);
      job_ = job;
      ++generation_;
    }
    cv_.notify_all();
    job->drain();
    std::unique_lock<std::mutex> lock(job->mu);
    job->done_cv.wait(lock, [&] { return job->remaining == 0; });
    {
      std::lock_guard<std::mutex> pool_lock(mu_);
      job_.reset();
    }
    if (job->error) std::rethrow_exception(job->error);
  }

 private:
  void work() {
    uint64_t seen = 0;
    for (;;) {
      std::shared_ptr<Job> job;
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [&] { return generation_ != seen; });
        seen = generation_;
        job = job_;
      }
      if (job && job->slots.fetch_sub(1) > 0) job->drain();
    }
  }

  pid_t pid_;
  std::atomic<int> threads_{1};
  int spawned_ = 0;    // worker threads started (under mu_)
  std::mutex run_mu_;  // one job at a time
  std::mutex mu_;
  std::condition_variable cv_;
  uint64_t generation_ = 0;
  std::shared_ptr<Job> job_;
};

// The size set_host_threads asked for; 0: the default.
std::atomic<int> g_requested{0};

int default_threads() {
  if (int n = g_requested.load(); n > 0) return n;
  if (const char* env = std::getenv("CUDALITE_COPY_THREADS")) {
    int n = std::atoi(env);
    if (n > 0) return std::min(n, kMaxHostThreads);
  }
  cpu_set_t set;
  int cpus = 0;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) cpus = CPU_COUNT(&set);
  if (cpus <= 0) cpus = int(std::thread::hardware_concurrency());
  return std::clamp(cpus, 1, 16);
}

// Never destroyed: its threads are detached and may be waiting when the process exits. A
// child forked from a process with a pool has none of its threads, so it makes a new one.
Pool& pool() {
  static std::mutex mu;
  static Pool* p = nullptr;
  std::lock_guard<std::mutex> lock(mu);
  if (!p || p->pid() != getpid()) p = new Pool(default_threads());
  return *p;
}

}  // namespace

int host_threads() { return pool().threads(); }

void set_host_threads(int n) {
  CL_CHECK(n > 0, "set_num_threads expects a positive integer");
  n = std::min(n, kMaxHostThreads);
  g_requested = n;
  pool().resize(n);
}

void parallel_run(int n, const std::function<void(int)>& fn) {
  if (n <= 0) return;
  pool().run(n, fn);
}

void parallel_memcpy(void* dst, const void* src, size_t n) {
  // Below a few MiB, waking threads costs more than the copy; parts stay >= 2 MiB.
  constexpr size_t kMinPart = size_t(2) << 20;
  int parts = int(std::min<size_t>(size_t(host_threads()), n / kMinPart));
  if (parts <= 1) {
    std::memcpy(dst, src, n);
    return;
  }
  // Round the share up (not n / parts, which drops the tail when n % parts != 0) and then
  // to whole pages.
  size_t part = ((n + size_t(parts) - 1) / size_t(parts) + 4095) & ~size_t(4095);
  parallel_run(parts, [&](int i) {
    size_t begin = size_t(i) * part;
    if (begin >= n) return;
    size_t len = std::min(part, n - begin);
    std::memcpy(static_cast<char*>(dst) + begin, static_cast<const char*>(src) + begin, len);
  });
}

}  // namespace cl
