// The exception hierarchy of the core and the checking macros.
//
// Each class maps to one Python exception in csrc/bindings/bind_errors.cpp, with torch's
// types: Error -> RuntimeError, ValueError, TypeError, IndexError, NotImplementedError,
// OutOfMemoryError (a RuntimeError subclass), AcceleratorError (a RuntimeError with
// error_code). Messages are built only when a check fails.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>

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
inline std::string str() { return {}; }
template <class... Args>
std::string str(const Args&... args) {
  std::ostringstream os;
  (os << ... << args);
  return os.str();
}
}  // namespace detail

}  // namespace cl

#define CL_CHECK_AS(Kind, cond, ...)                                        \
  do {                                                                      \
    if (__builtin_expect(!(cond), 0)) throw Kind(::cl::detail::str(__VA_ARGS__)); \
  } while (0)
#define CL_CHECK(cond, ...) CL_CHECK_AS(::cl::Error, cond, __VA_ARGS__)
#define CL_CHECK_TYPE(cond, ...) CL_CHECK_AS(::cl::TypeError, cond, __VA_ARGS__)
#define CL_CHECK_VALUE(cond, ...) CL_CHECK_AS(::cl::ValueError, cond, __VA_ARGS__)
#define CL_CHECK_INDEX(cond, ...) CL_CHECK_AS(::cl::IndexError, cond, __VA_ARGS__)
#define CL_THROW(...) throw ::cl::Error(::cl::detail::str(__VA_ARGS__))
