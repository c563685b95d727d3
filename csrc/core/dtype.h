// Scalar types with torch's names, sizes and promotion rules.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/error.h"
#include "core/half.h"

namespace cl {

enum class ScalarType : int8_t {
  Bool,
  UInt8,
  Int8,
  Int16,
  Int32,
  Int64,
  Float16,
  BFloat16,
  Float32,
  Float64,
};
constexpr int kNumScalarTypes = 10;

size_t itemsize(ScalarType t);
// "float32", "int64", ... (torch's dtype names without the "torch." prefix).
const char* dtype_name(ScalarType t);
// "Float", "Long", ... (the names torch uses in error messages).
const char* dtype_short_name(ScalarType t);
inline bool is_floating(ScalarType t) { return t >= ScalarType::Float16; }
inline bool is_integral(ScalarType t, bool include_bool) {
  return t == ScalarType::Bool ? include_bool : t <= ScalarType::Int64;
}
inline bool is_signed(ScalarType t) { return t != ScalarType::Bool && t != ScalarType::UInt8; }
// torch.promote_types for the types above.
ScalarType promote_types(ScalarType a, ScalarType b);
// torch.can_cast: whether a result of type `from` may be written into `to` by an op.
bool can_cast(ScalarType from, ScalarType to);

ScalarType get_default_dtype();
void set_default_dtype(ScalarType t);

template <class T>
struct TypeOf;
#define CL_TYPE_OF(cpp, tag)                             \
  template <>                                            \
  struct TypeOf<cpp> {                                   \
    static constexpr ScalarType value = ScalarType::tag; \
  };
CL_TYPE_OF(bool, Bool)
CL_TYPE_OF(uint8_t, UInt8)
CL_TYPE_OF(int8_t, Int8)
CL_TYPE_OF(int16_t, Int16)
CL_TYPE_OF(int32_t, Int32)
CL_TYPE_OF(int64_t, Int64)
CL_TYPE_OF(Half, Float16)
CL_TYPE_OF(BFloat16, BFloat16)
CL_TYPE_OF(float, Float32)
CL_TYPE_OF(double, Float64)
#undef CL_TYPE_OF

}  // namespace cl

// Dispatch a runtime ScalarType to a template body: inside, `scalar_t` is the C++ type.
#define CL_CASE_TYPE(enum_tag, cpp, ...) \
  case ::cl::ScalarType::enum_tag: {     \
    using scalar_t = cpp;                \
    __VA_ARGS__();                       \
    break;                               \
  }
#define CL_DISPATCH_ALL_TYPES(TYPE, NAME, ...)                        \
  [&] {                                                               \
    switch (TYPE) {                                                   \
      CL_CASE_TYPE(Bool, bool, __VA_ARGS__)                           \
      CL_CASE_TYPE(UInt8, uint8_t, __VA_ARGS__)                       \
      CL_CASE_TYPE(Int8, int8_t, __VA_ARGS__)                         \
      CL_CASE_TYPE(Int16, int16_t, __VA_ARGS__)                       \
      CL_CASE_TYPE(Int32, int32_t, __VA_ARGS__)                       \
      CL_CASE_TYPE(Int64, int64_t, __VA_ARGS__)                       \
      CL_CASE_TYPE(Float16, ::cl::Half, __VA_ARGS__)                  \
      CL_CASE_TYPE(BFloat16, ::cl::BFloat16, __VA_ARGS__)             \
      CL_CASE_TYPE(Float32, float, __VA_ARGS__)                       \
      CL_CASE_TYPE(Float64, double, __VA_ARGS__)                      \
      default:                                                        \
        throw ::cl::Error(std::string(NAME) + ": unsupported dtype"); \
    }                                                                 \
  }()
