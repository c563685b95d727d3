#include "core/dtype.h"

#include <atomic>

#include "core/error.h"

namespace cl {

size_t itemsize(ScalarType t) {
  static constexpr size_t kSizes[] = {1, 1, 1, 2, 4, 8, 2, 2, 4, 8};
  return kSizes[int(t)];
}

const char* dtype_name(ScalarType t) {
  static constexpr const char* kNames[] = {"bool",  "uint8",   "int8",     "int16",   "int32",
                                           "int64", "float16", "bfloat16", "float32", "float64"};
  return kNames[int(t)];
}

const char* dtype_short_name(ScalarType t) {
  static constexpr const char* kNames[] = {"Bool", "Byte", "Char",     "Short", "Int",
                                           "Long", "Half", "BFloat16", "Float", "Double"};
  return kNames[int(t)];
}

ScalarType promote_types(ScalarType a, ScalarType b) {
  if (a == b) return a;
  if (a == ScalarType::Bool) return b;
  if (b == ScalarType::Bool) return a;
  bool fa = is_floating(a), fb = is_floating(b);
  if (fa != fb) return fa ? a : b;
  if (fa) {
    // float16 with bfloat16 has no exact common type below float32.
    if ((a == ScalarType::Float16 && b == ScalarType::BFloat16) ||
        (a == ScalarType::BFloat16 && b == ScalarType::Float16))
      return ScalarType::Float32;
    return a > b ? a : b;
  }
  // Both integral, neither bool. uint8 with a signed type needs a wider signed type.
  if (a == ScalarType::UInt8 || b == ScalarType::UInt8) {
    ScalarType other = a == ScalarType::UInt8 ? b : a;
    return other == ScalarType::Int8 ? ScalarType::Int16 : other;
  }
  return a > b ? a : b;
}

bool can_cast(ScalarType from, ScalarType to) {
  // torch: no float -> integral, no non-bool -> bool.
  if (is_floating(from) && !is_floating(to)) return false;
  if (from != ScalarType::Bool && to == ScalarType::Bool) return false;
  return true;
}

namespace {
std::atomic<ScalarType> g_default_dtype{ScalarType::Float32};
}
ScalarType get_default_dtype() { return g_default_dtype.load(std::memory_order_relaxed); }
void set_default_dtype(ScalarType t) {
  CL_CHECK_TYPE(is_floating(t), "only floating-point types are supported as the default type");
  g_default_dtype.store(t);
}

}  // namespace cl
