// Shape: a tensor's sizes or strides. A vector of int64_t with std::vector's interface (the
// part cudalite uses) that keeps up to kInline values in the object itself, so that making
// a tensor of up to 6 dims allocates nothing for its sizes and strides: a one-element
// `a + b` spent a third of its host time in malloc and free before (Note [Small shapes] in
// docs/design.md).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <iterator>
#include <new>
#include <type_traits>

namespace cl {

class Shape {
 public:
  using value_type = int64_t;
  using size_type = size_t;
  using difference_type = std::ptrdiff_t;
  using reference = int64_t&;
  using const_reference = const int64_t&;
  using iterator = int64_t*;
  using const_iterator = const int64_t*;
  using reverse_iterator = std::reverse_iterator<iterator>;
  using const_reverse_iterator = std::reverse_iterator<const_iterator>;
  static constexpr size_t kInline = 6;

  Shape() = default;
  explicit Shape(size_t n, int64_t value = 0) { resize(n, value); }
  Shape(std::initializer_list<int64_t> values) { append(values.begin(), values.size()); }
  template <class It, class = typename std::iterator_traits<It>::iterator_category>
  Shape(It first, It last) {
    for (; first != last; ++first) push_back(int64_t(*first));
  }
  Shape(const Shape& o) { append(o.data_, o.size_); }
  Shape(Shape&& o) noexcept { take(o); }
  Shape& operator=(const Shape& o) {
    if (this != &o) {
      size_ = 0;
      append(o.data_, o.size_);
    }
    return *this;
  }
  Shape& operator=(Shape&& o) noexcept {
    if (this != &o) {
      release();
      take(o);
    }
    return *this;
  }
  Shape& operator=(std::initializer_list<int64_t> values) {
    size_ = 0;
    append(values.begin(), values.size());
    return *this;
  }
  ~Shape() { release(); }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  size_t capacity() const { return cap_; }
  int64_t* data() { return data_; }
  const int64_t* data() const { return data_; }
  iterator begin() { return data_; }
  iterator end() { return data_ + size_; }
  const_iterator begin() const { return data_; }
  const_iterator end() const { return data_ + size_; }
  const_iterator cbegin() const { return data_; }
  const_iterator cend() const { return data_ + size_; }
  reverse_iterator rbegin() { return reverse_iterator(end()); }
  reverse_iterator rend() { return reverse_iterator(begin()); }
  const_reverse_iterator rbegin() const { return const_reverse_iterator(end()); }
  const_reverse_iterator rend() const { return const_reverse_iterator(begin()); }
  int64_t& operator[](size_t i) { return data_[i]; }
  const int64_t& operator[](size_t i) const { return data_[i]; }
  int64_t& front() { return data_[0]; }
  const int64_t& front() const { return data_[0]; }
  int64_t& back() { return data_[size_ - 1]; }
  const int64_t& back() const { return data_[size_ - 1]; }

  void reserve(size_t n) {
    if (n > cap_) grow(n);
  }
  void clear() { size_ = 0; }
  void assign(size_t n, int64_t value) {
    size_ = 0;
    resize(n, value);
  }
  void push_back(int64_t v) {
    if (size_ == cap_) grow(2 * cap_);
    data_[size_++] = v;
  }
  void emplace_back(int64_t v) { push_back(v); }
  void pop_back() { --size_; }
  void resize(size_t n, int64_t value = 0) {
    reserve(n);
    for (size_t i = size_; i < n; ++i) data_[i] = value;
    size_ = n;
  }
  iterator insert(const_iterator pos, int64_t v) { return insert(pos, &v, &v + 1); }
  template <class It, class = typename std::iterator_traits<It>::iterator_category>
  iterator insert(const_iterator pos, It first, It last) {
    size_t at = size_t(pos - data_);
    Shape values(first, last);  // `first` may point into this shape
    size_t n = values.size();
    reserve(size_ + n);
    std::memmove(data_ + at + n, data_ + at, (size_ - at) * sizeof(int64_t));
    std::memcpy(data_ + at, values.data_, n * sizeof(int64_t));
    size_ += n;
    return data_ + at;
  }
  iterator erase(const_iterator pos) { return erase(pos, pos + 1); }
  iterator erase(const_iterator first, const_iterator last) {
    size_t at = size_t(first - data_), n = size_t(last - first);
    std::memmove(data_ + at, data_ + at + n, (size_ - at - n) * sizeof(int64_t));
    size_ -= n;
    return data_ + at;
  }

  friend bool operator==(const Shape& a, const Shape& b) {
    return a.size_ == b.size_ && std::equal(a.begin(), a.end(), b.begin());
  }
  friend bool operator!=(const Shape& a, const Shape& b) { return !(a == b); }

 private:
  bool heap() const { return data_ != inline_; }
  void release() {
    if (heap()) std::free(data_);
    data_ = inline_;
    size_ = 0;
    cap_ = kInline;
  }
  // Moves o's values here (this is empty and inline), leaving o empty and inline.
  void take(Shape& o) {
    if (o.heap()) {
      data_ = o.data_;
      cap_ = o.cap_;
      o.data_ = o.inline_;
      o.cap_ = kInline;
    } else {
      std::memcpy(inline_, o.inline_, o.size_ * sizeof(int64_t));
    }
    size_ = o.size_;
    o.size_ = 0;
  }
  void grow(size_t n) {
    n = std::max(n, size_t(2 * kInline));
    auto* p = static_cast<int64_t*>(std::malloc(n * sizeof(int64_t)));
    if (!p) throw std::bad_alloc();
    std::memcpy(p, data_, size_ * sizeof(int64_t));
    if (heap()) std::free(data_);
    data_ = p;
    cap_ = n;
  }
  void append(const int64_t* p, size_t n) {
    reserve(size_ + n);
    std::memcpy(data_ + size_, p, n * sizeof(int64_t));
    size_ += n;
  }

  int64_t* data_ = inline_;
  size_t size_ = 0;
  size_t cap_ = kInline;
  int64_t inline_[kInline];
};

}  // namespace cl
