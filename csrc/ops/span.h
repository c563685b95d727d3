// Span: a read-only view of a few pointers or values, built from a braced list or a vector,
// so that per-op argument lists cost no heap allocation.
#pragma once

#include <cstddef>
#include <initializer_list>
#include <vector>

namespace cl {

template <class T>
class Span {
 public:
  Span(std::initializer_list<T> l) : data_(l.begin()), size_(l.size()) {}
  Span(const std::vector<T>& v) : data_(v.data()), size_(v.size()) {}
  const T* begin() const { return data_; }
  const T* end() const { return data_ + size_; }
  size_t size() const { return size_; }
  const T& operator[](size_t i) const { return data_[i]; }

 private:
  const T* data_;
  size_t size_;
};

}  // namespace cl
