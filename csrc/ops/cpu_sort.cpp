// Sorting rows on the host (Note [Sort keys] in ops/sort.h): a stable LSD radix sort of
// (key, index) pairs, one byte a pass, skipping the bytes where all keys agree; a row cut to
// few of its elements (topk, kthvalue) is selected by (key, index) instead (nth_element, then
// a sort of the k), which gives the first k exactly as the full stable sort would.
#include <algorithm>
#include <array>
#include <vector>

#include "core/dtype.h"
#include "core/parallel.h"
#include "ops/sort.h"

namespace cl::cpu {
namespace {

template <class U>
void radix_sort(std::vector<U>& key, std::vector<int64_t>& idx) {
  const int64_t n = int64_t(key.size());
  constexpr int kBytes = int(sizeof(U));
  std::vector<std::array<int64_t, 256>> count(kBytes);
  for (auto& c : count) c.fill(0);
  for (int64_t i = 0; i < n; ++i) {
    U k = key[i];
    for (int b = 0; b < kBytes; ++b) ++count[b][(k >> (8 * b)) & 0xff];
  }
  std::vector<U> key2(static_cast<size_t>(n));
  std::vector<int64_t> idx2(static_cast<size_t>(n));
  for (int b = 0; b < kBytes; ++b) {
    auto& c = count[b];
    if (c[(key[0] >> (8 * b)) & 0xff] == n) continue;  // all keys share this byte
    int64_t sum = 0;
    for (auto& v : c) {
      int64_t t = v;
      v = sum;
      sum += t;
    }
    for (int64_t i = 0; i < n; ++i) {
      int64_t to = c[(key[i] >> (8 * b)) & 0xff]++;
      key2[to] = key[i];
      idx2[to] = idx[i];
    }
    key.swap(key2);
    idx.swap(idx2);
  }
}

template <class T>
void sort_row(const T* x, int64_t n, int64_t k, bool descending, T* values, int64_t* indices) {
  using U = sortkey::key_t<T>;
  auto key_of = [&](int64_t i) {
    U kk = sortkey::key(x[i]);
    return descending ? U(~kk) : kk;
  };
  if (k < n / 8 || n < 64) {
    // Few of many (or a short row): (key, index) pairs, a strict total order, so the first k
    // after nth_element are exactly those of the stable sort; only they are then sorted.
    std::vector<std::pair<U, int64_t>> p(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) p[i] = {key_of(i), i};
    if (k < n) std::nth_element(p.begin(), p.begin() + k, p.end());
    std::sort(p.begin(), p.begin() + k);
    for (int64_t j = 0; j < k; ++j) {
      values[j] = x[p[j].second];
      indices[j] = p[j].second;
    }
    return;
  }
  std::vector<U> key(static_cast<size_t>(n));
  std::vector<int64_t> idx(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    key[i] = key_of(i);
    idx[i] = i;
  }
  radix_sort(key, idx);
  for (int64_t j = 0; j < k; ++j) {
    values[j] = x[idx[j]];
    indices[j] = idx[j];
  }
}

}  // namespace

void sort_rows(const Tensor& in, int64_t rows, int64_t n, int64_t k, bool descending,
               const Tensor& values, const Tensor& indices) {
  CL_DISPATCH_ALL_TYPES(in->dtype, "sort", [&] {
    using T = scalar_t;
    const T* x = reinterpret_cast<const T*>(in->data());
    T* v = reinterpret_cast<T*>(values->data());
    int64_t* ix = reinterpret_cast<int64_t*>(indices->data());
    auto run = [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r)
        sort_row(x + r * n, n, k, descending, v + r * k, ix + r * k);
    };
    const int chunks = int(std::min<int64_t>(rows, rows * n >= (1 << 16) ? host_threads() : 1));
    if (chunks <= 1) {
      run(0, rows);
    } else {
      parallel_run(chunks, [&](int c) { run(rows * c / chunks, rows * (c + 1) / chunks); });
    }
  });
}

}  // namespace cl::cpu
