// Core-level tests: dtype promotion, half conversions, device parsing, view strides, Philox.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "core/device.h"
#include "core/dtype.h"
#include "core/error.h"
#include "core/half.h"
#include "core/tensor.h"
#include "ops/mt19937.h"
#include "ops/ops.h"

using namespace cl;

TEST(DType, PromotionFollowsTorch) {
  EXPECT_EQ(promote_types(ScalarType::UInt8, ScalarType::Int8), ScalarType::Int16);
  EXPECT_EQ(promote_types(ScalarType::Bool, ScalarType::Int32), ScalarType::Int32);
  EXPECT_EQ(promote_types(ScalarType::Int64, ScalarType::Float16), ScalarType::Float16);
  EXPECT_EQ(promote_types(ScalarType::Float16, ScalarType::BFloat16), ScalarType::Float32);
  EXPECT_EQ(promote_types(ScalarType::Float32, ScalarType::Float64), ScalarType::Float64);
  EXPECT_FALSE(can_cast(ScalarType::Float32, ScalarType::Int64));
  EXPECT_FALSE(can_cast(ScalarType::Int64, ScalarType::Bool));
  EXPECT_TRUE(can_cast(ScalarType::Bool, ScalarType::Float16));
}

TEST(Half, RoundTripsAndRoundsToNearestEven) {
  for (float f : {0.0f, -0.0f, 1.0f, -2.5f, 65504.0f, 6.1035156e-05f, 5.9604645e-08f}) {
    EXPECT_EQ(float(Half(f)), f) << f;
  }
  EXPECT_TRUE(std::isinf(float(Half(65520.0f))));
  EXPECT_TRUE(std::isnan(float(Half(NAN))));
  EXPECT_EQ(float(Half(1.0f + 1.0f / 2048)), 1.0f);  // tie to even
  EXPECT_EQ(float(BFloat16(1.0f + 1.0f / 256)), 1.0f);
  EXPECT_EQ(float(BFloat16(3.0f)), 3.0f);
}

TEST(Convert, FloatToUnsignedGoesThroughInt64) {
  EXPECT_EQ(convert<uint8_t>(-1.5f), uint8_t(255));
  EXPECT_EQ(convert<int8_t>(-1.5), int8_t(-1));
  EXPECT_EQ(convert<bool>(0.25f), true);
}

TEST(Device, ParsesTorchStrings) {
  EXPECT_EQ(Device("cuda:1").index, 1);
  EXPECT_TRUE(Device("cuda").is_cuda());
  EXPECT_FALSE(Device("cuda").has_index());
  EXPECT_EQ(Device("cpu").str(), "cpu");
  EXPECT_THROW(Device("gpu"), Error);
  EXPECT_THROW(Device("cuda:x"), Error);
  EXPECT_THROW(Device("cuda:01"), Error);
}

TEST(Tensor, ViewStridesFollowTorch) {
  Tensor t = empty({2, 3, 4}, ScalarType::Float32, Device(DeviceType::CPU));
  Tensor v = view(t, {6, -1});
  EXPECT_EQ(v->sizes, (Shape{6, 4}));
  Tensor tt = transpose(t, 0, 2);
  EXPECT_FALSE(tt->is_contiguous());
  EXPECT_THROW(view(tt, {-1}), Error);
  Tensor r = reshape(tt, {-1});
  EXPECT_TRUE(r->is_contiguous());
  EXPECT_NE(r->storage, t->storage);
  Tensor e = expand(unsqueeze(select(t, 0, 1), 0), {5, 3, 4});
  EXPECT_EQ(e->strides[0], 0);
  EXPECT_EQ(e->offset, 12);
}

TEST(Ops, BroadcastAddAndPromotion) {
  Tensor a = full({2, 1}, Scalar(int64_t(3)), ScalarType::Int32, Device(DeviceType::CPU));
  Tensor b = full({3}, Scalar(0.5), ScalarType::Float32, Device(DeviceType::CPU));
  Tensor c = binary(BinaryOp::Add, Operand(a), Operand(b));
  EXPECT_EQ(c->sizes, (Shape{2, 3}));
  EXPECT_EQ(c->dtype, ScalarType::Float32);
  EXPECT_FLOAT_EQ(item(reduce(ReduceOp::Sum, c, {}, false)).to_double(), 21.0);
  Tensor d = binary(BinaryOp::Add, Operand(a), Operand(Scalar(2.5)));
  EXPECT_EQ(d->dtype, ScalarType::Float32);
  Tensor u = full({1}, Scalar(int64_t(200)), ScalarType::UInt8, Device(DeviceType::CPU));
  EXPECT_EQ(binary(BinaryOp::Add, Operand(u), Operand(Scalar(int64_t(100))))->dtype,
            ScalarType::UInt8);
}

TEST(MT19937, SameStreamAsTheStandardEngine) {
  // torch's CPU engine is the standard 32-bit Mersenne Twister seeded with the seed's low
  // 32 bits; the whole seed is kept.
  for (uint64_t seed : {uint64_t(0), uint64_t(5489), uint64_t(67280421310721ull)}) {
    MT19937 ours(seed);
    std::mt19937 ref(uint32_t(seed & 0xffffffffu));
    for (int i = 0; i < 2000; ++i) EXPECT_EQ(ours(), ref());
    EXPECT_EQ(ours.seed_, seed);
    EXPECT_TRUE(ours.valid());
  }
}
