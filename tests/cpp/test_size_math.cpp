// Checked size arithmetic (csrc/core/size_math.h): torch's overflow errors, and no wrapped
// size reaching an allocation.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "core/error.h"
#include "core/resize.h"
#include "core/size_math.h"
#include "core/tensor.h"

using namespace cl;

namespace {
constexpr int64_t kBig = int64_t(1) << 62;
constexpr int64_t kMax = INT64_MAX;

template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST(SizeMath, Numel) {
  EXPECT_EQ(checked_numel({}), 1);
  EXPECT_EQ(checked_numel({2, 3}), 6);
  EXPECT_EQ(checked_numel({kBig, 0}), 0);
  EXPECT_EQ(checked_numel({0, kBig, kBig}), 0);  // 0 first: the product never overflows
  EXPECT_EQ(checked_numel({kMax}), kMax);
  const std::string msg = "numel: integer multiplication overflow";
  EXPECT_EQ(error_of([] { checked_numel({kBig, kBig, 0}); }), msg);
  EXPECT_EQ(error_of([] { checked_numel({kBig, 2}); }), msg);
  EXPECT_EQ(error_of([] { checked_numel({-1}); }), msg);
}

TEST(SizeMath, ContiguousBytes) {
  EXPECT_EQ(storage_nbytes_contiguous({2, 3}, 4), 24u);
  EXPECT_EQ(storage_nbytes_contiguous({kBig, 0}, 8), 0u);
  EXPECT_EQ(storage_nbytes_contiguous({2}, 4, 3), 20u);  // with a storage offset
  EXPECT_EQ(storage_nbytes_contiguous({kMax}, 1), uint64_t(kMax));
  EXPECT_EQ(error_of([] { storage_nbytes_contiguous({kBig}, 4); }),
            "Storage size calculation overflowed with sizes=[4611686018427387904]");
  EXPECT_EQ(error_of([] { storage_nbytes_contiguous({kBig + 16}, 4); }),
            "Storage size calculation overflowed with sizes=[4611686018427387920]");
  EXPECT_EQ(error_of([] {
              storage_nbytes_contiguous({int64_t(1) << 32, int64_t(1) << 32}, 1);
            }),
            "Storage size calculation overflowed with sizes=[4294967296, 4294967296]");
}

TEST(SizeMath, StridedBytes) {
  EXPECT_EQ(storage_nbytes_strided({2, 3}, {1, 2}, 0, 4), 24u);
  EXPECT_EQ(storage_nbytes_strided({0, 3}, {kMax, kMax}, 0, 4), 0u);
  EXPECT_EQ(storage_nbytes_strided({kBig}, {0}, 0, 4), 4u);  // an expanded view
  EXPECT_EQ(error_of([] { storage_nbytes_strided({2}, {kBig}, 0, 4); }),
            "Storage size calculation overflowed with sizes=[2] and strides=[4611686018427387904]");
  EXPECT_EQ(error_of([] { storage_nbytes_strided({2}, {1}, kMax, 1); }),
            "Storage size calculation overflowed with sizes=[2] and strides=[1]");
}

TEST(SizeMath, ContiguousStrides) {
  EXPECT_EQ(checked_contiguous_strides({2, 3, 4}), (Shape{12, 4, 1}));
  EXPECT_EQ(checked_contiguous_strides({kBig, 0}), (Shape{1, 1}));
  EXPECT_EQ(error_of([] {
              checked_contiguous_strides({0, kBig, 4});
            }),
            "Stride calculation overflowed");
}

TEST(SizeMath, EmptyAllocatesNothingWhenSizesOverflow) {
  const Device cpu(DeviceType::CPU);
  EXPECT_EQ(error_of([&] { empty({kBig}, ScalarType::Float32, cpu); }),
            "Storage size calculation overflowed with sizes=[4611686018427387904]");
  EXPECT_EQ(error_of([&] {
              empty({0, kBig, kBig}, ScalarType::Float32, cpu);
            }),
            "Stride calculation overflowed");
  Tensor t = empty({kBig, 0}, ScalarType::Float32, cpu);
  EXPECT_EQ(t->numel(), 0);
}

TEST(SizeMath, ViewsCheckTheirNumel) {
  Tensor one = empty({1}, ScalarType::Float32, Device(DeviceType::CPU));
  EXPECT_EQ(expand(one, {kBig})->numel(), kBig);
  EXPECT_EQ(error_of([&] { expand(one, {kBig, 4}); }), "numel: integer multiplication overflow");
  Tensor t = empty({16}, ScalarType::Float32, Device(DeviceType::CPU));
  EXPECT_EQ(error_of([&] {
              reshape(t, {kMax, -1, 4});
            }),
            "shape '[9223372036854775807, -1, 4]' is invalid for input of size 16");
  EXPECT_EQ(error_of([&] {
              resize_(t, {int64_t(1) << 32, int64_t(1) << 32});
            }),
            "numel: integer multiplication overflow");
  EXPECT_EQ(t->numel(), 16);
}
