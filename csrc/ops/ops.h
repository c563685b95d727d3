// The operator entry points of the core. Each works on CPU and CUDA tensors; device
// checks, dtype promotion and output allocation happen here, the loops live in
// ops/cpu_*.cpp and kernels/*.cu.
#pragma once

#include <optional>
#include <tuple>
#include <vector>

#include "core/scalar.h"
#include "core/tensor.h"
#include "ops/span.h"

namespace cl {

class Generator;  // ops/generator.h

// The elementwise ops: one row each in ops/ops.def (Note [The op registry]).
enum class BinaryOp : int8_t {
#define CL_BINARY_OP(Enum, ...) Enum,
#include "ops/ops.def"
#undef CL_BINARY_OP
};
enum class UnaryOp : int8_t {
#define CL_UNARY_OP(Enum, ...) Enum,
#include "ops/ops.def"
#undef CL_UNARY_OP
};
inline constexpr int kNumBinaryOps = 0
#define CL_BINARY_OP(...) +1
#include "ops/ops.def"
#undef CL_BINARY_OP
    ;
inline constexpr int kNumUnaryOps = 0
#define CL_UNARY_OP(...) +1
#include "ops/ops.def"
#undef CL_UNARY_OP
    ;

// What an op's row says (ops/ops.def has the meaning of each column).
enum class OpResult : uint8_t { Same, Bool, Float };
enum class OpLoop : uint8_t { All, Floating, Integral, NotBool };
namespace op_flags {
enum : uint32_t {
  Inplace = 1,
  Grad = 2,
  TensorOnly = 4,
  Custom = 8,
  IntIdentity = 16,
  Foreach = 32,
  Alpha = 64,
};
}
struct OpInfo {
  const char* name;
  OpResult result;
  OpLoop loop;
  uint32_t flags;
  const char* aliases;  // space-separated
  const char* numpy;    // a NumPy expression of x (and y), for the tests
};
const OpInfo& op_info(BinaryOp op);
const OpInfo& op_info(UnaryOp op);
inline const char* binary_op_name(BinaryOp op) { return op_info(op).name; }
inline const char* unary_op_name(UnaryOp op) { return op_info(op).name; }

// Whether an op's loop exists for inputs of dtype `t` (at run time; op_table.h decides the
// same at compile time).
bool loop_takes(OpLoop loop, ScalarType t);

// A tensor or a Python number.
struct Operand {
  Operand(Tensor t) : tensor(std::move(t)) {}
  Operand(Scalar s) : scalar(s), is_scalar(true) {}
  Tensor tensor;
  Scalar scalar;
  bool is_scalar = false;
};

// torch.result_type over tensors and numbers (0-dim tensors and numbers don't widen a
// tensor of the same category).
ScalarType result_type(Span<const Operand*> ops);

// `out` may be null (allocate), an explicit out= tensor, or the input itself (in-place).
Tensor binary(BinaryOp op, const Operand& a, const Operand& b, const Tensor& out = nullptr);
Tensor unary(UnaryOp op, const Tensor& a, const Tensor& out = nullptr);
Tensor where(const Tensor& cond, const Operand& a, const Operand& b);
// a * b + c rounded once, for float and double operands of one dtype (numbers are rounded to
// it); `out` as for binary().
Tensor fma(const Operand& a, const Operand& b, const Operand& c, const Tensor& out = nullptr);
Tensor clamp(const Tensor& a, std::optional<Scalar> lo, std::optional<Scalar> hi,
             const Tensor& out = nullptr);

// Copies and conversions.
void copy_(const Tensor& dst, const Tensor& src, bool non_blocking = false);
Tensor contiguous(const Tensor& t);
Tensor clone(const Tensor& t);
// An uninitialised dense result of `shape` with its dims in the memory order of `like` when
// that has the same shape (x.t() gives an x.t()-ordered result, as in torch), else contiguous.
Tensor empty_like_layout(const Shape& shape, ScalarType dtype, Device dev, const Tensor* like);
// torch's preserve_format (empty_like, clone, to): `t`'s strides when it is non-overlapping
// and dense (any empty tensor is), else dense strides in the order of t's strides.
Tensor empty_preserve(const Tensor& t, ScalarType dtype, Device dev, bool pin_memory = false);
Tensor to(const Tensor& t, Device device, ScalarType dtype, bool non_blocking, bool copy);
Scalar item(const Tensor& t);

// Creation.
// Raises torch's "value cannot be converted to type <name> without overflow" when `value` does
// not fit `dtype` (c10::checked_convert's rules: negative ints wrap into unsigned types, floats
// must be finite and in range for integer types). What torch checks depends on the use:
//   kConstructor  torch.tensor(data): integer targets only, naming the dtype ("uint8");
//   kOperand      a number operand of where() or an index assignment: integer targets and
//                 float32 (a finite double beyond float's range), naming the C++ type;
//   kFill         fill_, full, masked_fill, clamp's bounds: float16 and bfloat16 too.
enum class ScalarUse { kConstructor, kOperand, kFill };
void check_scalar_fits(Scalar value, ScalarType dtype, ScalarUse use);
void fill_(const Tensor& t, Scalar value, ScalarUse use = ScalarUse::kFill);
Tensor full(const Shape& sizes, Scalar value, ScalarType dtype, Device device);
Tensor arange(double start, double end, double step, ScalarType dtype, Device device);
Tensor linspace(double start, double end, int64_t steps, ScalarType dtype, Device device);
Tensor eye(int64_t n, int64_t m, ScalarType dtype, Device device);

// Reductions over `dims` (empty: all dims): one row each in ops/reductions.def (Note
// [Reduction rows]).
enum class ReduceOp : int8_t {
#define CL_REDUCE_OP(Enum, ...) Enum,
#include "ops/reductions.def"
#undef CL_REDUCE_OP
};
Tensor reduce(ReduceOp op, const Tensor& t, Shape dims, bool keepdim,
              std::optional<ScalarType> dtype = std::nullopt);
// max/min along one dim: (values, indices).
std::tuple<Tensor, Tensor> reduce_with_indices(bool is_max, const Tensor& t, int64_t dim,
                                               bool keepdim);

// ---- scans ----
// Inclusive scans (cumsum, cumprod) along `dim`, computed in (and returned as) `dtype`.
enum class ScanOp : int8_t {
#define CL_SCAN_OP(Enum, ...) Enum,
#include "ops/reductions.def"
#undef CL_SCAN_OP
};
Tensor scan(ScanOp op, const Tensor& t, int64_t dim, ScalarType dtype);

// Indexing primitives: element offsets (int64, relative to the storage start) into `src`.
Tensor gather_offsets(const Tensor& src, const Tensor& offsets);
// mode: 0 assigns, 1 adds (index_put_ accumulate, scatter_add), 2 multiplies.
void scatter_offsets(const Tensor& dst, const Tensor& offsets, const Tensor& values, int mode);
// ---- gather/scatter along a dim ----
// out[i] = self[i with i[dim] = index[i]] over index's shape (int64 or int32 indices, already
// in range: the caller checks them). self, index: the same number of dims (1 or more).
Tensor gather_dim(const Tensor& self, int64_t dim, const Tensor& index);
// self[i with i[dim] = index[i]] (mode: 0 =, 1 +=, 2 *=) src[i] over index's shape; src has
// self's dtype and index's number of dims, or is 0-dim (one value for all).
void scatter_dim(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src, int mode);
Tensor nonzero(const Tensor& t);  // [n, ndim] int64
Tensor cat(const std::vector<Tensor>& ts, int64_t dim);

// Random numbers, drawn as torch draws them: mt19937 and torch's transforms on the CPU,
// torch's Philox layout on CUDA (docs/random.md). `gen` null: the device's default
// generator; otherwise it must be of the tensor's device type (ops/generator.h).
void uniform_(const Tensor& t, double lo, double hi, Generator* gen = nullptr);
void normal_(const Tensor& t, double mean, double std, Generator* gen = nullptr);
void random_int_(const Tensor& t, int64_t lo, int64_t hi,
                 Generator* gen = nullptr);  // [lo, hi], every int64 range exactly
// random_() without bounds: [0, hi] with hi the dtype's default maximum, drawn as torch's
// random_() draws (its own 32/64-bit choice).
void random_default_(const Tensor& t, int64_t hi, Generator* gen = nullptr);
void bernoulli_scalar_(const Tensor& t, double p, Generator* gen = nullptr);
void bernoulli_tensor_(const Tensor& t, const Tensor& p, Generator* gen = nullptr);
void exponential_(const Tensor& t, double lambda, Generator* gen = nullptr);
// randperm(n) into `out` (any dtype that holds n; resized to [n]).
void randperm_(const Tensor& out, int64_t n, Generator* gen = nullptr);
// multinomial(probs [cats] or [rows, cats], samples, replacement) -> int64 indices.
Tensor multinomial(const Tensor& probs, int64_t samples, bool replacement,
                   Generator* gen = nullptr);
// torch's fused CUDA dropout (native_dropout) of a CUDA tensor: (x * kept / (1 - p), kept).
std::pair<Tensor, Tensor> fused_dropout(const Tensor& x, double p, Generator* gen = nullptr);

// Matrix products on CUDA through cuBLAS (the CPU path goes through NumPy's BLAS).
Tensor cuda_matmul(const Tensor& a, const Tensor& b);

// Checks that all tensors share one device (0-dim CPU tensors count as numbers).
void check_same_device(Span<const Tensor*> ts);

}  // namespace cl
