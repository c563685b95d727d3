// Generators (ops/generator.h) and the random fills that draw from them.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <vector>

#include "core/cuda_api.h"
#include "core/error.h"
#include "core/half.h"
#include "core/mem_overlap.h"
#include "ops/cpu_random.h"
#include "ops/generator.h"
#include "ops/kernels.h"
#include "ops/ops.h"
#include "ops/sort.h"

namespace cl {

namespace {

constexpr int kMaxCudaDevices = 64;

// Checks that `gen` (null: the device's default) draws for `d`, and returns it.
Generator& generator_for(Device d, Generator* gen) {
  if (gen == nullptr) return *default_generator(d);
  CL_CHECK(gen->device().type == d.type, "Expected a '", device_type_name(d.type),
           "' device type for generator but found '", device_type_name(gen->device().type), "'");
  return *gen;
}

// Runs cpu(dense, generator) under the generator's lock, where `dense` holds t's elements in
// t's memory order (t itself when it has no gaps: the order torch's iterator writes them).
template <class Cpu>
void cpu_fill(const Tensor& t, Generator& g, Cpu cpu) {
  if (t->numel() == 0) return;
  const bool direct = t->is_contiguous();
  Tensor dense = direct ? t : empty_preserve(t, t->dtype, t->device());
  {
    std::lock_guard<std::mutex> lock(g.mutex());
    cpu(dense, g);
  }
  if (!direct) copy_(t, dense);
}

// torch's calc_execution_policy for its CUDA random kernels: 256-thread blocks, no more than
// the device keeps resident (SMs x max threads per SM / 256), and a Philox offset increment
// of 4 for every grid-stride step a thread takes (`unroll` elements per step). The grid, and
// so the numbers of large draws, depends on the GPU model, as torch's do.
struct CudaLaunch {
  unsigned grid;
  uint64_t increment;
};

CudaLaunch cuda_policy(int device, int64_t numel, int unroll) {
  const cuda::DeviceProperties& p = cuda::get_device_properties(device);
  const uint64_t n = uint64_t(numel), block = 256;
  uint64_t grid = (n + block - 1) / block;
  const uint64_t resident =
      uint64_t(p.multi_processor_count) * uint64_t(p.max_threads_per_multi_processor / int(block));
  grid = std::min(grid, resident);
  const uint64_t increment = ((n - 1) / (block * grid * uint64_t(unroll)) + 1) * 4;
  return {unsigned(grid), increment};
}

// A CUDA fill by torch's kernel for `kind`, into t (through a dense temporary in t's memory
// order when t has gaps, the order torch's iterator gives the elements).
void cuda_fill(const Tensor& t, Generator& g, cuda::TorchRandom kind, double a, double b,
               uint64_t range = 0, int64_t base = 0) {
  if (t->numel() == 0) return;
  Device d = resolve_device(t->device());
  const bool direct = t->is_contiguous();
  Tensor dense = direct ? t : empty_preserve(t, t->dtype, t->device());
  cuda::DeviceGuard guard(d.index);
  const int unroll = cuda::torch_random_unroll(kind, t->dtype, range);
  const CudaLaunch launch = cuda_policy(d.index, t->numel(), unroll);
  cuda::torch_random(dense, kind, a, b, range, base, g.philox_args(launch.increment), launch.grid);
  if (!direct) copy_(t, dense);
}

Generator& gen_of(const Tensor& t, Generator* gen) {
  return generator_for(resolve_device(t->device()), gen);
}

// The layout of torch's CPU state (CPUGeneratorImplState): a legacy block with the seed,
// `left`, `seeded`, `next`, the 624 state words widened to 64 bits, three unused doubles
// around the cached double normal and its flag, then the cached float normal and its flag.
namespace cpu_state {
constexpr size_t kSeed = 0, kLeft = 8, kSeeded = 12, kNext = 16, kWords = 24;
constexpr size_t kNormalY = kWords + 8 * MT19937::kN + 8;  // after normal_x
constexpr size_t kNormalValid = kNormalY + 16;             // after normal_rho
constexpr size_t kFloatNormal = kNormalValid + 8;          // the legacy block is 8-aligned
constexpr size_t kFloatValid = kFloatNormal + 4;
static_assert(kFloatValid + 4 == Generator::kCpuStateBytes, "torch's layout");

template <class T>
void put(std::string& s, size_t at, T v) {
  std::memcpy(&s[at], &v, sizeof(T));
}
template <class T>
T get(const std::string& s, size_t at) {
  T v;
  std::memcpy(&v, &s[at], sizeof(T));
  return v;
}
}  // namespace cpu_state

}  // namespace

void Generator::manual_seed(uint64_t seed) {
  std::lock_guard<std::mutex> lock(mu_);
  seed_ = seed;
  offset_ = 0;
  engine_.seed_with(seed);
  next_float_normal.reset();
  next_double_normal.reset();
}

uint64_t Generator::initial_seed() const {
  std::lock_guard<std::mutex> lock(mu_);
  return device_.is_cpu() ? engine_.seed_ : seed_;
}

std::pair<uint64_t, uint64_t> Generator::state() const {
  std::lock_guard<std::mutex> lock(mu_);
  return {seed_, offset_};
}

void Generator::set_state(uint64_t seed, uint64_t offset) {
  std::lock_guard<std::mutex> lock(mu_);
  seed_ = seed;
  offset_ = offset;
}

std::pair<uint64_t, uint64_t> Generator::philox_reserve(uint64_t increment) {
  std::lock_guard<std::mutex> lock(mu_);
  // A kernel given the seed and offset as values would draw the same numbers at every replay
  // of a CUDA graph: only philox_args' kernels can be captured.
  CL_CHECK(!graph_seed_ || !cuda::current_stream_capturing(device_.index),
           "This random operation can't be captured in a CUDA graph: it takes the generator's "
           "seed and offset on the host, so every replay would repeat its numbers.");
  uint64_t base = offset_;
  offset_ += increment;
  return {seed_, base};
}

// Note [Random numbers in CUDA graphs]
// A captured kernel keeps the arguments it was launched with, so a seed and offset passed by
// value would draw the same numbers at every replay. As in torch (philox_cuda_state), while a
// graph captures the device's default generator, kernels get pointers to two words of device
// memory owned by the graph plus their offset within the graph, counted from 0 with the same
// per-kernel increments as eager launches; the generator's own offset does not move. At the
// end of the capture the graph learns the whole increment, and every replay first reserves
// that many offsets from the generator (exactly what the same kernels would reserve eagerly)
// and writes the seed and the base offset into its two words, on the replay's stream. So N
// replays draw the numbers of N eager runs and leave the generator where they would.
PhiloxArgs Generator::philox_args(uint64_t increment) {
  std::lock_guard<std::mutex> lock(mu_);
  PhiloxArgs a;
  // Only draws queued on a capturing stream go into the graph; another thread's eager draws
  // on another stream meanwhile (possible outside "global" mode) stay eager.
  if (graph_seed_ && cuda::current_stream_capturing(device_.index)) {
    a.seed_ptr = graph_seed_;
    a.offset_ptr = graph_offset_;
    a.offset = graph_increment_;
    graph_increment_ += increment;
    return a;
  }
  a.seed = seed_;
  a.offset = offset_;
  offset_ += increment;
  return a;
}

void Generator::graph_capture_begin(const uint64_t* seed_ptr, const uint64_t* offset_ptr) {
  std::lock_guard<std::mutex> lock(mu_);
  CL_CHECK(!graph_seed_, "A CUDA generator can be captured by one CUDA graph at a time.");
  graph_seed_ = seed_ptr;
  graph_offset_ = offset_ptr;
  graph_increment_ = 0;
}

uint64_t Generator::graph_capture_end() {
  std::lock_guard<std::mutex> lock(mu_);
  graph_seed_ = graph_offset_ = nullptr;
  uint64_t inc = graph_increment_;
  graph_increment_ = 0;
  return inc;
}

bool Generator::graph_capturing() const {
  std::lock_guard<std::mutex> lock(mu_);
  return graph_seed_ != nullptr;
}

std::string Generator::cpu_state() const {
  using namespace cpu_state;
  std::lock_guard<std::mutex> lock(mu_);
  std::string s(kCpuStateBytes, '\0');
  put<uint64_t>(s, kSeed, engine_.seed_);
  put<int32_t>(s, kLeft, engine_.left_);
  put<int32_t>(s, kSeeded, engine_.seeded_ ? 1 : 0);
  put<uint64_t>(s, kNext, engine_.next_);
  for (int i = 0; i < MT19937::kN; ++i) put<uint64_t>(s, kWords + 8 * size_t(i), engine_.state_[i]);
  if (next_double_normal) {
    put<int32_t>(s, kNormalValid, 1);
    put<double>(s, kNormalY, *next_double_normal);
  }
  if (next_float_normal) {
    put<uint8_t>(s, kFloatValid, 1);
    put<float>(s, kFloatNormal, *next_float_normal);
  }
  return s;
}

void Generator::set_cpu_state(const std::string& s) {
  using namespace cpu_state;
  CL_CHECK(s.size() == kCpuStateBytes, "Expected a CPUGeneratorImplState of size ", kCpuStateBytes,
           " but found the input RNG state size to be ", s.size());
  MT19937 e;
  e.seed_ = get<uint64_t>(s, kSeed);
  e.left_ = get<int32_t>(s, kLeft);
  e.seeded_ = get<int32_t>(s, kSeeded) != 0;
  e.next_ = uint32_t(get<uint64_t>(s, kNext));
  for (int i = 0; i < MT19937::kN; ++i)
    e.state_[i] = uint32_t(get<uint64_t>(s, kWords + 8 * size_t(i)));
  CL_CHECK(e.valid(), "Invalid mt19937 state");
  std::lock_guard<std::mutex> lock(mu_);
  engine_ = e;
  next_float_normal.reset();
  next_double_normal.reset();
  if (get<uint8_t>(s, kFloatValid)) next_float_normal = get<float>(s, kFloatNormal);
  if (get<int32_t>(s, kNormalValid)) next_double_normal = get<double>(s, kNormalY);
}

const GeneratorPtr& default_generator(Device device) {
  static std::mutex mu;
  static GeneratorPtr cpu = std::make_shared<Generator>(Device(DeviceType::CPU));
  static GeneratorPtr cuda[kMaxCudaDevices];
  if (device.is_cpu()) return cpu;
  Device d = resolve_device(device);
  CL_CHECK(d.index >= 0 && d.index < kMaxCudaDevices, "Invalid device index ", d.index);
  std::lock_guard<std::mutex> lock(mu);
  if (!cuda[d.index]) cuda[d.index] = std::make_shared<Generator>(d);
  return cuda[d.index];
}

void manual_seed(uint64_t seed) {
  // Every device's generator, including CUDA devices not used yet.
  default_generator(Device(DeviceType::CPU))->manual_seed(seed);
  for (int i = 0; i < kMaxCudaDevices; ++i)
    default_generator(Device(DeviceType::CUDA, i))->manual_seed(seed);
}

void uniform_(const Tensor& t, double lo, double hi, Generator* gen) {
  CL_CHECK_AS(NotImplementedError, is_floating(t->dtype),
              "\"check_uniform_bounds\" not implemented for '", dtype_short_name(t->dtype), "'");
  // torch's checks, in its order: both ends within the dtype's finite range (NaN is not),
  // an ordered range, and a width that the dtype can hold.
  double max = 0;
  const char* cpp_name = "";
  switch (t->dtype) {
    case ScalarType::Float16:
      max = 65504.0, cpp_name = "c10::Half";
      break;
    case ScalarType::BFloat16:
      max = 3.3895313892515355e38, cpp_name = "c10::BFloat16";
      break;
    case ScalarType::Float32:
      max = double(std::numeric_limits<float>::max()), cpp_name = "float";
      break;
    default:
      max = std::numeric_limits<double>::max(), cpp_name = "double";
      break;
  }
  CL_CHECK(lo >= -max && lo <= max, "from is out of bounds for ", cpp_name);
  CL_CHECK(hi >= -max && hi <= max, "to is out of bounds for ", cpp_name);
  CL_CHECK(lo <= hi, "uniform_ expects to return a [from, to) range, but found from=", lo,
           " > to=", hi);
  CL_CHECK(hi - lo <= max, "uniform_ expects to-from <= std::numeric_limits<",
           dtype_short_name(t->dtype), ">::max(), but found to=", hi, " and from=", lo,
           " which result in to-from to exceed the limit");
  Generator& g = gen_of(t, gen);
  if (t->is_cuda()) {
    cuda_fill(t, g, cuda::TorchRandom::Uniform, lo, hi);
  } else {
    cpu_fill(t, g, [&](const Tensor& d, Generator& gg) { cpu_random::uniform(d, lo, hi, gg); });
  }
}

void normal_(const Tensor& t, double mean, double std, Generator* gen) {
  CL_CHECK_AS(NotImplementedError, is_floating(t->dtype),
              t->is_cuda() ? "\"normal_kernel_cuda\" not implemented for '"
                           : "\"normal_kernel_cpu\" not implemented for '",
              dtype_short_name(t->dtype), "'");
  CL_CHECK(std >= 0.0, "normal expects std >= 0.0, but found std ", std);
  Generator& g = gen_of(t, gen);
  if (t->is_cuda()) {
    cuda_fill(t, g, cuda::TorchRandom::Normal, mean, std);
  } else {
    // torch's block kernel needs a contiguous tensor; others draw one pair at a time.
    const bool fill_path = t->is_contiguous();
    cpu_fill(t, g, [&](const Tensor& d, Generator& gg) {
      cpu_random::normal(d, mean, std, fill_path, gg);
    });
  }
}

void random_int_(const Tensor& t, int64_t lo, int64_t hi, Generator* gen) {
  CL_CHECK(lo <= hi,
           "random_ expects 'from' casted to dtype to be less than or equal to 'to_inc' "
           "casted to dtype, but got from=",
           lo, " > to_inc=", hi);
  uint64_t range = uint64_t(hi) - uint64_t(lo) + 1;  // exact; 0 (2^64): the whole int64 range
  Generator& g = gen_of(t, gen);
  if (t->is_cuda()) {
    cuda_fill(t, g, cuda::TorchRandom::FromTo, 0, 0, range, lo);
  } else {
    cpu_fill(t, g,
             [&](const Tensor& d, Generator& gg) { cpu_random::random_from_to(d, range, lo, gg); });
  }
}

void random_default_(const Tensor& t, int64_t hi, Generator* gen) {
  Generator& g = gen_of(t, gen);
  const uint64_t range = uint64_t(hi) + 1;
  if (t->is_cuda()) {
    cuda_fill(t, g, cuda::TorchRandom::Default, 0, 0, range, 0);
  } else {
    cpu_fill(t, g, [&](const Tensor& d, Generator& gg) {
      cpu_random::random_from_to(d, range, 0, gg, true);
    });
  }
}

void bernoulli_scalar_(const Tensor& t, double p, Generator* gen) {
  CL_CHECK(p >= 0 && p <= 1, "bernoulli_ expects p to be in [0, 1], but got p=", p);
  Generator& g = gen_of(t, gen);
  if (t->is_cuda()) {
    cuda_fill(t, g, cuda::TorchRandom::Bernoulli, p, 0);
    return;
  }
  cpu_fill(t, g, [&](const Tensor& d, Generator& gg) { cpu_random::bernoulli_scalar(d, p, gg); });
}

void bernoulli_tensor_(const Tensor& t, const Tensor& p, Generator* gen) {
  if (t->is_cuda()) {
    CL_CHECK(is_floating(p->dtype), "expected probabilities tensor to have floating type, got ",
             dtype_short_name(p->dtype));
  }
  CL_CHECK_AS(NotImplementedError, is_floating(p->dtype),
              "\"bernoulli_tensor_cpu_p_\" not implemented for '", dtype_short_name(p->dtype), "'");
  Generator& g = gen_of(t, gen);
  if (t->is_cuda()) {
    // torch's kernel: p as double for a double t, else float, in t's logical order; a Philox
    // offset increment of 12 (torch asks for 10, rounded up to a multiple of 4).
    if (t->numel() == 0) return;
    Device d = resolve_device(t->device());
    cuda::DeviceGuard guard(d.index);
    const ScalarType pt =
        t->dtype == ScalarType::Float64 ? ScalarType::Float64 : ScalarType::Float32;
    Tensor pd = contiguous(expand(to(p, d, pt, false, false), t->sizes));
    const bool direct = t->is_contiguous();
    Tensor dense = direct ? t : empty(t->sizes, t->dtype, t->device());
    cuda::torch_bernoulli_tensor(dense, pd, g.philox_args(12));
    if (!direct) copy_(t, dense);
    return;
  }
  if (t->numel() == 0) return;
  const bool direct = t->is_contiguous();
  Tensor dense = direct ? t : empty_preserve(t, t->dtype, t->device());
  // p in the same layout as the elements drawn, as double or float (torch's two kernels).
  const ScalarType pt = p->dtype == ScalarType::Float64 ? ScalarType::Float64 : ScalarType::Float32;
  Tensor pd = empty_preserve(dense, pt, dense->device());
  copy_(pd, expand(to(p, Device(DeviceType::CPU), p->dtype, false, false), t->sizes));
  bool in_range = true;
  for (int64_t i = 0; i < pd->numel(); ++i) {
    const double v = pt == ScalarType::Float64
                         ? reinterpret_cast<const double*>(pd->data())[i]
                         : double(reinterpret_cast<const float*>(pd->data())[i]);
    in_range &= v >= 0 && v <= 1;
  }
  CL_CHECK(in_range,
           "Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could this error "
           "message be improved?  If so, please report an enhancement request to PyTorch.)");
  {
    std::lock_guard<std::mutex> lock(g.mutex());
    cpu_random::bernoulli_tensor(dense, pd, g);
  }
  if (!direct) copy_(t, dense);
}

void exponential_(const Tensor& t, double lambda, Generator* gen) {
  Generator& g = gen_of(t, gen);
  if (t->is_cuda()) {
    cuda_fill(t, g, cuda::TorchRandom::Exponential, lambda, 0);
    return;
  }
  cpu_fill(t, g, [&](const Tensor& d, Generator& gg) { cpu_random::exponential(d, lambda, gg); });
}

// torch's CUDA randperm: a random key per position (random_ over the whole of int32, or of
// int64 where 32 bits would make equal keys too likely), a stable sort of 0..n-1 by the keys'
// low `bits` bits, and a shuffle of the runs of equal keys with n more Philox offsets.
static void cuda_randperm(const Tensor& out, int64_t n, Generator& g) {
  if (n == 0) return;
  const double nd = double(n);
  const int bits =
      std::min(64, int(std::ceil(std::log2(nd - (6 * nd * nd + 1) / (std::log(0.9) * 12)))));
  Device d = resolve_device(out->device());
  cuda::DeviceGuard guard(d.index);
  Tensor keys;
  if (bits <= 32) {
    keys = empty({n}, ScalarType::Int32, d);
    random_int_(keys, std::numeric_limits<int32_t>::min(),
                int64_t(std::numeric_limits<int32_t>::max()) - 1, &g);
  } else {
    keys = empty({n}, ScalarType::Int64, d);
    random_int_(keys, std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max() - 1,
                &g);
  }
  CL_CHECK(n <= std::numeric_limits<int32_t>::max(),
           "cub sort does not support sorting more than INT_MAX elements");
  const bool direct = out->is_contiguous() && out->dtype == ScalarType::Int64;
  Tensor dense = direct ? out : empty({n}, ScalarType::Int64, d);
  cuda::torch_randperm(keys, bits, dense, g.philox_args((uint64_t(n) + 3) / 4 * 4));
  if (!direct) copy_(out, dense);
}

void randperm_(const Tensor& out, int64_t n, Generator* gen) {
  Generator& g = gen_of(out, gen);
  if (out->is_cuda()) {
    cuda_randperm(out, n, g);
    return;
  }
  Tensor perm = empty({n}, ScalarType::Int64, Device(DeviceType::CPU));
  {
    std::lock_guard<std::mutex> lock(g.mutex());
    cpu_random::randperm(perm, n, g);
  }
  copy_(out, perm);
}

// torch's CUDA multinomial with replacement: rows normalised and prefix-summed in the
// probabilities' dtype as torch's kernels sum them, then one curand_uniform4 per sample (its
// first value) from the stream of thread (row, sample) of a (samples / 128, rows) grid of
// 128-thread blocks.
static Tensor cuda_multinomial(const Tensor& probs, int64_t rows, int64_t cats, int64_t samples,
                               Generator& g) {
  Device d = resolve_device(probs->device());
  if (rows == 0) return empty({0, samples}, ScalarType::Int64, d);  // no draws, as torch
  cuda::DeviceGuard guard(d.index);
  const unsigned grid_y = unsigned(std::min<int64_t>(rows, 65535));
  const unsigned grid_x = unsigned((samples - 1) / 128 + 1);
  const PhiloxArgs philox = g.philox_args(uint64_t((rows - 1) / grid_y + 1) * 4);
  Tensor out = empty({rows, samples}, ScalarType::Int64, d);
  cuda::torch_multinomial(contiguous(reshape(probs, {rows, cats})), samples, out, grid_x, grid_y,
                          philox);
  return probs->dim() == 1 ? view(out, {samples}) : out;
}

Tensor multinomial(const Tensor& probs, int64_t samples, bool replacement, Generator* gen) {
  CL_CHECK(probs->dim() > 0 && probs->dim() <= 2, "prob_dist must be 1 or 2 dim");
  CL_CHECK(is_floating(probs->dtype),
           "multinomial only supports floating-point dtypes for input, got: ",
           dtype_short_name(probs->dtype));
  CL_CHECK(samples > 0, "cannot sample n_sample <= 0 samples");
  const int64_t cats = probs->sizes[probs->dim() - 1];
  CL_CHECK(replacement || samples <= cats,
           "cannot sample n_sample > prob_dist.size(-1) samples without replacement");
  CL_CHECK(cats <= (int64_t(1) << 24), "number of categories cannot exceed 2^24");
  const int64_t rows = probs->dim() > 1 ? probs->sizes[0] : 1;
  Shape out_shape = probs->dim() == 1 ? Shape{samples} : Shape{rows, samples};
  Generator& g = gen_of(probs, gen);
  Tensor cpu_probs = contiguous(to(probs, Device(DeviceType::CPU), probs->dtype, false, false));
  Tensor out = empty(out_shape, ScalarType::Int64, Device(DeviceType::CPU));
  if (!replacement || samples == 1) {
    // torch's sampling without replacement: the largest p / q with q ~ Exponential(1)
    // (Gumbel top-k), after checking the distribution.
    Tensor as64 = to(cpu_probs, Device(DeviceType::CPU), ScalarType::Float64, false, false);
    const double* p = reinterpret_cast<const double*>(as64->data());
    bool bad = false;
    for (int64_t i = 0; i < as64->numel(); ++i)
      bad |= !(p[i] >= 0 && p[i] < std::numeric_limits<double>::infinity());
    CL_CHECK(!bad, "probability tensor contains either `inf`, `nan` or element < 0");
    for (int64_t r = 0; r < rows; ++r) {
      double s = 0;
      for (int64_t j = 0; j < cats; ++j) s += p[r * cats + j];
      CL_CHECK(s != 0, "invalid multinomial distribution (sum of probabilities <= 0)");
    }
    Tensor q = empty(probs->sizes, probs->dtype, probs->device());
    exponential_(q, 1.0, &g);
    Tensor ratio = binary(BinaryOp::Div, probs, q);
    // The largest ratios first, equal ones by index; on the GPU by its stable sort.
    if (probs->is_cuda()) return std::get<1>(sort(ratio, -1, true, samples));
    ratio = contiguous(to(ratio, Device(DeviceType::CPU), ScalarType::Float64, false, false));
    const double* v = reinterpret_cast<const double*>(ratio->data());
    int64_t* o = reinterpret_cast<int64_t*>(out->data());
    std::vector<int64_t> idx(static_cast<size_t>(cats));
    for (int64_t r = 0; r < rows; ++r) {
      const double* row = v + r * cats;
      std::iota(idx.begin(), idx.end(), 0);
      std::partial_sort(idx.begin(), idx.begin() + samples, idx.end(), [&](int64_t a, int64_t b) {
        return row[a] > row[b] || (row[a] == row[b] && a < b);
      });
      std::copy(idx.begin(), idx.begin() + samples, o + r * samples);
    }
  } else if (probs->is_cuda()) {
    cpu_random::multinomial_check(cpu_probs);  // torch's errors, where its kernel would assert
    return cuda_multinomial(probs, rows, cats, samples, g);
  } else {
    std::lock_guard<std::mutex> lock(g.mutex());
    cpu_random::multinomial_with_replacement(cpu_probs, samples, out, g);
  }
  if (probs->is_cuda()) return to(out, probs->device(), ScalarType::Int64, false, false);
  return out;
}

// torch's dropout_cuda: the grid and offset increment of the other random kernels (four
// elements per draw); a dense input whose address is aligned for it and whose size divides
// evenly is read `vec` elements at a time in memory order (vec up to 16 bytes), any other in
// logical order.
std::pair<Tensor, Tensor> fused_dropout(const Tensor& x, double p, Generator* gen) {
  CL_CHECK(x->is_cuda(), "fused_dropout expects a CUDA tensor");
  Generator& g = gen_of(x, gen);
  Device d = resolve_device(x->device());
  cuda::DeviceGuard guard(d.index);
  Tensor out = empty_preserve(x, x->dtype, d);
  Tensor mask = empty_preserve(x, ScalarType::Bool, d);
  const int64_t n = x->numel();
  if (n == 0) return {clone(x), mask};
  int vec = 1;
  if (is_non_overlapping_and_dense(*x)) {
    const uintptr_t addr = reinterpret_cast<uintptr_t>(x->data());
    const size_t size = itemsize(x->dtype);
    vec = addr % (8 * size) == 0 ? 8 : addr % (4 * size) == 0 ? 4 : addr % (2 * size) == 0 ? 2 : 1;
    vec = std::min(vec, int(16 / size));
    while (vec > 1 && n % vec != 0) vec /= 2;
  }
  const CudaLaunch launch = cuda_policy(d.index, n, 4);
  const PhiloxArgs philox = g.philox_args(launch.increment);
  const double keep = 1.0 - p;
  if (vec > 1 || x->is_contiguous()) {
    cuda::torch_dropout(x, out, mask, keep, vec, philox, launch.grid);
  } else {
    Tensor oc = empty(x->sizes, x->dtype, d), mc = empty(x->sizes, ScalarType::Bool, d);
    cuda::torch_dropout(contiguous(x), oc, mc, keep, 1, philox, launch.grid);
    copy_(out, oc);
    copy_(mask, mc);
  }
  return {out, mask};
}

}  // namespace cl
