// Scalar: a Python number (bool, int or float) carried into the core.
#pragma once

#include <cstdint>

#include "core/dtype.h"

namespace cl {

class Scalar {
 public:
  enum class Kind : int8_t { Bool, Int, Float };
  Scalar() : kind_(Kind::Int), i_(0) {}
  Scalar(bool b) : kind_(Kind::Bool), i_(b) {}
  Scalar(int64_t i) : kind_(Kind::Int), i_(i) {}
  Scalar(int i) : kind_(Kind::Int), i_(i) {}
  Scalar(double d) : kind_(Kind::Float), d_(d) {}

  Kind kind() const { return kind_; }
  bool is_floating() const { return kind_ == Kind::Float; }
  bool is_bool() const { return kind_ == Kind::Bool; }
  double to_double() const { return kind_ == Kind::Float ? d_ : double(i_); }
  int64_t to_int() const { return kind_ == Kind::Float ? int64_t(d_) : i_; }
  template <class T>
  T to() const {
    if constexpr (std::is_same_v<T, bool>) {
      return kind_ == Kind::Float ? d_ != 0 : i_ != 0;
    } else if constexpr (std::is_integral_v<T>) {
      return kind_ == Kind::Float ? T(int64_t(d_)) : T(i_);
    } else {
      return T(kind_ == Kind::Float ? d_ : double(i_));
    }
  }
  // The dtype a tensor made from this scalar would get (torch.tensor(x).dtype).
  ScalarType natural_dtype() const {
    return kind_ == Kind::Bool  ? ScalarType::Bool
           : kind_ == Kind::Int ? ScalarType::Int64
                                : get_default_dtype();
  }

 private:
  Kind kind_;
  union {
    int64_t i_;
    double d_;
  };
};

}  // namespace cl
