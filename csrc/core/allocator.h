// The allocator interface and DataPtr, the owning pointer that storages hold.
#pragma once

#include <cstddef>
#include <utility>

#include "core/device.h"
#include "core/macros.h"

namespace cl {

using DeleterFn = void (*)(void* ctx);

// Owns one allocation: `ptr` is the data, `ctx` is what `deleter` needs to free it (often
// the same pointer, or a block handle for a caching allocator). Move-only.
class DataPtr {
 public:
  DataPtr() = default;
  DataPtr(void* ptr, void* ctx, DeleterFn deleter, Device device)
      : ptr_(ptr), ctx_(ctx), deleter_(deleter), device_(device) {}
  DataPtr(DataPtr&& o) noexcept { *this = std::move(o); }
  DataPtr& operator=(DataPtr&& o) noexcept {
    if (this != &o) {
      reset();
      ptr_ = std::exchange(o.ptr_, nullptr);
      ctx_ = std::exchange(o.ctx_, nullptr);
      deleter_ = std::exchange(o.deleter_, nullptr);
      device_ = o.device_;
    }
    return *this;
  }
  DataPtr(const DataPtr&) = delete;
  DataPtr& operator=(const DataPtr&) = delete;
  ~DataPtr() { reset(); }

  void reset() {
    if (deleter_) deleter_(ctx_);
    ptr_ = ctx_ = nullptr;
    deleter_ = nullptr;
  }
  void* get() const { return ptr_; }
  void* context() const { return ctx_; }
  DeleterFn deleter() const { return deleter_; }
  Device device() const { return device_; }

 private:
  void* ptr_ = nullptr;
  void* ctx_ = nullptr;
  DeleterFn deleter_ = nullptr;
  Device device_;
};

class Allocator {
 public:
  virtual ~Allocator() = default;
  virtual DataPtr allocate(size_t nbytes) = 0;
};

// 64-byte aligned host memory.
Allocator* cpu_allocator();

}  // namespace cl
