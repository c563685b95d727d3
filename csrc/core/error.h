// The exception hierarchy of the core and the checking macros.
//
// Each class maps to one Python exception in csrc/bindings/bind_errors.cpp, with torch's
// types: Error -> RuntimeError, ValueError, TypeError, IndexError, NotImplementedError,
// OutOfMemoryError (a RuntimeError subclass), AcceleratorError (a RuntimeError with
// error_code). Messages are built only when a check fails.
#pragma once

#include <cstdio>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace cl {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
class ValueError : public Error {
 public:
  using Error::Error;
};
class TypeError : public Error {
 public:
  using Error::Error;
};
class IndexError : public Error {
 public:
  using Error::Error;
};
class NotImplementedError : public Error {
 public:
  using Error::Error;
};
// Python's AssertionError: torch raises it for "not compiled with CUDA enabled".
class AssertionError : public Error {
 public:
  using Error::Error;
};
class OutOfMemoryError : public Error {
 public:
  using Error::Error;
};
class AcceleratorError : public Error {
 public:
  AcceleratorError(int code, const std::string& msg) : Error(msg), code_(code) {}
  int code() const { return code_; }

 private:
  int code_;
};

namespace detail {
// Note [Messages without iostreams]
// Messages are built by appending pieces to a std::string, never through an ostream. With
// GCC 13, LTO and hidden visibility, `ostream << long` got instantiated inside _C.so with a
// private copy of the num_put facet id, and formatting any integer crashed the process.
// Plain appends also cost less.
inline void append(std::string& s, const std::string& v) { s += v; }
inline void append(std::string& s, const char* v) { s += v; }
inline void append(std::string& s, char v) { s += v; }
inline void append(std::string& s, bool v) { s += v ? "1" : "0"; }
template <class T>
void append(std::string& s, const T& v) {
  if constexpr (std::is_integral_v<T>) {
    s += std::to_string(v);
  } else if constexpr (std::is_floating_point_v<T>) {
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%g", double(v));
    s += buf;
  } else if constexpr (std::is_pointer_v<T>) {
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%p", static_cast<const void*>(v));
    s += buf;
  } else if constexpr (std::is_enum_v<T>) {
    s += std::to_string(static_cast<long long>(v));
  } else {
    s += std::string(v);
  }
}
inline std::string str() { return {}; }
template <class... Args>
std::string str(const Args&... args) {
  std::string s;
  (append(s, args), ...);
  return s;
}
}  // namespace detail

}  // namespace cl

#define CL_CHECK_AS(Kind, cond, ...)                                              \
  do {                                                                            \
    if (__builtin_expect(!(cond), 0)) throw Kind(::cl::detail::str(__VA_ARGS__)); \
  } while (0)
#define CL_CHECK(cond, ...) CL_CHECK_AS(::cl::Error, cond, __VA_ARGS__)
#define CL_CHECK_TYPE(cond, ...) CL_CHECK_AS(::cl::TypeError, cond, __VA_ARGS__)
#define CL_CHECK_VALUE(cond, ...) CL_CHECK_AS(::cl::ValueError, cond, __VA_ARGS__)
#define CL_CHECK_INDEX(cond, ...) CL_CHECK_AS(::cl::IndexError, cond, __VA_ARGS__)
#define CL_THROW(...) throw ::cl::Error(::cl::detail::str(__VA_ARGS__))
