// The "invalid combination of arguments" text, as torch's invalid_arguments.cpp words it
// (Note [Argument errors] in docs/design.md): the call's arguments against torch's printed
// overloads, each unmatched one marked, quirks included. Split from the matching in
// arg_parser.cpp as torch splits python_arg_parser.cpp and invalid_arguments.cpp.
#include <string>
#include <vector>

#include "bindings/arg_parser.h"

namespace cl::bind {

namespace {

std::string torch_type_name(PyObject* obj) {
  std::string n = type_name(obj);
  if (starts_with(n, "cudalite.")) n = "torch." + n.substr(9);
  return n;
}

bool type_matches(const std::string& type, bool nullable, PyObject* obj) {
  if (nullable && obj == Py_None) return true;
  std::string n = torch_type_name(obj);
  if (type == "float") return n == "float" || n == "int" || n == "long";
  if (type == "int") return n == "int" || n == "long";
  return n == type;
}

std::string describe(PyObject* obj) {
  bool tuple = PyTuple_Check(obj);
  if (tuple || PyList_Check(obj)) {
    std::string inner;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(obj);
    for (Py_ssize_t i = 0; i < n; ++i) {
      if (i) inner += ", ";
      inner += type_name(PySequence_Fast_GET_ITEM(obj, i));
    }
    if (tuple) return "tuple of (" + inner + (n == 1 ? "," : "") + ")";
    return "list of [" + inner + "]";
  }
  return type_name(obj);
}

std::string key_text(PyObject* key) { return PyUnicode_Check(key) ? PyUnicode_AsUTF8(key) : ""; }

// One of torch's printed overloads, split as invalid_arguments.cpp splits it: at ", ", the
// "*" separator counting as an argument and a default read as the parameter's name.
struct Option {
  struct Arg {
    std::string name, type;
    bool nullable;
  };
  std::string text;
  std::vector<Arg> args;
  bool variadic = false;

  explicit Option(const std::string& t) : text(t) {
    if (t == "no arguments") return;
    std::string inner = t.substr(1, t.size() - 2);
    for (std::string arg : split(inner, ", ")) {
      size_t start = 0;
      bool nullable = false;
      if (starts_with(arg, "#")) start = 1;
      if (arg.compare(start, 1, "[") == 0) {
        nullable = true;
        start += 1;
        arg = arg.substr(0, arg.size() - std::string(" or None]").size());
      }
      size_t end = arg.rfind(' ');
      std::string name = arg.substr(end == std::string::npos ? 0 : end + 1);
      long e = end == std::string::npos ? -1 : long(end);
      if (arg.find("...") != std::string::npos) e -= 4;
      std::string type = e >= 0 ? arg.substr(start, size_t(e) - start) : arg.substr(start);
      args.push_back({name, type, nullable});
    }
    variadic = inner.find("...") != std::string::npos;
  }

  bool argcount_matches(Py_ssize_t got) const {
    Py_ssize_t n = Py_ssize_t(args.size());
    return got == n || (variadic && got > n);
  }

  std::vector<std::string> unmatched_kwargs(PyObject* kwargs) const {
    std::vector<std::string> out;
    Py_ssize_t nk = PyDict_GET_SIZE(kwargs);
    size_t start = size_t(std::max<Py_ssize_t>(Py_ssize_t(args.size()) - nk, 0));
    Py_ssize_t pos = 0;
    PyObject *key, *value;
    while (PyDict_Next(kwargs, &pos, &key, &value)) {
      std::string k = key_text(key);
      bool found = false;
      for (size_t i = start; i < args.size(); ++i) found |= args[i].name == k;
      if (!found) out.push_back(k);
    }
    return out;
  }

  std::string marked(PyObject* call_args, PyObject* kwargs) const {
    std::vector<PyObject*> values;  // positional, then the keyword values in order
    std::vector<std::string> keys;
    Py_ssize_t na = PyTuple_GET_SIZE(call_args);
    Py_ssize_t nk = PyDict_GET_SIZE(kwargs);
    std::string out = "(";
    for (Py_ssize_t i = 0; i < na + nk; ++i) {
      bool is_kwarg = i >= na;
      bool named = size_t(i) < args.size();
      PyObject* obj = Py_None;
      if (!is_kwarg) {
        obj = PyTuple_GET_ITEM(call_args, i);
      } else if (named) {  // torch looks the keyword up by the option's name at i
        PyObject* v = PyDict_GetItemString(kwargs, args[size_t(i)].name.c_str());
        obj = v ? v : Py_None;
      }
      bool ok;
      if (named) {
        ok = type_matches(args[size_t(i)].type, args[size_t(i)].nullable, obj);
      } else {
        ok = variadic && type_matches(args.back().type, args.back().nullable, obj);
      }
      std::string text =
          (is_kwarg ? (named ? args[size_t(i)].name : std::string("None")) + "=" : std::string()) +
          describe(obj);
      if (i) out += ", ";
      out += ok ? text : "!" + text + "!";
    }
    return out + ")";
  }
};

std::string join(const std::vector<std::string>& v, const char* sep) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) out += (i ? sep : "") + v[i];
  return out;
}

}  // namespace

// The call's arguments as torch lists them: types, then keywords (the last given first, as
// torch's hash map returns them: the caller orders `kwargs` so), with a trailing ", " when
// there are keywords only.
std::string given(PyObject* args, PyObject* kwargs) {
  std::vector<std::string> got;
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(args); ++i) {
    got.push_back(type_name(PyTuple_GET_ITEM(args, i)));
  }
  Py_ssize_t pos = 0;
  PyObject *key, *value;
  while (PyDict_Next(kwargs, &pos, &key, &value)) {
    got.push_back(key_text(key) + "=" + type_name(value));
  }
  return join(got, ", ") + (PyDict_GET_SIZE(kwargs) && !PyTuple_GET_SIZE(args) ? ", " : "");
}

std::string invalid_arguments(const std::string& name, PyObject* args, PyObject* kwargs,
                              const std::vector<std::string>& texts, const std::string& got) {
  std::string msg = name + "() received an invalid combination of arguments - ";
  Py_ssize_t n = PyTuple_GET_SIZE(args) + PyDict_GET_SIZE(kwargs);
  if (texts.size() == 1) {
    Option option(texts[0]);
    auto unmatched =
        PyDict_GET_SIZE(kwargs) ? option.unmatched_kwargs(kwargs) : std::vector<std::string>{};
    if (!unmatched.empty()) {
      return msg + "got unrecognized keyword arguments: " + join(unmatched, ", ");
    }
    std::string g =
        option.argcount_matches(n) ? option.marked(args, kwargs) : "(" + given(args, kwargs) + ")";
    return msg + "got " + g + ", but expected " + option.text;
  }
  msg += "got (" + (got.empty() ? given(args, kwargs) : got) + "), but expected one of:\n";
  for (const std::string& text : texts) {
    Option option(text);
    msg += " * " + text + "\n";
    if (option.argcount_matches(n)) {
      auto unmatched =
          PyDict_GET_SIZE(kwargs) ? option.unmatched_kwargs(kwargs) : std::vector<std::string>{};
      std::string why = unmatched.empty()
                            ? "arguments have invalid types: " + option.marked(args, kwargs)
                            : "keywords were incorrect: " + join(unmatched, ", ");
      msg += "      didn't match because some of the " + why + "\n";
    }
  }
  return msg;
}

}  // namespace cl::bind
