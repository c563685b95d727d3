// torch's Python argument parser (torch/csrc/utils/python_arg_parser.cpp): signatures in
// torch's notation compiled once into C++ structures, calls matched against them, and
// torch's TypeErrors when none accepts a call (Note [Argument errors] in docs/design.md).
#pragma once

#include <Python.h>

#include <memory>
#include <string>
#include <vector>

#include "bindings/convert.h"

namespace cl::bind {

// The parameter types of the signature notation (_signatures.json's "functions" and
// "methods"): Tensor, int, int[], ScalarType, Device, Layout, bool, Dimname, Dimname[],
// float, Number, Tensor[], Generator, MemoryFormat, str, object; "T?" also takes None,
// "A|B" takes either.
enum class ArgType : uint8_t {
  Tensor,
  Int,
  IntList,
  ScalarType,
  Device,
  Layout,
  Bool,
  Dimname,
  DimnameList,
  Float,
  Number,
  TensorList,
  Generator,
  MemoryFormat,
  Str,
  Object,
};

struct Param {
  std::vector<ArgType> types;  // the first names the parameter in messages
  std::string type_text;       // the first type as written ("int[]")
  std::string name;
  PyObject* py_name = nullptr;        // interned
  PyObject* default_value = nullptr;  // owned; None where there is none
  bool optional = false;
  bool allow_none = false;
  bool keyword_only = false;
  int index = 0;
  ArgType type() const { return types[0]; }
  bool has(ArgType t) const;
};

// One signature (torch's FunctionSignature). The values of a match are borrowed references
// in the signature's order, nullptr where a parameter was not given (or None took its
// default).
struct Signature {
  std::string name;
  std::vector<Param> params;
  int min_args = 0, max_args = 0, max_pos_args = 0;
  bool hidden = false;  // torch's deprecated signatures: matched, never named in errors

  explicit Signature(const std::string& fmt, bool hidden = false);
  Signature(Signature&& o) noexcept;
  ~Signature();
  // 1: matched (values in `out`), 0: not, -1: a Python error is set (torch's TypeError with
  // `raise`, or one it raises while matching, e.g. a Tensor list with another element).
  int match(PyObject* args, PyObject* kwargs, bool raise, std::vector<PyObject*>& out) const;
  // match() without raising or values, for a vectorcall's arguments (the entry's check on
  // the way in: no tuple, no dict). `determined`: set to whether any call whose arguments
  // have the same types (of those the entry caches: Note [Parsing at the entry]) fits too.
  int fits(PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames,
           bool* determined = nullptr) const;
  // The values of a match as the function receives them (torch's PythonArgs): ints and int
  // lists unpacked, Python types read as dtypes, defaults filled in. A new list or nullptr
  // with the error set.
  PyObject* convert(const std::vector<PyObject*>& raw) const;
  PyObject* int_list(const Param& p, PyObject* seq) const;
  // One value of a match as convert() makes it (a new reference; nullptr with the error set).
  PyObject* convert_one(const Param& p, PyObject* v) const;
  // match() and convert() of a vectorcall's arguments in one pass, with no allocation (Note
  // [Parsed calls] in bind_checked.cpp): 1 with values[0..params.size()) new references in
  // the signature's order, 0 when the call does not fit, -1 with the error set (torch's
  // unpacking errors). `values` has room for kMaxParsedParams.
  static constexpr size_t kMaxParsedParams = 32;
  int parse_values(PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames,
                   PyObject** values) const;
  // The names of the keyword-only parameters, as a vectorcall's kwnames (nullptr: none).
  PyObject* keyword_names() const;

 private:
  mutable PyObject* kwonly_names_ = nullptr;  // built on the first need
};

// A function's signatures (torch's PythonArgParser): the first that matches wins; when none
// does, torch's error of the only plausible one, else its "invalid combination" message.
struct FunctionParser {
  std::string name;
  std::vector<Signature> signatures;
  std::vector<std::string> texts;  // torch's texts of its overloads (for its messages)
  bool has_texts = false;
  bool single = false;  // torch has one signature where this has several forms of it
  std::vector<Signature> text_signatures;  // the texts compiled, on the first need

  // Index of the signature that matched (values in `out`), or -1 with torch's error set.
  int parse(PyObject* args, PyObject* kwargs, std::vector<PyObject*>& out);
  // For a vectorcall's arguments: 1 when a signature (a hidden one included) accepts them,
  // 0 when none does, -1 with an error torch raises while matching.
  int fits(PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames,
           bool* determined = nullptr) const;
  // Sets torch's error for arguments that fit no signature (-1); 0 where parse() finds one
  // after all (torch's texts of its overloads accept what the table does not).
  int refuse(PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames);
};

// The name torch's messages give obj's type: "Tensor", "int", "torch.dtype"-like names
// ("cudalite.dtype" here), "numpy.int64".
std::string type_name(PyObject* obj);
// torch's "received an invalid combination of arguments" message for a call against
// `texts` (its overloads as it prints them); kwargs in the order torch lists them; `got`:
// the call's arguments as a first line already printed them (empty: computed).
std::string invalid_arguments(const std::string& name, PyObject* args, PyObject* kwargs,
                              const std::vector<std::string>& texts, const std::string& got);

// The call's arguments as torch's messages list them ("int, str, dim=int"); kwargs in the
// order torch lists them (arg_errors.cpp).
std::string given(PyObject* args, PyObject* kwargs);
// Text helpers shared by arg_parser.cpp and arg_errors.cpp.
std::vector<std::string> split(const std::string& s, const std::string& sep);
bool starts_with(const std::string& s, const std::string& p);

void bind_arg_parser(py::module_& m);

}  // namespace cl::bind
