// torch's argument parser in C++ (arg_parser.h; Note [Argument errors] in docs/design.md).
// The matching, conversions and messages are python_arg_parser.cpp's; the "invalid
// combination" text is invalid_arguments.cpp's, quirks included, in arg_errors.cpp.
#include "bindings/arg_parser.h"

#include <algorithm>
#include <type_traits>
#include <unordered_map>

namespace cl::bind {

namespace {

// Python classes looked up on first use (the parser runs after import).
PyObject* lookup(const char* module, const char* name) {
  PyObject* mod = PyImport_ImportModule(module);
  if (!mod) return nullptr;
  PyObject* r = PyObject_GetAttrString(mod, name);
  Py_DECREF(mod);
  return r;
}

struct Classes {
  PyObject* device = nullptr;
  PyObject* layout = nullptr;
  PyObject* generator = nullptr;
  PyObject* memory_format = nullptr;
  PyObject* real = nullptr;
  PyObject* number = nullptr;
  bool loaded = false;
};
Classes g_classes;

const Classes& classes() {
  if (!g_classes.loaded) {
    g_classes.device = lookup("cudalite._C", "device");
    g_classes.layout = lookup("cudalite._layout", "layout");
    g_classes.generator = lookup("cudalite.random", "Generator");
    g_classes.memory_format = lookup("cudalite._memory_format", "memory_format");
    g_classes.real = lookup("numbers", "Real");
    g_classes.number = lookup("numbers", "Number");
    if (!g_classes.device || !g_classes.layout || !g_classes.generator ||
        !g_classes.memory_format || !g_classes.real || !g_classes.number) {
      throw py::error_already_set();
    }
    g_classes.loaded = true;
  }
  return g_classes;
}

// isinstance that treats an error (a strange __class__) as false.
bool instance_of(PyObject* obj, PyObject* cls) {
  int r = PyObject_IsInstance(obj, cls);
  if (r < 0) PyErr_Clear();
  return r > 0;
}

bool is_np_integer(PyObject* obj) {
  PyObject* np = PyImport_GetModule(py::str("numpy").ptr());  // only when loaded
  if (!np) {
    PyErr_Clear();
    return false;
  }
  PyObject* integer = PyObject_GetAttrString(np, "integer");
  Py_DECREF(np);
  if (!integer) {
    PyErr_Clear();
    return false;
  }
  bool r = instance_of(obj, integer);
  Py_DECREF(integer);
  return r;
}

// THPUtils_checkLong: a Python int (not a bool) or a NumPy integer.
bool is_long(PyObject* obj) {
  if (PyLong_CheckExact(obj)) return true;
  if (PyBool_Check(obj)) return false;
  if (PyLong_Check(obj)) return true;
  if (PyFloat_Check(obj) || PyUnicode_Check(obj) || is_tensor(obj)) return false;
  return is_np_integer(obj);
}

Tensor tensor_of(PyObject* obj) {
  Tensor t;
  load_tensor(obj, t);
  return t;
}

bool is_0dim(PyObject* obj) {
  Tensor t = tensor_of(obj);
  return t && t->dim() == 0;
}

// is_int_or_symint: what the first element of an int list may be.
bool is_int_like(PyObject* obj) {
  if (is_long(obj)) return true;
  if (is_tensor(obj)) {  // one element of an integral dtype (bool included)
    Tensor t = tensor_of(obj);
    return t && t->numel() == 1 && !is_floating(t->dtype);
  }
  if (PyBool_Check(obj)) return false;
  PyObject* i = PyNumber_Index(obj);
  if (!i) {
    PyErr_Clear();
    return false;
  }
  Py_DECREF(i);
  return true;
}

// is_int_or_symint_list: a tuple or list whose first element is an int (torch looks at that
// one only); `failed` becomes 0 when that element is not one.
bool is_int_list(PyObject* obj, int& failed) {
  if (!PyTuple_Check(obj) && !PyList_Check(obj)) return false;
  if (PySequence_Fast_GET_SIZE(obj) == 0) return true;
  if (is_int_like(PySequence_Fast_GET_ITEM(obj, 0))) return true;
  failed = 0;
  return false;
}

const std::unordered_map<std::string, ArgType>& type_table() {
  static const std::unordered_map<std::string, ArgType> t = {
      {"Tensor", ArgType::Tensor},
      {"int", ArgType::Int},
      {"int[]", ArgType::IntList},
      {"ScalarType", ArgType::ScalarType},
      {"Device", ArgType::Device},
      {"Layout", ArgType::Layout},
      {"bool", ArgType::Bool},
      {"Dimname", ArgType::Dimname},
      {"Dimname[]", ArgType::DimnameList},
      {"float", ArgType::Float},
      {"Number", ArgType::Number},
      {"Tensor[]", ArgType::TensorList},
      {"Generator", ArgType::Generator},
      {"MemoryFormat", ArgType::MemoryFormat},
      {"str", ArgType::Str},
      {"object", ArgType::Object},
  };
  return t;
}

// torch's names of the parameter types, as its messages print them
const char* printed_name(ArgType t) {
  switch (t) {
    case ArgType::Tensor:
      return "Tensor";
    case ArgType::Int:
      return "int";
    case ArgType::IntList:
      return "tuple of ints";
    case ArgType::ScalarType:
      return "torch.dtype";
    case ArgType::Device:
      return "torch.device";
    case ArgType::Layout:
      return "torch.layout";
    case ArgType::Bool:
      return "bool";
    case ArgType::Dimname:
      return "name";
    case ArgType::DimnameList:
      return "tuple of names";
    case ArgType::Float:
      return "float";
    case ArgType::Number:
      return "Number";
    case ArgType::TensorList:
      return "tuple of Tensors";
    case ArgType::Generator:
      return "torch.Generator";
    case ArgType::MemoryFormat:
      return "torch.memory_format";
    case ArgType::Str:
      return "str";
    case ArgType::Object:
      return "object";
  }
  return "object";
}

PyObject* literal(const std::string& s) {
  if (s == "None") Py_RETURN_NONE;
  if (s == "True") Py_RETURN_TRUE;
  if (s == "False") Py_RETURN_FALSE;
  char* end = nullptr;
  long long v = std::strtoll(s.c_str(), &end, 10);
  if (!s.empty() && end && *end == '\0') return PyLong_FromLongLong(v);
  return PyUnicode_FromString(s.c_str());  // defaults never converted (floats, tuples, dtypes)
}

std::string strip(const std::string& s) {
  size_t b = s.find_first_not_of(' ');
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(' ');
  return s.substr(b, e - b + 1);
}

// The parameters of a signature's text, split at the commas outside brackets.
std::vector<std::string> split_params(const std::string& text) {
  std::vector<std::string> out;
  int depth = 0;
  std::string cur;
  for (char ch : text) {
    if (ch == '(' || ch == '[') ++depth;
    if (ch == ')' || ch == ']') --depth;
    if (ch == ',' && depth == 0) {
      out.push_back(strip(cur));
      cur.clear();
    } else {
      cur += ch;
    }
  }
  if (!strip(cur).empty()) out.push_back(strip(cur));
  return out;
}

void set_type_error(const std::string& msg) { PyErr_SetString(PyExc_TypeError, msg.c_str()); }

// A Python error raised while checking an object (its __index__, __class__ ...): the object
// fits no type.
int check_one(ArgType t, const Param& p, PyObject* obj, int& failed) {
  switch (t) {
    case ArgType::Int: {
      if (is_long(obj)) return 1;
      Tensor x = tensor_of(obj);
      return x && x->dim() == 0 && !is_floating(x->dtype) && x->dtype != ScalarType::Bool &&
             !x->requires_grad;
    }
    case ArgType::IntList:
      return is_int_list(obj, failed);
    case ArgType::Tensor:
      return is_tensor(obj);
    case ArgType::Bool:
      return PyBool_Check(obj);
    case ArgType::ScalarType:  // a dtype, or Python's int, float or bool
      return is_dtype_object(obj) || obj == reinterpret_cast<PyObject*>(&PyFloat_Type) ||
             obj == reinterpret_cast<PyObject*>(&PyLong_Type) ||
             obj == reinterpret_cast<PyObject*>(&PyBool_Type);
    case ArgType::Device:
      return is_long(obj) || PyUnicode_Check(obj) || instance_of(obj, classes().device);
    case ArgType::Layout:
      return instance_of(obj, classes().layout);
    case ArgType::Dimname:
      return obj == Py_None || PyUnicode_Check(obj);
    case ArgType::DimnameList: {  // names, or one name
      if (PyUnicode_Check(obj)) return 1;
      if (!PyTuple_Check(obj) && !PyList_Check(obj)) return 0;
      Py_ssize_t n = PySequence_Fast_GET_SIZE(obj);
      for (Py_ssize_t i = 0; i < n; ++i) {
        PyObject* x = PySequence_Fast_GET_ITEM(obj, i);
        if (x != Py_None && !PyUnicode_Check(x)) return 0;
      }
      return 1;
    }
    case ArgType::Float:  // THPUtils_checkDouble, or a 0-dim tensor
      if (PyFloat_Check(obj) || PyLong_Check(obj)) return 1;
      return instance_of(obj, classes().real) || is_0dim(obj);
    case ArgType::Number:  // THPUtils_checkScalar, or a 0-dim tensor
      if (PyFloat_Check(obj) || PyLong_Check(obj)) return 1;
      return instance_of(obj, classes().number) || is_0dim(obj);
    case ArgType::TensorList: {
      if (!PyTuple_Check(obj) && !PyList_Check(obj)) return 0;
      Py_ssize_t n = PySequence_Fast_GET_SIZE(obj);
      for (Py_ssize_t i = 0; i < n; ++i) {  // torch names the element that is not a Tensor
        PyObject* x = PySequence_Fast_GET_ITEM(obj, i);
        if (!is_tensor(x)) {
          set_type_error("expected Tensor as element " + std::to_string(i) + " in argument " +
                         std::to_string(p.index) + ", but got " + type_name(x));
          return -1;
        }
      }
      return 1;
    }
    case ArgType::Generator:
      return instance_of(obj, classes().generator);
    case ArgType::MemoryFormat:
      return instance_of(obj, classes().memory_format);
    case ArgType::Str:
      return PyUnicode_Check(obj);
    case ArgType::Object:
      return 1;
  }
  return 0;
}

int check(const Param& p, PyObject* obj, int& failed) {
  for (ArgType t : p.types) {
    int r = check_one(t, p, obj, failed);
    if (r != 0) return r;
  }
  return 0;
}

std::string plural(int n, const char* one, const char* many) { return n == 1 ? one : many; }

// ---- torch's errors of one signature ----

void extra_args(const Signature& s, Py_ssize_t nargs) {
  if (s.min_args != s.max_pos_args) {
    set_type_error(s.name + "() takes from " + std::to_string(s.min_args) + " to " +
                   std::to_string(s.max_pos_args) + " positional arguments but " +
                   std::to_string(nargs) + " were given");
    return;
  }
  int n = s.max_pos_args;
  set_type_error(s.name + "() takes " + std::to_string(n) + " positional argument" +
                 plural(n, "", "s") + " but " + std::to_string(nargs) + " " +
                 (nargs == 1 ? "was" : "were") + " given");
}

void missing_args(const Signature& s, size_t idx) {
  std::string names;
  int n = 0;
  for (size_t i = idx; i < s.params.size(); ++i) {
    if (s.params[i].optional) continue;
    if (n++) names += ", ";
    names += "\"" + s.params[i].name + "\"";
  }
  // (torch's plural is the other way round)
  set_type_error(s.name + "() missing " + std::to_string(n) + " required positional argument" +
                 plural(n, "s", "") + ": " + names);
}

void extra_kwargs(const Signature& s, PyObject* kwargs, Py_ssize_t nargs) {
  Py_ssize_t pos = 0;
  PyObject *key, *value;
  while (PyDict_Next(kwargs, &pos, &key, &value)) {
    std::string k = PyUnicode_Check(key) ? PyUnicode_AsUTF8(key) : "";
    auto it =
        std::find_if(s.params.begin(), s.params.end(), [&](const Param& p) { return p.name == k; });
    if (it == s.params.end()) {
      set_type_error(s.name + "() got an unexpected keyword argument '" + k + "'");
      return;
    }
    if (it - s.params.begin() < nargs) {
      set_type_error(s.name + "() got multiple values for argument '" + k + "'");
      return;
    }
  }
  set_type_error("invalid keyword arguments");
}

void bad_type(const Signature& s, const Param& p, PyObject* obj, PyObject* args, Py_ssize_t arg_pos,
              bool is_kwd, int failed) {
  // torch's int[N] (an int list that takes one int) is "int|int[]" in the table
  const char* tn =
      p.has(ArgType::Int) && p.has(ArgType::IntList) ? "tuple of ints" : printed_name(p.type());
  if (is_kwd) {
    set_type_error(s.name + "(): argument '" + p.name + "' must be " + tn + ", not " +
                   type_name(obj));
    return;
  }
  std::string head = s.name + "(): argument '" + p.name + "' (position " +
                     std::to_string(arg_pos + 1) + ") must be " + tn;
  if (failed != -1) {
    PyObject* seq = (PyTuple_Check(obj) || PyList_Check(obj)) ? obj : args;
    set_type_error(head + ", but found element of type " +
                   type_name(PySequence_Fast_GET_ITEM(seq, failed)) + " at pos " +
                   std::to_string(failed));
    return;
  }
  set_type_error(head + ", not " + type_name(obj));
}

// An int64 from an index-able object; false with torch's error where it is not one or
// does not fit.
bool unpack_long(PyObject* obj, long long& out, bool& overflow) {
  PyObject* i = PyNumber_Index(obj);
  if (!i) return false;
  int of = 0;
  out = PyLong_AsLongLongAndOverflow(i, &of);
  Py_DECREF(i);
  overflow = of != 0;
  return true;
}

// The ops whose Tensor parameters torch's parser lets take a Python number
// (should_allow_numbers_as_tensors).
bool numbers_as_tensors(const std::string& name) {
  static const char* ops[] = {"add",      "div",       "divide",       "mul",          "multiply",
                              "sub",      "subtract",  "true_divide",  "to",           "copy_",
                              "copysign", "copysign_", "floor_divide", "floor_divide_"};
  std::string base = name;
  for (const char* op : ops) {
    if (name == op) return true;
  }
  if (!base.empty() && base.back() == '_') {
    base.pop_back();
    for (int i = 0; i < 8; ++i) {
      if (base == ops[i]) return true;
    }
  }
  return false;
}

// A signature in this parser's notation from torch's printed one ("(Tensor other, *,
// Number alpha = 1)").
std::string from_text(const std::string& name, const std::string& text) {
  static const std::unordered_map<std::string, std::string> types = {
      {"tuple of ints", "int[]"},       {"tuple of names", "Dimname[]"},
      {"tuple of Tensors", "Tensor[]"}, {"name", "Dimname"},
      {"torch.dtype", "ScalarType"},    {"torch.device", "Device"},
      {"torch.layout", "Layout"},       {"torch.memory_format", "MemoryFormat"},
      {"torch.Generator", "Generator"},
  };
  std::string tensor = numbers_as_tensors(name) ? "Tensor|Number" : "Tensor";
  std::string out;
  if (text != "no arguments") {
    for (const std::string& p : split(text.substr(1, text.size() - 2), ", ")) {
      if (p.empty()) continue;  // "()": no parameters
      if (!out.empty()) out += ", ";
      if (p == "*") {
        out += p;
        continue;
      }
      size_t eq = p.find(" = ");
      std::string decl = eq == std::string::npos ? p : p.substr(0, eq);
      size_t sp = decl.rfind(' ');
      std::string typ = sp == std::string::npos ? "" : decl.substr(0, sp);
      std::string pname = decl.substr(sp == std::string::npos ? 0 : sp + 1);
      auto it = types.find(typ);
      typ = typ == "Tensor" ? tensor : it != types.end() ? it->second : typ;
      // A printed type without a parser type (torch.Storage, ...) takes any object: these
      // texts compile lazily, inside a call, where an exception would end the process.
      if (typ != tensor && !type_table().count(typ)) typ = "object";
      if (eq != std::string::npos && p.substr(eq + 3) == "None") {
        out += typ + "? " + pname + "=None";
      } else {
        out += typ + " " + pname;
        if (eq != std::string::npos) out += "=" + p.substr(eq + 3);
      }
    }
  }
  return name + "(" + out + ")";
}

// kwargs with the last given first (torch's hash map order); a new dict.
PyObject* reversed_kwargs(PyObject* kwargs) {
  PyObject* items = PyDict_Items(kwargs);
  if (!items) return nullptr;
  PyObject* out = PyDict_New();
  for (Py_ssize_t i = PyList_GET_SIZE(items) - 1; out && i >= 0; --i) {
    PyObject* kv = PyList_GET_ITEM(items, i);
    if (PyDict_SetItem(out, PyTuple_GET_ITEM(kv, 0), PyTuple_GET_ITEM(kv, 1)) < 0) {
      Py_CLEAR(out);
    }
  }
  Py_DECREF(items);
  return out;
}

}  // namespace

bool Param::has(ArgType t) const { return std::find(types.begin(), types.end(), t) != types.end(); }

std::vector<std::string> split(const std::string& s, const std::string& sep) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    size_t p = s.find(sep, start);
    if (p == std::string::npos) {
      out.push_back(s.substr(start));
      return out;
    }
    out.push_back(s.substr(start, p - start));
    start = p + sep.size();
  }
}

bool starts_with(const std::string& s, const std::string& p) { return s.rfind(p, 0) == 0; }

std::string type_name(PyObject* obj) {
  if (is_tensor(obj)) return "Tensor";
  PyTypeObject* tp = Py_TYPE(obj);
  py::object type = py::reinterpret_borrow<py::object>(reinterpret_cast<PyObject*>(tp));
  std::string mod = py::str(type.attr("__module__"));
  std::string name = py::str(type.attr("__name__"));
  if (starts_with(mod, "cudalite")) return "cudalite." + name;
  // a built-in, or a class made in Python
  if (mod == "builtins" || (tp->tp_flags & Py_TPFLAGS_HEAPTYPE)) return name;
  return mod + "." + name;
}

Signature::Signature(const std::string& fmt, bool hidden_) : hidden(hidden_) {
  size_t open = fmt.find('(');
  name = fmt.substr(0, open);
  std::string rest = fmt.substr(open + 1, fmt.size() - open - 2);
  bool kw_only = false;
  for (const std::string& text : split_params(rest)) {
    if (text == "*") {
      kw_only = true;
      continue;
    }
    Param p;
    size_t sp = text.find(' ');
    std::string typ = text.substr(0, sp);
    std::string decl = sp == std::string::npos ? "" : text.substr(sp + 1);
    size_t eq = decl.find('=');
    p.name = decl.substr(0, eq);
    std::string def = eq == std::string::npos ? "" : decl.substr(eq + 1);
    p.allow_none = (!typ.empty() && typ.back() == '?') || def == "None";
    while (!typ.empty() && typ.back() == '?') typ.pop_back();
    for (const std::string& t : split(typ, "|")) {
      auto it = type_table().find(t);
      if (it == type_table().end()) {
        throw std::invalid_argument("cudalite: unknown parameter type '" + t + "' in " + fmt);
      }
      p.types.push_back(it->second);
    }
    p.type_text = split(typ, "|")[0];
    p.optional = eq != std::string::npos;
    p.default_value = p.optional ? literal(def) : Py_NewRef(Py_None);
    p.py_name = PyUnicode_InternFromString(p.name.c_str());
    p.keyword_only = kw_only;
    p.index = int(params.size());
    params.push_back(std::move(p));
  }
  max_args = int(params.size());
  for (const Param& p : params) {
    min_args += !p.optional;
    max_pos_args += !p.keyword_only;
  }
}

Signature::Signature(Signature&& o) noexcept
    : name(std::move(o.name)),
      params(std::move(o.params)),
      min_args(o.min_args),
      max_args(o.max_args),
      max_pos_args(o.max_pos_args),
      hidden(o.hidden),
      kwonly_names_(o.kwonly_names_) {
  o.kwonly_names_ = nullptr;
}

Signature::~Signature() {
  if (!Py_IsInitialized()) return;
  Py_XDECREF(kwonly_names_);
  for (Param& p : params) {
    Py_XDECREF(p.default_value);
    Py_XDECREF(p.py_name);
  }
}

namespace {

// A call's arguments as a tuple and a dict (the parser's Python API, and the error paths).
struct TupleArgs {
  PyObject* args;
  PyObject* kwargs;  // nullable
  Py_ssize_t nargs() const { return PyTuple_GET_SIZE(args); }
  PyObject* pos(Py_ssize_t i) const { return PyTuple_GET_ITEM(args, i); }
  Py_ssize_t nkw() const { return kwargs ? PyDict_GET_SIZE(kwargs) : 0; }
  // The keyword's value (borrowed), nullptr when absent (or with an error set).
  PyObject* kw(PyObject* name) const { return PyDict_GetItemWithError(kwargs, name); }
  bool first_is_int_list(int& failed) const { return is_int_list(args, failed); }
};

// A vectorcall's arguments, as the entry of a function receives them (no tuple, no dict).
struct VectorArgs {
  PyObject* const* args;
  Py_ssize_t n;
  PyObject* kwnames;  // nullable; the values follow the positional arguments
  Py_ssize_t nargs() const { return n; }
  PyObject* pos(Py_ssize_t i) const { return args[i]; }
  Py_ssize_t nkw() const { return kwnames ? PyTuple_GET_SIZE(kwnames) : 0; }
  PyObject* kw(PyObject* name) const {
    Py_ssize_t nk = nkw();
    for (Py_ssize_t i = 0; i < nk; ++i) {  // keyword names are interned: identity first
      if (PyTuple_GET_ITEM(kwnames, i) == name) return args[n + i];
    }
    for (Py_ssize_t i = 0; i < nk; ++i) {
      if (PyUnicode_Compare(PyTuple_GET_ITEM(kwnames, i), name) == 0) return args[n + i];
    }
    return nullptr;
  }
  bool first_is_int_list(int& failed) const {
    if (n == 0) return true;
    if (is_int_like(args[0])) return true;
    failed = 0;
    return false;
  }
  // f(1, 2, 3) read as f((1, 2, 3)): the positional arguments as a tuple, owned by `hold`.
  PyObject* all_positional(PyObject** hold) const {
    if (!*hold) {
      *hold = PyTuple_New(n);
      if (!*hold) return nullptr;
      for (Py_ssize_t i = 0; i < n; ++i) PyTuple_SET_ITEM(*hold, i, Py_NewRef(args[i]));
    }
    return *hold;
  }
};

// Signature::match over either form. With `raise` (tuple form only), torch's error of this
// signature; `out` receives the values (for the tuple form).
// The values of a match without a heap allocation (parse_values, on every parsed call).
struct InlineValues {
  static constexpr size_t kMax = 32;
  PyObject* v[kMax];
  size_t n = 0;
  void clear() { n = 0; }
  void push_back(PyObject* p) { v[n++] = p; }  // the caller checks params.size() <= kMax
  size_t size() const { return n; }
};

template <class Args, class Out = std::vector<PyObject*>>
int match_impl(const Signature& s, const Args& a, bool raise, Out* out, PyObject* args_tuple,
               PyObject* kwargs_dict, bool* determined = nullptr,
               PyObject** varargs_hold = nullptr) {
  if (out) out->clear();
  if (determined) *determined = true;
  Py_ssize_t nargs = a.nargs();
  Py_ssize_t remaining = a.nkw();
  Py_ssize_t arg_pos = 0;
  bool varargs = false;
  const auto& params = s.params;
  if (s.max_pos_args == 1 && params[0].has(ArgType::IntList)) {
    int ignored = -1;
    varargs = a.first_is_int_list(ignored);
  }
  if (nargs > s.max_pos_args && !varargs) {
    if (raise) extra_args(s, nargs);
    return raise ? -1 : 0;
  }
  for (size_t i = 0; i < params.size(); ++i) {
    const Param& p = params[i];
    PyObject* obj = nullptr;
    bool is_kwd = false;
    if (arg_pos < nargs) {
      if (p.keyword_only) {
        if (raise) extra_args(s, nargs);
        return raise ? -1 : 0;
      }
      obj = a.pos(arg_pos);
    } else if (a.nkw()) {
      obj = a.kw(p.py_name);
      if (!obj && PyErr_Occurred()) return -1;
      is_kwd = true;
    }
    int failed = -1;
    bool varargs_eligible = varargs && arg_pos == 0 && !is_kwd;
    if ((!obj && p.optional) || (obj == Py_None && p.allow_none)) {
      if (out) out->push_back(nullptr);
    } else if (!obj) {
      if (raise) missing_args(s, i);
      return raise ? -1 : 0;
    } else {
      int r = check(p, obj, failed);
      if (r < 0) return -1;
      if (r) {
        if (out) out->push_back(obj);
        // a tensor fits a number or an int by its value (0-dim), not by its type
        if (determined && !p.has(ArgType::Tensor) && is_tensor(obj)) *determined = false;
      } else if (varargs_eligible && a.first_is_int_list(failed)) {
        if (determined && !PyLong_CheckExact(a.pos(0))) *determined = false;
        if (out) {  // f(1, 2, 3) as f((1, 2, 3))
          if constexpr (std::is_same_v<Args, VectorArgs>) {
            args_tuple = a.all_positional(varargs_hold);
            if (!args_tuple) return -1;
          }
          out->push_back(args_tuple);
        }
        arg_pos = nargs;
        continue;
      } else {
        if (raise) bad_type(s, p, obj, args_tuple, arg_pos, is_kwd, failed);
        return raise ? -1 : 0;
      }
    }
    if (!is_kwd) {
      ++arg_pos;
    } else if (obj) {
      --remaining;
    }
  }
  if (remaining > 0) {
    if (raise) extra_kwargs(s, kwargs_dict, nargs);
    return raise ? -1 : 0;
  }
  return 1;
}

}  // namespace

int Signature::match(PyObject* args, PyObject* kwargs, bool raise,
                     std::vector<PyObject*>& out) const {
  return match_impl(*this, TupleArgs{args, kwargs}, raise, &out, args, kwargs);
}

int Signature::fits(PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames,
                    bool* determined) const {
  return match_impl(*this, VectorArgs{args, nargs, kwnames}, false,
                    static_cast<InlineValues*>(nullptr), nullptr, nullptr, determined);
}

// An int list's values as int64s, with torch's "failed to unpack" errors (matching looked
// at the first element only); a new list or nullptr with the error set.
PyObject* Signature::int_list(const Param& p, PyObject* v) const {
  Py_ssize_t n = PySequence_Fast_GET_SIZE(v);
  PyObject* r = PyList_New(n);
  if (!r) return nullptr;
  for (Py_ssize_t j = 0; j < n; ++j) {
    PyObject* a = PySequence_Fast_GET_ITEM(v, j);
    long long x = 0;
    bool overflow = false;
    Tensor t = tensor_of(a);
    bool ok = !(t && is_floating(t->dtype)) && unpack_long(a, x, overflow);
    if (!ok || overflow) {
      PyErr_Clear();
      Py_DECREF(r);
      set_type_error(name + "(): argument '" + p.name + "' failed to unpack the object at pos " +
                     std::to_string(j + 1) + " with error \"" +
                     (ok ? std::string("Overflow when unpacking long long")
                         : "type must be tuple of ints,but got " + type_name(a)) +
                     "\"");
      return nullptr;
    }
    PyList_SET_ITEM(r, j, PyLong_FromLongLong(x));
  }
  return r;
}

PyObject* Signature::convert_one(const Param& p, PyObject* v) const {
  if (!v) return Py_NewRef(p.default_value);
  if (p.has(ArgType::IntList) && (PyTuple_Check(v) || PyList_Check(v))) return int_list(p, v);
  if (p.type() == ArgType::Int || (p.has(ArgType::Int) && is_long(v))) {
    if (PyLong_CheckExact(v)) {  // the common case: the int itself
      int overflow = 0;
      PyLong_AsLongLongAndOverflow(v, &overflow);
      if (!overflow) return Py_NewRef(v);
    }
    long long x = 0;
    bool overflow = false;
    if (is_tensor(v)) {
      PyObject* item = PyObject_CallMethod(v, "item", nullptr);
      if (!item) return nullptr;
      bool ok = unpack_long(item, x, overflow);
      Py_DECREF(item);
      if (!ok) return nullptr;
    } else if (!unpack_long(v, x, overflow)) {
      return nullptr;
    }
    if (overflow) {
      PyErr_SetString(PyExc_ValueError, "Overflow when unpacking long long");
      return nullptr;
    }
    return PyLong_FromLongLong(x);
  }
  if (p.type() == ArgType::ScalarType && !is_dtype_object(v)) {
    ScalarType t = v == reinterpret_cast<PyObject*>(&PyFloat_Type)  ? ScalarType::Float64
                   : v == reinterpret_cast<PyObject*>(&PyBool_Type) ? ScalarType::Bool
                                                                    : ScalarType::Int64;
    return Py_NewRef(dtype_pyobject(t));
  }
  return Py_NewRef(v);
}

PyObject* Signature::convert(const std::vector<PyObject*>& raw) const {
  PyObject* out = PyList_New(Py_ssize_t(raw.size()));
  if (!out) return nullptr;
  for (size_t i = 0; i < raw.size(); ++i) {
    PyObject* r = convert_one(params[i], raw[i]);
    if (!r) {
      Py_DECREF(out);
      return nullptr;
    }
    PyList_SET_ITEM(out, Py_ssize_t(i), r);
  }
  return out;
}

int Signature::parse_values(PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames,
                            PyObject** values) const {
  if (params.size() > kMaxParsedParams) {
    PyErr_SetString(PyExc_RuntimeError, ("cudalite: too many parameters in " + name).c_str());
    return -1;
  }
  PyObject* hold = nullptr;  // the positional arguments as one int list (varargs)
  InlineValues raw;
  int r = match_impl(*this, VectorArgs{args, nargs, kwnames}, false, &raw, nullptr, nullptr,
                     nullptr, &hold);
  if (r == 1) {
    for (size_t i = 0; i < raw.size(); ++i) {
      values[i] = convert_one(params[i], raw.v[i]);
      if (!values[i]) {
        for (size_t j = 0; j < i; ++j) Py_DECREF(values[j]);
        r = -1;
        break;
      }
    }
  }
  Py_XDECREF(hold);
  return r;
}

PyObject* Signature::keyword_names() const {
  if (!kwonly_names_) {
    Py_ssize_t n = 0;
    for (const Param& p : params) n += p.keyword_only;
    if (n == 0) return nullptr;
    PyObject* t = PyTuple_New(n);
    if (!t) return nullptr;
    Py_ssize_t j = 0;
    for (const Param& p : params) {
      if (p.keyword_only) PyTuple_SET_ITEM(t, j++, Py_NewRef(p.py_name));
    }
    kwonly_names_ = t;
  }
  return kwonly_names_;
}

int FunctionParser::parse(PyObject* args, PyObject* kwargs, std::vector<PyObject*>& out) {
  if (signatures.size() == 1 && (!has_texts || texts.empty())) {
    return signatures[0].match(args, kwargs, true, out) == 1 ? 0 : -1;
  }
  for (size_t i = 0; i < signatures.size(); ++i) {
    int r = signatures[i].match(args, kwargs, false, out);
    if (r < 0) return -1;
    if (r) return int(i);
  }
  Py_ssize_t n = PyTuple_GET_SIZE(args) + (kwargs ? PyDict_GET_SIZE(kwargs) : 0);
  std::vector<Signature>* sigs = &signatures;
  if (has_texts) {  // torch's own overloads decide, as in torch
    if (text_signatures.empty()) {
      for (const std::string& t : texts) text_signatures.emplace_back(from_text(name, t));
    }
    sigs = &text_signatures;
  }
  std::vector<const Signature*> plausible;
  for (const Signature& s : *sigs) {
    if (s.min_args <= n && n <= s.max_args && !s.hidden) plausible.push_back(&s);
  }
  std::vector<PyObject*> ignored;
  if (plausible.size() == 1 && !single) {
    if (plausible[0]->match(args, kwargs, true, ignored) < 0) return -1;
  }
  if (single) {  // torch's one signature: of the table's forms of it, the one that takes
                 // the most of the call (the plausible ones first)
    if (plausible.empty()) {
      for (const Signature& s : *sigs) {
        if (!s.hidden) plausible.push_back(&s);
      }
    }
    const Signature* best = nullptr;
    size_t reached = 0;
    for (const Signature* s : plausible) {
      if (s->match(args, kwargs, false, ignored) < 0) return -1;
      if (!best || ignored.size() > reached) {
        best = s;
        reached = ignored.size();
      }
    }
    if (best && best->match(args, kwargs, true, ignored) < 0) return -1;
  }
  PyObject* empty = nullptr;
  if (!kwargs) kwargs = empty = PyDict_New();
  PyObject* ordered = reversed_kwargs(kwargs);
  Py_XDECREF(empty);
  if (!ordered) return -1;
  std::string msg;
  if (has_texts && !texts.empty()) {
    msg = invalid_arguments(name, args, ordered, texts, "");
  } else {
    msg = name + "() received an invalid combination of arguments - got (" + given(args, ordered) +
          "), but expected one of:";
  }
  Py_DECREF(ordered);
  set_type_error(msg);
  return -1;
}

int FunctionParser::fits(PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames,
                         bool* determined) const {
  for (const Signature& s : signatures) {
    int r = s.fits(args, nargs, kwnames, determined);
    if (r) return r;
  }
  return 0;
}

int FunctionParser::refuse(PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  PyObject* tuple = PyTuple_New(nargs);
  if (!tuple) return -1;
  for (Py_ssize_t i = 0; i < nargs; ++i) PyTuple_SET_ITEM(tuple, i, Py_NewRef(args[i]));
  PyObject* kwargs = PyDict_New();
  Py_ssize_t nk = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
  for (Py_ssize_t i = 0; kwargs && i < nk; ++i) {
    if (PyDict_SetItem(kwargs, PyTuple_GET_ITEM(kwnames, i), args[nargs + i]) < 0) {
      Py_CLEAR(kwargs);
    }
  }
  if (!kwargs) {
    Py_DECREF(tuple);
    return -1;
  }
  std::vector<PyObject*> out;
  int r = parse(tuple, kwargs, out);
  if (r < 0 && has_texts && PyErr_ExceptionMatches(PyExc_TypeError)) {
    // The stubs' signatures refused the call; torch's own overload texts decide whether
    // torch would (the stubs miss some overloads, e.g. Tensor.set_() with no argument).
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    if (text_signatures.empty()) {
      for (const std::string& t : texts) text_signatures.emplace_back(from_text(name, t));
    }
    bool accepted = false;
    for (const Signature& s : text_signatures) {
      std::vector<PyObject*> ignored;
      int m = s.match(tuple, kwargs, false, ignored);
      if (m < 0) PyErr_Clear();
      if (m > 0) {
        accepted = true;
        break;
      }
    }
    if (accepted) {
      Py_XDECREF(type);
      Py_XDECREF(value);
      Py_XDECREF(tb);
      r = 0;
    } else {
      PyErr_Restore(type, value, tb);
    }
  }
  Py_DECREF(tuple);
  Py_DECREF(kwargs);
  return r < 0 ? -1 : 0;
}

// ---- Python's view: _C._ArgParser ----

namespace {

// The value of a parameter that was not given, in match()'s results.
PyObject* g_missing = nullptr;

py::tuple as_tuple(py::handle args) {
  if (PyTuple_Check(args.ptr())) return py::reinterpret_borrow<py::tuple>(args);
  return py::tuple(py::reinterpret_borrow<py::object>(args));
}

py::object as_dict(py::handle kwargs) {
  if (PyDict_Check(kwargs.ptr())) return py::reinterpret_borrow<py::object>(kwargs);
  return py::dict(py::reinterpret_borrow<py::object>(kwargs));
}

// _ArgParser.parse(args, kwargs)
PyObject* parser_parse(PyObject* self, PyObject* const* a, Py_ssize_t n) {
  if (n != 2) {
    PyErr_SetString(PyExc_TypeError, "parse() takes 2 arguments: args and kwargs");
    return nullptr;
  }
  try {
    auto v_h = reinterpret_cast<py::detail::instance*>(self)->get_value_and_holder();
    if (!v_h.holder_constructed()) {
      PyErr_SetString(PyExc_TypeError, "parse(): an uninitialized _ArgParser");
      return nullptr;
    }
    FunctionParser& p = *v_h.template holder<std::shared_ptr<FunctionParser>>();
    py::tuple args = as_tuple(a[0]);
    py::object kwargs = as_dict(a[1]);
    std::vector<PyObject*> raw;
    int i = p.parse(args.ptr(), kwargs.ptr(), raw);
    if (i < 0) return nullptr;
    PyObject* values = p.signatures[size_t(i)].convert(raw);
    if (!values) return nullptr;
    return Py_BuildValue("(iN)", i, values);
  } catch (py::error_already_set& e) {
    e.restore();
    return nullptr;
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
    return nullptr;
  }
}

}  // namespace

void bind_arg_parser(py::module_& m) {
  g_missing = PyObject_CallNoArgs(reinterpret_cast<PyObject*>(&PyBaseObject_Type));
  m.add_object("_ARG_MISSING", py::reinterpret_borrow<py::object>(g_missing));
  py::class_<FunctionParser, std::shared_ptr<FunctionParser>> cls(
      m, "_ArgParser",
      "torch's argument parser for a function's signatures (Note [Argument errors]).");
  cls.def(py::init([](std::vector<std::string> fmts, std::vector<std::string> hidden,
                      std::optional<std::vector<std::string>> texts, bool single) {
            auto p = std::make_shared<FunctionParser>();
            for (const std::string& f : fmts) {
              bool h = std::find(hidden.begin(), hidden.end(), f) != hidden.end();
              p->signatures.emplace_back(f, h);
            }
            if (p->signatures.empty()) throw py::value_error("_ArgParser: no signature");
            for (Signature& s : p->signatures) {  // torch's should_allow_numbers_as_tensors
              if (!numbers_as_tensors(s.name)) continue;
              for (Param& q : s.params) {
                if (q.has(ArgType::Tensor) && !q.has(ArgType::Number)) {
                  q.types.push_back(ArgType::Number);
                }
              }
            }
            p->name = p->signatures[0].name;
            p->has_texts = texts.has_value();
            if (texts) p->texts = *texts;
            p->single = single;
            return p;
          }),
          py::arg("fmts"), py::arg("hidden") = std::vector<std::string>{},
          py::arg("texts") = py::none(), py::arg("single") = false)
      .def_readonly("name", &FunctionParser::name)
      .def_property_readonly("texts",
                             [](const FunctionParser& p) -> py::object {
                               if (!p.has_texts) return py::none();
                               return py::cast(p.texts);
                             })
      .def_property_readonly("n_signatures",
                             [](const FunctionParser& p) { return p.signatures.size(); })
      .def(
          "match",
          [](FunctionParser& p, py::handle args, py::handle kwargs) -> py::object {
            py::tuple a = as_tuple(args);
            py::object k = as_dict(kwargs);
            std::vector<PyObject*> raw;
            for (size_t i = 0; i < p.signatures.size(); ++i) {
              int r = p.signatures[i].match(a.ptr(), k.ptr(), false, raw);
              if (r < 0) throw py::error_already_set();
              if (!r) continue;
              py::list values;
              for (PyObject* v : raw) values.append(py::handle(v ? v : g_missing));
              return py::make_tuple(i, values);
            }
            return py::none();
          },
          "(index, raw values) of the first signature that accepts the call, _ARG_MISSING "
          "for a parameter not given; None when none does (raises only what torch raises "
          "while matching).")
      .def(
          "convert",
          [](FunctionParser& p, size_t i, py::list raw) {
            std::vector<PyObject*> values;
            for (py::handle v : raw) values.push_back(v.ptr() == g_missing ? nullptr : v.ptr());
            PyObject* r = p.signatures.at(i).convert(values);
            if (!r) throw py::error_already_set();
            return py::reinterpret_steal<py::object>(r);
          },
          "match()'s raw values as parse() returns them (torch's unpacking errors).")
      .def(
          "params",
          [](FunctionParser& p, size_t i) {
            py::list out;
            for (const Param& q : p.signatures.at(i).params) {
              out.append(py::make_tuple(q.name, q.type_text, q.allow_none));
            }
            return out;
          },
          "[(name, type, allows None)] of signature i.");
  m.def(
      "_invalid_arguments",
      [](const std::string& name, py::handle args, py::handle kwargs,
         std::vector<std::string> texts, std::optional<std::string> got) {
        py::tuple a = as_tuple(args);
        py::object k = as_dict(kwargs);
        return invalid_arguments(name, a.ptr(), k.ptr(), texts, got.value_or(""));
      },
      py::arg("name"), py::arg("args"), py::arg("kwargs"), py::arg("texts"),
      py::arg("got") = py::none(),
      "torch's 'invalid combination of arguments' message (kwargs ordered as torch lists "
      "them).");
  m.def(
      "_tp_name", [](py::handle obj) { return type_name(obj.ptr()); },
      "The name torch's messages give obj's type.");
  // parse() is a plain CPython method: the Python functions that parse their variadic
  // arguments call it on every call.
  static PyMethodDef parse_def = {
      "parse", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&parser_parse)),
      METH_FASTCALL,
      "parse(args, kwargs): (index, values) of the first signature that accepts the call "
      "(values as the function receives them); torch's error when none does."};
  py::object descr = py::reinterpret_steal<py::object>(
      PyDescr_NewMethod(reinterpret_cast<PyTypeObject*>(cls.ptr()), &parse_def));
  if (!descr) throw py::error_already_set();
  py::setattr(cls, "parse", descr);
}

}  // namespace cl::bind
