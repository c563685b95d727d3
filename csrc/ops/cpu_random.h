// torch's CPU random transforms, drawing from a CPU generator (ops/generator.h) whose
// mutex() the caller holds. Every fill writes a dense tensor in memory order, which is the
// order torch's TensorIterator visits the elements of its output; ops/random.cpp copies into
// tensors with gaps.
#pragma once

#include <cstdint>

#include "core/tensor.h"
#include "ops/generator.h"

namespace cl::cpu_random {

// uniform_(from, to): 24 random bits for float, 53 (of a 64-bit draw) for double, 11 for
// float16 and 8 for bfloat16, scaled in the dtype's accumulate type.
void uniform(const Tensor& t, double from, double to, Generator& g);
// normal_(mean, std): torch's scalar Box-Muller in double with the cached second value for
// fewer than 16 elements or a non-contiguous tensor (`fill_path` false), else its block
// Box-Muller over 16 uniforms at a time.
void normal(const Tensor& t, double mean, double std, bool fill_path, Generator& g);
// random_ / randint: (draw % range) + base; range 0 is all 64 bits (the whole int64 range).
// A 64-bit draw when range >= 2^28 (torch keeps the modulo's bias under about 5%), else 32
// bits. `default_range` (random_() without bounds, range = the dtype's maximum + 1): torch's
// other kernel, 64 bits for int64 and float64 only.
void random_from_to(const Tensor& t, uint64_t range, int64_t base, Generator& g,
                    bool default_range = false);
// bernoulli_(p) with a number p: one double uniform (64-bit draw) per element, value < p.
void bernoulli_scalar(const Tensor& t, double p, Generator& g);
// bernoulli_(p) with a tensor p laid out as t: double p draws doubles, float p floats.
void bernoulli_tensor(const Tensor& t, const Tensor& p, Generator& g);
// exponential_(lambda): -1 / lambda * log(1 - u) with a double uniform u.
void exponential(const Tensor& t, double lambda, Generator& g);
// randperm(n) into a contiguous int64 tensor of n elements.
void randperm(const Tensor& t, int64_t n, Generator& g);
// multinomial with replacement: `probs` a contiguous [rows, cats] float32/float64 tensor,
// `out` a contiguous [rows, samples] int64 tensor.
void multinomial_with_replacement(const Tensor& probs, int64_t samples, const Tensor& out,
                                  Generator& g);
// The checks of the rows alone (torch's errors for an entry < 0, inf or NaN, or a zero sum).
void multinomial_check(const Tensor& probs);

}  // namespace cl::cpu_random
