// resize_ in the core (csrc/core/resize.cpp): the storage kept or grown in place, shared by
// views; checks before any change.
#include <gtest/gtest.h>

#include <cstring>

#include "core/error.h"
#include "core/resize.h"
#include "core/tensor.h"

using namespace cl;

namespace {
Tensor cpu_floats(int64_t n) {
  Tensor t = empty({n}, ScalarType::Float32, Device(DeviceType::CPU));
  auto* p = reinterpret_cast<float*>(t->data());
  for (int64_t i = 0; i < n; ++i) p[i] = float(i);
  return t;
}
}  // namespace

TEST(Resize, KeepsStorageWhenLargeEnough) {
  Tensor t = cpu_floats(10);
  void* before = t->storage->data.get();
  resize_(t, {2, 3});
  EXPECT_EQ(t->strides, (Shape{3, 1}));
  EXPECT_EQ(t->storage->data.get(), before);
  EXPECT_EQ(t->storage->nbytes, 40u);  // never shrinks
}

TEST(Resize, GrowsSharedStorageInPlace) {
  Tensor t = cpu_floats(4);
  Tensor v = slice(t, 0, 2, 4, 1);
  resize_(v, {4});
  EXPECT_EQ(v->offset, 2);
  EXPECT_EQ(v->storage, t->storage);
  EXPECT_EQ(t->storage->nbytes, 24u);
  EXPECT_EQ(reinterpret_cast<float*>(t->data())[3], 3.0f);  // the old bytes were copied
  EXPECT_EQ(t->data() + 8, v->data());
}

TEST(Resize, SameSizesKeepStridesUnlessGiven) {
  Tensor tt = transpose(view(cpu_floats(6), {2, 3}), 0, 1);
  resize_(tt, {3, 2});
  EXPECT_EQ(tt->strides, (Shape{1, 3}));
  Shape st{2, 1};
  resize_(tt, {3, 2}, &st);
  EXPECT_EQ(tt->strides, st);
  EXPECT_TRUE(tt->is_contiguous());
}

TEST(Resize, ErrorsLeaveTensorUnchanged) {
  Tensor t = cpu_floats(3);
  t->storage->resizable = false;
  EXPECT_THROW(resize_(t, {4}), Error);
  EXPECT_EQ(t->sizes, (Shape{3}));
  EXPECT_THROW(resize_(t, {-1}), Error);
  EXPECT_THROW(resize_(t, {int64_t(1) << 62}), Error);
  resize_(t, {0});  // no bytes needed
  EXPECT_EQ(t->numel(), 0);
}
