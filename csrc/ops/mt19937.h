// The 32-bit Mersenne Twister (Matsumoto and Nishimura, 1998), with the state torch's CPU
// generator saves: the seed it started from, the 624 state words, the position of the next
// word and how many are left before the state is regenerated. Seeding takes the low 32 bits
// of the seed (Knuth's initialisation multiplier 1812433253); the seed itself is kept whole.
#pragma once

#include <algorithm>
#include <cstdint>

namespace cl {

class MT19937 {
 public:
  static constexpr int kN = 624;

  explicit MT19937(uint64_t seed = 5489) { seed_with(seed); }

  void seed_with(uint64_t seed) {
    seed_ = seed;
    seeded_ = true;
    state_[0] = uint32_t(seed);
    for (int j = 1; j < kN; ++j)
      state_[j] = 1812433253u * (state_[j - 1] ^ (state_[j - 1] >> 30)) + uint32_t(j);
    left_ = 1;  // the first draw regenerates the state
    next_ = 0;
  }

  // The next word. A state whose position has run past the words (next_ = 624 with left_ > 1,
  // which torch's checks let through and no draw of its own leaves) is regenerated, not
  // read beyond its end.
  uint32_t operator()() {
    if (--left_ == 0 || next_ >= uint32_t(kN)) regenerate();
    return temper(state_[next_++]);
  }

  // The next n words, the same as n calls of operator() return, written to out: the state's
  // words are tempered a run at a time, in a loop the compiler vectorises.
  void fill(uint32_t* out, int64_t n) {
    while (n > 0) {
      if (left_ == 1 || next_ >= uint32_t(kN)) {
        regenerate();
        left_ = kN + 1;  // operator() counts the first word of a new state without decrementing
      }
      const int64_t k = std::min<int64_t>({n, int64_t(left_) - 1, int64_t(kN) - int64_t(next_)});
      const uint32_t* s = state_ + next_;
      for (int64_t j = 0; j < k; ++j) out[j] = temper(s[j]);
      next_ += uint32_t(k);
      left_ -= int32_t(k);
      out += k;
      n -= k;
    }
  }

  static uint32_t temper(uint32_t y) {
    y ^= y >> 11;
    y ^= (y << 7) & 0x9d2c5680u;
    y ^= (y << 15) & 0xefc60000u;
    y ^= y >> 18;
    return y;
  }

  // The saved fields (torch's get_rng_state layout keeps them; see generator.cpp).
  uint64_t seed_ = 5489;
  int32_t left_ = 1;
  bool seeded_ = false;
  uint32_t next_ = 0;
  uint32_t state_[kN];

  // A state torch accepts: seeded, 1 <= left <= 624 and next <= 624.
  bool valid() const { return seeded_ && left_ > 0 && left_ <= kN && next_ <= uint32_t(kN); }

 private:
  static uint32_t twist(uint32_t u, uint32_t v) {
    uint32_t y = (u & 0x80000000u) | (v & 0x7fffffffu);
    return (y >> 1) ^ ((v & 1u) ? 0x9908b0dfu : 0u);
  }

  void regenerate() {
    constexpr int kM = 397;
    left_ = kN;
    next_ = 0;
    int i = 0;
    for (; i < kN - kM; ++i) state_[i] = state_[i + kM] ^ twist(state_[i], state_[i + 1]);
    for (; i < kN - 1; ++i) state_[i] = state_[i + kM - kN] ^ twist(state_[i], state_[i + 1]);
    state_[kN - 1] = state_[kM - 1] ^ twist(state_[kN - 1], state_[0]);
  }
};

}  // namespace cl
