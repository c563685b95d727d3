// A few host threads for work that one core cannot keep up with: copying hundreds of MiB
// between pageable and pinned memory. One core moves about 10 GB/s; the PCIe link of an
// H200 moves 55 GB/s each way, and torch's CPU copies are parallel too.
#pragma once

#include <cstddef>
#include <functional>

namespace cl {

// The most threads the pool runs.
constexpr int kMaxHostThreads = 64;

// Threads that parallel_run uses, the caller included: the last set_host_threads, else
// CUDALITE_COPY_THREADS, else the CPUs this process may run on, at most 16 (a memcpy
// saturates memory well before that).
int host_threads();

// Sets the number of threads parallel_run uses (torch.set_num_threads), at most
// kMaxHostThreads; throws for n < 1. A process forked later keeps the setting.
void set_host_threads(int n);

// Runs fn(0) .. fn(n - 1), spread over host_threads() threads (the caller is one of them),
// and returns when all have finished; rethrows the first exception. A call made while
// another is running (from another thread, or from inside fn) runs serially in its caller
// instead of waiting, so it can't deadlock.
void parallel_run(int n, const std::function<void(int)>& fn);

// memcpy, split over the host threads when `n` is large enough for that to pay.
void parallel_memcpy(void* dst, const void* src, size_t n);

}  // namespace cl
