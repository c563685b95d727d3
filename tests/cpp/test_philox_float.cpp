// The float Box-Muller of the GPU's normals (ops/philox_float.h) against the double path that
// the CPU computes (philox::sample4): equal to within float rounding for every word pair.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>

#include "ops/philox.h"
#include "ops/philox_float.h"

using namespace cl;

namespace {

// |float result - double result|, for the two normals of one word pair.
double pair_error(uint32_t w0, uint32_t w1) {
  float z0, z1;
  philox::normal_pair_float(w0, w1, &z0, &z1);
  double u1 = 1.0 - philox::uniform01(w0, 32), u2 = philox::uniform01(w1, 32);
  double r = std::sqrt(-2.0 * std::log(u1)), t = 6.283185307179586 * u2;
  return std::fmax(std::fabs(z0 - r * std::cos(t)), std::fabs(z1 - r * std::sin(t)));
}

}  // namespace

TEST(PhiloxFloat, NormalsMatchTheDoublePathAtTheEdges) {
  // u1 = 1 (r = 0), the end of the log1p branch, u1 = 2^-32 (the largest radius), and each
  // quadrant boundary of the angle.
  const uint32_t w0s[] = {0u,          1u,          255u,        256u,
                          0xFFFFFFu,   0x1000000u,  0x55555555u, 0x55555556u,
                          0x80000000u, 0xFFFFFFFEu, 0xFFFFFFFFu};
  const uint32_t w1s[] = {0u,          1u,          0x1FFFFFFFu, 0x20000000u,
                          0x3FFFFFFFu, 0x40000000u, 0x7FFFFFFFu, 0x80000000u,
                          0xDFFFFFFFu, 0xE0000000u, 0xFFFFFFFFu};
  for (uint32_t w0 : w0s) {
    for (uint32_t w1 : w1s) EXPECT_LT(pair_error(w0, w1), 1e-6) << w0 << " " << w1;
  }
  float z0, z1;
  philox::normal_pair_float(0u, 0u, &z0, &z1);
  EXPECT_EQ(z0, 0.0f);
  EXPECT_EQ(z1, 0.0f);
}

TEST(PhiloxFloat, NormalsMatchTheDoublePathOnRandomWords) {
  std::mt19937_64 gen(2024);
  double worst = 0;
  for (int i = 0; i < 2000000; ++i) {
    uint64_t v = gen();
    worst = std::fmax(worst, pair_error(uint32_t(v), uint32_t(v >> 32)));
  }
  // Small w0 (u1 just below 1): the radii that a rounded u1 would get wrong.
  for (uint32_t w0 = 0; w0 < (1u << 18); ++w0) {
    worst = std::fmax(worst, pair_error(w0, w0 * 2654435761u));
  }
  EXPECT_LT(worst, 1e-6);
}
